// Fsdp2Schedule, through expand: the all-gathers and reduce-scatters of a step (counts, sizes, streams), the prefetch
// order, the optimizer on the local shard, gradient accumulation, and the memory's closed form.
//
// The tiny model (ExpandScenarios.hpp: 2 layers, hidden 256, ffn 1024, vocabulary 1024, sequence 128, LayerNorm,
// learned positions, untied head) has per block n_b = 2·256 (norm1) + 3·256² (qkv) + 256² (proj) + 2·256 (norm2)
// + 2·1024·256 (MLP) = 787456 parameters and a root (wte 1024·256, wpe 128·256, norm_f 2·256, lm_head 1024·256) of
// n_r = 557568.
#include "sim/workload/Fsdp2Schedule.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/workload/Expand.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

constexpr double kBlock = 787456, kRoot = 557568;

// The tiny model under FSDP2 on `gpus` GPUs with MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32).
Scenario tinyFsdp2(int gpus) {
    Scenario sc = tiny(gpus);
    sc.parallel.data = DataParallel::fsdp2;
    sc.fsdp.param_dtype = DType::bf16;
    sc.fsdp.reduce_dtype = DType::fp32;
    return sc;
}

struct Call {
    std::string name;
    CollectiveKind kind;
    double bytes;
    std::string dtype;
    int stream;
    Phase phase;
    std::size_t index;  // in the program (host issue order)
};

// Step 1's collectives.
std::vector<Call> collectives(const Program& p, int step = 1) {
    std::vector<Call> out;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (op.kind != OpKind::collective || op.step != step) continue;
        const CollectiveCall& c = p.collectives[op.collective];
        out.push_back({p.names[op.name], c.kind, c.bytes, c.dtype, op.stream, op.phase, i});
    }
    return out;
}

// The program index of step 1's first op named `name` in `phase`.
std::size_t indexOf(const Program& p, const std::string& name, Phase phase) {
    for (std::size_t i = 0; i < p.ops.size(); ++i)
        if (p.ops[i].step == 1 && p.ops[i].phase == phase && p.names[p.ops[i].name] == name) return i;
    ADD_FAILURE() << "no op " << name;
    return 0;
}

Expansion expandOn(const Scenario& sc) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    return expand(sc, cost);
}

// With reshard_after_forward each block is all-gathered twice a step (before forward and again before backward), the
// root once (lazy init keeps it unsharded); each group's gradients are reduce-scattered once. Sizes: nccl-tests' S,
// the gathered parameters in bf16 and the gradients in fp32.
TEST(Fsdp2Schedule, ReshardGathersEachBlockTwiceAndReducesEachGroupOnce) {
    const Expansion e = expandOn(tinyFsdp2(8));
    int gathers = 0, scatters = 0;
    for (const Call& c : collectives(e.workload.programs[0])) {
        const double n = c.name.rfind("root", 0) == 0 ? kRoot : kBlock;
        if (c.kind == CollectiveKind::all_gather) {
            ++gathers;
            EXPECT_DOUBLE_EQ(c.bytes, 2 * n) << c.name;
            EXPECT_EQ(c.dtype, "bf16");
            EXPECT_EQ(c.stream, Fsdp2Schedule::kAllGatherStream);
        } else {
            ASSERT_EQ(c.kind, CollectiveKind::reduce_scatter) << c.name;
            ++scatters;
            EXPECT_DOUBLE_EQ(c.bytes, 4 * n) << c.name;
            EXPECT_EQ(c.dtype, "fp32");
            EXPECT_EQ(c.stream, Fsdp2Schedule::kReduceScatterStream);
        }
    }
    EXPECT_EQ(gathers, 2 * 2 + 1);
    EXPECT_EQ(scatters, 2 + 1);
}

// Without resharding the blocks stay gathered from forward to backward: one all-gather per group.
TEST(Fsdp2Schedule, NoReshardGathersEachGroupOnce) {
    Scenario sc = tinyFsdp2(8);
    sc.fsdp.reshard_after_forward = false;
    int gathers = 0;
    for (const Call& c : collectives(expandOn(sc).workload.programs[0]))
        if (c.kind == CollectiveKind::all_gather) {
            ++gathers;
            EXPECT_EQ(c.phase, Phase::forward) << c.name;
        }
    EXPECT_EQ(gathers, 2 + 1);
}

// Backward prefetch: block 0's all-gather is issued by block 1's pre-backward, before block 1's backward kernels (one
// block ahead); the root's pre-backward prefetches block 1 before the LM head's backward. With backward_prefetch:
// none each all-gather waits for its own block's pre-backward, after the later block's kernels.
TEST(Fsdp2Schedule, PrefetchedAllGatherIsIssuedOneBlockAhead) {
    const Program p = expandOn(tinyFsdp2(8)).workload.programs[0];
    EXPECT_LT(indexOf(p, "h.0 fsdp all_gather", Phase::backward),
              indexOf(p, "h.1.residual grad add 2", Phase::backward));
    EXPECT_LT(indexOf(p, "h.1 fsdp all_gather", Phase::backward), indexOf(p, "lm_head dgrad", Phase::backward));

    Scenario none = tinyFsdp2(8);
    none.fsdp.backward_prefetch = BackwardPrefetch::none;
    const Program q = expandOn(none).workload.programs[0];
    EXPECT_GT(indexOf(q, "h.0 fsdp all_gather", Phase::backward), indexOf(q, "h.1.attn.qkv wgrad", Phase::backward));
}

// fsdp.forward_prefetch: each block's pre-forward also issues the next block's all-gather, before its own kernels.
TEST(Fsdp2Schedule, ForwardPrefetchIssuesTheNextBlocksAllGatherFirst) {
    Scenario sc = tinyFsdp2(8);
    const Program implicit = expandOn(sc).workload.programs[0];
    EXPECT_GT(indexOf(implicit, "h.1 fsdp all_gather", Phase::forward),
              indexOf(implicit, "h.0.attn.qkv", Phase::forward));
    sc.fsdp.forward_prefetch = true;
    const Program p = expandOn(sc).workload.programs[0];
    EXPECT_LT(indexOf(p, "h.1 fsdp all_gather", Phase::forward), indexOf(p, "h.0.attn.qkv", Phase::forward));
}

// The gathered parameters reach the compute stream through split_with_sizes_copy, after the compute stream waited
// for the all-gather; the copy-in runs on its own stream.
TEST(Fsdp2Schedule, CopyInOnItsStreamCopyOutOnTheComputeStream) {
    const Program p = expandOn(tinyFsdp2(8)).workload.programs[0];
    const std::size_t in = indexOf(p, "h.0 fsdp all_gather_copy_in", Phase::forward);
    const std::size_t out = indexOf(p, "h.0 fsdp split_with_sizes_copy", Phase::forward);
    EXPECT_EQ(p.ops[in].stream, Fsdp2Schedule::kCopyInStream);
    EXPECT_EQ(p.ops[out].stream, 0);
    EXPECT_DOUBLE_EQ(p.ops[out].bytes, 2 * 2 * kBlock);
    EXPECT_DOUBLE_EQ(p.ops[in].bytes, 2 * 2 * kBlock / 8);
    ASSERT_GT(out, 0u);
    EXPECT_EQ(p.ops[out - 1].kind, OpKind::wait_event);
    EXPECT_EQ(p.ops[out - 1].stream, 0);
}

// The optimizer steps the local shard: each of its kernels moves 1/N of DDP's bytes, with as many launches.
TEST(Fsdp2Schedule, OptimizerRunsOnOneNthOfTheParameters) {
    Scenario fsdp = tiny(8);
    fsdp.parallel.data = DataParallel::fsdp2;  // no MixedPrecisionPolicy: fp32 parameters, as DDP's
    const Program f = expandOn(fsdp).workload.programs[0];
    const Program d = expandOn(tiny(8)).workload.programs[0];
    std::vector<double> fb, db;
    for (const Op& op : f.ops)
        if (op.step == 1 && op.phase == Phase::optimizer && op.kind == OpKind::kernel) fb.push_back(op.bytes);
    for (const Op& op : d.ops)
        if (op.step == 1 && op.phase == Phase::optimizer && op.kind == OpKind::kernel) db.push_back(op.bytes);
    ASSERT_EQ(fb.size(), db.size());
    ASSERT_FALSE(fb.empty());
    for (std::size_t i = 0; i < fb.size(); ++i) {
        if (db[i] == 8 * 21.0) continue;  // the step count: one element per tensor, not sharded
        EXPECT_DOUBLE_EQ(fb[i], db[i] / 8) << i;
    }
}

// Gradient accumulation reduce-scatters every micro-step; after the first, each sharded gradient gets the new shard
// added on the reduce-scatter stream, and autograd no longer accumulates into the unsharded gradients.
TEST(Fsdp2Schedule, GradientAccumulationReducesEveryMicroStep) {
    Scenario sc = tinyFsdp2(8);
    sc.training.grad_accum = 2;
    const Program p = expandOn(sc).workload.programs[0];
    int scatters = 0;
    for (const Call& c : collectives(p))
        if (c.kind == CollectiveKind::reduce_scatter) ++scatters;
    EXPECT_EQ(scatters, 2 * 3);
    int adds = 0, autograd = 0;
    for (const Op& op : p.ops) {
        if (op.step != 1 || op.kind != OpKind::kernel) continue;
        const std::string& n = p.names[op.name];
        if (n.ends_with(" fsdp sharded grad accumulate")) {
            ++adds;
            EXPECT_EQ(op.stream, Fsdp2Schedule::kReduceScatterStream);
        }
        if (n.ends_with(" grad accumulate") && !n.ends_with("sharded grad accumulate")) ++autograd;
    }
    EXPECT_EQ(adds, 21);  // every parameter tensor once, in the second micro-step
    EXPECT_EQ(autograd, 0);
}

// NCCL runs the communicator's kernels in issue order: a collective on the other stream than the previous one waits
// for it first.
TEST(Fsdp2Schedule, EachCollectiveWaitsForThePreviousOnTheOtherStream) {
    const Program p = expandOn(tinyFsdp2(8)).workload.programs[0];
    const std::vector<Call> calls = collectives(p);
    for (std::size_t k = 1; k < calls.size(); ++k) {
        if (calls[k].stream == calls[k - 1].stream) continue;
        const std::uint32_t prev_end = p.ops[calls[k - 1].index + 1].event;
        ASSERT_EQ(p.ops[calls[k - 1].index + 1].kind, OpKind::record_event);
        bool waited = false;
        for (std::size_t i = calls[k - 1].index; i < calls[k].index; ++i)
            waited |= p.ops[i].kind == OpKind::wait_event && p.ops[i].event == prev_end &&
                      p.ops[i].stream == calls[k].stream;
        EXPECT_TRUE(waited) << calls[k].name;
    }
}

// Memory per GPU against the header's closed form for the tiny model on 8 GPUs, bf16 gathered, fp32 reduced:
// p = 4, g = 2, r = 4, N = 8, AdamW foreach; activations per layer at T = 256 tokens in bf16 (2·2·T·h norm inputs,
// 2·2·T·h norm outputs, 2·T·3h q/k/v, 2·T·h attention output, 2·2·T·f MLP) A = 2097152, two layers; the loss's
// backward 12·T·V; the head's gradients n_h = V·h + 2h = 262656. The phases' transient terms:
//   loss_backward         2·n_r + 2A + 12·T·V                                   = 8455168
//   blocks_backward_start 2·n_r + 2·2·n_b + 2·n_h + 2A                          = 8984576
//   backward_end          2·(n_r + n_b) + 4n/N + 2·(n_r + n_b) + 4·n_b·(1 + 1/N) + A = 12087040
//   optimizer_step        4n/N + 4n/N (the foreach sqrt on the shard)          = 2132480
// so the peak is at the end of backward.
TEST(Fsdp2Schedule, MemoryIsTheClosedFormAtItsPeakPhase) {
    const MemoryEstimate m = expandOn(tinyFsdp2(8)).memory;
    const double n = 2 * kBlock + kRoot, N = 8, A = 2097152.0;
    EXPECT_EQ(m.phase, "backward_end");
    EXPECT_DOUBLE_EQ(m.params, 4 * n / N);
    EXPECT_DOUBLE_EQ(m.optimizer, 8 * n / N);
    EXPECT_DOUBLE_EQ(m.grads, 4 * n / N + 2 * (kRoot + kBlock));
    EXPECT_DOUBLE_EQ(m.gathered, 2 * (kRoot + kBlock));
    EXPECT_DOUBLE_EQ(m.buckets, 4 * kBlock * (1 + 1 / N));
    EXPECT_DOUBLE_EQ(m.weight_cache, 0);
    EXPECT_DOUBLE_EQ(m.activations, A);
    EXPECT_DOUBLE_EQ(m.loss, 0);
    EXPECT_DOUBLE_EQ(m.peak() - m.params - m.optimizer, 12087040.0);
    EXPECT_DOUBLE_EQ(m.peak(), m.params + m.optimizer + m.grads + m.gathered + m.buckets + m.activations + m.loss);
}

// A large vocabulary moves the peak to the loss's backward (12·T·V over the end of backward's gradients), where
// no gradient exists yet and every activation does; without reshard_after_forward every block is gathered there.
TEST(Fsdp2Schedule, MemoryPeaksAtTheLossBackwardWithALargeVocabulary) {
    Scenario sc = tinyFsdp2(8);
    sc.model.vocab = 65536;
    const MemoryEstimate m = expandOn(sc).memory;
    EXPECT_EQ(m.phase, "loss_backward");
    EXPECT_DOUBLE_EQ(m.grads, 0);
    EXPECT_DOUBLE_EQ(m.activations, 2 * 2097152.0);
    EXPECT_DOUBLE_EQ(m.loss, 12 * 256 * 65536.0);
    const double root = 2 * (65536.0 * 256 * 2 + 128 * 256 + 512);
    EXPECT_DOUBLE_EQ(m.gathered, root);
    sc.fsdp.reshard_after_forward = false;
    EXPECT_DOUBLE_EQ(expandOn(sc).memory.gathered, root + 2 * 2 * kBlock);
}

// Sharding is what lets a large model fit: the same model's DDP estimate exceeds FSDP2's on 8 GPUs by more than
// the optimizer state and gradients it shards.
TEST(Fsdp2Schedule, ShardedMemoryIsBelowDdps) {
    Scenario big = tinyFsdp2(8);
    big.model.layers = 8;
    big.model.hidden = 2048;
    big.model.heads = 16;
    Scenario ddp = big;
    ddp.parallel.data = DataParallel::ddp;
    ddp.fsdp = FsdpSpec{};
    const MemoryEstimate f = expandOn(big).memory, d = expandOn(ddp).memory;
    EXPECT_LT(f.params + f.grads + f.optimizer + f.gathered, 0.5 * (d.params + d.grads + d.optimizer + d.buckets));
}

// The schedule's streams and events run to the end in the engine on 8 GPUs, every step.
TEST(Fsdp2Schedule, RunsInTheEngine) {
    const Simulation s = simulate(tinyFsdp2(8), builtinProfile("h200-sxm"));
    EXPECT_GT(s.results.step_time_ms, 0.0);
    EXPECT_EQ(s.results.per_step.size(), 2u);
}

// What fsdp2 does not model is refused with the key named.
TEST(Fsdp2Schedule, RefusesWhatItDoesNotModel) {
    Scenario post = tinyFsdp2(8);
    post.source = "x.yaml";
    post.fsdp.backward_prefetch = BackwardPrefetch::post;
    EXPECT_THROW(expandOn(post), InputError);
    Scenario mismatch = tinyFsdp2(8);
    mismatch.training.compute_dtype = DType::fp16;
    EXPECT_THROW(expandOn(mismatch), InputError);
}

}  // namespace
}  // namespace stepsim
