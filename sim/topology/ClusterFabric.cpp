#include "sim/topology/ClusterFabric.hpp"

#include <memory>

#include "sim/topology/Builders.hpp"
#include "sim/topology/ClusterGraph.hpp"

namespace stepsim {

Fabric clusterFabric(const NodeTemplate& node, const ClusterSpec& spec) {
    auto graph = std::make_shared<ClusterGraph>(
        cluster(mergedNvSwitches(node), spec.nodes, spec.network, spec.gpus_per_node));
    Fabric f;
    f.links = graph->links();
    f.gpus = graph->gpuCount();
    f.gpus_per_node = spec.gpus_per_node;
    f.nvls_capable = node.hasNvSwitch();
    f.route = [graph](int src, int dst) { return src == dst ? Route{} : graph->route(src, dst); };
    f.host_route = [graph](int gpu, bool to_gpu) {
        const auto cpu = graph->hostCpu(gpu);
        if (!cpu) return Route{};
        return to_gpu ? graph->route(*cpu, graph->gpu(gpu)) : graph->route(graph->gpu(gpu), *cpu);
    };
    f.storage_route = [graph](int gpu) {
        const auto cpu = graph->hostCpu(gpu);
        const auto disk = graph->storageOf(gpu);
        return cpu && disk ? graph->route(*cpu, *disk) : Route{};
    };
    return f;
}

}  // namespace stepsim
