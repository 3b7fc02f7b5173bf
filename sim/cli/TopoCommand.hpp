#pragma once
// `stepsim topo NAME|FILE [--nodes N] [--gpus-per-node G] [--nics-per-node K] [--nic-gbps B]
//                         [--oversubscription O] [--json OUT] [--dot OUT]`
//
// Builds the cluster (topology/Builders.hpp) and prints a summary: the count of each vertex kind and of the
// directed links by kind, per-GPU NVLink, NIC and host-PCIe bandwidth (bytes/s per direction, GB = 1e9 B),
// and the bisection bandwidth (ClusterGraph::bisectionBandwidth: max-flow from the first half of the GPUs
// to the second, one direction). --json writes the same summary with stable keys; --dot writes Graphviz.
#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "sim/topology/ClusterGraph.hpp"

namespace stepsim {

struct TopoOptions {
    std::string node;                  // built-in node name or topology YAML file (relative to the cwd)
    int nodes = 1;
    std::optional<int> gpus_per_node;  // default: all GPUs of the node
    std::optional<int> nics_per_node;  // default: one NIC per GPU of the node
    double nic_gbps = 400.0;
    double oversubscription = 1.0;
    std::string json_out;              // "" : none
    std::string dot_out;               // "" : none
};

// The summary as JSON: name, nodes, gpus, gpus_per_node, vertices{kind: count}, vertex_count,
// links{kind: count} (directed), link_count, nvlink_GBps_per_gpu (min over GPUs) and _max,
// nic_GBps_per_gpu and host_pcie_GBps_per_gpu (min over GPUs; null when a GPU has none),
// bisection_GBps (null with fewer than two GPUs).
nlohmann::json topoSummary(const ClusterGraph& g);
// The same, for people.
std::string topoText(const nlohmann::json& summary);
// Builds, prints the text summary to `out`, writes the requested files.
void runTopo(const TopoOptions& options, std::ostream& out);
// Registers the `topo` subcommand.
void addTopoCommand(CLI::App& app);

}  // namespace stepsim
