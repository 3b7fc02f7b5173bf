#pragma once
// GPU memory of a training step, bytes per GPU, by what holds it. With N parameters (N_mm of them in Linear weights),
// parameter element bytes p, compute element bytes c, tokens T per micro-batch:
//   params = grads = p·N;  DDP's buckets p·N (none with gradient_as_bucket_view or on one GPU);
//   optimizer = k·p·N, k the optimizer's states per parameter (OptimizerStep.hpp: 2 for Adam(W), 1 for SGD with
//     momentum, 0 without), in the parameter dtype;
//   weight_cache = c·N_mm under autocast (the cast weights autocast keeps for the step);
//   activations: A per layer saved for backward (the norms' inputs, their cast outputs, q/k/v, the attention output,
//     the MLP's intermediates): A·L; selective checkpointing keeps q/k/v (Q) in one layer only, (A − Q)·L + Q; full
//     keeps each layer's input, p·T·h·L, plus one layer's A while it is recomputed;
//   loss = (c + 4 + 4)·T·V: the logits, their fp32 copy and the log-softmax output at the end of forward.
// Under FSDP (Fsdp2Schedule.hpp) params, grads and optimizer are the local shards, `gathered` the parameters
// all-gathered at once and `buckets` its communication buffers (its header gives the sum); FSDP1's and ZeRO-1/2/3's
// closed forms are in ShardedMemory.hpp.
#include "sim/workload/StepContext.hpp"

namespace stepsim {

struct MemoryEstimate {
    double params = 0, grads = 0, buckets = 0, optimizer = 0, weight_cache = 0, activations = 0, loss = 0;
    double gathered = 0;  // FSDP: unsharded parameters alive at once
    double peak() const { return params + grads + buckets + optimizer + weight_cache + activations + loss + gathered; }
};

// `ddp`: the step synchronizes gradients through DDP's buckets (more than one GPU).
MemoryEstimate estimateMemory(const StepContext& c, bool ddp);

}  // namespace stepsim
