#pragma once
// One pipeline stage's training step (parallel.pp > 1), as torch.distributed.pipelining and Megatron-LM run it: the
// stage holds consecutive blocks (pipelineSlices: the embeddings on the first stage, the final norm, LM head and loss
// on the last; v chunks of L/(p·v) blocks under interleaved 1F1B), and runs its schedule's actions
// (PipelineActions.hpp) over the step's grad_accum micro-batches:
//   forward of (chunk, micro-batch): unless it is the model's first chunk, the activation (micro_batch·seq_len/tp_sp ×
//     hidden in the compute dtype; T/tp tokens under sequence parallelism, as Megatron sends the shard) is received
//     from the previous stage on the "pp recv act" stream and the compute stream waits for it; the chunk's kernels
//     (TransformerStep); unless it is the last chunk, the "pp send act" stream waits for the compute stream and sends;
//   backward: the same with the activation's gradient, from the next stage and to the previous one (streams
//     "pp recv grad", "pp send grad"); zero bubble runs B (input gradients, sent on) and W (weight gradients) apart.
// Every transfer is a sendrecv on the two-rank group of its link (ParallelLayout.hpp): one flow, sender → receiver,
// over the fabric's route between them; each link's transfers keep their order on both sides.
// After the last action the data-parallel gradient synchronization runs, not overlapped with the pipeline:
//   DDP: DdpSchedule's buckets, every gradient ready at once in backward's order (Megatron's DDP without
//     overlap_grad_reduce);
//   FSDP2 (as torchtitan composes it with PP: reshard_after_forward off, gradients reduced once per step): the
//     stage's parameters all-gathered per block at the start of the step (the compute stream waits for a chunk's
//     blocks before its first forward), reduce-scattered per block after the last backward;
// then the optimizer step (DDP: every parameter of the stage; FSDP2: the local shard).
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/workload/MemoryEstimate.hpp"
#include "sim/workload/ParallelSchedule.hpp"
#include "sim/workload/PipelineActions.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

// The blocks of each of `stage`'s chunks: virtual stage k = chunk·p + stage of S = p·v. When S divides L each holds
// L/S; otherwise as torchtitan splits them (its generate_split_points): b = ⌊L/S⌋ blocks on the first virtual stage
// (which also holds the embeddings), b + 1 on each of the next L mod S stages, b on the others, the last (with the LM
// head and loss) taking what is left. Stage k begins at block k·b + min(L mod S, k − 1) (k ≥ 1).
std::vector<ModelSlice> pipelineSlices(const TransformerShape& t, int stage, int stages, int chunks);

// The order a backward over `slices` (from the last) makes the stage's gradients ready (indices into c.params).
std::vector<std::size_t> stageReadyOrder(StepContext& c, const std::vector<ModelSlice>& slices);

class PipelineStage {
public:
    // `c`: the stage's context (its parameters only: sliceParams); `dp`: the DDP schedule (nullptr under FSDP2).
    PipelineStage(StepContext& c, const StepContext& shard, ProgramBuilder& b, ParallelSchedule* dp, int stage);

    // The rank's streams: the data-parallel schedule's, then the four point-to-point ones.
    std::vector<StreamInfo> streams(std::vector<StreamInfo> dp_streams);
    // One training step; returns its model FLOPs.
    double step(int step);
    // Memory per GPU of this stage (PipelineStage.cpp states the model).
    MemoryEstimate memory() const;
    const std::vector<PipelineAction>& actions() const { return actions_; }

private:
    void forward(const PipelineAction& a);
    void backward(const PipelineAction& a);
    void transfer(const char* what, int micro, int chunk, std::uint8_t stream, int group, bool receive);
    void fsdpGather();
    void fsdpReduce();
    bool firstChunk(int chunk) const { return stage_ == 0 && chunk == 0; }
    bool lastChunk(int chunk) const { return stage_ == stages_ - 1 && chunk == int(slices_.size()) - 1; }

    StepContext& c_;
    const StepContext& shard_;
    ProgramBuilder& b_;
    ParallelSchedule* dp_;
    int stage_, stages_;
    std::vector<ModelSlice> slices_;
    std::vector<PipelineAction> actions_;
    std::vector<std::size_t> ready_order_;
    std::uint8_t send_act_ = 0, recv_act_ = 0, send_grad_ = 0, recv_grad_ = 0, gather_ = 0, scatter_ = 0;
    std::vector<int> backwards_done_;        // per chunk, this step
    std::vector<std::uint32_t> gathered_;    // FSDP2: per chunk, its all-gathers' end
    std::vector<bool> waited_;               // FSDP2: the compute stream waited for the chunk's all-gathers
};

}  // namespace stepsim
