// Collectives run through the engine on real cluster topologies: alone they reproduce the cost model, on the
// NICs of a multi-node cluster they are bounded by the NICs, and collectives that share links slow each other.
#include <gtest/gtest.h>

#include "sim/engine/Engine.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ClusterBuild.hpp"

namespace stepsim {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

ClusterSpec clusterOf(const std::string& node, int n_nodes, int nics = 8, double nic_gbps = 400) {
    ClusterSpec c;
    c.node = node;
    c.nodes = n_nodes;
    c.gpus_per_node = 8;
    c.network.nics_per_node = nics;
    c.network.nic_gbps = nic_gbps;
    return c;
}

// Every rank of every listed group issues one collective of `bytes` on its own stream (one stream per group).
Workload collectives(int ranks, const std::vector<std::vector<int>>& groups, double bytes, CollectiveKind kind) {
    Workload w;
    w.programs.resize(ranks);
    for (auto& p : w.programs) p.streams.push_back({StreamKind::compute, "compute"});
    for (std::size_t g = 0; g < groups.size(); ++g) {
        w.groups.push_back({"g" + std::to_string(g), groups[g]});
        for (int r : groups[g]) {
            Program& p = w.programs[r];
            const auto stream = static_cast<std::uint8_t>(p.streams.size());
            p.streams.push_back({StreamKind::comm, "nccl" + std::to_string(g)});
            Op op;
            op.kind = OpKind::collective;
            op.cls = KernelClass::comm;
            op.stream = stream;
            op.collective = static_cast<std::uint32_t>(p.collectives.size());
            p.collectives.push_back({kind, int(g), bytes, "bf16"});
            p.ops.push_back(op);
        }
    }
    for (auto& p : w.programs) {
        Op end;
        end.kind = OpKind::step_end;
        end.stream = 0;
        p.ops.push_back(end);
    }
    return w;
}
Workload allReduces(int ranks, const std::vector<std::vector<int>>& groups, double bytes) {
    return collectives(ranks, groups, bytes, CollectiveKind::all_reduce);
}
std::vector<int> range(int first, int n, int stride = 1) {
    std::vector<int> r;
    for (int i = 0; i < n; ++i) r.push_back(first + i * stride);
    return r;
}

struct Rig {
    HardwareProfile profile;
    Fabric fabric;
    NcclSpec nccl;
    ClusterSpec cluster;
    Rig(const ClusterSpec& c, NcclSpec n) : profile(resolveProfile(c, "")), fabric(clusterFabric(c, "")), nccl(n),
                                            cluster(c) {}
    // Seconds of each collective (in group order), from start (all ranks present) to end.
    std::vector<double> durations(const Workload& w) const {
        const CostModel cost(profile, nccl, fabric.nvls_capable, cluster.network);
        EngineConfig cfg;
        cfg.jitter = false;
        const Timeline tl = Engine(w, cost, fabric, cfg).run();
        std::vector<double> d(w.groups.size());
        for (const CollectiveRecord& c : tl.collectives) d[c.group] = (c.end - c.start).seconds();
        return d;
    }
    CollectiveEstimate estimate(int ranks, int nodes, double bytes,
                                CollectiveKind kind = CollectiveKind::all_reduce) const {
        return CostModel(profile, nccl, fabric.nvls_capable, cluster.network).collective(kind, ranks, nodes, bytes);
    }
};
NcclSpec forced(NcclAlgo a, NcclProto p = NcclProto::auto_) {
    NcclSpec n;
    n.algo = a;
    n.proto = p;
    return n;
}
double busbw(double bytes, int n, double seconds) { return bytes * 2.0 * (n - 1) / n / seconds; }

// One node, Ring forced: the engine's time is α + S·F/busbw of the cost model, to the picosecond rounding.
TEST(CollectiveContention, IntraNodeRingAloneReproducesTheCostModel) {
    const Rig run(clusterOf("hgx-h200", 1), forced(NcclAlgo::ring, NcclProto::simple));
    const double s = 256e6;
    const CollectiveEstimate e = run.estimate(8, 1, s);
    const double t = run.durations(allReduces(8, {range(0, 8)}, s))[0];
    EXPECT_NEAR(t, e.seconds(s), 1e-10);
    EXPECT_EQ(e.algo, "Ring");
}

// 2 × 8 H200, Ring: the NICs bound it. With 8 × 200 Gb/s NICs (25 GB/s each) the bus bandwidth is 8 × 25 = 200
// GB/s, not the 370.8 of NVLink, and the engine's flows on the topology reach exactly that.
TEST(CollectiveContention, TwoNodeAllReduceIsBoundedByTheNics) {
    const Rig run(clusterOf("hgx-h200", 2, 8, 200), forced(NcclAlgo::ring, NcclProto::simple));
    const double s = kGiB;
    const CollectiveEstimate e = run.estimate(16, 2, s);
    EXPECT_NEAR(e.busbw_Bps, 200e9, 1e6);
    const double t = run.durations(allReduces(16, {range(0, 16)}, s))[0];
    EXPECT_NEAR(t, e.seconds(s), 1e-9);
    EXPECT_NEAR(busbw(s, 16, t - e.alpha_s) / 1e9, 200.0, 0.5);
}

// Every op and algorithm alone on 2 × 8 H200 (8 × 400 Gb/s, rail fat tree) reproduces the cost model: its flows
// (rail-split rings and trees, PXN for point-to-point) fit the NVLink, PCIe, NIC and leaf links.
TEST(CollectiveContention, EveryCollectiveAloneOnTwoNodesReproducesTheCostModel) {
    const double s = 256e6;
    for (NcclAlgo a : {NcclAlgo::ring, NcclAlgo::tree}) {
        const Rig rig(clusterOf("hgx-h200", 2), forced(a, NcclProto::simple));
        const double t = rig.durations(allReduces(16, {range(0, 16)}, s))[0];
        EXPECT_NEAR(t / rig.estimate(16, 2, s).seconds(s), 1.0, 1e-6) << int(a);
    }
    const Rig rig(clusterOf("hgx-h200", 2), NcclSpec{});
    for (CollectiveKind k : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::alltoall,
                             CollectiveKind::broadcast, CollectiveKind::sendrecv}) {
        const double t = rig.durations(collectives(16, {range(0, 16)}, s, k))[0];
        EXPECT_NEAR(t / rig.estimate(16, 2, s, k).seconds(s), 1.0, 1e-6) << collectiveKindName(k);
    }
}

// The topology binds even where the cost model would not: the cost model is told 8 × 400 Gb/s NICs but the
// cluster has 8 × 100 Gb/s (12.5 GB/s each), so the rail flows are held to 8 × 12.5 = 100 GB/s by the links.
TEST(CollectiveContention, TopologyNicsBindWhenTheyAreSlowerThanPredicted) {
    Rig run(clusterOf("hgx-h200", 2, 8, 100), forced(NcclAlgo::ring, NcclProto::simple));
    run.cluster.network.nic_gbps = 400;  // the cost model's belief
    const double s = kGiB;
    const CollectiveEstimate e = run.estimate(16, 2, s);
    const double t = run.durations(allReduces(16, {range(0, 16)}, s))[0];
    EXPECT_NEAR(busbw(s, 16, t - e.alpha_s) / 1e9, 100.0, 0.5);
}

// Two process groups whose rings share NICs: with 4 NICs per node GPUs 0 and 1 share NIC 0, so the 2-rank
// groups {0, 8} and {1, 9} each get half of it and take about twice as long as alone.
TEST(CollectiveContention, GroupsSharingNicsSlowEachOther) {
    const Rig run(clusterOf("hgx-h200", 2, 4, 400), forced(NcclAlgo::ring, NcclProto::simple));
    const double s = 512e6;
    const double alone = run.durations(allReduces(16, {{0, 8}}, s))[0];
    const auto both = run.durations(allReduces(16, {{0, 8}, {1, 9}}, s));
    EXPECT_GT(both[0], 1.8 * alone);
    EXPECT_GT(both[1], 1.8 * alone);
    // Groups on different NICs ({0, 8} on NIC 0, {2, 10} on NIC 1) do not interfere.
    const auto apart = run.durations(allReduces(16, {{0, 8}, {2, 10}}, s));
    EXPECT_NEAR(apart[0], alone, 1e-9);
}

// A tensor-parallel all_reduce inside node 0 and the data-parallel all_reduce of all 16 GPUs share node 0's
// NVLink: the data-parallel one slows down.
TEST(CollectiveContention, TensorParallelTrafficSlowsTheDataParallelRing) {
    const Rig run(clusterOf("hgx-h200", 2), forced(NcclAlgo::ring, NcclProto::simple));
    const double s = 512e6;
    const double alone = run.durations(allReduces(16, {range(0, 16)}, s))[0];
    const auto both = run.durations(allReduces(16, {range(0, 16), range(0, 8)}, s));
    EXPECT_GT(both[0], 1.3 * alone);
}

// Published nccl-tests runs: 8×H100 NVSwitch reaches ~370 GB/s bus bandwidth with Ring and ~480 with NVLS at large sizes; the
// engine on the hgx-h100 topology with the built-in h100-sxm profile, 1 GiB.
TEST(CollectiveContention, H100RingAndNvlsBusBandwidthAtOneGiB) {
    const double s = kGiB;
    const Rig ring(clusterOf("hgx-h100", 1), forced(NcclAlgo::ring, NcclProto::simple));
    const double t_ring = ring.durations(allReduces(8, {range(0, 8)}, s))[0];
    EXPECT_NEAR(busbw(s, 8, t_ring) / 1e9, 370.0, 10.0);
    const Rig nvls(clusterOf("hgx-h100", 1), NcclSpec{});
    EXPECT_EQ(nvls.estimate(8, 1, s).algo, "NVLS");
    const double t_nvls = nvls.durations(allReduces(8, {range(0, 8)}, s))[0];
    EXPECT_NEAR(busbw(s, 8, t_nvls) / 1e9, 480.0, 10.0);
}

}  // namespace
}  // namespace stepsim
