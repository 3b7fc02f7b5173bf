#pragma once
// Reads a PyTorch profiler trace (the Chrome/Kineto JSON torch.profiler's export_chrome_trace writes, plain or
// gzip-compressed) into one training step (TraceStep.hpp; docs/trace.md):
//   - the step: the last ProfilerStep#N window (torch.profiler's schedule), else the last Optimizer.step#... window
//     (from the previous one's end, or the trace's first host event); none is a located error;
//   - the GPU activities (cat kernel, gpu_memcpy, gpu_memset) launched inside it, joined to their launches
//     (cat cuda_runtime / cuda_driver) by args.correlation; a trace without GPU activity is a located error;
//   - each launch's context from the host ops around it on its thread: backward inside an autograd
//     evaluate_function, optimizer inside Optimizer.step, a GEMM's shape from its aten::mm / addmm / bmm's
//     "Input Dims" (record_shapes=True), a collective's size, dtype and process group from NCCL's
//     record_param_comms arguments ("In msg nelems", "dtype", "Process Group Name") on the kernel or its host op;
//   - each kernel's class from its name (classifyKernel).
// The trace's own step time: the end of the step's GPU work minus the previous step's (both ProfilerSteps in the
// trace), else minus the window's start.
#include <string>
#include <utility>

#include "sim/base/Program.hpp"
#include "sim/base/TraceStep.hpp"
#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

// Throws InputError ("FILE: WHAT") for a file that cannot be read or holds no step or no GPU activity.
TraceStep importTrace(const std::string& file);

// A kernel's class by its name (case-insensitive substrings): NCCL → comm; flash / fmha / attention / sdpa and
// cuDNN's fusion kernels around its SDPA → attention; adam / multi_tensor_apply → optimizer; gemm / cutlass / cublas /
// nvjet / xmma / wgmma → gemm; memcpy / memset → copy; elementwise, reduce, norm, softmax, loss, embedding, index,
// copy, fill, cat, triton kernels, LayerNorm's GammaBeta weight gradient, cub's sorts and scans and the embedding
// backward's segment kernels → memory. The flag says
// whether a rule matched (unmatched: class other, kept with its measured duration).
std::pair<KernelClass, bool> classifyKernel(const std::string& name);

// What was imported, as `stepsim explain` prints it: comment lines ("# ..."). With the scenario's launch rates, also
// the step's host time as traced and under the profile, and the profiler's overhead (TraceHostCost.hpp);
// `data_parallel`: more than one rank (the forward's host cost under DDP).
std::string traceSummary(const TraceStep& t, const LaunchRates* launch = nullptr, bool data_parallel = false);

}  // namespace stepsim
