#pragma once
// FSDP1's schedule: torch.distributed.fsdp.FullyShardedDataParallel with a wrapping policy of one FSDP unit per
// transformer block plus the root (the embeddings, the final norm and the LM head), use_orig_params=False, as PyTorch
// runs it (torch/distributed/fsdp/_runtime_utils.py, _limiter_utils.py, _flat_param.py). Each unit's parameters are
// one FlatParameter of n elements; a rank keeps its 1/N slice (N = world size; padding ignored). Streams: compute,
// pre-unshard (the mixed-precision cast), unshard (the all-gathers) and post-backward (the reduce-scatters); the
// all-gathers and reduce-scatters of the one process group "dp" share its communicator (ShardComm.hpp's chain).
//
// Unshard (pre-forward, pre-backward, or a prefetch):
//   with fsdp.limit_all_gathers the rate limiter first: when two free events are queued (a unit resharded and not yet
//     known freed) the host dequeues the older and blocks on it (event.synchronize()): at most two all-gathers run
//     ahead of the frees;
//   with a MixedPrecision param_dtype (fsdp.param_dtype) the shard is cast on the pre-unshard stream ((p + g)·n/N);
//   the unshard stream waits for it and all-gathers the shard into the unit's padded flat parameter, g·n bytes: no
//   copy-in and no copy-out (the parameters are views into the flat parameter), unlike FSDP2.
// Wait for unshard: the compute stream waits for the unshard stream.
// Forward: the root's pre-forward makes the unshard streams wait for the compute stream, then unshards the root (never
//   resharded after forward); each block's pre-forward unshards it and with fsdp.forward_prefetch also the next block;
//   its post-forward reshards it when fsdp.reshard_after_forward (FULL_SHARD; false: SHARD_GRAD_OP), recording a free
//   event on the compute stream for the limiter.
// Backward: the root's pre-backward prefetches the last block under backward_prefetch: pre (BACKWARD_PRE); each
//   block's pre-backward unshards it (unless prefetched) and under pre prefetches the block before it, before the
//   block's gradient computation. Its post-backward hook (when the flat parameter's gradient is accumulated: split's
//   backward concatenates the block's gradients into the flat gradient, 2·g·n on the compute stream) reshards the
//   block (a free event), under post (BACKWARD_POST) prefetches the block before it only now, after the gradient
//   computation, then reduces: the post-backward stream waits for the compute stream, casts the flat gradient to the
//   reduce dtype r when it differs ((g + r)·n), divides it by the pre-divide factor (2·r·n), reduce-scatters r·n
//   bytes, adds the new shard into the sharded gradient after the first micro-step (3·r·n/N), divides by the
//   post-divide factor (2·r·n/N) and casts it to the parameters' dtype when r differs ((r + p)·n/N). The factors are
//   FSDP1's: f = the largest power of two with N mod f = 0 and N/f > f, then N/f (each division skipped when 1).
//   The root's gradient is complete after the embedding's backward: it is reduced in autograd's final callback, which
//   then makes the compute stream wait for the post-backward stream. backward_prefetch: none prefetches nothing.
// Gradient accumulation: every micro-step reduces; fsdp.sync_every_micro_batch: false is no_sync() on every micro-step
//   but the last (the unsharded flat gradients kept, autograd accumulating into them). The optimizer steps the local
//   shard; gradient clipping all-reduces the total norm (4 bytes) on the compute stream.
// Memory: estimateFsdp1Memory (ShardedMemory.hpp).
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "sim/workload/ParallelSchedule.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/ShardComm.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

class Fsdp1Schedule final : public ParallelSchedule {
public:
    static constexpr std::uint8_t kPreUnshardStream = 1, kUnshardStream = 2, kPostBackwardStream = 3;

    Fsdp1Schedule(const StepContext& shard, const StepContext& compute, ProgramBuilder& b);

    std::vector<StreamInfo> streams() const override;
    std::vector<ProcessGroup> groups() const override;
    void beginStep(int) override { micro_ = 0; }
    void beginBackward(bool last) override;
    void gradReady(std::size_t) override {}
    void endBackward() override;
    void beforeForward() override;
    void beforeLayerForward(int l) override;
    void afterLayerForward(int l) override;
    void beforeHeadBackward() override;
    void beforeLayerBackward(int l) override;
    void afterLayerBackward(int l) override;
    bool autogradAccumulates() const override { return !shard_.sc.fsdp.sync_every_micro_batch; }
    double optimizerShare() const override { return 1.0 / double(world_); }
    void report(Expansion& out) const override;

    // FSDP1's gradient pre-divide and post-divide factors for N ranks.
    static std::pair<double, double> divideFactors(int world);

private:
    struct Unit {
        ShardGroup group;
        bool unsharded = false;
        std::optional<std::uint32_t> all_gather;  // issued, not yet waited for
    };

    std::size_t root() const { return units_.size() - 1; }
    void unshard(std::size_t u);
    void waitForUnshard(std::size_t u);
    void reshard(std::size_t u);
    void postBackward(std::size_t u);

    const StepContext& shard_;
    const StepContext& compute_;
    ProgramBuilder& b_;
    ShardComm comm_;
    int world_;
    double pe_, ge_, re_;
    DType gather_, reduce_;
    std::vector<Unit> units_;  // blocks 0 … L−1, then the root
    std::deque<std::uint32_t> free_events_;  // the rate limiter's queue
    int micro_ = 0;
    bool last_ = false;
};

}  // namespace stepsim
