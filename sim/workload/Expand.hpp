#pragma once
// Expands a scenario (model × strategy × tuning) into one Program per rank: the kernels, collectives,
// events and host work of every training step, priced by the cost model.
//
// What each step holds, as eager PyTorch with autocast and DDP runs it (reducer.cpp, distributed.py):
//   for each micro-step (grad_accum; all but the last under no_sync):
//     forward: embedding, per layer the kernels of Transformer.hpp (norms, autocast casts, GEMMs, flash
//              attention, activation, residual adds), final norm, LM head, cross-entropy in fp32;
//     backward in reverse; when a parameter's gradient is ready (last micro-step only) DDP's hook copies it
//              into its bucket, dividing by the world size (one kernel: mul_out); a bucket whose gradients are
//              all ready launches its all-reduce on the NCCL stream (which first waits for the compute
//              stream), buckets strictly in order;
//   finalize: the compute stream waits for every bucket's all-reduce; unless gradient_as_bucket_view, each
//             bucket is copied back into the gradients;
//   optimizer: AdamW, fused (one memory-bound pass over p, g, m, v: 7 element accesses per parameter) or
//              foreach, with GradScaler's work under fp16 autocast and gradient clipping before it;
//   step end.
// The first step runs with DDP's initial single bucket; later steps with the rebuilt buckets (DdpBuckets.hpp).
// Under FSDP2 (Fsdp2Schedule.hpp) each block's parameters are all-gathered around its forward and backward and its
// gradients reduce-scattered after its backward; the step's kernels run in the gather dtype (fsdp.param_dtype) and
// the optimizer steps the local shard.
//
// One file per concern: the kernels of a micro-step (TransformerStep.hpp), the data-parallel schedule
// (ParallelSchedule.hpp; DDP in DdpSchedule.hpp), the optimizer (OptimizerStep.hpp), the memory estimate
// (MemoryEstimate.hpp); Expand.cpp composes them and chooses the schedule.
#include <string>
#include <vector>

#include "sim/cost/CostModel.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/workload/DdpBuckets.hpp"
#include "sim/workload/MemoryEstimate.hpp"
#include "sim/base/Program.hpp"

namespace stepsim {

struct Expansion {
    Workload workload;
    std::vector<Bucket> buckets;         // the rebuilt DDP buckets (steps after the first)
    MemoryEstimate memory;               // bytes per GPU (the schedule's: FSDP2 sets its own)
    std::vector<MemoryEstimate> stage_memory;  // per pipeline stage (tp or pp > 1; Expand3d.hpp)
    double params = 0.0;                 // parameter count
    // torch.compile (CompileTransform.hpp): the first step's compile time, reported apart from the simulated steps
    // (which run compiled from the first), and the compiled graphs called per step; 0 when not compiled.
    double compile_time_s = 0.0;
    int compiled_graphs_per_step = 0;
    std::vector<std::string> warnings;
};

// Throws InputError for what the scenario asks that stepsim does not model yet.
Expansion expand(const Scenario& sc, const CostModel& cost);

}  // namespace stepsim
