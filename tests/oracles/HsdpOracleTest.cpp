// Oracle of HSDP (HsdpSchedule.hpp: FSDP2 sharded over the G ranks of a node, replicated over the M nodes) under the
// round-number profile (OracleProfile.hpp), on M = 2 nodes of G = 2 GPUs (the DataParallelOracleTest case otherwise:
// L = 4 blocks of h = 1024, V = 8192, T = 1024, micro-batch 2, fp32 parameters, fp32 reduction; n_block = 12h² + 4h,
// n_root = 2Vh + Th + 2h).
//
// Across nodes a flow runs GPU → its PCIe switch → NIC → leaf → NIC → PCIe switch → GPU (GPUDirect RDMA on the HGX
// board, Builders.hpp): two PCIe Gen5 x16 links of B_pcie = 55 GB/s and the NICs (here 3200 Gb/s = 400 GB/s). A
// collective's flows are bounded by S·F/β alone (CollectiveAlgorithms.hpp), so across nodes it takes
//     t_x(kind, n, S) = α + S·F(kind, n) / min(β, B_pcie, B_nic)
// — the closed form over β alone (t = α + S·F/β) holds only when β is below every link of the route. With the
// profile's β = 100 GB/s the PCIe hop is the bottleneck (the replica all-reduce of a block, S = 4·n_block/G =
// 25.2 MB: 10 + 25.2e6/55e9 s = 467.7 µs, not the 261.7 µs of β); with β = 40 GB/s every link is faster and the
// closed form over β holds exactly.
//
// Expectations, per step (step 1) and rank:
//   shard group (the node's G ranks, NVLink): FSDP2's 2L + 1 all-gathers and L + 1 reduce-scatters of 4·n_unit bytes,
//     each t(kind, G, S) = α + S·F/β;
//   replica group (one rank per node, one rail): after each reduce-scatter an all-reduce of the reduced shard,
//     4·n_unit/G bytes, L + 1 of them, each t_x(AR, M, 4·n_unit/G);
//   exposed: at least the root's all-gather (nothing before it), reduce-scatter and replica all-reduce (nothing after
//     them), at most that plus the first block's three (every other block's hidden under its neighbour's compute:
//     t_x(AR) of a block is 468 µs against ≥ 1 ms of a block's backward); step = C + exposed (C the rank's kernels);
//   memory: FSDP2's sharded over G (not G·M): parameters 4n/G, optimizer state 8n/G.
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "tests/oracles/OracleProfile.hpp"

namespace stepsim::oracles {
namespace {

constexpr double h = 1024, V = 8192, T = 1024, L = 4;
constexpr double kBlockParams = 12 * h * h + 4 * h;
constexpr double kRootParams = 2 * V * h + T * h + 2 * h;
constexpr double n = L * kBlockParams + kRootParams;
constexpr int G = 2, M = 2;
constexpr double kPcie = 55e9;  // B/s, PCIe Gen5 x16 between a GPU and its NIC (Builders.hpp)
constexpr double kRel = 1e-9;

Scenario hsdp() {
    Scenario sc = oracleScenario(G);
    sc.cluster.nodes = M;
    sc.parallel.data = DataParallel::hsdp;
    return sc;
}

// A profile whose every collective runs at `busbw` (the round profile's α).
HardwareProfile profileWithBusBw(double busbw) {
    HardwareProfile p = roundProfile();
    for (CollectiveFit& f : p.collectives)
        for (CollectiveSegment& s : f.segments) s.busbw_gbps = busbw / 1e9;
    return p;
}

double crossNodeSeconds(CollectiveKind kind, int ranks, double bytes, double busbw) {
    return kAlpha + bytes * busFactor(kind, ranks) / std::min({busbw, kPcie, 3200e9 / 8});
}

struct Step {
    int gathers = 0, scatters = 0, replica_reduces = 0;
};

// Step 1's collectives of rank 0's groups, each checked against its closed form at `busbw`.
Step checkCollectives(const Simulation& sim, double busbw) {
    Step s;
    for (const CollectiveRecord& c : sim.timeline.collectives) {
        const std::vector<int>& r = sim.expansion.workload.groups[std::size_t(c.group)].ranks;
        if (c.step != 1 || std::find(r.begin(), r.end(), 0) == r.end()) continue;
        const bool cross = r.front() / G != r.back() / G;
        const double got = (c.end - c.start).seconds();
        if (cross) {
            EXPECT_EQ(c.kind, CollectiveKind::all_reduce);
            EXPECT_EQ(int(r.size()), M);
            EXPECT_TRUE(c.bytes == 4 * kBlockParams / G || c.bytes == 4 * kRootParams / G) << c.bytes;
            const double want = crossNodeSeconds(c.kind, M, c.bytes, busbw);
            EXPECT_NEAR(got, want, kRel * want + 2e-12) << "replica all-reduce of " << c.bytes << " B";
            ++s.replica_reduces;
        } else {
            EXPECT_EQ(int(r.size()), G);
            EXPECT_TRUE(c.bytes == 4 * kBlockParams || c.bytes == 4 * kRootParams) << c.bytes;
            const double want = kAlpha + c.bytes * busFactor(c.kind, G) / busbw;
            EXPECT_NEAR(got, want, kRel * want + 2e-12) << "shard-group collective of " << c.bytes << " B";
            s.gathers += c.kind == CollectiveKind::all_gather;
            s.scatters += c.kind == CollectiveKind::reduce_scatter;
        }
    }
    return s;
}

TEST(HsdpOracle, ReplicaAllReducesRunAtThePcieHopBetweenGpuAndNicWhenBetaIsAboveIt) {
    const Simulation sim = simulateRound(hsdp());
    const Step s = checkCollectives(sim, kBusBw);
    EXPECT_EQ(s.gathers, 2 * L + 1);
    EXPECT_EQ(s.scatters, L + 1);
    EXPECT_EQ(s.replica_reduces, L + 1);
}

TEST(HsdpOracle, ReplicaAllReducesTakeTheClosedFormOverBetaWhenEveryLinkIsFaster) {
    const HardwareProfile slow = profileWithBusBw(40e9);
    const Simulation sim = simulateOn(hsdp(), slow);
    const Step s = checkCollectives(sim, 40e9);
    EXPECT_EQ(s.replica_reduces, L + 1);
    // Exactly the closed form over β: 40 GB/s is below the PCIe hop's 55 and the NIC's 400.
    for (const CollectiveRecord& c : sim.timeline.collectives) {
        const std::vector<int>& r = sim.expansion.workload.groups[std::size_t(c.group)].ranks;
        if (c.step == 1 && r.front() / G != r.back() / G) {
            const double want = kAlpha + c.bytes * busFactor(c.kind, M) / 40e9;
            EXPECT_NEAR((c.end - c.start).seconds(), want, kRel * want + 2e-12);
        }
    }
}

TEST(HsdpOracle, OnlyTheRootsCollectivesAndAtMostTheFirstBlocksAreExposed) {
    const Simulation sim = simulateRound(hsdp());
    auto ms = [](double s) { return s * 1e3; };
    const double root = ms(collectiveSeconds(CollectiveKind::all_gather, G, 4 * kRootParams) +
                           collectiveSeconds(CollectiveKind::reduce_scatter, G, 4 * kRootParams) +
                           crossNodeSeconds(CollectiveKind::all_reduce, M, 4 * kRootParams / G, kBusBw));
    const double block0 = ms(collectiveSeconds(CollectiveKind::all_gather, G, 4 * kBlockParams) +
                             collectiveSeconds(CollectiveKind::reduce_scatter, G, 4 * kBlockParams) +
                             crossNodeSeconds(CollectiveKind::all_reduce, M, 4 * kBlockParams / G, kBusBw));
    EXPECT_GE(sim.results.exposed_comm_ms, root * (1 - kRel));
    EXPECT_LE(sim.results.exposed_comm_ms, (root + block0) * (1 + kRel));
    const Program& p = sim.expansion.workload.programs[0];
    const double rounding_ms =
        double(std::count_if(p.ops.begin(), p.ops.end(), [](const Op& op) { return op.step == 1; })) * 1e-9;
    EXPECT_NEAR(sim.results.step_time_ms, kernelSeconds(p, 1) * 1e3 + sim.results.exposed_comm_ms, rounding_ms);
}

TEST(HsdpOracle, ShardsOverTheNodeNotTheWorld) {
    const MemoryEstimate m = simulateRound(hsdp()).expansion.memory;
    EXPECT_DOUBLE_EQ(m.params, 4 * n / G);
    EXPECT_DOUBLE_EQ(m.optimizer, 8 * n / G);
}

}  // namespace
}  // namespace stepsim::oracles
