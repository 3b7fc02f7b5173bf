#include "topology/ClusterFabric.hpp"

#include <memory>

#include "topology/Builders.hpp"
#include "topology/ClusterGraph.hpp"

namespace stepsim {

Fabric clusterFabric(const NodeTemplate& node, const ClusterSpec& spec) {
    auto graph = std::make_shared<ClusterGraph>(
        cluster(mergedNvSwitches(node), spec.nodes, spec.network, spec.gpus_per_node));
    Fabric f;
    f.links = graph->links();
    f.gpus = graph->gpuCount();
    f.gpus_per_node = spec.gpus_per_node;
    f.nvls_capable = nvSwitchNode(spec.node);
    f.route = [graph](int src, int dst) { return src == dst ? Route{} : graph->route(src, dst); };
    return f;
}

}  // namespace stepsim
