#pragma once
// Custom node topologies from YAML (the node type of `cluster.node: FILE.yaml`).
//
// A file describes one node; `cluster()` (topology/Builders.hpp) copies it per node and adds the NICs and
// the fabric, so the file names no NIC, leaf or spine. Schema (version 1; example in topology/examples/):
//
//   stepsim_topology: 1
//   name: quad-nvlink-pairs
//   description: free text                      # optional
//   vertices:
//     - {name: gpu0, kind: gpu, nic_port: pcie0}   # kind: gpu | nvswitch | pcie_switch | cpu | storage
//     - {name: pcie0, kind: pcie_switch}           # nic_port (GPUs, optional): where the GPU's NIC attaches;
//   links:                                         #   default: the GPU's first PCIe neighbour
//     - {from: gpu0, to: pcie0, kind: pcie, bandwidth_GBps: 55, latency_us: 0.3}
//     - {from: gpu0, to: gpu1, kind: nvlink, bandwidth_GBps: 25, count: 12, latency_us: 0.35}
//
// A link is physical: both directions get capacity count × bandwidth_GBps (GB/s = 1e9 B/s, per
// direction) and latency_us. kind: nvlink | pcie | nic | network | host_memory | storage. GPUs take their
// local index from their order in `vertices`.
//
// Errors are stepsim::InputError naming the file, the line (yaml-cpp's 0-based mark + 1) and the key path
// (e.g. "links[2].bandwidth_GBps"), and what was expected. Unknown keys are errors.
#include <string>

#include "sim/topology/NodeTemplate.hpp"

namespace stepsim {

// Reads `path`; errors name it.
NodeTemplate readTopologyYaml(const std::string& path);
// Parses YAML text; errors name `source` as the file.
NodeTemplate parseTopologyYaml(const std::string& text, const std::string& source);

}  // namespace stepsim
