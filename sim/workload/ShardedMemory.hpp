#pragma once
// GPU memory per rank of the sharded strategies other than FSDP2 (whose closed form is in Fsdp2Schedule.hpp; HSDP's is
// FSDP2's with N the shard group), in bytes, beside MemoryEstimate.hpp's (activations, loss and autocast's weight
// cache are the step's, as there). Each term below is at its largest; the estimate is the largest of MemoryEstimate's
// four phases (phasePeak): FSDP1's gathered and gradients by phase as FSDP2's (Fsdp2Schedule.hpp), its buckets at
// the end of backward only; ZeRO's fp32 partitions, master copy and ipg buffers resident (allocated once), its
// gradients (ZeRO-1 .grad, ZeRO-2 the partition) from the end of backward, a bucket's flattened copy at the end of
// backward, ZeRO-3's gathered n_kept + n_u + P up to the start of the blocks' backward and n_u + P at its end. N ranks share the parameters; n parameters, n_b of the largest block, n_r of the
// root, n_blk of all blocks; p, g, r the bytes of training.param_dtype, the gather dtype (fsdp.param_dtype, else p)
// and the reduce dtype (fsdp.reduce_dtype, else g).
//
// FSDP1 (Fsdp1Schedule.hpp):
//   params = p·n/N;  optimizer = s·p·n/N (the optimizer's s states of the shard, OptimizerStep.hpp);
//   grads = p·n/N + g·(n_r + n_b) (the sharded gradients; the root's flat gradient, alive until the end of backward,
//     and one block's); with fsdp.sync_every_micro_batch false and grad_accum > 1: p·n/N + g·n (every unsharded flat
//     gradient kept across the micro-steps);
//   gathered = g·n_r (the root stays unsharded) + with reshard_after_forward 2·g·n_b under limit_all_gathers (the rate
//     limiter's bound: the block computing and the one gathered ahead) and g·n_blk without it (the host may run
//     ahead of a GPU-bound step and gather every block), g·n_blk without reshard_after_forward;
//   buckets = r·n_b/N (the reduce-scatter's output shard) + r·n_b when r ≠ g (the flat gradient cast to the reduce
//     dtype) + g·n_b/N when g ≠ p (the low-precision shard the all-gather reads).
// ZeRO-1 and ZeRO-2 (ZeroSchedule.hpp; p = 4, fp32 parameters; R = zero.reduce_bucket_size elements):
//   params = p·n (replicated);  optimizer = s·p·n/N + 4·n/N (the states and the fp32 master copy of the partition);
//   grads: ZeRO-1 p·n (the full .grad) + 4·n/N (the fp32 partition's .grad); ZeRO-2 p·n/N (the gradient partition) +
//     4·n/N;
//   buckets = p·R per ipg buffer (DeepSpeed allocates R elements whatever the model's size; two with overlap_comm) +
//     p·min(R, n) (a bucket's flattened copy for its all-reduce).
// ZeRO-3 (Zero3Schedule.hpp; n_s of persistent parameters, below zero.stage3_param_persistence_threshold each):
//   params = p·(n − n_s)/N + p·n_s;  optimizer = s·p·n/N + 4·n/N;  grads = 4·n/N (the fp32 gradient partition);
//   gathered = p·min(n − n_s, n_kept + n_u + P): the modules kept gathered from forward to backward
//     (stage3_max_reuse_distance, n_kept), the largest fetch unit in use (a block's modules or the largest root module,
//     n_u) and the prefetch window (P = zero.stage3_prefetch_bucket_size elements);
//   buckets = p·R (the ipg buffer, allocated at R) + p·min(R, n) (a bucket's interleaved reduce-scatter input).
#include "sim/workload/MemoryEstimate.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

MemoryEstimate estimateFsdp1Memory(const StepContext& shard, const StepContext& compute);
MemoryEstimate estimateZeroMemory(const StepContext& c);

struct Zero3Sizes {
    double persistent = 0, kept = 0, unit = 0;  // n_s, n_kept, n_u
};
MemoryEstimate estimateZero3Memory(const StepContext& c, const Zero3Sizes& s);

}  // namespace stepsim
