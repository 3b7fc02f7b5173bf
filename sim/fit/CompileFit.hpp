#pragma once
// The profile's compile section (CompileRates) from compile_kernels.py's records (RawCompileBlock, RawCompileHost).
//
// Kernels, per phase (forward, backward), over the blocks compiled in the default mode (median over the blocks):
//   kernels_per_region = compiled "other" kernels / the eager regions (maximal runs of non-GEMM, non-attention
//                        kernels between GEMM/attention kernels)
//   time_ratio         = compiled "other" kernel time / eager "other" kernel time
//   gemm_time_ratio    = compiled GEMM time / eager GEMM time, forward and backward together; the same over the
//                        max-autotune blocks (max-autotune or max-autotune-no-cudagraphs) for gemm_time_ratio_max_autotune
//   compile_s_per_block = the first compiled call's wall time (forward + backward), default and max-autotune blocks
// Host (µs per host-bound forward + backward of N tiny blocks):
//   reduce-overhead:   host = graphs · graph_host_us + cudagraph_kernel_host_us · kernels (least squares over N)
//   default:           kernel_host_ratio = median over N of
//                      ((host_compiled − graphs · graph_host_us) / kernels_compiled) / (host_eager / kernels_eager)
// compile_parts.py's records (each part left unmeasured, and its key refused, without them):
//   optimizer: kernels_per_tensor = compiled step's kernels / tensors; time_ratio = its kernel time / the eager
//              foreach step's (same GPT); host: host_us + host_us_per_tensor · tensors (least squares over sizes);
//              compile_s_per_tensor = the first compiled step's wall time / tensors (medians over sizes)
//   loss:      compiled kernels per phase, compiled / eager kernel time per phase (medians over token counts)
//   dynamic:   dynamic / static of the fused kernels' count and time per phase, the GEMMs' time, the compile time
// Without records the section stays the base's (the report's kept_from_base lists it).
#include "sim/fit/FitState.hpp"

namespace stepsim {

void fitCompile(FitState& s);

}  // namespace stepsim
