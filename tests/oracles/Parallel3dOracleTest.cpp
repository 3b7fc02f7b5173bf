// Oracle of the 3D composition (Expand3d.hpp, PipelineStage.hpp, docs/parallelism.md): TP 2 × PP 2 × FSDP2 2 on the 8
// GPUs of one node under the round-number profile (OracleProfile.hpp), order tp-dp-pp (rank = tp + 2·(dp + 2·pp)),
// 1F1B, one micro-batch per step (m = 1: the pipeline runs its stages one after the other, so the step is a chain) and
// four (the step on the slower stage's clock, below).
// The case: L = 4 blocks of h = 1024 (stage 0 blocks 0–1 and the embeddings, stage 1 blocks 2–3, the final norm, the
// LM head and the loss), V = 8192, T = 2048 tokens, fp32 parameters, bf16 activations (c = 2).
//
// Parameters per rank (TP-local: the linears split over tp, the norms and the position embedding replicated): a block
// n_b = 12h²/tp + 4h; stage 0's root V·h/tp + T_pos·h (T_pos = 1024 positions), stage 1's V·h/tp + 2h.
// Expectations, per step (step 1), with t(kind, n, S) = α + S·F(kind, n)/β:
//   FSDP2 with PP (torchtitan's composition): at the step's start each stage all-gathers its root and its two blocks
//     over its DP group (2 ranks), 4·n_unit bytes each, the first forward waiting for them; after the last backward
//     it reduce-scatters the same: 3 + 3 per stage;
//   TP (Megatron): per block 2 all-reduces of S = c·T·h forward and 2 backward; the embedding's output all-reduce
//     (stage 0, forward); the vocabulary-parallel cross-entropy's 3 all-reduces of 4T bytes and the LM head's input
//     gradient all-reduce of S (stage 1); all on the compute stream;
//   PP: one activation sent 0 → 1 and one gradient 1 → 0, sendrecvs of S;
//   step: the chain ΣAG₀ + F₀ + t(sendrecv, S) + F₁ + B₁ + t(sendrecv, S) + B₀ + ΣRS₀ + O₀, where F_s and B_s are stage
//     s's forward and backward kernels plus its TP all-reduces and O₀ stage 0's optimizer kernels (stage 1's reduction,
//     optimizer and next gathers end before stage 0's next activation arrives);
//   memory: stage s holds 4·n_s/dp of parameters and 8·n_s/dp of AdamW state (n_s its TP-local parameters).
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "tests/oracles/OracleProfile.hpp"

namespace stepsim::oracles {
namespace {

constexpr double h = 1024, V = 8192, Tpos = 1024, T = 2048, tp = 2, dp = 2;
constexpr double kBlock = 12 * h * h / tp + 4 * h;
constexpr double kRoot0 = V * h / tp + Tpos * h, kRoot1 = V * h / tp + 2 * h;
constexpr double S = 2 * T * h;
constexpr double kRel = 1e-9;

Scenario threeD(int micro_batches) {
    Scenario sc = oracleScenario(8);
    sc.parallel.data = DataParallel::fsdp2;
    sc.parallel.tp = 2;
    sc.parallel.pp = 2;
    sc.parallel.pp_schedule = PipelineSchedule::one_f_one_b;
    sc.training.grad_accum = micro_batches;
    return sc;
}

const Simulation& sim() {
    static const Simulation s = simulateRound(threeD(1));
    return s;
}

struct Calls {
    int dp_gathers = 0, dp_scatters = 0, tp_reduces_s = 0, tp_reduces_ce = 0, sends = 0, other = 0;
    double gather_s = 0, scatter_s = 0;
};

// Step 1's collectives of rank `rank`'s groups.
Calls callsOf(int rank) {
    Calls c;
    const Workload& w = sim().expansion.workload;
    for (const CollectiveRecord& r : sim().timeline.collectives) {
        const ProcessGroup& g = w.groups[std::size_t(r.group)];
        if (r.step != 1 || std::find(g.ranks.begin(), g.ranks.end(), rank) == g.ranks.end()) continue;
        const double t = collectiveSeconds(r.kind, int(g.ranks.size()), r.bytes);
        EXPECT_NEAR((r.end - r.start).seconds(), t, kRel * t + 2e-12) << g.name;
        const bool dp_group = g.name.rfind("dp ", 0) == 0, tp_group = g.name.rfind("tp ", 0) == 0;
        if (dp_group && r.kind == CollectiveKind::all_gather) ++c.dp_gathers, c.gather_s += t;
        else if (dp_group && r.kind == CollectiveKind::reduce_scatter) ++c.dp_scatters, c.scatter_s += t;
        else if (tp_group && r.kind == CollectiveKind::all_reduce && r.bytes == S) ++c.tp_reduces_s;
        else if (tp_group && r.kind == CollectiveKind::all_reduce && r.bytes == 4 * T) ++c.tp_reduces_ce;
        else if (r.kind == CollectiveKind::sendrecv && r.bytes == S) ++c.sends;
        else ++c.other;
        if (dp_group) {
            const double root = rank < 4 ? kRoot0 : kRoot1;
            EXPECT_TRUE(r.bytes == 4 * kBlock || r.bytes == 4 * root) << g.name << " " << r.bytes;
        }
    }
    return c;
}

TEST(Parallel3dOracle, EachStagesCollectivesAreCountedAndSized) {
    const Calls s0 = callsOf(0), s1 = callsOf(4);
    EXPECT_EQ(s0.dp_gathers, 3);
    EXPECT_EQ(s0.dp_scatters, 3);
    EXPECT_EQ(s0.tp_reduces_s, 2 * 4 + 1);
    EXPECT_EQ(s0.tp_reduces_ce, 0);
    EXPECT_EQ(s0.sends, 2);
    EXPECT_EQ(s0.other, 0);
    EXPECT_EQ(s1.dp_gathers, 3);
    EXPECT_EQ(s1.dp_scatters, 3);
    EXPECT_EQ(s1.tp_reduces_s, 2 * 4 + 1);
    EXPECT_EQ(s1.tp_reduces_ce, 3);
    EXPECT_EQ(s1.sends, 2);
    EXPECT_EQ(s1.other, 0);
}

// Rank `rank`'s compute stream in step 1 and `phase`: its kernels and its collectives' closed-form times.
double computeStreamSeconds(int rank, Phase phase, const Simulation& run = sim()) {
    const Workload& w = run.expansion.workload;
    const Program& p = w.programs[std::size_t(rank)];
    double s = 0;
    for (const Op& op : p.ops) {
        if (op.step != 1 || op.stream != 0 || op.phase != phase) continue;
        if (op.kind == OpKind::kernel) s += op.work_s;
        if (op.kind == OpKind::collective) {
            const CollectiveCall& call = p.collectives[op.collective];
            const int ranks = int(w.groups[std::size_t(call.group)].ranks.size());
            s += collectiveSeconds(call.kind, ranks, call.bytes);
        }
    }
    return s;
}

TEST(Parallel3dOracle, TheStepIsTheChainThroughBothStages) {
    const Calls s0 = callsOf(0);
    const double sendrecv = collectiveSeconds(CollectiveKind::sendrecv, 2, S);
    const double chain = s0.gather_s + computeStreamSeconds(0, Phase::forward) + sendrecv +
                         computeStreamSeconds(4, Phase::forward) + computeStreamSeconds(4, Phase::backward) +
                         sendrecv + computeStreamSeconds(0, Phase::backward) + s0.scatter_s +
                         computeStreamSeconds(0, Phase::optimizer) + computeStreamSeconds(0, Phase::other);
    const Program& p = sim().expansion.workload.programs[0];
    const double ops = double(std::count_if(p.ops.begin(), p.ops.end(), [](const Op& op) { return op.step == 1; }));
    EXPECT_NEAR(sim().results.step_time_ms, chain * 1e3, 4 * ops * 1e-9);
}

// Rank `rank`'s compute stream in step 1 cut into passes: a pass ends where the phase changes or a pipeline transfer is
// issued (a forward's activation sent, a backward's gradient received); in program order.
struct PassTime {
    Phase phase;
    double seconds = 0, first_kernel = 0;  // the pass's, and its first kernel's
};

std::vector<PassTime> passes(const Simulation& run, int rank) {
    const Workload& w = run.expansion.workload;
    const Program& p = w.programs[std::size_t(rank)];
    std::vector<PassTime> out;
    bool cut = true;
    for (const Op& op : p.ops) {
        if (op.step != 1) continue;
        if (op.kind == OpKind::collective && p.collectives[op.collective].kind == CollectiveKind::sendrecv) {
            cut = true;
            continue;
        }
        if (op.stream != 0 || (op.phase != Phase::forward && op.phase != Phase::backward)) continue;
        double t = 0;
        if (op.kind == OpKind::kernel) t = op.work_s;
        else if (op.kind == OpKind::collective) {
            const CollectiveCall& call = p.collectives[op.collective];
            t = collectiveSeconds(call.kind, int(w.groups[std::size_t(call.group)].ranks.size()), call.bytes);
        } else continue;
        if (cut || out.back().phase != op.phase) out.push_back({op.phase, 0.0, op.kind == OpKind::kernel ? t : 0.0});
        out.back().seconds += t;
        cut = false;
    }
    return out;
}

// m = 4 micro-batches under 1F1B with p = 2: stage 0 runs F1 F2 B1 F3 B2 F4 B3 B4, stage 1 F1 B1 F2 B2 ... B4. A send's
// NCCL kernel that becomes ready as a compute kernel starts waits for that kernel (the engine's rule, Collectives.hpp,
// from H200 traces): the first activation's send waits for the first kernel of stage 0's F2, d. Stage 1 is the slower
// (it holds the LM head and the loss): with f₁ + b₁ ≥ f₀ + b₀ + 2x + d it never waits for an activation after the
// first, so the step is ΣAG₀ + f₀(1) + d + x + Σ_k (f₁(k) + b₁(k)) + x + b₀(4) + ΣRS₀ + O₀ (x the sendrecv; the last
// gradient's send finds stage 1's compute stream idle): (m + p − 1) passes on the bottleneck stage's clock.
TEST(Parallel3dOracle, OneFOneBWithFourMicroBatchesRunsOnTheSlowerStagesClock) {
    const Simulation run = simulateRound(threeD(4));
    const std::vector<PassTime> s0 = passes(run, 0), s1 = passes(run, 4);
    const std::vector<Phase> order0 = {Phase::forward, Phase::forward,  Phase::backward, Phase::forward,
                                       Phase::backward, Phase::forward, Phase::backward, Phase::backward};
    ASSERT_EQ(s0.size(), order0.size());
    for (std::size_t k = 0; k < order0.size(); ++k) EXPECT_EQ(s0[k].phase, order0[k]) << k;
    ASSERT_EQ(s1.size(), 8u);
    const double x = collectiveSeconds(CollectiveKind::sendrecv, 2, S);
    double stage1 = 0;
    for (std::size_t k = 0; k < s1.size(); ++k) {
        EXPECT_EQ(s1[k].phase, k % 2 == 0 ? Phase::forward : Phase::backward) << k;
        stage1 += s1[k].seconds;
    }
    const double f0 = s0.front().seconds, b0 = s0.back().seconds, d = s0[1].first_kernel;
    ASSERT_GT(d, 0.0);
    ASSERT_GE(s1[0].seconds + s1[1].seconds, f0 + b0 + 2 * x + d);  // the case's premise: stage 1 is the bottleneck
    double gather = 0, scatter = 0;
    for (const CollectiveRecord& r : run.timeline.collectives) {
        const ProcessGroup& g = run.expansion.workload.groups[std::size_t(r.group)];
        if (r.step != 1 || g.ranks.front() != 0 || g.name.rfind("dp ", 0) != 0) continue;
        const double t = collectiveSeconds(r.kind, 2, r.bytes);
        (r.kind == CollectiveKind::all_gather ? gather : scatter) += t;
    }
    const double chain = gather + f0 + d + x + stage1 + x + b0 + scatter +
                         computeStreamSeconds(0, Phase::optimizer, run) + computeStreamSeconds(0, Phase::other, run);
    const Program& p = run.expansion.workload.programs[0];
    const double ops = double(std::count_if(p.ops.begin(), p.ops.end(), [](const Op& op) { return op.step == 1; }));
    EXPECT_NEAR(run.results.step_time_ms, chain * 1e3, 4 * ops * 1e-9);
}

TEST(Parallel3dOracle, EachStageShardsItsOwnParametersOverItsDataParallelGroup) {
    const std::vector<MemoryEstimate>& m = sim().expansion.stage_memory;
    ASSERT_EQ(m.size(), 2u);
    const double n0 = 2 * kBlock + kRoot0, n1 = 2 * kBlock + kRoot1;
    EXPECT_DOUBLE_EQ(m[0].params, 4 * n0 / dp);
    EXPECT_DOUBLE_EQ(m[1].params, 4 * n1 / dp);
    EXPECT_DOUBLE_EQ(m[0].optimizer, 8 * n0 / dp);
    EXPECT_DOUBLE_EQ(m[1].optimizer, 8 * n1 / dp);
}

}  // namespace
}  // namespace stepsim::oracles
