#pragma once
// GPU memory of a training step, bytes per GPU, by what holds it. With N parameters (N_mm of them in Linear weights),
// parameter element bytes p, compute element bytes c, tokens T per micro-batch, vocabulary V:
//   params = p·N;  grads = p·N;  DDP's buckets p·N (allocated at construction, with or without
//     gradient_as_bucket_view; with it the gradients are the buckets' views and take nothing more);
//   optimizer = k·p·N, k the optimizer's states per parameter (OptimizerStep.hpp: 2 for Adam(W), 1 for SGD with
//     momentum, 0 without), in the parameter dtype;
//   weight_cache = c·N_mm under autocast (the cast weights the Linears save for backward);
//   activations: A per layer saved for backward (the norms' inputs, their cast outputs, q/k/v, the attention output,
//     the MLP's intermediates; this rank's heads and MLP share under TP, the sequence shard where SP shards it): A·L;
//     selective checkpointing keeps q/k/v (Q) in one layer only, (A − Q)·L + Q; torchtitan's op policy
//     (selective_op) what it saves of each layer, S·L, plus one layer's A; full keeps each layer's input, r·Ts·h·L,
//     plus one layer's A while it is recomputed (MemoryEstimate.cpp gives each term's formula);
//   loss = (c + 4 + 4)·T·V: the logits, their fp32 copy and the log-softmax output at the end of forward.
//
// The peak is not the sum of these: each is at its largest at another time of the step. The estimate is the largest
// of four phases of the step (phasePeak), each the resident terms (parameters, optimizer state, buffers allocated
// once) plus what is alive then:
//   loss_backward: log_softmax's backward, the first op of the backward: every activation and cast weight, the
//     log-softmax output, its incoming gradient and the logits' gradient (12·T·V: three fp32 T×V tensors), no
//     gradient yet (zero_grad(set_to_none=True) freed them);
//   blocks_backward_start: the LM head's backward done: every activation, the blocks' cast weights, the head's
//     gradients (p·(V·h + the final norm's));
//   backward_end: the first block's backward: one layer's activations (A; under full checkpointing its recomputed
//     A and the input it was recomputed from) and cast weights, every gradient; activations fall and gradients grow
//     linearly in between, so the two ends bound the blocks' backward;
//   optimizer_step: every gradient and the optimizer's temporaries (foreach Adam and AdamW: _foreach_sqrt of
//     exp_avg_sq, p·N; fused and SGD none).
// memory_gib reports the terms of the phase that peaks, `phase` names it.
// Under FSDP (Fsdp2Schedule.hpp) params, grads and optimizer are the local shards, `gathered` the parameters
// all-gathered at once and `buckets` its communication buffers; FSDP1's and ZeRO-1/2/3's are in ShardedMemory.hpp.
// Checked against torch.cuda.max_memory_allocated in results/validation/memory/compare.md.
#include <string>
#include <vector>

#include "sim/workload/StepContext.hpp"

namespace stepsim {

struct MemoryEstimate {
    double params = 0, grads = 0, buckets = 0, optimizer = 0, weight_cache = 0, activations = 0, loss = 0;
    double gathered = 0;  // FSDP: unsharded parameters alive at once
    std::string phase;    // where in the step this peak falls (empty: every term at its largest)
    // phasePeak's four phases in step order (loss_backward … optimizer_step), each with its own terms and no phases of
    // its own: memory by phase in the reports. Empty where the estimate is not a phase's.
    std::vector<MemoryEstimate> phases;
    double peak() const { return params + grads + buckets + optimizer + weight_cache + activations + loss + gathered; }
};

// Every term at its largest in the step (the sum above: an upper bound). `ddp`: the step synchronizes gradients
// through DDP's buckets (more than one GPU). Pipeline stages use it (PipelineStage.cpp).
MemoryEstimate estimateMemory(const StepContext& c, bool ddp);

// What the step's own tensors hold over time (bytes), from the compute context.
struct StepTransients {
    double act_all = 0, act_layer = 0;      // activations saved for backward: all of them, one layer's in backward
    double cache_all = 0, cache_block = 0;  // autocast's cast Linear weights: all of them, one block's
    double cache_head = 0;                  // the LM head's cast weight
    double loss_backward = 0;               // 12·T·V
    double head_numel = 0;                  // parameters whose gradients come first: the LM head's and final norm's
};
StepTransients stepTransients(const StepContext& c);

// The optimizer step's temporaries for `numel` parameters of `bytes` each: foreach Adam and AdamW's sqrt, else 0.
double optimizerTemporaries(const TrainingSpec& t, double numel, double bytes);

// What a strategy holds beside the step's own tensors, by phase (bytes).
struct PhaseTerms {
    double params = 0, optimizer = 0, buffers = 0;  // resident
    double grads_loss = 0, grads_start = 0, grads_end = 0, grads_step = 0;
    double gathered_loss = 0, gathered_start = 0, gathered_end = 0, gathered_step = 0;
    double buffers_end = 0;   // communication buffers alive at the end of backward, beyond the resident ones
    double optimizer_temp = 0;
};

// The largest of the four phases above (the first of equal ones).
MemoryEstimate phasePeak(const StepTransients& s, const PhaseTerms& t);

// The plain or DDP step's peak (the phases above with DDP's buckets resident).
MemoryEstimate estimateStepPeak(const StepContext& c, bool ddp);

}  // namespace stepsim
