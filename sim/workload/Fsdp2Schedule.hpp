#pragma once
// FSDP2's schedule: torch.distributed.fsdp.fully_shard on each transformer block and on the root (the embeddings, the
// final norm and the LM head), as PyTorch runs it (torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py,
// _fsdp_collectives.py, _fsdp_state.py). Each of the L + 1 parameter groups keeps 1/N of each of its parameters on a
// rank (N = world size); the rank's streams are the compute stream, FSDP's all-gather copy-in stream and its
// all-gather and reduce-scatter streams, on which the (synchronous) NCCL collectives of the one process group "dp"
// run.
//
// Unshard of a group of n parameters (pre-forward, pre-backward, or a prefetch), on the copy-in stream:
//   with a MixedPrecisionPolicy param_dtype (fsdp.param_dtype) the shards are cast into a flat buffer
//   (_foreach_copy_: p + g bytes per sharded element), then all_gather_copy_in copies the inputs into their slice of
//   the all-gather output (2g); the all-gather stream waits for it and all-gathers g·n bytes (nccl-tests' S, the
//   output).
// Wait for unshard, on the compute stream: it waits for the all-gather, then split_with_sizes_copy copies the output
//   into the parameters (2g·n). In forward the all-gather output is kept until the next group's copy-out (the
//   all-gather streams wait for this copy-out there: [Note: Overlapping all-gather copy-in and all-gather]); in
//   backward the all-gather streams wait for it at once.
// Forward: the root's pre-forward makes the all-gather streams wait for the compute stream (the optimizer step), then
//   unshards the root; each block's pre-forward unshards it (implicit prefetch: the host issues the next block's
//   all-gather while the GPU still computes the current one) and with fsdp.forward_prefetch the next block too
//   (explicit prefetch, set_modules_to_forward_prefetch of one block); its post-forward frees the unsharded
//   parameters when fsdp.reshard_after_forward (never the root's: lazy init sets its reshard_after_forward false).
//   With an integer N (1 < N < world) the post-forward keeps a 1/N shard of each gathered parameter
//   (to_sharded_post_forward: a clone of its slice of the all-gather output, 2g·n/N on the compute stream) and the
//   backward's unshard all-gathers it over the rank's post-forward group of N consecutive ranks (process-group slot 1:
//   copy-in 2g·n/N, all-gather g·n bytes) instead of the whole world.
// Backward: the root's pre-backward (its output's gradient ready) prefetches the last block; each block's
//   pre-backward unshards it (a no-op once prefetched or never resharded) and prefetches the block before it
//   (reverse post-forward order; fsdp.backward_prefetch: none turns it off); its post-backward frees the unsharded
//   parameters and reduces their gradients:
//     the compute stream waits for the previous reduce-scatter (ReduceScatterState), then _chunk_cat copies the
//     gradients (in g) into the reduce-scatter input in the reduce dtype r (fsdp.reduce_dtype, default: the
//     gradients' dtype; a narrowing cast goes through a g buffer and a copy); the reduce-scatter stream waits for the
//     compute stream and reduce-scatters r·n bytes with ReduceOp.AVG (fp16: divided by ~sqrt(N) before and N/that
//     after, in kernels of their own); the output is cast to the parameters' dtype p when r differs, and after the
//     first micro-step of gradient accumulation added into each sharded gradient (one add per parameter).
//   The root has no post-backward hook (its inputs need no gradient): autograd's final callback reduces its gradients
//   after the whole backward, then the compute stream waits for every group's reduction.
// NCCL runs one communicator's kernels one after the other whatever stream they are launched on (its strong-stream
//   chain of CUDA events; NVIDIA/nccl#574), and the all-gathers and reduce-scatters share the group's communicator,
//   so each collective's stream first waits for the previous collective.
// Gradient accumulation reduce-scatters every micro-step; with fsdp.sync_every_micro_batch: false
//   (set_requires_gradient_sync(False) on every micro-step but the last) the post-backward frees the unsharded
//   parameters and reduces nothing: autograd accumulates into the unsharded gradients, reduce-scattered once. The optimizer steps the local shard, n/N of each parameter (optimizerShare); with gradient
//   clipping the total norm's DTensor all-reduce (4 bytes, fp32) runs on the compute stream before it.
// Host costs: each FSDP kernel one eager op (launch.eager_host), each collective an NCCL issue (launch.nccl_host).
//   The hooks' own Python (per group and per parameter: views, storage resizes, DTensor wrapping) is not measured by
//   any profile and costs nothing here; nor is DTensor's dispatch in the optimizer's foreach step.
// FP8 all-gather (fp8.fp8_all_gather, torchao's WeightWithDynamicFloat8CastTensor with
//   precompute_float8_dynamic_scale_for_fsdp, as torchtitan runs it): once per step, before the forward, the compute
//   stream takes the amax of every local Linear weight shard (_foreach_norm(ord=inf): one launch over p·n_mm/N bytes,
//   then a stack), all-reduces the amaxes with MAX (4 bytes each) and turns them into scales (clamp, reciprocal,
//   multiply); each unshard casts the local Linear weight shards to fp8 with their scale (multiply, clamp, to fp8: one
//   launch each per weight) on the copy-in stream, and the group's Linear weights travel as 1 byte per element (its
//   other parameters in the gather dtype), so the all-gather and the copies around it move n_mm bytes for them.
//   The step's Float8Linears then skip their weight casts (Fp8Linear.hpp).
// fp8.sync_after_all_gather: after each copy-out the host waits for it (an FP8<->BF16 conversion of the
//   gathered Linear weights that synchronizes, as a .item() or a cross-stream check would), then the conversion runs
//   on the compute stream (3 bytes per element), before the block's GEMMs.
// Sharding pads each parameter's first dimension to a multiple of N; the padding is ignored (n/N per rank).
//
// Memory per GPU, by phase of the step (MemoryEstimate.hpp's phasePeak; N ranks, n parameters, n_b the largest
// block's, n_r the root's, n_blk all blocks', n_h the LM head's and final norm's; p, g, r the bytes of
// training.param_dtype, the gather dtype and the reduce dtype):
//   resident: params = p·n/N, optimizer = s·p·n/N (the optimizer's s states of the local shard: AdamW and Adam 2,
//     SGD with momentum 1, plain SGD 0; OptimizerStep.hpp);
//   loss_backward: gathered g·n_r (the root, unsharded to the end of backward) + g·n_blk without reshard_after_forward
//     (+ g·n_blk/N' with an integer N': the post-forward shards); no gradient yet;
//   blocks_backward_start: gathered g·n_r + 2·g·n_b with reshard (the block computing and the one prefetched), g·n_r +
//     g·n_blk without; grads g·n_h (the root's unsharded head gradients);
//   backward_end: gathered g·(n_r + n_b); grads p·n/N (sharded) + g·(n_r + n_b) (the root's unsharded gradients,
//     reduced after the whole backward, and one block's before its reduce-scatter); buckets r·n_b·(1 + 1/N) (a
//     block's reduce-scatter input and output);
//   optimizer_step: grads p·n/N, the optimizer's temporaries on the shard;
//   with fsdp.sync_every_micro_batch false and grad_accum > 1 the grads hold g·n unsharded in every backward phase
//     (p·n/N sharded from the first micro-step with accumulation otherwise);
//   the step's activations, cast weights (under autocast, gathered wider than the compute dtype) and loss tensors by
//     phase as MemoryEstimate.hpp gives them, in the gather dtype.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/workload/MemoryEstimate.hpp"
#include "sim/workload/ParallelSchedule.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/ShardComm.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

// The gather dtype (fsdp.param_dtype, else training.param_dtype) and the reduce dtype (fsdp.reduce_dtype, else the
// gather dtype: the gradients' own).
DType fsdpGatherDtype(const Scenario& sc);
DType fsdpReduceDtype(const Scenario& sc);

// The memory above. `shard`: the context of the sharded parameters (training.param_dtype); `compute`: the step's
// (its parameters in the gather dtype).
MemoryEstimate estimateFsdp2Memory(const StepContext& shard, const StepContext& compute);

class Fsdp2Schedule : public ParallelSchedule {
public:
    // The rank's streams.
    static constexpr std::uint8_t kCopyInStream = 1, kAllGatherStream = 2, kReduceScatterStream = 3;

    Fsdp2Schedule(const StepContext& shard, const StepContext& compute, ProgramBuilder& b);

    std::vector<StreamInfo> streams() const override;
    std::vector<ProcessGroup> groups() const override;
    std::vector<int> rankGroups(int rank) const override;
    void beginStep(int step) override;
    void beginBackward(bool last) override;
    void gradReady(std::size_t) override {}
    void endBackward() override;
    void beforeForward() override;
    void beforeLayerForward(int l) override;
    void afterLayerForward(int l) override;
    void afterForward() override;
    void beforeHeadBackward() override;
    void beforeLayerBackward(int l) override;
    void afterLayerBackward(int l) override;
    // Autograd adds into the unsharded gradients only when they were kept (fsdp.sync_every_micro_batch: false).
    bool autogradAccumulates() const override { return !syncEvery(); }
    double optimizerShare() const override;
    void report(Expansion& out) const override;

protected:
    // After a group's reduce-scatter (its event on the reduce-scatter stream): what more reduces the `bytes` of the
    // shard, and the stream the shard's cast and accumulation then run on (FSDP2: none, the reduce-scatter stream;
    // HSDP: the all-reduce across replicas, HsdpSchedule.hpp).
    virtual std::uint8_t afterReduceScatter(const std::string& group, double bytes);
    ShardComm& comm() { return comm_; }
    bool syncEvery() const;

private:
    struct Group {
        std::string name;                  // "h.3" or "root"
        double numel = 0;                  // parameters (unsharded)
        double fp8_numel = 0;              // of which Linear weights gathered in fp8 (fp8.fp8_all_gather)
        std::vector<std::size_t> params;   // indices into StepContext::params
        bool unsharded = false;
        bool post_forward = false;         // holds its post-forward shard (an integer reshard_after_forward)
        std::optional<std::uint32_t> all_gather;   // all-gather issued, not yet waited for (its event)
        std::optional<std::uint32_t> post_reduce;  // its last reduction's end
    };

    std::size_t root() const { return groups_.size() - 1; }
    void unshard(std::size_t g);
    void waitForUnshard(std::size_t g, bool forward);
    void postBackward(std::size_t g);
    void allGatherStreamsWait(std::uint32_t event);
    std::uint32_t collective(const std::string& name, CollectiveKind kind, double bytes, DType dtype, std::uint8_t stream);
    void kernel(const std::string& name, double bytes, MemKind kind, std::uint8_t stream);
    void precomputeFp8Scales();
    double gatherBytes(const Group& g) const { return ge_ * (g.numel - g.fp8_numel) + g.fp8_numel; }

    const StepContext& shard_;
    const StepContext& compute_;
    ProgramBuilder& b_;
    ShardComm comm_;
    int world_;
    double pe_, ge_, re_;  // bytes per element: sharded parameters, gathered parameters, reduction
    DType gather_, reduce_;
    std::vector<Group> groups_;  // blocks 0 … L−1, then the root
    std::optional<std::uint32_t> all_gather_state_;     // forward: the copy-out whose all-gather output is kept
    std::optional<std::uint32_t> reduce_scatter_state_;  // the previous reduce-scatter's end
    int post_ranks_ = 0;       // an integer fsdp.reshard_after_forward: the post-forward group's size
    bool fp8_gather_ = false;  // fp8.fp8_all_gather
    bool sync_convert_ = false;  // fp8.sync_after_all_gather
    int micro_ = 0;          // micro-steps begun in this step
    bool last_ = false;      // the current micro-step is the step's last
};

}  // namespace stepsim
