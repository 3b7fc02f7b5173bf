// Routing (ClusterGraph::route / routes): which devices a transfer crosses.
#include <gtest/gtest.h>

#include <set>

#include "sim/scenario/TopologyYaml.hpp"
#include "sim/topology/Builders.hpp"

namespace stepsim {
namespace {

// The kinds of the vertices a route visits, source first.
std::vector<VertexKind> kinds(const ClusterGraph& g, const Route& r) {
    std::vector<VertexKind> out;
    if (r.empty()) return out;
    out.push_back(g.vertex(g.linkSource(r.front())).kind);
    for (LinkId id : r) out.push_back(g.vertex(g.linkTarget(id)).kind);
    return out;
}

using K = VertexKind;

// Expectations: inside an HGX node a GPU reaches another through one NVSwitch chip: 2 NVLink edges,
// 0.35 + 0.35 = 0.7 µs.
TEST(Route, IntraNodeGoesThroughNvSwitch) {
    const ClusterGraph g = hgxH100();
    const Route& r = g.route(0, 5);
    EXPECT_EQ(kinds(g, r), (std::vector<K>{K::gpu, K::nvswitch, K::gpu}));
    for (LinkId id : r) EXPECT_EQ(g.links()[id].kind, LinkKind::nvlink);
    EXPECT_EQ(g.latency(r), Time::ns(700));
    EXPECT_EQ(g.linkSource(r.front()), g.gpu(0));
    EXPECT_EQ(g.linkTarget(r.back()), g.gpu(5));
}

// Expectations: the multipath split crosses all 4 chips with shares 5/18, 4/18, 4/18, 5/18, and the
// bottleneck of each part divided by its share is the GPU's full 450 GB/s.
TEST(Route, NvSwitchMultipathSharesFollowLinkCounts) {
    const ClusterGraph g = hgxH200();
    const auto& parts = g.routes(2, 7);
    ASSERT_EQ(parts.size(), 4u);
    const double expected[] = {5.0 / 18, 4.0 / 18, 4.0 / 18, 5.0 / 18};
    std::set<VertexId> chips;
    double sum = 0.0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        EXPECT_NEAR(parts[i].share, expected[i], 1e-12);
        EXPECT_EQ(kinds(g, parts[i].route), (std::vector<K>{K::gpu, K::nvswitch, K::gpu}));
        chips.insert(g.linkTarget(parts[i].route.front()));
        EXPECT_NEAR(g.bottleneck_Bps(parts[i].route) / parts[i].share, 450e9, 1e3);
        sum += parts[i].share;
    }
    EXPECT_EQ(chips.size(), 4u);
    EXPECT_NEAR(sum, 1.0, 1e-12);
}

// Expectations: same local GPU on two nodes: GPU, its PCIe switch, its NIC, the rail's leaf, the peer's NIC,
// PCIe switch, GPU — no spine.
TEST(Route, InterNodeSameRailStaysOnItsLeaf) {
    const ClusterGraph g = cluster(hgxH100Node(), 2);
    const Route& r = g.route(3, 11);
    EXPECT_EQ(kinds(g, r), (std::vector<K>{K::gpu, K::pcie_switch, K::nic, K::leaf, K::nic, K::pcie_switch, K::gpu}));
    EXPECT_EQ(g.vertex(g.linkTarget(r[1])).name, "n0.nic3");
    EXPECT_EQ(g.vertex(g.linkTarget(r[2])).name, "leaf0.3");
    EXPECT_EQ(g.vertex(g.linkTarget(r[3])).name, "n1.nic3");
}

// Expectations: different rails on two nodes: up the source's rail leaf, through a spine, down the
// destination's rail leaf: each GPU uses its own NIC.
TEST(Route, InterNodeCrossRailGoesThroughSpine) {
    const ClusterGraph g = cluster(hgxH100Node(), 2);
    const Route& r = g.route(1, 8 + 6);
    EXPECT_EQ(kinds(g, r), (std::vector<K>{K::gpu, K::pcie_switch, K::nic, K::leaf, K::spine, K::leaf, K::nic,
                                           K::pcie_switch, K::gpu}));
    EXPECT_EQ(g.vertex(g.linkTarget(r[2])).name, "leaf0.1");
    EXPECT_EQ(g.vertex(g.linkTarget(r[4])).name, "leaf0.6");
}

// Expectations: rail alignment over a 4-node cluster: every inter-node route leaves through the source
// GPU's own NIC and arrives through the destination GPU's own NIC.
TEST(Route, RailAlignment) {
    const ClusterGraph g = cluster(hgxH100Node(), 4);
    for (int s = 0; s < g.gpuCount(); ++s)
        for (int d = 0; d < g.gpuCount(); ++d) {
            if (g.nodeOf(s) == g.nodeOf(d)) continue;
            const Route& r = g.route(s, d);
            ASSERT_GE(r.size(), 6u);
            EXPECT_EQ(g.linkTarget(r[1]), *g.nicOf(s));
            EXPECT_EQ(g.linkSource(r[r.size() - 2]), *g.nicOf(d));
        }
}

// Expectations: on the PCIe node, GPUs under one switch meet in it; GPUs on different sockets cross both
// root complexes and the inter-socket link.
TEST(Route, PcieNodeCrossesSockets) {
    const ClusterGraph g = pcieNode(8);
    EXPECT_EQ(kinds(g, g.route(0, 3)), (std::vector<K>{K::gpu, K::pcie_switch, K::gpu}));
    const Route& r = g.route(0, 5);
    EXPECT_EQ(kinds(g, r), (std::vector<K>{K::gpu, K::pcie_switch, K::cpu, K::cpu, K::pcie_switch, K::gpu}));
    EXPECT_EQ(g.links()[r[2]].kind, LinkKind::host_memory);
    EXPECT_DOUBLE_EQ(g.bottleneck_Bps(r), 55e9);
}

// Expectations: a route never passes through a GPU, even when that would be faster: GPUs 0–1–2 in an
// NVLink line, all on one PCIe switch; 0→2 goes over PCIe.
TEST(Route, NoTransitThroughGpus) {
    const NodeTemplate t = parseTopologyYaml(R"(
stepsim_topology: 1
name: line
vertices:
  - {name: gpu0, kind: gpu}
  - {name: gpu1, kind: gpu}
  - {name: gpu2, kind: gpu}
  - {name: sw, kind: pcie_switch}
links:
  - {from: gpu0, to: gpu1, kind: nvlink, bandwidth_GBps: 100, latency_us: 0.1}
  - {from: gpu1, to: gpu2, kind: nvlink, bandwidth_GBps: 100, latency_us: 0.1}
  - {from: gpu0, to: sw, kind: pcie, bandwidth_GBps: 55, latency_us: 1}
  - {from: gpu1, to: sw, kind: pcie, bandwidth_GBps: 55, latency_us: 1}
  - {from: gpu2, to: sw, kind: pcie, bandwidth_GBps: 55, latency_us: 1}
)", "line.yaml");
    const ClusterGraph g = cluster(t, 1, NetworkSpec{.nics_per_node = 3});
    EXPECT_EQ(kinds(g, g.route(0, 1)), (std::vector<K>{K::gpu, K::gpu}));
    EXPECT_EQ(kinds(g, g.route(0, 2)), (std::vector<K>{K::gpu, K::pcie_switch, K::gpu}));
}

// Expectations: the host path of GPU 5 on an HGX node ends at CPU 1 over one Gen5 x16 (55 GB/s), and the
// node's storage is reachable from it.
TEST(Route, HostAndStoragePaths) {
    const ClusterGraph g = hgxH200();
    const auto cpu = g.hostCpu(5);
    ASSERT_TRUE(cpu);
    EXPECT_EQ(g.vertex(*cpu).name, "n0.cpu1");
    EXPECT_DOUBLE_EQ(g.bottleneck_Bps(g.route(g.gpu(5), *cpu)), 55e9);
    const auto storage = g.storageOf(5);
    ASSERT_TRUE(storage);
    EXPECT_EQ(kinds(g, g.route(g.gpu(5), *storage)),
              (std::vector<K>{K::gpu, K::pcie_switch, K::cpu, K::cpu, K::storage}));
}

// Expectations: a GPU's route to itself is empty.
TEST(Route, SelfRouteIsEmpty) {
    const ClusterGraph g = hgxH100();
    EXPECT_TRUE(g.route(4, 4).empty());
}

}  // namespace
}  // namespace stepsim
