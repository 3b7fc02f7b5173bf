// The sharded strategies beside FSDP2 (Fsdp1Schedule, HsdpSchedule, ZeroSchedule, Zero3Schedule), FSDP2's
// fsdp.sync_every_micro_batch, and their memory's closed forms (ShardedMemory.hpp), through expand.
//
// The tiny model (ExpandScenarios.hpp; see Fsdp2ScheduleTest.cpp): per block n_b = 787456 parameters, of which the
// four Linear weights are 3·256² (qkv), 256² (proj), 1024·256 (fc) and 256·1024 (proj), and 4·256 in the norms; the
// root n_r = 557568: wte 1024·256, wpe 128·256, norm_f 2·256, lm_head 1024·256.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/workload/Expand.hpp"
#include "sim/workload/Fsdp1Schedule.hpp"
#include "sim/workload/HsdpSchedule.hpp"
#include "sim/workload/Zero3Schedule.hpp"
#include "sim/workload/ZeroSchedule.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

constexpr double kBlock = 787456, kRoot = 557568;
// ZeRO-3's persistent parameters (below 1e5 elements): the norms' 2·4·256 + 2·256, wpe's 128·256, each attn.proj's
// 256·256.
constexpr double kPersist = 2 * 4 * 256 + 2 * 256 + 128 * 256 + 2 * 256 * 256;
constexpr double kParams = 2 * kBlock + kRoot;

Scenario with(DataParallel d, int gpus = 8) {
    Scenario sc = tiny(gpus);
    sc.parallel.data = d;
    return sc;
}

Expansion expandOn(const Scenario& sc) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    return expand(sc, cost);
}

struct Call {
    std::string name;
    CollectiveKind kind;
    double bytes;
    int group;
    int stream;
    Phase phase;
    std::size_t index;
};

std::vector<Call> collectives(const Program& p, int step = 1) {
    std::vector<Call> out;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (op.kind != OpKind::collective || op.step != step) continue;
        const CollectiveCall& c = p.collectives[op.collective];
        out.push_back({p.names[op.name], c.kind, c.bytes, c.group, op.stream, op.phase, i});
    }
    return out;
}

std::size_t indexOf(const Program& p, const std::string& name, Phase phase, int step = 1) {
    for (std::size_t i = 0; i < p.ops.size(); ++i)
        if (p.ops[i].step == step && p.ops[i].phase == phase && p.names[p.ops[i].name] == name) return i;
    ADD_FAILURE() << "no op " << name;
    return 0;
}

int count(const std::vector<Call>& calls, CollectiveKind kind) {
    return int(std::count_if(calls.begin(), calls.end(), [&](const Call& c) { return c.kind == kind; }));
}

double bytes(const std::vector<Call>& calls, CollectiveKind kind) {
    double b = 0;
    for (const Call& c : calls)
        if (c.kind == kind) b += c.bytes;
    return b;
}

// FSDP1 gathers each unit's flat parameter into one buffer: with FULL_SHARD each block twice a step and the root once,
// g·n bytes each; each unit's flat gradient is reduce-scattered once; no copy-in or copy-out kernel (FSDP2's).
TEST(Fsdp1Schedule, GathersFlatParametersWithoutCopyInOrOut) {
    const Program p = expandOn(with(DataParallel::fsdp1)).workload.programs[0];
    const std::vector<Call> calls = collectives(p);
    EXPECT_EQ(count(calls, CollectiveKind::all_gather), 2 * 2 + 1);
    EXPECT_EQ(count(calls, CollectiveKind::reduce_scatter), 2 + 1);
    for (const Call& c : calls) {
        const double n = c.name.rfind("root", 0) == 0 ? kRoot : kBlock;
        EXPECT_DOUBLE_EQ(c.bytes, 4 * n) << c.name;  // fp32, no MixedPrecision
        EXPECT_EQ(c.stream, c.kind == CollectiveKind::all_gather ? Fsdp1Schedule::kUnshardStream
                                                                  : Fsdp1Schedule::kPostBackwardStream);
    }
    for (const std::string& n : p.names) {
        EXPECT_EQ(n.find("copy_in"), std::string::npos) << n;
        EXPECT_EQ(n.find("split_with_sizes_copy"), std::string::npos) << n;
    }
    Scenario grad_op = with(DataParallel::fsdp1);
    grad_op.fsdp.reshard_after_forward = false;  // SHARD_GRAD_OP
    EXPECT_EQ(count(collectives(expandOn(grad_op).workload.programs[0]), CollectiveKind::all_gather), 2 + 1);
}

// backward_prefetch: pre issues block 0's all-gather in block 1's pre-backward, before its gradient computation;
// post in block 1's post-backward, after its gradient computation and before its reduce-scatter; none at block 0's
// own pre-backward, after block 1's reduce-scatter.
TEST(Fsdp1Schedule, BackwardPrefetchPrePostNone) {
    auto program = [](BackwardPrefetch bp) {
        Scenario sc = with(DataParallel::fsdp1);
        sc.fsdp.backward_prefetch = bp;
        return expandOn(sc).workload.programs[0];
    };
    const std::string ag = "h.0 fsdp1 all_gather (flat param)", rs = "h.1 fsdp1 reduce_scatter (flat grad)";
    const Program pre = program(BackwardPrefetch::pre);
    EXPECT_LT(indexOf(pre, ag, Phase::backward), indexOf(pre, "h.1.mlp.proj wgrad", Phase::backward));
    const Program post = program(BackwardPrefetch::post);
    EXPECT_GT(indexOf(post, ag, Phase::backward), indexOf(post, "h.1.attn.qkv wgrad", Phase::backward));
    EXPECT_LT(indexOf(post, ag, Phase::backward), indexOf(post, rs, Phase::backward));
    const Program none = program(BackwardPrefetch::none);
    EXPECT_GT(indexOf(none, ag, Phase::backward), indexOf(none, rs, Phase::backward));
}

// forward_prefetch: block 0's pre-forward also issues block 1's all-gather, before block 0's kernels.
TEST(Fsdp1Schedule, ForwardPrefetchIssuesTheNextBlockFirst) {
    Scenario sc = with(DataParallel::fsdp1);
    const std::string ag = "h.1 fsdp1 all_gather (flat param)";
    const Program implicit = expandOn(sc).workload.programs[0];
    EXPECT_GT(indexOf(implicit, ag, Phase::forward), indexOf(implicit, "h.0.attn.qkv", Phase::forward));
    sc.fsdp.forward_prefetch = true;
    const Program p = expandOn(sc).workload.programs[0];
    EXPECT_LT(indexOf(p, ag, Phase::forward), indexOf(p, "h.0.attn.qkv", Phase::forward));
}

// limit_all_gathers: never more than two all-gathers in flight. In the first step's forward (6 blocks), before block
// k's all-gather (k >= 2) the host blocks on the free event recorded when block k−2 was resharded (right after its
// last forward kernel): when block k is gathered only blocks k−1 and k can hold unsharded parameters. (The queue is
// PyTorch's _FreeEventQueue, one dequeue per all-gather: the frees of a backward with no all-gather after them, the
// last block's and the root's, stay queued, and the next steps' forwards block on the free three blocks back.) Without
// the limiter the host never blocks.
TEST(Fsdp1Schedule, RateLimiterHoldsAtMostTwoAllGathersInFlight) {
    Scenario sc = with(DataParallel::fsdp1);
    sc.model.layers = 6;
    const Program p = expandOn(sc).workload.programs[0];
    // The op just before the record op of `event`: what the event marks the end of.
    auto recordedAfter = [&](std::uint32_t event) {
        for (std::size_t i = 1; i < p.ops.size(); ++i)
            if (p.ops[i].kind == OpKind::record_event && p.ops[i].event == event) return p.names[p.ops[i - 1].name];
        return std::string("?");
    };
    std::size_t previous = 0;
    for (int k = 0; k < 6; ++k) {
        const std::size_t gather = indexOf(p, fmt::format("h.{} fsdp1 all_gather (flat param)", k), Phase::forward, 0);
        std::vector<std::string> synced;
        for (std::size_t i = previous; i < gather; ++i)
            if (p.ops[i].kind == OpKind::host_sync) synced.push_back(recordedAfter(p.ops[i].event));
        if (k >= 2) {
            ASSERT_EQ(synced.size(), 1u) << k;
            EXPECT_EQ(synced[0], fmt::format("h.{}.residual add 2", k - 2));
        }
        previous = gather;
    }
    sc.fsdp.limit_all_gathers = false;
    const Program q = expandOn(sc).workload.programs[0];
    EXPECT_EQ(std::count_if(q.ops.begin(), q.ops.end(), [](const Op& op) { return op.kind == OpKind::host_sync; }), 0);
}

// Gradient pre- and post-divide factors of FSDP1 (_get_gradient_predivide_factor).
TEST(Fsdp1Schedule, DivideFactors) {
    EXPECT_EQ(Fsdp1Schedule::divideFactors(8), (std::pair{4.0, 2.0}));
    EXPECT_EQ(Fsdp1Schedule::divideFactors(16), (std::pair{4.0, 4.0}));
    EXPECT_EQ(Fsdp1Schedule::divideFactors(2), (std::pair{2.0, 1.0}));
}

// FSDP1's memory against ShardedMemory.hpp's closed form (fp32, N = 8, limiter on): the peak falls at the start of
// the blocks' backward (the root and two blocks gathered beside every activation, the head's gradients n_h = V·h + 2h
// unsharded; no reduce-scatter buffer yet); activations and loss are the step's (MemoryEstimate), checked in
// Fsdp2ScheduleTest.
TEST(Fsdp1Schedule, MemoryIsTheClosedFormAtItsPeakPhase) {
    const MemoryEstimate m = expandOn(with(DataParallel::fsdp1)).memory;
    const double n = kParams, N = 8, n_h = 1024 * 256 + 2 * 256;
    EXPECT_EQ(m.phase, "blocks_backward_start");
    EXPECT_DOUBLE_EQ(m.params, 4 * n / N);
    EXPECT_DOUBLE_EQ(m.optimizer, 8 * n / N);
    EXPECT_DOUBLE_EQ(m.grads, 4 * n_h);
    EXPECT_DOUBLE_EQ(m.gathered, 4 * kRoot + 2 * 4 * kBlock);
    EXPECT_DOUBLE_EQ(m.buckets, 0);
    Scenario unlimited = with(DataParallel::fsdp1);
    unlimited.fsdp.limit_all_gathers = false;
    EXPECT_DOUBLE_EQ(expandOn(unlimited).memory.gathered, 4 * kRoot + 4 * 2 * kBlock);
}

// HSDP on 2 nodes of 4: all-gathers and reduce-scatters on the rank's node (the shard group of 4 ranks), and after
// each reduce-scatter an all-reduce of the reduced shard (r·n/4 bytes) on the replica group only: the rank and its
// peer of the same local index on the other node.
TEST(HsdpSchedule, AllReducesTheShardAcrossNodesOnTheReplicaGroupOnly) {
    Scenario sc = with(DataParallel::hsdp, 4);
    sc.cluster.nodes = 2;
    const Expansion e = expandOn(sc);
    const std::vector<ProcessGroup>& groups = e.workload.groups;
    for (int rank : {0, 5}) {
        const std::vector<Call> calls = collectives(e.workload.programs[std::size_t(rank)]);
        EXPECT_EQ(count(calls, CollectiveKind::all_reduce), 2 + 1);
        EXPECT_EQ(count(calls, CollectiveKind::reduce_scatter), 2 + 1);
        for (const Call& c : calls) {
            const std::vector<int>& ranks = groups.at(std::size_t(c.group)).ranks;
            if (c.kind == CollectiveKind::all_reduce) {
                EXPECT_EQ(ranks, (std::vector<int>{rank % 4, rank % 4 + 4})) << c.name;
                EXPECT_EQ(c.stream, HsdpSchedule::kAllReduceStream);
                const double n = c.name.rfind("root", 0) == 0 ? kRoot : kBlock;
                EXPECT_DOUBLE_EQ(c.bytes, 4 * n / 4) << c.name;
            } else {
                EXPECT_EQ(ranks, (std::vector<int>{rank / 4 * 4, rank / 4 * 4 + 1, rank / 4 * 4 + 2, rank / 4 * 4 + 3}))
                    << c.name;
            }
        }
    }
    // Sharded over the node: 1/4 of the parameters per rank.
    EXPECT_DOUBLE_EQ(e.memory.params, 4 * kParams / 4);
}

// ZeRO-1 (no overlap_comm): the gradients all-reduced in buckets of reduce_bucket_size elements after the backward,
// on the compute stream, every gradient once; then the parameters all-gathered once after the optimizer step.
TEST(ZeroSchedule, Zero1AllReducesBucketsAfterBackwardAndGathersParamsOnce) {
    Scenario sc = with(DataParallel::zero1);
    sc.zero.reduce_bucket_size = 1e6;
    const Program p = expandOn(sc).workload.programs[0];
    const std::vector<Call> calls = collectives(p);
    std::vector<Call> grads, gathers;
    for (const Call& c : calls) {
        if (c.kind == CollectiveKind::all_gather) gathers.push_back(c);
        else if (c.bytes > 4) grads.push_back(c);
    }
    ASSERT_EQ(gathers.size(), 1u);
    EXPECT_DOUBLE_EQ(gathers[0].bytes, 4 * kParams);
    EXPECT_EQ(gathers[0].phase, Phase::optimizer);
    EXPECT_GT(gathers[0].index, indexOf(p, "optimizer.step", Phase::optimizer));
    double sum = 0;
    for (const Call& c : grads) {
        EXPECT_EQ(c.kind, CollectiveKind::all_reduce);
        EXPECT_EQ(c.stream, 0);
        EXPECT_LE(c.bytes, 4 * 1e6);
        EXPECT_GT(c.index, indexOf(p, "embedding backward", Phase::backward));
        sum += c.bytes;
    }
    EXPECT_DOUBLE_EQ(sum, 4 * kParams);
    EXPECT_EQ(grads.size(), 3u);  // 2.1 M elements in buckets that close before 1 M
}

// ZeRO-2 with overlap_comm: the buckets are all-reduced during the backward on the reduction stream (the first before
// block 0's backward), every micro-step.
TEST(ZeroSchedule, Zero2ReducesDuringBackwardOnTheReductionStream) {
    Scenario sc = with(DataParallel::zero2);
    sc.zero.reduce_bucket_size = 1e6;
    sc.zero.overlap_comm = true;
    sc.training.grad_accum = 2;
    const Program p = expandOn(sc).workload.programs[0];
    int grad_reductions = 0;
    std::size_t first = p.ops.size();
    for (const Call& c : collectives(p))
        if (c.kind == CollectiveKind::all_reduce && c.bytes > 4) {
            ++grad_reductions;
            first = std::min(first, c.index);
            EXPECT_EQ(c.stream, ZeroSchedule::kReductionStream);
        }
    EXPECT_EQ(grad_reductions, 2 * 3);
    EXPECT_LT(first, indexOf(p, "h.0.mlp.proj wgrad", Phase::backward));
}

// ZeRO memory against the closed forms, N = 8, p = 4, R = 1e6 elements. ZeRO-1 peaks at the end of backward (the
// full .grad and the fp32 partition's, the ipg buffer and a bucket's flattened copy); ZeRO-2 with overlap_comm at the
// loss's backward (its two ipg buffers resident, only the fp32 partition's gradient).
TEST(ZeroSchedule, MemoryIsTheClosedFormAtItsPeakPhase) {
    const double n = kParams, N = 8, R = 1e6;
    Scenario z1 = with(DataParallel::zero1);
    z1.zero.reduce_bucket_size = R;
    const MemoryEstimate m1 = expandOn(z1).memory;
    EXPECT_EQ(m1.phase, "backward_end");
    EXPECT_DOUBLE_EQ(m1.params, 4 * n);
    EXPECT_DOUBLE_EQ(m1.optimizer, 8 * n / N + 4 * n / N);
    EXPECT_DOUBLE_EQ(m1.grads, 4 * n + 4 * n / N);
    EXPECT_DOUBLE_EQ(m1.buckets, 4 * R + 4 * R);
    Scenario z2 = z1;
    z2.parallel.data = DataParallel::zero2;
    z2.zero.overlap_comm = true;
    const MemoryEstimate m2 = expandOn(z2).memory;
    EXPECT_EQ(m2.phase, "loss_backward");
    EXPECT_DOUBLE_EQ(m2.grads, 4 * n / N);
    EXPECT_DOUBLE_EQ(m2.buckets, 2 * 4 * R);
    EXPECT_DOUBLE_EQ(m2.loss, 12 * 256 * 1024.0);
    EXPECT_DOUBLE_EQ(m2.peak(), m2.params + m2.grads + m2.optimizer + m2.buckets + m2.activations + m2.loss +
                                    m2.weight_cache);
}

// ZeRO-3 gathers per module: every partitioned module (wte, qkv, fc, mlp.proj, lm_head) once a step when
// reuse keeps them gathered from forward to backward (DeepSpeed's default distance on a small model), twice when the
// distance is 0; the gradients reduce-scattered in buckets, every parameter once.
TEST(Zero3Schedule, GathersPerModuleAndReduceScattersBuckets) {
    Scenario sc = with(DataParallel::zero3);
    const double partitioned = kParams - kPersist;
    const std::vector<Call> kept = collectives(expandOn(sc).workload.programs[0]);
    EXPECT_DOUBLE_EQ(bytes(kept, CollectiveKind::all_gather), 4 * partitioned + 4 * kPersist);  // + persistent, after the step
    EXPECT_DOUBLE_EQ(bytes(kept, CollectiveKind::reduce_scatter), 4 * kParams);
    sc.zero.stage3_max_reuse_distance = 0;
    sc.zero.reduce_bucket_size = 1e6;
    const std::vector<Call> released = collectives(expandOn(sc).workload.programs[0]);
    EXPECT_DOUBLE_EQ(bytes(released, CollectiveKind::all_gather), 2 * 4 * partitioned + 4 * kPersist);
    EXPECT_EQ(count(released, CollectiveKind::reduce_scatter), 3);
    for (const Call& c : released)
        if (c.kind == CollectiveKind::all_gather && c.phase != Phase::optimizer)
            EXPECT_EQ(c.stream, Zero3Schedule::kAllGatherStream) << c.name;
}

// The prefetch: with the default bucket (5e7 elements) block 1's modules are gathered before block 0's first GEMM;
// with stage3_prefetch_bucket_size 0 each module's all-gather waits for its own use.
TEST(Zero3Schedule, PrefetchedAllGatherIsIssuedBeforeTheBlockThatNeedsIt) {
    Scenario sc = with(DataParallel::zero3);
    auto firstGatherOf = [](const Program& p, const std::string& module) {
        for (const Call& c : collectives(p))
            if (c.kind == CollectiveKind::all_gather && c.phase == Phase::forward &&
                (c.name.rfind(module, 0) == 0 || c.name.find(module) != std::string::npos))
                return c.index;
        ADD_FAILURE() << "no all-gather of " << module;
        return std::size_t(0);
    };
    const Program p = expandOn(sc).workload.programs[0];
    const std::size_t qkv0 = indexOf(p, "h.0.attn.qkv", Phase::forward);
    // The prefetch is one coalesced call named after its first module: h.0's later modules and block 1's follow.
    bool block1_before = false;
    for (const Call& c : collectives(p))
        if (c.kind == CollectiveKind::all_gather && c.index < qkv0 && c.name.find("prefetched") != std::string::npos)
            block1_before = true;
    EXPECT_TRUE(block1_before);
    sc.zero.stage3_prefetch_bucket_size = 0;
    const Program q = expandOn(sc).workload.programs[0];
    EXPECT_GT(firstGatherOf(q, "h.1.attn.qkv"), indexOf(q, "h.0.mlp.proj", Phase::forward));
}

// ZeRO-3's memory: partitioned parameters, the fp32 gradient partition, the states and master copy, the gathered
// window (here every partitioned module: kept from forward to backward), the ipg buffer; at the loss's backward,
// where it peaks, no bucket's reduce-scatter input yet.
TEST(Zero3Schedule, MemoryIsTheClosedFormAtItsPeakPhase) {
    Scenario sc = with(DataParallel::zero3);
    sc.zero.reduce_bucket_size = 1e6;
    const MemoryEstimate m = expandOn(sc).memory;
    const double n = kParams, N = 8, R = 1e6, part = kParams - kPersist;
    EXPECT_DOUBLE_EQ(m.params, 4 * part / N + 4 * kPersist);
    EXPECT_DOUBLE_EQ(m.grads, 4 * n / N);
    EXPECT_DOUBLE_EQ(m.optimizer, 12 * n / N);
    EXPECT_EQ(m.phase, "loss_backward");
    EXPECT_DOUBLE_EQ(m.gathered, 4 * part);  // capped at every partitioned parameter
    EXPECT_DOUBLE_EQ(m.buckets, 4 * R);
}

// set_requires_gradient_sync(False) on the micro-steps before the last: one reduce-scatter per group a step, autograd
// accumulating into the kept unsharded gradients, and their memory.
TEST(Fsdp2Schedule, NoSyncMicroStepsReduceOnce) {
    Scenario sc = with(DataParallel::fsdp2);
    sc.training.grad_accum = 2;
    sc.fsdp.sync_every_micro_batch = false;
    const Expansion e = expandOn(sc);
    const Program& p = e.workload.programs[0];
    EXPECT_EQ(count(collectives(p), CollectiveKind::reduce_scatter), 2 + 1);
    int autograd = 0, sharded = 0;
    for (const Op& op : p.ops) {
        if (op.step != 1 || op.kind != OpKind::kernel) continue;
        const std::string& n = p.names[op.name];
        if (n.ends_with(" fsdp sharded grad accumulate")) ++sharded;
        else if (n.ends_with(" grad accumulate")) ++autograd;
    }
    EXPECT_EQ(sharded, 0);
    EXPECT_EQ(autograd, 21);
    // At the peak (the start of the last micro-step's blocks' backward) every unsharded gradient, no sharded one yet.
    EXPECT_EQ(e.memory.phase, "blocks_backward_start");
    EXPECT_DOUBLE_EQ(e.memory.grads, 4 * kParams);
}

// An integer reshard_after_forward (N = 4 of 8 ranks): each block's post-forward keeps a 1/4 shard (a clone), and its
// backward all-gather runs over the rank's group of 4 consecutive ranks; forward's over all 8. The post-forward
// shards are kept from forward to backward: g·n_blk/4 more gathered memory than resharding fully, at the loss's
// backward (where a large vocabulary puts the peak).
TEST(Fsdp2Schedule, IntegerReshardGathersBackwardOnTheSmallerGroup) {
    Scenario sc = with(DataParallel::fsdp2);
    sc.fsdp.reshard_after_forward = ReshardAfterForward::toRanks(4);
    const Expansion e = expandOn(sc);
    for (int rank : {0, 5}) {
        const std::vector<Call> calls = collectives(e.workload.programs[std::size_t(rank)]);
        int backward_gathers = 0;
        for (const Call& c : calls) {
            if (c.kind != CollectiveKind::all_gather) continue;
            const std::vector<int>& ranks = e.workload.groups.at(std::size_t(c.group)).ranks;
            EXPECT_DOUBLE_EQ(c.bytes, 4 * (c.name.rfind("root", 0) == 0 ? kRoot : kBlock)) << c.name;
            if (c.phase == Phase::backward) {
                ++backward_gathers;
                const int first = rank / 4 * 4;
                EXPECT_EQ(ranks, (std::vector<int>{first, first + 1, first + 2, first + 3})) << c.name;
            } else {
                EXPECT_EQ(ranks.size(), 8u) << c.name;
            }
        }
        EXPECT_EQ(backward_gathers, 2);
    }
    const Program& p = e.workload.programs[0];
    EXPECT_EQ(std::count_if(p.ops.begin(), p.ops.end(),
                            [&](const Op& op) {
                                return op.step == 1 && p.names[op.name].ends_with("to_sharded_post_forward (clone)");
                            }),
              2);
    Scenario post = sc, full = with(DataParallel::fsdp2);
    post.model.vocab = full.model.vocab = 65536;
    const MemoryEstimate m = expandOn(post).memory;
    EXPECT_EQ(m.phase, "loss_backward");
    EXPECT_DOUBLE_EQ(m.gathered - expandOn(full).memory.gathered, 4 * 2 * kBlock / 4);
}

// Every strategy's streams and events run to the end in the engine.
TEST(ShardedSchedules, RunInTheEngine) {
    std::vector<Scenario> all;
    for (DataParallel d : {DataParallel::fsdp1, DataParallel::zero1, DataParallel::zero2, DataParallel::zero3})
        all.push_back(with(d));
    Scenario hsdp = with(DataParallel::hsdp, 4);
    hsdp.cluster.nodes = 2;
    all.push_back(hsdp);
    for (const Scenario& sc : all) {
        const Simulation s = simulate(sc, builtinProfile("h200-sxm"));
        EXPECT_GT(s.results.step_time_ms, 0.0);
        EXPECT_EQ(s.results.per_step.size(), 2u);
    }
}

// scenarios/sharding: every file loads and expands; the 13B-class model exceeds an H200's memory under DDP and fits
// sharded (FSDP2, ZeRO-3) on the same 8 GPUs.
TEST(ShardedSchedules, ComparisonScenariosExpandAndTheLargeModelFitsOnlySharded) {
    const std::filesystem::path dir = std::filesystem::path(STEPSIM_SOURCE_DIR) / "scenarios" / "sharding";
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        SCOPED_TRACE(entry.path().string());
        const Scenario sc = loadScenario(entry.path());
        EXPECT_EQ(sc.name, entry.path().stem().string());
        const double peak_gib = expand(sc, cost).memory.peak() / (1024.0 * 1024.0 * 1024.0);
        if (sc.name.rfind("gpt-13b-", 0) == 0) {
            if (sc.parallel.data == DataParallel::ddp) EXPECT_GT(peak_gib, prof.gpu.memory_gib);
            else EXPECT_LT(peak_gib, prof.gpu.memory_gib);
        }
        ++files;
    }
    EXPECT_EQ(files, 12);
}

// The loader: keys of one strategy under another have no effect (a warning naming them, the key at its default); HSDP
// on one node, ZeRO with 16-bit parameters and reshards to a non-divisor are refused.
TEST(ShardedSchedules, LoaderWarnsOfKeysThatChangeNothing) {
    const std::string base = "stepsim: 1\nmodel: {layers: 2, hidden: 256, heads: 4}\n";
    auto refused = [&](const std::string& yaml, const std::string& key) {
        try {
            parseScenario(base + yaml, "x.yaml");
            ADD_FAILURE() << "accepted: " << yaml;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
        }
    };
    auto noEffect = [&](const std::string& yaml, const std::string& key) {
        const Scenario sc = parseScenario(base + yaml, "x.yaml");
        ASSERT_EQ(sc.warnings.size(), 1u) << yaml;
        EXPECT_NE(sc.warnings[0].find("key " + key + " (x.yaml:"), std::string::npos) << sc.warnings[0];
        EXPECT_NE(sc.warnings[0].find("has no effect"), std::string::npos) << sc.warnings[0];
    };
    noEffect("parallel: {data: fsdp2}\nzero: {reduce_bucket_size: 1000}\n", "zero.reduce_bucket_size");
    noEffect("parallel: {data: zero2}\nzero: {stage3_prefetch_bucket_size: 1000}\n", "zero.stage3_prefetch_bucket_size");
    noEffect("parallel: {data: zero3}\nfsdp: {forward_prefetch: true}\n", "fsdp.forward_prefetch");
    noEffect("parallel: {data: fsdp2}\nfsdp: {limit_all_gathers: false}\n", "fsdp.limit_all_gathers");
    refused("parallel: {data: hsdp}\n", "parallel.data");
    refused("parallel: {data: zero1}\ntraining: {param_dtype: bf16}\n", "training.param_dtype");
    noEffect("fsdp: {sync_every_micro_batch: false}\n", "fsdp.sync_every_micro_batch");
    refused("parallel: {data: fsdp2}\nfsdp: {reshard_after_forward: 3}\n", "fsdp.reshard_after_forward");
    refused("parallel: {data: fsdp1}\nfsdp: {reshard_after_forward: 4}\n", "fsdp.reshard_after_forward");
    const std::string fsdp2 = base + "parallel: {data: fsdp2}\nfsdp: {reshard_after_forward: ";
    EXPECT_EQ(parseScenario(fsdp2 + "4}\n", "x.yaml").fsdp.reshard_after_forward.ranks, 4);
    EXPECT_EQ(parseScenario(fsdp2 + "8}\n", "x.yaml").fsdp.reshard_after_forward, ReshardAfterForward(true));
    EXPECT_EQ(parseScenario(fsdp2 + "1}\n", "x.yaml").fsdp.reshard_after_forward, ReshardAfterForward(false));
    EXPECT_NO_THROW(parseScenario(base + "parallel: {data: zero3}\nzero: {overlap_comm: false, "
                                         "stage3_max_reuse_distance: 0}\n", "x.yaml"));
}

}  // namespace
}  // namespace stepsim
