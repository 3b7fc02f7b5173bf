// CostModel::collective: NCCL's tuning model, its choice of algorithm and protocol, overrides, measured fits.
#include <gtest/gtest.h>

#include "sim/cost/CostModel.hpp"

namespace stepsim {
namespace {

// The default HardwareProfile carries NCCL's tuning.cc latencies; give it the H200 profile's ring net hops.
// One instance that outlives every CostModel made from it (a CostModel keeps a reference to its profile).
const HardwareProfile& profile() {
    static const HardwareProfile p = [] {
        HardwareProfile q;
        q.nccl.net_hop_latency_us[0] = 2.7;
        q.nccl.net_hop_latency_us[1] = 4.0;
        q.nccl.net_hop_latency_us[2] = 14.0;
        q.links.nic_gbps = 48.0;
        return q;
    }();
    return p;
}
NcclSpec forced(NcclAlgo a, NcclProto p = NcclProto::auto_, Switch nvls = Switch::auto_) {
    NcclSpec n;
    n.algo = a;
    n.proto = p;
    n.nvls = nvls;
    return n;
}
NetworkSpec network(int nics, double gbps) {
    NetworkSpec n;
    n.nics_per_node = nics;
    n.nic_gbps = gbps;
    return n;
}

// NCCL's src/graph/tuning.cc: one node, 8 ranks, Ring: latency = base + 2(n−1)·hop = 6.6 + 14·0.6 = 15.0 µs (LL) and
// 8.4 + 14·3.4 = 56.0 µs (Simple).
TEST(CollectiveModel, NcclRingLatencyOnOneNode) {
    const HardwareProfile p = profile();
    EXPECT_NEAR(CostModel(p, forced(NcclAlgo::ring, NcclProto::ll), true)
                    .collective(CollectiveKind::all_reduce, 8, 1, 1e6).alpha_s * 1e6, 15.0, 1e-9);
    EXPECT_NEAR(CostModel(p, forced(NcclAlgo::ring, NcclProto::simple), true)
                    .collective(CollectiveKind::all_reduce, 8, 1, 1e6).alpha_s * 1e6, 56.0, 1e-9);
}

// Two nodes × 8, Simple: 2(n−1) = 30 steps of which 2(N−1) = 2 cross the network: 8.4 + 28·3.4 + 2·14 µs.
TEST(CollectiveModel, NcclRingLatencyCountsInterNodeSteps) {
    const CollectiveEstimate e = CostModel(profile(), forced(NcclAlgo::ring, NcclProto::simple), true)
                                     .collective(CollectiveKind::all_reduce, 16, 2, 1e6);
    EXPECT_NEAR(e.alpha_s * 1e6, 8.4 + 28 * 3.4 + 2 * 14.0, 1e-9);
}

// Across nodes the ring runs one channel per NIC: busbw = min(NVLink ring, nics · NIC).
TEST(CollectiveModel, MultiNodeRingBandwidthIsNicsTimesNicCappedByNvlink) {
    const HardwareProfile p = profile();
    const NcclSpec ring = forced(NcclAlgo::ring, NcclProto::simple);
    auto bw = [&](NetworkSpec n) {
        return CostModel(p, ring, true, n).collective(CollectiveKind::all_reduce, 16, 2, 1e9).busbw_Bps / 1e9;
    };
    EXPECT_NEAR(bw(network(8, 400)), 370.8, 1e-9);    // 8 × 48 = 384 > 370.8: NVLink binds
    EXPECT_NEAR(bw(network(4, 400)), 4 * 48.0, 1e-9);  // 4 NICs
    EXPECT_NEAR(bw(network(8, 200)), 8 * 25.0, 1e-9);  // 200 Gb/s line rate below the profile's 48 GB/s
}

TEST(CollectiveModel, NvlsWinsLargeAllReduceOnOneNvSwitchNode) {
    const CostModel m(profile(), NcclSpec{}, true);
    const CollectiveEstimate big = m.collective(CollectiveKind::all_reduce, 8, 1, 1e9);
    EXPECT_EQ(big.algo, "NVLS");
    EXPECT_NEAR(big.busbw_Bps, 480e9, 1e-3);
    const CollectiveEstimate small = m.collective(CollectiveKind::all_reduce, 8, 1, 1024);
    EXPECT_EQ(small.algo, "Ring");
    EXPECT_EQ(small.proto, "LL");
}

TEST(CollectiveModel, NvlsIsNoCandidateAcrossNodesOrWhenSwitchedOff) {
    EXPECT_NE(CostModel(profile(), NcclSpec{}, true).collective(CollectiveKind::all_reduce, 16, 2, 1e9).algo, "NVLS");
    EXPECT_NE(CostModel(profile(), forced(NcclAlgo::auto_, NcclProto::auto_, Switch::off), true)
                  .collective(CollectiveKind::all_reduce, 8, 1, 1e9).algo,
              "NVLS");
    EXPECT_NE(CostModel(profile(), NcclSpec{}, false).collective(CollectiveKind::all_reduce, 8, 1, 1e9).algo, "NVLS");
}

// Tree's latency grows with log2 of the node count, Ring's linearly with the ranks: on 8 nodes × 8 a small
// all_reduce picks Tree. Tree LL: 6.8 + 2·(7·0.6 + 3·5.0) = 45.2 µs.
TEST(CollectiveModel, TreeWinsSmallAllReducesAcrossManyNodes) {
    const CollectiveEstimate e = CostModel(profile(), NcclSpec{}, true).collective(CollectiveKind::all_reduce, 64, 8, 4096);
    EXPECT_EQ(e.algo, "Tree");
    EXPECT_EQ(e.proto, "LL");
    EXPECT_NEAR(e.alpha_s * 1e6, 45.2, 1e-9);
}

// At 1 GiB Ring (busbw 370.8) beats Tree (F · 0.92 · 370.8 / 2 ≈ 320 in nccl-tests terms) on 2 nodes.
TEST(CollectiveModel, RingWinsLargeAllReducesAcrossNodes) {
    const CollectiveEstimate e = CostModel(profile(), NcclSpec{}, true).collective(CollectiveKind::all_reduce, 16, 2, 1 << 30);
    EXPECT_EQ(e.algo, "Ring");
    EXPECT_EQ(e.proto, "Simple");
    const CollectiveEstimate t = CostModel(profile(), forced(NcclAlgo::tree, NcclProto::simple), true)
                                     .collective(CollectiveKind::all_reduce, 16, 2, 1 << 30);
    EXPECT_NEAR(t.busbw_Bps / 1e9, 1.875 * 0.92 * 370.8 / 2, 1e-6);
}

TEST(CollectiveModel, ProtocolOverrideIsHonoured) {
    const CollectiveEstimate e = CostModel(profile(), forced(NcclAlgo::auto_, NcclProto::ll128), true)
                                     .collective(CollectiveKind::all_reduce, 8, 1, 1e9);
    EXPECT_EQ(e.proto, "LL128");
    EXPECT_NE(e.algo, "NVLS");  // NVLS has Simple only
}

// Forcing an algorithm the op does not have falls back to NCCL's choice, flagged.
TEST(CollectiveModel, ImpossibleOverrideFallsBackFlagged) {
    const CollectiveEstimate e = CostModel(profile(), forced(NcclAlgo::nvls), true)
                                     .collective(CollectiveKind::all_gather, 8, 1, 1e6);
    EXPECT_EQ(e.algo, "Ring");
    EXPECT_FALSE(e.in_domain);
}

TEST(CollectiveModel, MeasuredFitWinsWhenItMatchesExactly) {
    HardwareProfile p = profile();
    CollectiveFit fit;
    fit.op = "all_reduce";
    fit.ranks = 8;
    fit.segments.push_back({0, 1e12, 30.0, 300.0, 0.0});
    p.collectives.push_back(fit);
    const CostModel m(p, NcclSpec{}, true);
    const CollectiveEstimate e = m.collective(CollectiveKind::all_reduce, 8, 1, 1e9);
    EXPECT_TRUE(e.measured);
    EXPECT_NEAR(e.busbw_Bps, 300e9, 1e-3);
    EXPECT_FALSE(m.collective(CollectiveKind::all_reduce, 16, 2, 1e9).measured);  // other rank count: the model
}

// All-to-all across nodes: a node's off-node bytes L·S·(n−L)/n cross its NICs, busbw = nics·nic·(n−1)/(L(n−L)).
TEST(CollectiveModel, MultiNodeAllToAllIsBoundByTheNics) {
    const CollectiveEstimate e =
        CostModel(profile(), NcclSpec{}, true).collective(CollectiveKind::alltoall, 16, 2, 1e9);
    EXPECT_EQ(e.algo, "P2P");
    EXPECT_NEAR(e.busbw_Bps / 1e9, 8 * 48.0 * 15 / 64, 1e-9);
}

}  // namespace
}  // namespace stepsim
