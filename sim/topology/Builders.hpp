#pragma once
// Builders: the built-in node types and the multi-node cluster around them.
//
// Node types (each a NodeTemplate; vertex names are prefixed "n<node>." in a cluster):
//   hgx-h100, hgx-h200  8 GPUs, 4 NVSwitch chips (3rd gen), 18 NVLink-4 links per GPU at 25 GB/s per
//                       direction = 450 GB/s per GPU (NVIDIA H100/H200 datasheets; nvidia-smi reports 26.56 GB/s per link,
//                       the raw signalling rate, data/h200x2-topology.txt). Each GPU's 18 links go 5+4+4+5
//                       to the 4 chips (DGX H100 architecture), one edge per link group.
//   hgx-b200            8 GPUs, 2 NVSwitch chips (5th gen), 18 NVLink-5 links per GPU at 50 GB/s per
//                       direction = 900 GB/s per GPU (NVIDIA B200 datasheet, 1.8 TB/s bidirectional), 9+9.
//   pcie-8gpu           pcieNode(8): no NVLink; GPUs 0–3 behind PCIe switch 0 on CPU 0, GPUs 4–7 behind
//                       switch 1 on CPU 1; every device link and each switch uplink is one Gen5 x16.
//   nvl72               72 GPUs in one NVLink domain (GB200 NVL72 class): 18 NVSwitch chips (9 switch trays
//                       of 2 chips), each GPU one NVLink-5 link (50 GB/s per direction) to every chip =
//                       900 GB/s per GPU; 18 compute trays of 4 GPUs and 2 Grace CPUs. The host path is
//                       modelled as PCIe Gen5 x16 like the HGX boards (GB200's faster NVLink-C2C to Grace is
//                       not modelled); one storage vertex per compute tray.
// Host side of the HGX boards (DGX H100 layout): each GPU has its own PCIe switch (where its NIC also
// attaches), with a Gen5 x16 uplink to its socket's CPU (GPUs 0–3: CPU 0, 4–7: CPU 1); the two CPUs are
// joined by the inter-socket link; one storage vertex per node, on CPU 0.
//
// Figures (bytes/s per direction; latencies per link, one way):
//   PCIe Gen5 x16           55 GB/s achieved pinned H2D (commonly seen pinned H2D; our H200 measurement: 55.3 GB/s).
//   inter-socket            128 GB/s: 4 UPI 2.0 links × 16 GT/s × 2 B of the Xeon 8480C in DGX H100
//                           (datasheet arithmetic, not measured); used for every two-socket template.
//   storage                 5 GB/s per node: the HardwareProfile default `links.storage_gbps`; the engine
//                           may set the storage links from the profile in use.
//   NIC                     network.nic_gbps / 8 (line rate; 400 Gb/s = 50 GB/s); protocol efficiency
//                           (~46–49 GB/s achieved) belongs to the profile, not to the topology.
//   latencies               NVLink GPU↔NVSwitch 0.35 µs (GPU→GPU 0.7 µs, the profile default
//                           `nvlink_latency_us`); PCIe device↔switch 0.3 µs, switch↔CPU root complex 0.5 µs;
//                           inter-socket 0.5 µs; NIC↔leaf and leaf↔spine 0.3 µs (switch cut-through is quoted
//                           at 0.13–0.4 µs); storage 10 µs. They are order-of-magnitude figures that order the
//                           routes and give a per-message floor; collective α comes from the profile.
//
// Cluster (`cluster`), network.fabric = "rail-fat-tree" (the only fabric so far):
//   NICs: network.nics_per_node per node, NIC k serving local GPUs [k·G/N, (k+1)·G/N) (G the template's GPU
//   count, N the NIC count, so one NIC per GPU by default), attached by a PCIe Gen5 x16 link to the first
//   served GPU's nic_port. NIC k of every node is on rail k.
//   Leaves: nodes are grouped in scalable units of kNodesPerScalableUnit (DGX SuperPOD reference
//   architecture: 32 nodes, one leaf per rail per unit); leaf (u, k) connects NIC k of every node of unit u.
//   Spines: when there is more than one leaf, `rails` spines; every leaf has one uplink to every spine, of
//   capacity (leaf downlink capacity / oversubscription) / spines, so the leaf's total uplink is its
//   downlink divided by the oversubscription. Same-rail traffic inside a unit never leaves its leaf, so
//   oversubscription only slows cross-rail and cross-unit traffic (as on a real rail-optimized fabric).
//   With one node there are NICs but no fabric.
#include <optional>
#include <string>
#include <vector>

#include "sim/base/Scenario.hpp"
#include "sim/topology/ClusterGraph.hpp"
#include "sim/topology/NodeTemplate.hpp"

namespace stepsim {

inline constexpr double kNvlink4LinkBps = 25e9;
inline constexpr double kNvlink5LinkBps = 50e9;
inline constexpr double kPcieGen5x16Bps = 55e9;
inline constexpr double kInterSocketBps = 128e9;
inline constexpr double kStorageBps = 5e9;
inline constexpr int kNodesPerScalableUnit = 32;

// Node templates.
NodeTemplate hgxH100Node();
NodeTemplate hgxH200Node();
NodeTemplate hgxB200Node();
NodeTemplate pcieNodeTemplate(int gpus);  // gpus even, ≥ 2: half behind each of two PCIe switches
NodeTemplate nvl72Node();

// The same node with its NVSwitch chips merged into one "nvswitch" vertex: each GPU's NVLink edges to the
// chips become one edge of their summed capacity (latency of the first). For flows this is exact when
// every GPU-to-GPU transfer is split over the chips in proportion to its link groups (ClusterGraph::routes),
// because then chip k carries the fraction n_k/Σn of every transfer on links of that same fraction of each
// GPU's capacity; so with the merged node the single `route()` already sees each GPU's full NVLink
// bandwidth, for an engine whose flows take one path. NVLink edges between other vertices are kept.
NodeTemplate mergedNvSwitches(const NodeTemplate& node);

// `nodes` copies of `node` on the fabric of `network`, using the first `gpus_per_node` GPUs of each
// (default: all). Throws InputError (keys cluster.nodes, cluster.gpus_per_node, cluster.network.*).
ClusterGraph cluster(const NodeTemplate& node, int nodes, const NetworkSpec& network = {},
                     std::optional<int> gpus_per_node = std::nullopt);

// One node of each type, with its NICs (default NetworkSpec) and no fabric.
ClusterGraph hgxH100();
ClusterGraph hgxH200();
ClusterGraph hgxB200();
ClusterGraph pcieNode(int gpus = 8);
ClusterGraph nvl72();

// "hgx-h100", "hgx-h200", "hgx-b200", "pcie-8gpu", "nvl72".
std::vector<std::string> builtinNodeNames();
// The built-in node of that name; none when `name` is not one of builtinNodeNames().
std::optional<NodeTemplate> builtinNode(const std::string& name);

}  // namespace stepsim
