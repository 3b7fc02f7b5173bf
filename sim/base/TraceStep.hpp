#pragma once
// One training step read from a PyTorch profiler trace (model.type: trace; docs/trace.md): the plain data the trace
// import (sim/scenario/TraceImport.hpp) fills and the trace's expansion into Programs (sim/workload/TraceSchedule.hpp)
// reads. Times are microseconds on the trace's own clock.
//
// The step's host sequence is the trace's launches and host synchronizations in CPU order: each launch's host cost is
// the CPU time since the previous launch began (less what the host spent blocked in a synchronization between them),
// so the host's Python, dispatch and the profiler's own overhead are all in it. Each GPU activity keeps its measured
// duration; its device gap is the time from the later of its launch and its stream's previous activity's end to its
// start (what the stream spent on it beyond the kernel itself).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/Program.hpp"

namespace stepsim {

struct TraceActivity {
    std::string name;
    KernelClass cls = KernelClass::other;
    Phase phase = Phase::other;
    bool known = true;           // the name matched a class (unknown kernels keep their duration, class other)
    int stream = 0;              // index into TraceStep::streams
    double launch_us = 0.0;      // the CPU time its launch (cudaLaunchKernel, cudaMemcpyAsync, ...) began
    double launch_end_us = 0.0;  // ... and returned
    double start_us = 0.0, dur_us = 0.0;  // on the GPU
    double gap_us = 0.0;         // device gap before it (see above), 0 where the stream waited on something else
    GemmShape shape;             // GEMMs with record_shapes: C[m×n] = A[m×k]·B[k×n] (bmm: m includes the batch)
    bool weight_grad = false;    // a backward GEMM producing a Linear's weight gradient (m·n elements)
    // The parameters whose gradient this activity's op produces (TraceImportUnits.hpp): a weight-gradient GEMM's m·n
    // (one tensor), a LayerNorm backward's weight and bias (two), an embedding backward's table (one); 0 for others.
    double grad_numel = 0.0;
    int grad_tensors = 0;
    // The repeated block (FSDP unit) this activity belongs to, 0 … units−1 in forward order; −1: outside the blocks.
    int unit = -1;
    // Communication (NCCL kernels): the collective, its buffer (nccl-tests' size) and dtype, its process group.
    CollectiveKind collective = CollectiveKind::all_reduce;
    double comm_bytes = 0.0;
    std::string comm_dtype;
    std::string process_group;
};

// A host synchronization (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, a blocking cudaMemcpy):
// the host waits there for the work launched before it.
struct TraceSync {
    std::string name;
    double start_us = 0.0, end_us = 0.0;
};

// A parameter the step trains, found from the op that makes its gradient (TraceImportUnits.hpp).
struct TraceParam {
    std::string name;
    double numel = 0.0;
    int tensors = 1;
    int unit = -1;          // its block, −1: outside the blocks (the root)
    bool matmul = false;    // a Linear's weight (its weight-gradient GEMM)
};

struct TraceStep {
    std::string file;
    std::string gpu;                   // deviceProperties' name ("" when the trace has none)
    std::string boundary;              // "ProfilerStep#N" or "Optimizer.step" (how the step was found)
    double cpu_start_us = 0.0, cpu_end_us = 0.0;  // the step's window on the host
    double step_us = 0.0;              // the trace's own step time (docs/trace.md: end of its GPU work minus the previous step's)
    bool step_from_previous = false;   // step_us measured from the previous step's GPU end (else from the window's start)
    std::vector<std::string> streams;  // "stream N" as the trace numbers them, in first-use order
    std::vector<TraceActivity> activities;  // launch order
    std::vector<TraceSync> syncs;
    // Collectives the host issued in the step (record_param_comms / c10d:: ops) that ran no NCCL kernel (a DDP step
    // at world size 1): their place on the GPU is unknown, so the step cannot be wrapped in a larger world.
    int host_collectives = 0;
    int unmatched = 0;                 // GPU activities in the window with no launch found (kept, launched at their start)
    long tokens = 0;                   // the forward GEMMs' most common m (the step's tokens), 0 without shapes
    // The repeated blocks of the forward (TraceImportUnits.hpp): their number (0: none found), the activities each
    // launches in forward, why none were found; the parameters found, in the order the backward makes their gradients.
    int units = 0;
    int unit_activities = 0;
    std::string units_note;
    std::vector<TraceParam> params;
    // The trace GPU's rates, from the built-in profile of that GPU (0: none), for rescaling to another profile.
    double source_peak_tflops_bf16 = 0.0, source_hbm_gbps = 0.0;
    std::string source_profile;
};

}  // namespace stepsim
