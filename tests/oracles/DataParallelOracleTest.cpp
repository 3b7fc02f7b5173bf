// Oracles of the data-parallel schedules (DDP, FSDP1, FSDP2, ZeRO-1/2/3) under the round-number profile
// (OracleProfile.hpp): the step's time and exposed communication from closed forms over the step's kernels and
// collectives, and the sharded strategies' memory from their papers' closed forms.
//
// The case (oracleScenario): 4 GPT blocks of h = 1024 (12h² + 4h parameters each), vocabulary V = 8192 untied,
// T = 1024 positions, micro-batch 2, fp32 parameters under bf16 autocast, jitter off, steps 0..2 (step 1 measured).
// Its parameters: n = 4·(12h² + 4h) + 2·V·h + T·h + 2h = 68,175,872. The host issues everything at no cost, so the
// GPU never waits for it: a rank's step is its kernels' time C (Σ work_s of the step's kernels, every stream) plus the
// time its compute stream waits for communication, which is what the metrics call exposed communication.
//
// Expectations (t(kind, S) = α + S·F(kind, n)/β, α = 10 µs, β = 100 GB/s):
//   single GPU   every GEMM 2mnk/P, attention FLOPs/P, memory-bound kernel bytes/H; the step = C exactly
//   DDP, 2 GPUs  bucket_cap_mb 1000: the first bucket is the LM head's gradient alone (4Vh bytes: its gradient comes
//                first and exceeds the 1 MiB first bucket), the second every other gradient, 4(n − Vh) bytes, ready
//                when the backward ends: its all-reduce is exposed whole and the first hidden under the backward,
//                step = C + t(AR, 4(n − Vh)), exposed = t(AR, 4(n − Vh))
//   FSDP1/FSDP2, 8 GPUs  per step 2L + 1 all-gathers (each block before its forward and its backward, the root
//                once) and L + 1 reduce-scatters, of 4·n_unit bytes; the root's all-gather (nothing before it) and
//                reduce-scatter (nothing after it) exposed whole, every middle block's hidden under its neighbour's
//                compute (t(AG, 4·n_block) = 451 µs against ≥ 600 µs of a block's forward): exposed between
//                t(AG, root) + t(RS, root) and that plus t(AG, h.0) + t(RS, h.0); step = C + exposed
//   ZeRO-1/2     (overlap_comm false, DeepSpeed's default below stage 3; reduce_bucket_size 5e8 > n: one bucket) every
//                collective after the backward and exposed: step = C + Σ t, exposed = Σ t, with the gradients'
//                reduction and the updated partitions' all-gather of 4n bytes each
//   ZeRO-3       the gradients' one reduce-scatter of 4n bytes after the backward exposed whole: exposed ≥ t(RS, 4n)
//   memory       (Rajbhandari et al. 2020, fp32 Adam: 4 bytes of parameter, 4 of gradient, 12 of optimizer state per
//                parameter) ZeRO-1 optimizer 12n/N; ZeRO-2 gradients 4n/N too; FSDP2 parameters 4n/N, optimizer 8n/N
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "tests/oracles/OracleProfile.hpp"

namespace stepsim::oracles {
namespace {

constexpr double h = 1024, V = 8192, T = 1024, L = 4;
constexpr double kBlockParams = 12 * h * h + 4 * h;
constexpr double kRootParams = 2 * V * h + T * h + 2 * h;
constexpr double n = L * kBlockParams + kRootParams;
constexpr double kRel = 1e-9;  // a double's closed form against the engine's picoseconds

// Every op's duration is rounded up to a whole picosecond: a sum over the step's ops is exact to one per op.
double roundingMs(const Simulation& sim) {
    const Program& p = sim.expansion.workload.programs[0];
    return double(std::count_if(p.ops.begin(), p.ops.end(), [](const Op& op) { return op.step == 1; })) * 1e-9;
}

// The collectives of step `step` of a group holding rank 0, in completion order.
std::vector<CollectiveRecord> rank0Collectives(const Simulation& sim, int step = 1) {
    std::vector<CollectiveRecord> out;
    for (const CollectiveRecord& c : sim.timeline.collectives) {
        const std::vector<int>& r = sim.expansion.workload.groups[std::size_t(c.group)].ranks;
        if (c.step == step && std::find(r.begin(), r.end(), 0) != r.end()) out.push_back(c);
    }
    return out;
}

int groupSize(const Simulation& sim, const CollectiveRecord& c) {
    return int(sim.expansion.workload.groups[std::size_t(c.group)].ranks.size());
}

double kernelsMs(const Simulation& sim) { return kernelSeconds(sim.expansion.workload.programs[0], 1) * 1e3; }

Scenario dataParallel(DataParallel d, int gpus) {
    Scenario sc = oracleScenario(gpus);
    sc.parallel.data = d;
    return sc;
}

TEST(RoundProfileOracle, EveryKernelTakesItsClosedFormAndOneGpuStepIsTheirSum) {
    const Simulation sim = simulateRound(oracleScenario(1));
    const Program& p = sim.expansion.workload.programs[0];
    int kernels = 0;
    for (const Op& op : p.ops) {
        if (op.kind != OpKind::kernel || op.step != 1) continue;
        ++kernels;
        const double want = op.cls == KernelClass::gemm        ? 2.0 * op.gemm.m * op.gemm.n * op.gemm.k / kPeak
                            : op.cls == KernelClass::attention ? op.flops / kPeak
                                                               : op.bytes / kHbm;
        EXPECT_NEAR(op.work_s, want, kRel * want) << p.names[op.name];
    }
    ASSERT_GT(kernels, 100);
    EXPECT_NEAR(sim.results.step_time_ms, kernelsMs(sim), roundingMs(sim));
    EXPECT_EQ(sim.results.exposed_comm_ms, 0.0);
}

TEST(DdpOracle, TheLastBucketsAllReduceIsExposedWhole) {
    Scenario sc = dataParallel(DataParallel::ddp, 2);
    sc.ddp.bucket_cap_mb = 1000;
    const Simulation sim = simulateRound(sc);
    ASSERT_EQ(sim.expansion.buckets.size(), 2u);
    EXPECT_DOUBLE_EQ(sim.expansion.buckets[0].bytes, 4 * V * h);
    EXPECT_DOUBLE_EQ(sim.expansion.buckets[1].bytes, 4 * (n - V * h));
    const double last_ms = collectiveSeconds(CollectiveKind::all_reduce, 2, 4 * (n - V * h)) * 1e3;
    EXPECT_NEAR(sim.results.exposed_comm_ms, last_ms, kRel * last_ms);
    EXPECT_NEAR(sim.results.step_time_ms, kernelsMs(sim) + last_ms, roundingMs(sim));
}

void expectFsdpOracle(DataParallel d) {
    const Simulation sim = simulateRound(dataParallel(d, 8));
    const std::vector<CollectiveRecord> calls = rank0Collectives(sim);
    int gathers = 0, scatters = 0;
    for (const CollectiveRecord& c : calls) {
        const bool root = c.bytes == 4 * kRootParams;
        EXPECT_TRUE(root || c.bytes == 4 * kBlockParams) << c.bytes;
        gathers += c.kind == CollectiveKind::all_gather;
        scatters += c.kind == CollectiveKind::reduce_scatter;
    }
    EXPECT_EQ(gathers, 2 * L + 1);
    EXPECT_EQ(scatters, L + 1);
    auto t = [](CollectiveKind k, double params) { return collectiveSeconds(k, 8, 4 * params) * 1e3; };
    const double root = t(CollectiveKind::all_gather, kRootParams) + t(CollectiveKind::reduce_scatter, kRootParams);
    const double block0 = t(CollectiveKind::all_gather, kBlockParams) + t(CollectiveKind::reduce_scatter, kBlockParams);
    EXPECT_GE(sim.results.exposed_comm_ms, root * (1 - kRel));
    EXPECT_LE(sim.results.exposed_comm_ms, (root + block0) * (1 + kRel));
    EXPECT_NEAR(sim.results.step_time_ms, kernelsMs(sim) + sim.results.exposed_comm_ms,
                roundingMs(sim));
}

TEST(Fsdp1Oracle, GathersAheadOfEachUnitWithOnlyTheEndsExposed) { expectFsdpOracle(DataParallel::fsdp1); }
TEST(Fsdp2Oracle, GathersAheadOfEachUnitWithOnlyTheEndsExposed) { expectFsdpOracle(DataParallel::fsdp2); }

TEST(Fsdp2Oracle, ShardsParametersAndOptimizerStateOverTheGroup) {
    const MemoryEstimate m = simulateRound(dataParallel(DataParallel::fsdp2, 8)).expansion.memory;
    EXPECT_DOUBLE_EQ(m.params, 4 * n / 8);
    EXPECT_DOUBLE_EQ(m.optimizer, 8 * n / 8);
}

void expectZeroBelowStage3(DataParallel d) {
    const Simulation sim = simulateRound(dataParallel(d, 8));
    double comm_ms = 0;
    bool reduced = false, gathered = false;
    for (const CollectiveRecord& c : rank0Collectives(sim)) {
        comm_ms += collectiveSeconds(c.kind, groupSize(sim, c), c.bytes) * 1e3;
        reduced = reduced || (c.kind != CollectiveKind::all_gather && c.bytes == 4 * n);
        gathered = gathered || (c.kind == CollectiveKind::all_gather && c.bytes == 4 * n);
    }
    EXPECT_TRUE(reduced);
    EXPECT_TRUE(gathered);
    EXPECT_NEAR(sim.results.exposed_comm_ms, comm_ms, kRel * comm_ms);
    EXPECT_NEAR(sim.results.step_time_ms, kernelsMs(sim) + comm_ms, roundingMs(sim));
}

TEST(ZeroOracle, Stage1ReducesAfterTheBackwardAndShardsTheOptimizerState) {
    expectZeroBelowStage3(DataParallel::zero1);
    EXPECT_DOUBLE_EQ(simulateRound(dataParallel(DataParallel::zero1, 8)).expansion.memory.optimizer, 12 * n / 8);
}

TEST(ZeroOracle, Stage2AlsoShardsTheGradients) {
    expectZeroBelowStage3(DataParallel::zero2);
    const MemoryEstimate m = simulateRound(dataParallel(DataParallel::zero2, 8)).expansion.memory;
    EXPECT_DOUBLE_EQ(m.optimizer, 12 * n / 8);
    EXPECT_DOUBLE_EQ(m.grads, 4 * n / 8);
}

TEST(ZeroOracle, Stage3ReduceScattersEveryGradientAfterTheBackward) {
    const Simulation sim = simulateRound(dataParallel(DataParallel::zero3, 8));
    const std::vector<CollectiveRecord> calls = rank0Collectives(sim);
    ASSERT_EQ(std::count_if(calls.begin(), calls.end(),
                            [](const CollectiveRecord& c) {
                                return c.kind == CollectiveKind::reduce_scatter && c.bytes == 4 * n;
                            }),
              1);
    const double rs_ms = collectiveSeconds(CollectiveKind::reduce_scatter, 8, 4 * n) * 1e3;
    EXPECT_GE(sim.results.exposed_comm_ms, rs_ms * (1 - kRel));
    EXPECT_NEAR(sim.results.step_time_ms, kernelsMs(sim) + sim.results.exposed_comm_ms,
                roundingMs(sim));
    const MemoryEstimate m = sim.expansion.memory;
    EXPECT_DOUBLE_EQ(m.grads, 4 * n / 8);
    EXPECT_DOUBLE_EQ(m.optimizer, 12 * n / 8);
}

}  // namespace
}  // namespace stepsim::oracles
