#include "sim/scenario/ClusterBuild.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/TopologyYaml.hpp"
#include "sim/topology/Builders.hpp"
#include "sim/topology/ClusterFabric.hpp"

namespace stepsim {

NodeTemplate nodeTemplate(const std::string& name_or_file, const std::string& scenario_dir) {
    if (auto node = builtinNode(name_or_file)) return *node;
    const std::filesystem::path p(name_or_file);
    if (p.extension() == ".yaml" || p.extension() == ".yml") {
        const auto path = p.is_absolute() || scenario_dir.empty() ? p : std::filesystem::path(scenario_dir) / p;
        return readTopologyYaml(path.string());
    }
    std::string names;
    for (const auto& n : builtinNodeNames()) names += n + ", ";
    throw InputError(fmt::format("cluster.node: expected one of {}or a topology YAML file (.yaml), got \"{}\"", names,
                                 name_or_file));
}

ClusterGraph buildCluster(const ClusterSpec& spec, const std::string& scenario_dir) {
    return cluster(nodeTemplate(spec.node, scenario_dir), spec.nodes, spec.network, spec.gpus_per_node);
}

Fabric clusterFabric(const ClusterSpec& spec, const std::string& scenario_dir) {
    return clusterFabric(nodeTemplate(spec.node, scenario_dir), spec);
}

}  // namespace stepsim
