// Flow sets of the collective algorithms: who sends how much to whom, and that they end together alone.
#include "sim/net/CollectiveAlgorithms.hpp"

#include <map>
#include <numeric>

#include <gtest/gtest.h>

namespace stepsim {
namespace {

Fabric nodes(int n_nodes, int gpus_per_node) {
    Fabric f;
    f.gpus = n_nodes * gpus_per_node;
    f.gpus_per_node = gpus_per_node;
    return f;
}
std::vector<int> iota(int n, int first = 0) {
    std::vector<int> r(n);
    std::iota(r.begin(), r.end(), first);
    return r;
}
double bytesBetween(const std::vector<FlowSpec>& flows, const Fabric& f, int node_a, int node_b) {
    double b = 0;
    for (const FlowSpec& s : flows)
        if (f.nodeOf(s.src) == node_a && f.nodeOf(s.dst) == node_b) b += s.bytes;
    return b;
}

TEST(CollectiveAlgorithms, RingOnOneNodeIsOneFlowPerRankToItsSuccessor) {
    const Fabric f = nodes(1, 8);
    const auto flows = ringFlows(iota(8), f, 100.0, 1.0);
    ASSERT_EQ(flows.size(), 8u);
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(flows[i].src, i);
        EXPECT_EQ(flows[i].dst, (i + 1) % 8);
        EXPECT_DOUBLE_EQ(flows[i].bytes, 100.0);
    }
}

// 2 × 8: the hops 7 → 8 and 15 → 0 become 8 rail flows each (GPU j → GPU j of the other node), 1/8 of the bytes.
TEST(CollectiveAlgorithms, RingSplitsNodeCrossingHopsOverTheRails) {
    const Fabric f = nodes(2, 8);
    const auto flows = ringFlows(iota(16), f, 80.0, 1.0);
    ASSERT_EQ(flows.size(), 14u + 16u);
    int cross = 0;
    for (const FlowSpec& s : flows) {
        if (f.nodeOf(s.src) == f.nodeOf(s.dst)) {
            EXPECT_DOUBLE_EQ(s.bytes, 80.0);
            continue;
        }
        ++cross;
        EXPECT_EQ(s.src % 8, s.dst % 8) << "not rail-aligned";
        EXPECT_DOUBLE_EQ(s.bytes, 10.0);
    }
    EXPECT_EQ(cross, 16);
    EXPECT_DOUBLE_EQ(bytesBetween(flows, f, 0, 1), 80.0);
    EXPECT_DOUBLE_EQ(bytesBetween(flows, f, 1, 0), 80.0);
}

TEST(CollectiveAlgorithms, RingHopWithoutARailPeerStaysOneFlow) {
    const Fabric f = nodes(2, 8);
    const auto flows = ringFlows({0, 9}, f, 50.0, 1.0);
    ASSERT_EQ(flows.size(), 2u);
    EXPECT_EQ(flows[0].src, 0);
    EXPECT_EQ(flows[0].dst, 9);
}

// Every flow of a collective is bounded by bytes / t_bw, so alone they all end together at t_bw.
TEST(CollectiveAlgorithms, EveryFlowEndsAtTheBandwidthTimeAlone) {
    const Fabric f = nodes(2, 8);
    for (const std::string algo : {"Ring", "Tree", "NVLS", "Hierarchical"}) {
        const auto flows = collectiveFlows(CollectiveKind::all_reduce, algo, iota(16), f, 1e9, 300e9, 1.875);
        ASSERT_FALSE(flows.empty()) << algo;
        for (const FlowSpec& s : flows) EXPECT_NEAR(s.bytes / s.cap_Bps, 1e9 * 1.875 / 300e9, 1e-12) << algo;
    }
}

TEST(CollectiveAlgorithms, BroadcastIsAChainFromTheRoot) {
    const Fabric f = nodes(1, 8);
    const auto flows = broadcastFlows({3, 0, 1, 2}, f, 64.0, 1.0);
    ASSERT_EQ(flows.size(), 3u);
    for (const FlowSpec& s : flows) {
        EXPECT_NE(s.dst, 3) << "nothing flows back into the root";
        EXPECT_DOUBLE_EQ(s.bytes, 64.0);
    }
    EXPECT_EQ(flows[0].src, 3);
}

// Inside a node the tree is a chain carrying S each way on every edge (two trees × (S/2 up + S/2 down)).
TEST(CollectiveAlgorithms, TreeChainCarriesTheMessageEachWay) {
    const Fabric f = nodes(1, 8);
    const auto flows = treeFlows(iota(8), f, 100.0, 1.0);
    ASSERT_EQ(flows.size(), 14u);
    for (const FlowSpec& s : flows) {
        EXPECT_EQ(std::abs(s.src - s.dst), 1);
        EXPECT_DOUBLE_EQ(s.bytes, 100.0);
    }
}

// Across M nodes each of the two binary trees has M−1 edges carrying S/2 each way: 2·2·(M−1) inter-node flows
// of S/2 with one GPU per node, and every node sends to and receives from the others.
TEST(CollectiveAlgorithms, DoubleBinaryTreeSpansEveryNodeTwice) {
    for (int m : {2, 3, 4, 5, 8}) {
        const Fabric f = nodes(m, 1);
        const auto flows = treeFlows(iota(m), f, 100.0, 1.0);
        ASSERT_EQ(flows.size(), std::size_t(4 * (m - 1))) << m;
        std::map<int, int> out, in;
        for (const FlowSpec& s : flows) {
            EXPECT_DOUBLE_EQ(s.bytes, 50.0);
            ++out[s.src], ++in[s.dst];
        }
        EXPECT_EQ(int(out.size()), m) << m;
        EXPECT_EQ(int(in.size()), m) << m;
    }
}

// 2 nodes × 8: the node-to-node tree edges are split over the 8 rails; S crosses each way in all.
TEST(CollectiveAlgorithms, TreeInterNodeEdgesUseTheRails) {
    const Fabric f = nodes(2, 8);
    const auto flows = treeFlows(iota(16), f, 160.0, 1.0);
    EXPECT_DOUBLE_EQ(bytesBetween(flows, f, 0, 1), 160.0);
    EXPECT_DOUBLE_EQ(bytesBetween(flows, f, 1, 0), 160.0);
    for (const FlowSpec& s : flows)
        if (f.nodeOf(s.src) != f.nodeOf(s.dst)) EXPECT_EQ(s.src % 8, s.dst % 8);
}

// NVLS: every GPU sends S·(n+1)/n up to the switch and receives as much, once.
TEST(CollectiveAlgorithms, NvlsSendsAndReceivesOncePerGpu) {
    const auto flows = nvlsFlows(iota(8), 800.0, 1.0);
    ASSERT_EQ(flows.size(), 8u);
    std::map<int, int> out, in;
    for (const FlowSpec& s : flows) {
        EXPECT_DOUBLE_EQ(s.bytes, 900.0);
        ++out[s.src], ++in[s.dst];
    }
    for (int g = 0; g < 8; ++g) {
        EXPECT_EQ(out[g], 1);
        EXPECT_EQ(in[g], 1);
    }
}

// Hierarchical on 2 × 8: intra-node rings of 2·S·7/8 per hop, one inter-node ring per rail of 2·(S/8)·1/2.
TEST(CollectiveAlgorithms, HierarchicalIsIntraRingsPlusOneRingPerRail) {
    const Fabric f = nodes(2, 8);
    const auto flows = hierarchicalFlows(iota(16), f, 800.0, 1.0);
    ASSERT_EQ(flows.size(), 16u + 16u);
    int inter = 0;
    for (const FlowSpec& s : flows) {
        if (f.nodeOf(s.src) == f.nodeOf(s.dst)) {
            EXPECT_DOUBLE_EQ(s.bytes, 1400.0);
        } else {
            ++inter;
            EXPECT_EQ(s.src % 8, s.dst % 8);
            EXPECT_DOUBLE_EQ(s.bytes, 100.0);
        }
    }
    EXPECT_EQ(inter, 16);
}

TEST(CollectiveAlgorithms, AllToAllSendsAnNthToEveryPeer) {
    const auto flows = allToAllFlows(iota(4), nodes(1, 8), 400.0, 1.0);
    ASSERT_EQ(flows.size(), 12u);
    for (const FlowSpec& s : flows) {
        EXPECT_NE(s.src, s.dst);
        EXPECT_DOUBLE_EQ(s.bytes, 100.0);
    }
}

TEST(CollectiveAlgorithms, SendRecvBetweenTwoRanksIsOneFlow) {
    const auto flows = sendRecvFlows({2, 5}, nodes(1, 8), 1e6, 1.0);
    ASSERT_EQ(flows.size(), 1u);
    EXPECT_EQ(flows[0].src, 2);
    EXPECT_EQ(flows[0].dst, 5);
    EXPECT_DOUBLE_EQ(flows[0].bytes, 1e6);
}

// PXN: GPU 7 of node 0 → GPU 8 (local 0) of node 1 goes 7 → 0 over NVLink, then 0 → 8 on rail 0.
TEST(CollectiveAlgorithms, CrossRailSendGoesThroughTheRailPeer) {
    const auto flows = sendRecvFlows({7, 8}, nodes(2, 8), 1e6, 1.0);
    ASSERT_EQ(flows.size(), 2u);
    EXPECT_EQ(flows[0].src, 7);
    EXPECT_EQ(flows[0].dst, 0);
    EXPECT_EQ(flows[1].src, 0);
    EXPECT_EQ(flows[1].dst, 8);
    const auto same_rail = sendRecvFlows({3, 11}, nodes(2, 8), 1e6, 1.0);
    ASSERT_EQ(same_rail.size(), 1u);
}

TEST(CollectiveAlgorithms, OneRankOrNoBytesMeansNoFlows) {
    const Fabric f = nodes(1, 8);
    EXPECT_TRUE(collectiveFlows(CollectiveKind::all_reduce, "Ring", {0}, f, 1e6, 1e9, 1.0).empty());
    EXPECT_TRUE(collectiveFlows(CollectiveKind::all_reduce, "Ring", iota(8), f, 0.0, 1e9, 1.75).empty());
}

}  // namespace
}  // namespace stepsim
