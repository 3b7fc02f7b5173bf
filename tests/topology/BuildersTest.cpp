// Builders: device and link counts of each node type and of a multi-node cluster (Builders.hpp).
#include <gtest/gtest.h>


#include "sim/base/InputError.hpp"
#include "sim/topology/Builders.hpp"
#include "sim/scenario/ClusterBuild.hpp"

namespace stepsim {
namespace {

std::size_t linksOfKind(const ClusterGraph& g, LinkKind kind) {
    std::size_t n = 0;
    for (const Link& l : g.links()) n += l.kind == kind ? 1 : 0;
    return n;
}

// Expectations: 8 GPUs, 4 NVSwitch chips, one PCIe switch and one NIC per GPU, 2 CPUs, 1 storage;
// 8×4 GPU↔chip link groups (= 64 directed NVLink edges) carrying 18 links × 25 GB/s = 450 GB/s per GPU.
TEST(Builders, HgxH100Counts) {
    const ClusterGraph g = hgxH100();
    EXPECT_EQ(g.gpuCount(), 8);
    EXPECT_EQ(g.nodeCount(), 1);
    EXPECT_EQ(g.countOf(VertexKind::nvswitch), 4u);
    EXPECT_EQ(g.countOf(VertexKind::pcie_switch), 8u);
    EXPECT_EQ(g.countOf(VertexKind::cpu), 2u);
    EXPECT_EQ(g.countOf(VertexKind::nic), 8u);
    EXPECT_EQ(g.countOf(VertexKind::storage), 1u);
    EXPECT_EQ(g.countOf(VertexKind::leaf), 0u);
    EXPECT_EQ(linksOfKind(g, LinkKind::nvlink), 64u);
    EXPECT_EQ(linksOfKind(g, LinkKind::pcie), 48u);  // GPU–switch, switch–CPU, NIC–switch, both ways
    EXPECT_EQ(linksOfKind(g, LinkKind::host_memory), 2u);
    EXPECT_EQ(linksOfKind(g, LinkKind::storage), 2u);
    EXPECT_EQ(g.links().size(), 116u);
    for (int r = 0; r < 8; ++r) EXPECT_DOUBLE_EQ(g.nvlinkBandwidth(r), 450e9);
}

// Expectations: the NVSwitch link groups are 5+4+4+5 links of 25 GB/s.
TEST(Builders, HgxH200LinkGroups) {
    const ClusterGraph g = hgxH200();
    std::vector<double> groups;
    for (auto e : boost::make_iterator_range(boost::out_edges(g.gpu(3), g.graph())))
        if (g.links()[g.graph()[e].link].kind == LinkKind::nvlink) groups.push_back(g.links()[g.graph()[e].link].capacity_Bps);
    EXPECT_EQ(groups, (std::vector<double>{125e9, 100e9, 100e9, 125e9}));
}

// Expectations: 2 NVSwitch chips, 9+9 NVLink-5 links of 50 GB/s = 900 GB/s per GPU.
TEST(Builders, HgxB200Counts) {
    const ClusterGraph g = hgxB200();
    EXPECT_EQ(g.gpuCount(), 8);
    EXPECT_EQ(g.countOf(VertexKind::nvswitch), 2u);
    EXPECT_EQ(linksOfKind(g, LinkKind::nvlink), 32u);
    for (int r = 0; r < 8; ++r) EXPECT_DOUBLE_EQ(g.nvlinkBandwidth(r), 900e9);
}

// Expectations: no NVLink; 2 PCIe switches, 2 CPUs; GPU–switch 8, switch–CPU 2, NIC–switch 8 PCIe links.
TEST(Builders, PcieNodeCounts) {
    const ClusterGraph g = pcieNode(8);
    EXPECT_EQ(g.gpuCount(), 8);
    EXPECT_EQ(g.countOf(VertexKind::nvswitch), 0u);
    EXPECT_EQ(g.countOf(VertexKind::pcie_switch), 2u);
    EXPECT_EQ(g.countOf(VertexKind::cpu), 2u);
    EXPECT_EQ(linksOfKind(g, LinkKind::nvlink), 0u);
    EXPECT_EQ(linksOfKind(g, LinkKind::pcie), 36u);
    EXPECT_DOUBLE_EQ(g.nvlinkBandwidth(0), 0.0);
}

// Expectations: 72 GPUs, 18 NVSwitch chips, one 50 GB/s link from every GPU to every chip (900 GB/s).
TEST(Builders, Nvl72Counts) {
    const ClusterGraph g = nvl72();
    EXPECT_EQ(g.gpuCount(), 72);
    EXPECT_EQ(g.nodeCount(), 1);
    EXPECT_EQ(g.countOf(VertexKind::nvswitch), 18u);
    EXPECT_EQ(g.countOf(VertexKind::cpu), 36u);
    EXPECT_EQ(g.countOf(VertexKind::storage), 18u);
    EXPECT_EQ(linksOfKind(g, LinkKind::nvlink), 2u * 72 * 18);
    EXPECT_DOUBLE_EQ(g.nvlinkBandwidth(71), 900e9);
}

// Expectations: 2 HGX nodes on a rail-optimized fat tree: 8 rail leaves, 8 spines; NIC–leaf 16 links,
// every leaf to every spine 64 links (both ways); 400 Gb/s = 50 GB/s per GPU.
TEST(Builders, TwoNodeFatTreeCounts) {
    const ClusterGraph g = cluster(hgxH100Node(), 2);
    EXPECT_EQ(g.gpuCount(), 16);
    EXPECT_EQ(g.nodeCount(), 2);
    EXPECT_EQ(g.countOf(VertexKind::nic), 16u);
    EXPECT_EQ(g.countOf(VertexKind::leaf), 8u);
    EXPECT_EQ(g.countOf(VertexKind::spine), 8u);
    EXPECT_EQ(linksOfKind(g, LinkKind::nic), 32u);
    EXPECT_EQ(linksOfKind(g, LinkKind::network), 128u);
    EXPECT_EQ(g.nodeOf(8), 1);
    EXPECT_EQ(g.localRank(9), 1);
    EXPECT_DOUBLE_EQ(*g.nicBandwidth(5), 50e9);
}

// Expectations: 1024 GPUs = 128 nodes = 4 scalable units of 32 nodes: 4×8 leaves, 8 spines.
TEST(Builders, ThousandGpuCluster) {
    const ClusterGraph g = cluster(hgxH200Node(), 128);
    EXPECT_EQ(g.gpuCount(), 1024);
    EXPECT_EQ(g.countOf(VertexKind::leaf), 32u);
    EXPECT_EQ(g.countOf(VertexKind::spine), 8u);
    EXPECT_EQ(linksOfKind(g, LinkKind::network), 2u * 32 * 8);
}

// Expectations: gpus_per_node 4 keeps GPUs 0–3 of each node and their 4 NICs; ranks stay dense.
TEST(Builders, FewerGpusPerNode) {
    const ClusterGraph g = cluster(hgxH100Node(), 2, NetworkSpec{}, 4);
    EXPECT_EQ(g.gpuCount(), 8);
    EXPECT_EQ(g.countOf(VertexKind::nic), 8u);
    EXPECT_EQ(g.countOf(VertexKind::leaf), 4u);
    EXPECT_EQ(g.nodeOf(4), 1);
    EXPECT_EQ(g.vertex(g.gpu(4)).name, "n1.gpu0");
}

// Expectations: more GPUs per node than the node has is an InputError naming cluster.gpus_per_node.
TEST(Builders, TooManyGpusPerNodeIsAnError) {
    try {
        cluster(hgxH100Node(), 1, NetworkSpec{}, 9);
        FAIL() << "expected InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("cluster.gpus_per_node"), std::string::npos) << e.what();
    }
}

// Expectations: buildCluster reads ClusterSpec; an unknown node type names cluster.node.
TEST(Builders, BuildClusterFromSpec) {
    ClusterSpec spec;
    spec.node = "hgx-b200";
    spec.nodes = 3;
    spec.network.oversubscription = 2.0;
    const ClusterGraph g = buildCluster(spec, "");
    EXPECT_EQ(g.gpuCount(), 24);
    EXPECT_EQ(g.nodeCount(), 3);
    spec.node = "dgx-h999";
    EXPECT_THROW(buildCluster(spec, ""), InputError);
}

// Expectations: merging the 4 NVSwitch chips of an HGX H100 gives one switch vertex with one 450 GB/s
// edge per GPU, the single route then has the GPU's full NVLink bandwidth, and the bisection is unchanged.
TEST(Builders, MergedNvSwitchesIsFlowEquivalent) {
    const ClusterGraph g = cluster(mergedNvSwitches(hgxH100Node()), 1);
    EXPECT_EQ(g.countOf(VertexKind::nvswitch), 1u);
    EXPECT_EQ(linksOfKind(g, LinkKind::nvlink), 16u);
    EXPECT_DOUBLE_EQ(g.nvlinkBandwidth(2), 450e9);
    EXPECT_DOUBLE_EQ(g.bottleneck_Bps(g.route(2, 6)), 450e9);
    EXPECT_EQ(g.routes(2, 6).size(), 1u);
    EXPECT_EQ(*g.bisectionBandwidth(), *hgxH100().bisectionBandwidth());
    EXPECT_EQ(g.vertex(*g.hostCpu(6)).name, "n0.cpu1");
}

}  // namespace
}  // namespace stepsim
