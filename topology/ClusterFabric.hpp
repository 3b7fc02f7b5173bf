#pragma once
// The engine's Fabric for a scenario's cluster: the ClusterGraph of its nodes and network, with every
// node's NVSwitch chips merged into one switch (exact for single-path flows: see mergedNvSwitches), its
// links, and cached GPU-to-GPU routes. The Fabric keeps the graph alive.
#include <string>

#include "sim/net/Fabric.hpp"
#include "sim/scenario/Scenario.hpp"

namespace stepsim {

Fabric clusterFabric(const ClusterSpec& spec, const std::string& scenario_dir);

}  // namespace stepsim
