#pragma once
// A scenario's cluster from its `cluster:` section: `cluster.node` is a built-in node name
// (topology/Builders.hpp: builtinNodeNames) or a topology YAML file (TopologyYaml.hpp), a relative path
// taken from the scenario's folder. Errors are InputErrors naming `cluster.node`.
#include <string>

#include "sim/base/Scenario.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/topology/ClusterGraph.hpp"
#include "sim/topology/NodeTemplate.hpp"

namespace stepsim {

NodeTemplate nodeTemplate(const std::string& name_or_file, const std::string& scenario_dir);
// The cluster's graph (every NVSwitch chip kept).
ClusterGraph buildCluster(const ClusterSpec& spec, const std::string& scenario_dir);
// The engine's Fabric of the cluster (topology/ClusterFabric.hpp).
Fabric clusterFabric(const ClusterSpec& spec, const std::string& scenario_dir);

}  // namespace stepsim
