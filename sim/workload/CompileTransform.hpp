#pragma once
// torch.compile as a transformation of the Program a schedule produced (eager kernels, DDP or FSDP2 around them), with
// the rates of the profile's `compile` section (CompileRates, fitted by sim/fit/CompileFit.hpp from
// calibration/pytorch/compile_kernels.py's blocks). docs/compile.md is the user's account.
//
// Compiled territory: the model's forward and backward kernels on the compute stream (the loss, the optimizer,
// zero_grad and the data-parallel wrapper's own copies stay eager).
//
// Graphs. A compiled span is one micro-step's forward (or backward) territory. It is one graph, split into more
//   - by graph_breaks: N breaks cut it before the GEMMs at fractions 1/(N+1), ..., N/(N+1) of its GEMMs;
//   - under DDP with optimize_ddp ddp_optimizer: the backward after each bucket's all-reduce launch (DDPOptimizer's
//     split at bucket boundaries), the forward into as many pieces by GEMM count;
//   - under FSDP2: after every collective (its hooks run between the per-block graphs), but tensor parallelism's,
//     traced into the graphs (Expand3d.cpp compiles each pipeline stage's Program).
//   Calling a graph costs the host graph_host_us (a host_work op at the graph's first op).
// Fusion. Inside a graph, a region (a maximal run of memory-bound kernels between GEMM/attention kernels, events,
//   collectives and graph starts) of n eager kernels with time W and bytes B becomes k kernels, k the running
//   rounding of kernels_per_region (forward or backward) capped at n, each W·time_ratio / k long. Their bytes: B·time_ratio / k
//   (the fused kernels stream at the eager kernels' achieved bandwidth; the bytes are not measured). The kernels of a
//   decomposed chain (Op::fused_bytes ≥ 0: Hugging Face's eager RMSNorm, rotary products, gelu_new, mask) add not
//   their time but the memory-bound time of the bytes the chain's fused kernel moves (docs/compile.md).
// Padding: a GEMM with a dimension not a multiple of 8 elements (16-bit; 4 in fp32) runs at its padded shape's rate
//   (Inductor's pad_mm: GPT-2's vocabulary 50257).
// FP8 linears (fp8.enabled): a region's casts to FP8 become kernels_per_cast kernels per cast at time_ratio of their
//   eager time (the profile's compile.fp8, fitted from calibration/pytorch/fp8_compiled.py's compiled Float8Linear).
// GEMMs keep their library kernels, their time × gemm_time_ratio (max-autotune modes: gemm_time_ratio_max_autotune);
//   attention stays SDPA.
// Host. A compiled kernel's launch costs kernel_host_ratio × the eager launch it replaces; under CUDA graphs
//   (reduce-overhead, max-autotune) cudagraph_kernel_host_us, the graph's replay graph_host_us.
// Collectives in compiled spans:
//   comm_fusion_depth k: every k consecutive all-reduces (or all-gathers) of one group and stream in a step become one
//     of their summed size: an all-reduce where the last of them was, an all-gather where the first was (FSDP2's
//     reduce-scatters stay one per block);
//   async_collectives false: the compute stream waits for each collective right after its launch (no overlap).
// compile.loss: the loss's kernels per phase become the measured compiled loss's (CompiledLossRates).
// compile.optimizer: the foreach AdamW passes become kernels_per_tensor × tensors kernels at time_ratio of their time,
//   the optimizer.step host work the compiled call's host_us + host_us_per_tensor × tensors (CompiledOptimizerRates).
// compile.dynamic: true: the fused kernels' count and time, the GEMMs' time and the compile time × the measured
//   dynamic/static ratios (CompiledDynamicRates).
#include "sim/base/Program.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

struct CompileReport {
    double compile_time_s = 0.0;  // first step's compile time: compile_s_per_block (of the mode) × layers
    int graphs_per_step = 0;      // compiled graphs called per training step
};

// Throws InputError when the profile's compile section (or the part a key needs) was not measured. `tensors`: the
// model's parameter tensors (the compiled optimizer step's kernels and host cost scale with them). `inline_group`: the
// process group (slot) whose collectives the graphs trace as functional collectives (tensor parallelism's, DTensor's):
// they split no graph; −1: none.
CompileReport compileProgram(Program& p, const Scenario& sc, const HardwareProfile& profile, std::size_t tensors = 0,
                             int inline_group = -1);

// Whether `mode` runs its graphs under CUDA graphs (reduce-overhead, max-autotune).
bool usesCudaGraphs(CompileMode mode);

}  // namespace stepsim
