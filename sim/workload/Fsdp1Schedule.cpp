#include "sim/workload/Fsdp1Schedule.hpp"

#include "sim/workload/Expand.hpp"
#include "sim/workload/Fsdp2Schedule.hpp"
#include "sim/workload/ShardedMemory.hpp"

namespace stepsim {

Fsdp1Schedule::Fsdp1Schedule(const StepContext& shard, const StepContext& compute, ProgramBuilder& b)
    : shard_(shard),
      compute_(compute),
      b_(b),
      comm_(shard, b),
      world_(std::max(shard.world, 1)),
      pe_(shard.pe),
      ge_(elementBytes(fsdpGatherDtype(shard.sc))),
      re_(elementBytes(fsdpReduceDtype(shard.sc))),
      gather_(fsdpGatherDtype(shard.sc)),
      reduce_(fsdpReduceDtype(shard.sc)) {
    for (ShardGroup& g : shardGroups(shard)) units_.push_back({std::move(g), false, std::nullopt});
}

std::vector<StreamInfo> Fsdp1Schedule::streams() const {
    return {{StreamKind::compute, "compute"},
            {StreamKind::copy, "fsdp:pre_unshard"},
            {StreamKind::comm, "nccl:dp unshard"},
            {StreamKind::comm, "nccl:dp post_backward"}};
}

std::vector<ProcessGroup> Fsdp1Schedule::groups() const {
    ProcessGroup dp{"dp", {}};
    for (int r = 0; r < world_; ++r) dp.ranks.push_back(r);
    return {dp};
}

std::pair<double, double> Fsdp1Schedule::divideFactors(int world) {
    int f = 1;
    while (world % f == 0 && world / f > f) f *= 2;
    return {double(f), double(world) / f};
}

void Fsdp1Schedule::beginBackward(bool last) {
    last_ = last;
    ++micro_;
}

void Fsdp1Schedule::unshard(std::size_t ui) {
    Unit& u = units_[ui];
    if (u.unsharded || u.all_gather) return;
    if (shard_.sc.fsdp.limit_all_gathers && free_events_.size() >= 2) {
        // _free_event_queue.dequeue_if_needed(): the CPU thread blocks until the older free has run.
        b_.hostSync(free_events_.front());
        free_events_.pop_front();
    }
    const double n = u.group.numel, N = double(world_);
    if (gather_ != shard_.sc.training.param_dtype) {
        comm_.kernel(u.group.name + " fsdp1 low-precision shard", (pe_ + ge_) * n / N,
                     ge_ < pe_ ? MemKind::cast_down : MemKind::cast_up, kPreUnshardStream);
        b_.wait(kUnshardStream, b_.record(kPreUnshardStream));
    }
    if (world_ == 1) {  // NO_SHARD: nothing to gather
        u.all_gather = b_.record(kUnshardStream);
        return;
    }
    u.all_gather = comm_.collective(u.group.name + " fsdp1 all_gather (flat param)", CollectiveKind::all_gather,
                                    ge_ * n, gather_, kUnshardStream);
}

void Fsdp1Schedule::waitForUnshard(std::size_t ui) {
    Unit& u = units_[ui];
    if (u.all_gather) {
        b_.wait(kComputeStream, *u.all_gather);
        u.all_gather.reset();
    }
    u.unsharded = true;
}

void Fsdp1Schedule::reshard(std::size_t ui) {
    units_[ui].unsharded = false;
    if (shard_.sc.fsdp.limit_all_gathers) free_events_.push_back(b_.record(kComputeStream));
}

void Fsdp1Schedule::beforeForward() {
    // _root_pre_forward: the unshard streams wait for the computation stream (the previous optimizer step).
    const std::uint32_t ev = b_.record(kComputeStream);
    b_.wait(kPreUnshardStream, ev);
    b_.wait(kUnshardStream, ev);
    unshard(root());
    waitForUnshard(root());
}

void Fsdp1Schedule::beforeLayerForward(int l) {
    unshard(std::size_t(l));
    waitForUnshard(std::size_t(l));
    if (shard_.sc.fsdp.forward_prefetch && std::size_t(l) + 1 < root()) unshard(std::size_t(l) + 1);
}

void Fsdp1Schedule::afterLayerForward(int l) {
    if (shard_.sc.fsdp.reshard_after_forward) reshard(std::size_t(l));
}

void Fsdp1Schedule::beforeHeadBackward() {
    if (shard_.sc.fsdp.backward_prefetch == BackwardPrefetch::pre && root() > 0) unshard(root() - 1);
}

void Fsdp1Schedule::beforeLayerBackward(int l) {
    unshard(std::size_t(l));
    waitForUnshard(std::size_t(l));
    if (shard_.sc.fsdp.backward_prefetch == BackwardPrefetch::pre && l > 0) unshard(std::size_t(l) - 1);
}

void Fsdp1Schedule::afterLayerBackward(int l) { postBackward(std::size_t(l)); }

void Fsdp1Schedule::postBackward(std::size_t ui) {
    const std::string& name = units_[ui].group.name;
    const double n = units_[ui].group.numel, N = double(world_);
    // SplitWithSizesBackward: the block's gradients concatenated into the flat gradient (autograd, compute stream).
    b_.mem(name + " fsdp1 flat grad (split backward)", 2 * ge_ * n, MemKind::elementwise);
    reshard(ui);
    if (shard_.sc.fsdp.backward_prefetch == BackwardPrefetch::post && ui != root() && ui > 0) unshard(ui - 1);
    if (!last_ && !shard_.sc.fsdp.sync_every_micro_batch) return;  // no_sync(): the flat gradient stays
    b_.wait(kPostBackwardStream, b_.record(kComputeStream));
    if (reduce_ != gather_)
        comm_.kernel(name + " fsdp1 grad to reduce_dtype", (ge_ + re_) * n,
                     re_ < ge_ ? MemKind::cast_down : MemKind::cast_up, kPostBackwardStream);
    const auto [pre, post] = divideFactors(world_);
    if (pre > 1) comm_.kernel(name + " fsdp1 predivide", 2 * re_ * n, MemKind::elementwise, kPostBackwardStream);
    if (world_ > 1)
        comm_.collective(name + " fsdp1 reduce_scatter (flat grad)", CollectiveKind::reduce_scatter, re_ * n, reduce_,
                         kPostBackwardStream);
    if (micro_ > 1 && shard_.sc.fsdp.sync_every_micro_batch)
        comm_.kernel(name + " fsdp1 sharded grad accumulate", 3 * re_ * n / N, MemKind::elementwise,
                     kPostBackwardStream);
    if (post > 1) comm_.kernel(name + " fsdp1 postdivide", 2 * re_ * n / N, MemKind::elementwise, kPostBackwardStream);
    if (reduce_ != shard_.sc.training.param_dtype)
        comm_.kernel(name + " fsdp1 grad shard to param dtype", (re_ + pe_) * n / N,
                     re_ < pe_ ? MemKind::cast_up : MemKind::cast_down, kPostBackwardStream);
}

void Fsdp1Schedule::endBackward() {
    // _post_backward_final_callback: the root's flat gradient, then the compute stream waits for the reductions.
    b_.phase = Phase::backward;
    postBackward(root());
    b_.wait(kComputeStream, b_.record(kPostBackwardStream));
    if (last_ && world_ > 1 && shard_.sc.training.grad_clip_norm > 0.0) {
        b_.phase = Phase::optimizer;
        comm_.collective("clip grad norm all_reduce", CollectiveKind::all_reduce, 4, DType::fp32, kComputeStream);
        b_.phase = Phase::backward;
    }
}

void Fsdp1Schedule::report(Expansion& out) const { out.memory = estimateFsdp1Memory(shard_, compute_); }

}  // namespace stepsim
