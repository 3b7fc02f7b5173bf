#pragma once
// The engine's Fabric for a cluster: the ClusterGraph of `spec.nodes` copies of `node` on `spec.network`,
// with every node's NVSwitch chips merged into one switch (exact for single-path flows: see
// mergedNvSwitches), its links, and cached GPU-to-GPU routes. The Fabric keeps the graph alive.
#include "sim/base/Scenario.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/topology/NodeTemplate.hpp"

namespace stepsim {

Fabric clusterFabric(const NodeTemplate& node, const ClusterSpec& spec);

}  // namespace stepsim
