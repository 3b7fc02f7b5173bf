#include "sim/workload/Fsdp2Schedule.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/workload/Expand.hpp"
#include "sim/workload/OptimizerStep.hpp"
#include "sim/workload/ShardComm.hpp"

namespace stepsim {


DType fsdpGatherDtype(const Scenario& sc) { return sc.fsdp.param_dtype.value_or(sc.training.param_dtype); }

DType fsdpReduceDtype(const Scenario& sc) { return sc.fsdp.reduce_dtype.value_or(fsdpGatherDtype(sc)); }

MemoryEstimate estimateFsdp2Memory(const StepContext& shard, const StepContext& compute) {
    // Activations, the loss's tensors and autocast's weight cache as the step's kernels hold them (in the gather
    // dtype), by phase (MemoryEstimate.hpp).
    const StepTransients st = stepTransients(compute);
    const Scenario& sc = shard.sc;
    const double N = double(std::max(shard.world, 1));
    const double p = shard.pe, g = elementBytes(fsdpGatherDtype(sc)), r = elementBytes(fsdpReduceDtype(sc));
    const GroupSizes s = groupSizes(shard);
    const double n = s.root + s.blocks;
    const bool reshard = bool(sc.fsdp.reshard_after_forward);
    // set_requires_gradient_sync(False) on the micro-steps before the last: every block's unsharded gradients kept.
    const bool keep = !sc.fsdp.sync_every_micro_batch && sc.training.grad_accum > 1;
    const bool accumulated = sc.training.grad_accum > 1;
    const int post_ranks = sc.fsdp.reshard_after_forward.ranks;
    const double post = post_ranks > 0 ? g * s.blocks / post_ranks : 0.0;
    PhaseTerms t;
    t.params = p * n / N;
    t.optimizer = optimizerStatesPerParam(sc.training) * p * n / N;
    // Gradients: the sharded ones (from the first reduce-scatter on; from the start with accumulation), the root's
    // unsharded ones (the head's first, all of them at the end), one block's before its reduce-scatter, or every
    // unsharded one when kept.
    const double sharded = p * n / N;
    t.grads_loss = keep ? g * n : accumulated ? sharded : 0.0;
    t.grads_start = keep ? g * n : (accumulated ? sharded : 0.0) + g * st.head_numel;
    t.grads_end = sharded + g * (keep ? n : s.root + s.largest_block);
    t.grads_step = sharded;
    // Gathered: the root stays unsharded to the end of backward; with reshard_after_forward the blocks are freed
    // after forward and gathered again in backward (the one computing and the one prefetched), else all kept until
    // their post-backward; an integer N keeps the post-forward shards to the backward.
    t.gathered_loss = g * s.root + (reshard ? 0.0 : g * s.blocks) + post;
    t.gathered_start = g * s.root + (reshard ? 2 * g * s.largest_block : g * s.blocks) + post;
    t.gathered_end = g * s.root + g * s.largest_block;
    // A block's reduce-scatter input and output at the end of backward (the forward's kept all-gather output, g·n_b,
    // is freed before the loss).
    t.buffers_end = r * s.largest_block * (1 + 1 / N);
    t.optimizer_temp = optimizerTemporaries(sc.training, n / N, p);
    return phasePeak(st, t);
}

Fsdp2Schedule::Fsdp2Schedule(const StepContext& shard, const StepContext& compute, ProgramBuilder& b)
    : shard_(shard),
      compute_(compute),
      b_(b),
      comm_(shard, b),
      world_(shard.world),
      pe_(shard.pe),
      ge_(elementBytes(fsdpGatherDtype(shard.sc))),
      re_(elementBytes(fsdpReduceDtype(shard.sc))),
      gather_(fsdpGatherDtype(shard.sc)),
      reduce_(fsdpReduceDtype(shard.sc)) {
    post_ranks_ = shard.sc.fsdp.reshard_after_forward.ranks;
    fp8_gather_ = fp8Training(shard.sc) && shard.sc.fp8.fp8_all_gather;
    sync_convert_ = fp8Training(shard.sc) && shard.sc.fp8.sync_after_all_gather;
    for (const ShardGroup& sg : shardGroups(shard)) {
        Group g;
        g.name = sg.name;
        g.numel = sg.numel;
        g.params = sg.params;
        for (std::size_t i : g.params)
            if (fp8_gather_ && shard.params[i].matmul) g.fp8_numel += shard.params[i].numel;
        groups_.push_back(std::move(g));
    }
}

std::vector<StreamInfo> Fsdp2Schedule::streams() const {
    return {{StreamKind::compute, "compute"},
            {StreamKind::copy, "fsdp:all_gather_copy_in"},
            {StreamKind::comm, "nccl:dp all_gather"},
            {StreamKind::comm, "nccl:dp reduce_scatter"}};
}

std::vector<ProcessGroup> Fsdp2Schedule::groups() const {
    ProcessGroup dp{"dp", {}};
    for (int r = 0; r < world_; ++r) dp.ranks.push_back(r);
    std::vector<ProcessGroup> out{dp};
    for (int first = 0; post_ranks_ > 0 && first < world_; first += post_ranks_) {
        ProcessGroup g{fmt::format("post-forward (ranks {}-{})", first, first + post_ranks_ - 1), {}};
        for (int r = first; r < first + post_ranks_; ++r) g.ranks.push_back(r);
        out.push_back(std::move(g));
    }
    return out;
}

std::vector<int> Fsdp2Schedule::rankGroups(int rank) const {
    if (post_ranks_ <= 0) return {};
    return {0, 1 + rank / post_ranks_};
}

double Fsdp2Schedule::optimizerShare() const { return 1.0 / double(std::max(world_, 1)); }

void Fsdp2Schedule::beginStep(int) {
    micro_ = 0;
    for (Group& g : groups_) g.post_reduce.reset();
}

void Fsdp2Schedule::beginBackward(bool last) {
    last_ = last;
    ++micro_;
}

// A kernel FSDP launches itself: one eager op's host cost.
void Fsdp2Schedule::kernel(const std::string& name, double bytes, MemKind kind, std::uint8_t stream) {
    comm_.kernel(name, bytes, kind, stream);
}

// On the shard group (slot 0), in NCCL's strong-stream chain (ShardComm.hpp).
std::uint32_t Fsdp2Schedule::collective(const std::string& name, CollectiveKind kind, double bytes, DType dtype,
                                        std::uint8_t stream) {
    return comm_.collective(name, kind, bytes, dtype, stream, 0);
}

void Fsdp2Schedule::allGatherStreamsWait(std::uint32_t event) {
    b_.wait(kCopyInStream, event);
    b_.wait(kAllGatherStream, event);
}

void Fsdp2Schedule::unshard(std::size_t gi) {
    Group& g = groups_[gi];
    if (g.unsharded || g.all_gather) return;
    const double local = g.numel / double(world_);
    if (world_ == 1) {
        // One rank: wait_for_unshard copies each sharded parameter into its unsharded one (below); nothing here.
        g.all_gather = b_.record(kComputeStream);
        return;
    }
    // _get_param_all_gather_inputs' foreach copy casts the shards to param_dtype; all_gather_copy_in copies them into
    // the all-gather output's slice.
    if (gather_ != shard_.sc.training.param_dtype)
        kernel(g.name + " fsdp all_gather cast to param_dtype", (pe_ + ge_) * local,
               ge_ < pe_ ? MemKind::cast_down : MemKind::cast_up, kCopyInStream);
    if (fp8_gather_)
        for (std::size_t i : g.params) {
            if (!shard_.params[i].matmul) continue;
            const double n = shard_.params[i].numel / double(world_), name_bytes = 8 * n;
            const std::string w = shard_.params[i].name;
            if (pe_ != 4) kernel(w + " fp8 pre_all_gather to fp32", (pe_ + 4) * n, MemKind::fp8_upcast, kCopyInStream);
            kernel(w + " fp8 pre_all_gather scale mul", name_bytes, MemKind::fp8_scale_mul, kCopyInStream);
            kernel(w + " fp8 pre_all_gather clamp", name_bytes, MemKind::fp8_clamp, kCopyInStream);
            kernel(w + " fp8 pre_all_gather to fp8", 5 * n, MemKind::fp8_quantize, kCopyInStream);
        }
    // From the post-forward shard: over the rank's post-forward group.
    const bool post = g.post_forward;
    g.post_forward = false;
    kernel(g.name + " fsdp all_gather_copy_in", 2 * gatherBytes(g) / double(post ? post_ranks_ : world_),
           MemKind::elementwise, kCopyInStream);
    b_.wait(kAllGatherStream, b_.record(kCopyInStream));
    g.all_gather = comm_.collective(g.name + (post ? " fsdp all_gather (post-forward group)" : " fsdp all_gather"),
                                    CollectiveKind::all_gather, gatherBytes(g), fp8_gather_ ? DType::fp8 : gather_,
                                    kAllGatherStream, post ? 1 : 0);
}

void Fsdp2Schedule::waitForUnshard(std::size_t gi, bool forward) {
    Group& g = groups_[gi];
    if (!g.all_gather) return;
    // [Note: Overlapping all-gather copy-in and all-gather]: the previous forward copy-out's all-gather output is
    // freed once the all-gather streams have waited for that copy-out.
    if (forward && all_gather_state_) {
        allGatherStreamsWait(*all_gather_state_);
        all_gather_state_.reset();
    }
    b_.wait(kComputeStream, *g.all_gather);
    g.all_gather.reset();
    if (world_ == 1) {
        for (std::size_t i : g.params)
            kernel(shard_.params[i].name + " fsdp unshard copy", (pe_ + ge_) * shard_.params[i].numel,
                   ge_ == pe_ ? MemKind::elementwise : MemKind::cast_down, kComputeStream);
    } else {
        kernel(g.name + " fsdp split_with_sizes_copy", 2 * gatherBytes(g), MemKind::elementwise, kComputeStream);
    }
    const std::uint32_t copy_out = b_.record(kComputeStream);
    if (sync_convert_) {
        b_.hostSync(copy_out);
        double linear = 0;
        for (std::size_t i : g.params)
            if (shard_.params[i].matmul) linear += shard_.params[i].numel;
        kernel(g.name + " fp8<->bf16 conversion (synchronizing)", 3 * linear, MemKind::cast_up, kComputeStream);
    }
    if (forward && world_ > 1) all_gather_state_ = copy_out;
    else allGatherStreamsWait(copy_out);
    g.unsharded = true;
}

void Fsdp2Schedule::precomputeFp8Scales() {
    double local = 0, weights = 0;
    for (const ParamInfo& p : shard_.params)
        if (p.matmul) local += p.numel / double(world_), weights += 1;
    kernel("fp8 precompute scales foreach_norm(inf)", pe_ * local, MemKind::fp8_amax, kComputeStream);
    kernel("fp8 precompute scales stack", 8 * weights, MemKind::fp8_scale_math, kComputeStream);
    b_.wait(kAllGatherStream, b_.record(kComputeStream));
    b_.wait(kComputeStream, collective("fp8 amax all_reduce (MAX)", CollectiveKind::all_reduce, 4 * weights,
                                       DType::fp32, kAllGatherStream));
    for (const char* op : {"clamp", "reciprocal", "mul"})
        kernel(std::string("fp8 precompute scales ") + op, 8 * weights, MemKind::fp8_scale_math, kComputeStream);
}

void Fsdp2Schedule::beforeForward() {
    if (fp8_gather_ && world_ > 1) precomputeFp8Scales();
    // _root_pre_forward: the all-gather streams wait for the compute stream (the previous optimizer step).
    allGatherStreamsWait(b_.record(kComputeStream));
    unshard(root());
    waitForUnshard(root(), /*forward=*/true);
}

void Fsdp2Schedule::beforeLayerForward(int l) {
    const std::size_t g = std::size_t(l);
    unshard(g);
    waitForUnshard(g, /*forward=*/true);
    if (shard_.sc.fsdp.forward_prefetch && g + 1 < root()) unshard(g + 1);
}

void Fsdp2Schedule::afterLayerForward(int l) {
    if (!shard_.sc.fsdp.reshard_after_forward) return;
    Group& g = groups_[std::size_t(l)];
    g.unsharded = false;
    if (post_ranks_ > 0 && world_ > 1) {
        kernel(g.name + " fsdp to_sharded_post_forward (clone)", 2 * gatherBytes(g) / post_ranks_, MemKind::elementwise,
               kComputeStream);
        g.post_forward = true;
    }
}

void Fsdp2Schedule::afterForward() {
    // The root's post-forward: its parameters stay unsharded; the last all-gather output is freed.
    if (all_gather_state_) {
        allGatherStreamsWait(*all_gather_state_);
        all_gather_state_.reset();
    }
}

void Fsdp2Schedule::beforeHeadBackward() {
    // The root's pre-backward prefetches the last block (reverse post-forward order).
    if (shard_.sc.fsdp.backward_prefetch != BackwardPrefetch::none && root() > 0) unshard(root() - 1);
}

void Fsdp2Schedule::beforeLayerBackward(int l) {
    const std::size_t g = std::size_t(l);
    unshard(g);
    waitForUnshard(g, /*forward=*/false);
    if (shard_.sc.fsdp.backward_prefetch != BackwardPrefetch::none && g > 0) unshard(g - 1);
}

void Fsdp2Schedule::afterLayerBackward(int l) { postBackward(std::size_t(l)); }

void Fsdp2Schedule::postBackward(std::size_t gi) {
    Group& g = groups_[gi];
    g.unsharded = false;  // reshard after backward
    // set_requires_gradient_sync(False): the unsharded gradients stay (autograd accumulates into them next time).
    if (!last_ && !syncEvery()) return;
    if (reduce_scatter_state_) {
        b_.wait(kComputeStream, *reduce_scatter_state_);
        reduce_scatter_state_.reset();
    }
    if (g.post_reduce) {
        b_.wait(kComputeStream, *g.post_reduce);
        g.post_reduce.reset();
    }
    const double n = g.numel, N = double(world_);
    // foreach_reduce's copy-in on the compute stream: _chunk_cat widens natively (into fp32); any other cast goes
    // through a buffer in the gradients' dtype (the gather dtype) and a copy.
    if (reduce_ != gather_ && reduce_ != DType::fp32) {
        kernel(g.name + " fsdp reduce_scatter chunk_cat", 2 * ge_ * n, MemKind::elementwise, kComputeStream);
        kernel(g.name + " fsdp reduce_scatter cast", (ge_ + re_) * n, re_ < ge_ ? MemKind::cast_down : MemKind::cast_up,
               kComputeStream);
    } else {
        kernel(g.name + " fsdp reduce_scatter chunk_cat", (ge_ + re_) * n,
               re_ > ge_ ? MemKind::cast_up : MemKind::elementwise, kComputeStream);
    }
    b_.wait(kReduceScatterStream, b_.record(kComputeStream));
    const bool fp16 = reduce_ == DType::fp16;  // overflow risk: divided before and after, in kernels of their own
    if (fp16 && world_ > 1) kernel(g.name + " fsdp predivide", 2 * re_ * n, MemKind::elementwise, kReduceScatterStream);
    std::uint32_t rs_end;
    std::uint8_t post = kReduceScatterStream;  // where the reduced shard is cast and accumulated
    if (world_ > 1) {
        rs_end = collective(g.name + " fsdp reduce_scatter", CollectiveKind::reduce_scatter, re_ * n, reduce_,
                            kReduceScatterStream);
        post = afterReduceScatter(g.name, re_ * n / N);
    } else {
        kernel(g.name + " fsdp reduce copy", 2 * re_ * n, MemKind::elementwise, kReduceScatterStream);
        rs_end = b_.record(kReduceScatterStream);
    }
    if (fp16 && world_ > 1) kernel(g.name + " fsdp postdivide", 2 * re_ * n / N, MemKind::elementwise, post);
    if (reduce_ != shard_.sc.training.param_dtype)
        kernel(g.name + " fsdp reduce_scatter output to param dtype", (re_ + pe_) * n / N,
               re_ < pe_ ? MemKind::cast_up : MemKind::cast_down, post);
    if (micro_ > 1 && syncEvery()) {
        // Gradient accumulation: each sharded gradient += its new shard.
        for (std::size_t i : g.params)
            kernel(shard_.params[i].name + " fsdp sharded grad accumulate", 3 * pe_ * shard_.params[i].numel / N,
                   MemKind::elementwise, post);
    }
    g.post_reduce = b_.record(post);
    reduce_scatter_state_ = rs_end;
}

void Fsdp2Schedule::endBackward() {
    // _root_post_backward_final_callback: the root's post-backward (its inputs need no gradient), then every group's
    // finalize_backward waits for its reduction, and the compute stream for the last reduce-scatter.
    postBackward(root());
    for (Group& g : groups_) {
        if (g.post_reduce) b_.wait(kComputeStream, *g.post_reduce);
        g.post_reduce.reset();
    }
    if (reduce_scatter_state_) b_.wait(kComputeStream, *reduce_scatter_state_);
    reduce_scatter_state_.reset();
    if (last_ && world_ > 1 && shard_.sc.training.grad_clip_norm > 0.0) {
        // clip_grad_norm_ on DTensor gradients: the total norm's partial sums all-reduced (synchronous, on the
        // current stream).
        b_.phase = Phase::optimizer;
        collective("clip grad norm all_reduce", CollectiveKind::all_reduce, 4, DType::fp32, kComputeStream);
        b_.phase = Phase::backward;
    }
}

bool Fsdp2Schedule::syncEvery() const { return shard_.sc.fsdp.sync_every_micro_batch; }

std::uint8_t Fsdp2Schedule::afterReduceScatter(const std::string&, double) { return kReduceScatterStream; }

void Fsdp2Schedule::report(Expansion& out) const { out.memory = estimateFsdp2Memory(shard_, compute_); }

}  // namespace stepsim
