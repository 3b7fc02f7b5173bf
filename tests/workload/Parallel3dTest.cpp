// Tensor and pipeline parallelism (TensorParallel.hpp, PipelineActions.hpp, PipelineStage.hpp, ParallelLayout.hpp).
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/workload/Expand.hpp"
#include "sim/workload/ParallelLayout.hpp"
#include "sim/workload/PipelineActions.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

struct Counted {
    int count = 0;
    double bytes = 0;
};

// The collectives of block 0 in step 1 on rank 0's TP group, by kind.
std::map<CollectiveKind, Counted> layerTpCollectives(const Expansion& e) {
    std::map<CollectiveKind, Counted> out;
    const Program& p = e.workload.programs[0];
    for (const Op& op : p.ops) {
        if (op.kind != OpKind::collective || op.step != 1) continue;
        const CollectiveCall& call = p.collectives[op.collective];
        if (p.names[op.name].rfind("h.0.", 0) != 0 || e.workload.groups[call.group].name.rfind("tp", 0) != 0) continue;
        ++out[call.kind].count;
        out[call.kind].bytes += call.bytes;
    }
    return out;
}

TEST(TensorParallel, FourAllReducesOfTheActivationPerLayer) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(2);
    sc.parallel.tp = 2;
    const auto c = layerTpCollectives(expand(sc, cost));
    const double activation = 2.0 * 2 * 128 * 256;  // bf16 · micro_batch · seq_len · hidden
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c.at(CollectiveKind::all_reduce).count, 4);
    EXPECT_DOUBLE_EQ(c.at(CollectiveKind::all_reduce).bytes, 4 * activation);
}

TEST(TensorParallel, SequenceParallelismSplitsEachAllReduceIntoReduceScatterAndAllGather) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(2);
    sc.parallel.tp = 2;
    const auto plain = layerTpCollectives(expand(sc, cost));
    sc.parallel.sequence_parallel = true;
    const auto sp = layerTpCollectives(expand(sc, cost));
    EXPECT_EQ(sp.count(CollectiveKind::all_reduce), 0u);
    EXPECT_EQ(sp.at(CollectiveKind::reduce_scatter).count, plain.at(CollectiveKind::all_reduce).count);
    EXPECT_EQ(sp.at(CollectiveKind::all_gather).count, plain.at(CollectiveKind::all_reduce).count);
    EXPECT_DOUBLE_EQ(sp.at(CollectiveKind::reduce_scatter).bytes, plain.at(CollectiveKind::all_reduce).bytes);
    EXPECT_DOUBLE_EQ(sp.at(CollectiveKind::all_gather).bytes, plain.at(CollectiveKind::all_reduce).bytes);
}

TEST(ParallelLayout, TensorParallelGroupsAreConsecutiveRanks) {
    const ParallelLayout l(parallelDims(ParallelSpec{.tp = 8, .pp = 4}, 64));
    EXPECT_EQ(l.dp(), 2);
    for (int r = 0; r < 64; ++r) {
        const RankCoords c = l.coords(r);
        EXPECT_EQ(l.rank(c), r);
        EXPECT_EQ(c.tp, r % 8);
        EXPECT_EQ(c.dp, (r / 8) % 2);
        EXPECT_EQ(c.pp, r / 16);
    }
}

TEST(PipelineActions, OneFOneBKeepsMinOfStagesLeftAndMicroBatchesInFlight) {
    for (int s = 0; s < 4; ++s) {
        EXPECT_EQ(peakInFlight(oneFOneBActions(s, 4, 8)), 4 - s);
        EXPECT_EQ(peakInFlight(gpipeActions(s, 4, 8)), 8);
    }
    // Every schedule runs every micro-batch's forward and backward once per chunk.
    for (PipelineSchedule sched : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b,
                                   PipelineSchedule::interleaved, PipelineSchedule::zero_bubble}) {
        const int v = sched == PipelineSchedule::interleaved ? 2 : 1;
        const auto a = pipelineActions(sched, 1, 4, 8, v);
        int f = 0, b = 0;
        for (const PipelineAction& x : a) (x.kind == PipelineAction::forward ? f : b) += 1;
        EXPECT_EQ(f, 8 * v);
        EXPECT_EQ(b, sched == PipelineSchedule::zero_bubble ? 16 : 8 * v);
    }
}

// A pipeline of identical stages whose transfers are tiny: the simulated bubble is the closed form.
Scenario pipeline(int stages, int micro, PipelineSchedule sched, int chunks) {
    Scenario sc = tiny(stages);
    sc.model.layers = 8;
    sc.model.hidden = 4096;  // large enough that the GPU, not the host, sets the pace
    sc.model.heads = 32;
    sc.model.vocab = 256;
    sc.model.seq_len = 2048;
    sc.training.param_dtype = DType::bf16;
    sc.training.grad_accum = micro;
    sc.parallel.pp = stages;
    sc.parallel.pp_schedule = sched;
    sc.parallel.pp_virtual_stages = chunks;
    sc.jitter.enabled = false;
    return sc;
}

TEST(PipelineStage, OneFOneBBubbleIsTheClosedForm) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    const int p = 4, m = 8;
    const double bubble = *simulate(pipeline(p, m, PipelineSchedule::one_f_one_b, 1), prof).results.pp_bubble_ratio;
    EXPECT_NEAR(bubble, double(p - 1) / (m + p - 1), 0.05);
}

TEST(PipelineStage, InterleavedBubbleIsTheClosedForm) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    const int p = 4, m = 8, v = 2;
    const double bubble = *simulate(pipeline(p, m, PipelineSchedule::interleaved, v), prof).results.pp_bubble_ratio;
    EXPECT_NEAR(bubble, double(p - 1) / (v * m + p - 1), 0.05);
}

TEST(PipelineStage, ZeroBubbleHasLessBubbleThanOneFOneB) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    const double one = *simulate(pipeline(4, 8, PipelineSchedule::one_f_one_b, 1), prof).results.pp_bubble_ratio;
    const double zb = *simulate(pipeline(4, 8, PipelineSchedule::zero_bubble, 1), prof).results.pp_bubble_ratio;
    EXPECT_LT(zb, 0.75 * one);
}

// Stage 0 of a 4-stage 1F1B pipeline under DDP, bf16 parameters (no autocast): its parameters (embeddings and two
// blocks), gradients, buckets and AdamW's states, and 4 micro-batches of two blocks' activations.
TEST(PipelineStage, MemoryOfTheFirstStageIsTheClosedForm) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = pipeline(4, 8, PipelineSchedule::one_f_one_b, 1);
    sc.cluster.gpus_per_node = 8;  // dp 2
    const Expansion e = expand(sc, cost);
    const MemoryEstimate& m = e.stage_memory.at(0);
    const double h = 4096, T = 2 * 2048, f = 4 * h, V = 256, s = 2048, pe = 2, ce = 2;
    const double block = 2 * h + 3 * h * h + h * h + 2 * h + 2 * f * h;  // norms with bias, qkv, proj, fc, proj
    const double n = V * h + s * h + 2 * block;
    EXPECT_DOUBLE_EQ(m.params, pe * n);
    EXPECT_DOUBLE_EQ(m.grads, pe * n);
    EXPECT_DOUBLE_EQ(m.buckets, pe * n);
    EXPECT_DOUBLE_EQ(m.optimizer, 2 * pe * n);
    const double per_layer = 2 * pe * T * h + 2 * ce * T * h + ce * T * 3 * h + ce * T * h + 2 * ce * T * f;
    EXPECT_DOUBLE_EQ(m.activations, 4 * 2 * per_layer);
    EXPECT_DOUBLE_EQ(m.loss, 0.0);
}

}  // namespace
}  // namespace stepsim
