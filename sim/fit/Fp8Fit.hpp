#pragma once
// The profile's FP8 training fields, from calibration/pytorch/fp8_bench.py's records (torchao's Float8Linear as
// calibration/pytorch/fp8_linear.py runs it):
//   gemm.fp8_tensorwise, gemm.fp8_tensorwise_fast_accum, gemm.fp8_rowwise, gemm.fp8_rowwise_fast_accum: fitGemm
//     (GemmFit.hpp) on torch._scaled_mm's times (source "pytorch-scaled-mm") of that scaling and accumulation, every
//     4th point held out for the report's check;
//   memory.kernels.fp8_*: t = fixed_us + bytes / (hbm_gbps · efficiency), one relative-error α-β line (RateLine.hpp)
//     through every size of the kind's ops (kFp8Kinds in Fp8Fit.cpp); fp8_scale_math, a chain of scalar kernels with
//     no bytes to speak of, takes the median time per kernel of the chains as fixed_us;
//   launch.fp8_linear_host_per_kernel: per recipe, the median over the records of the host time a Float8Linear's
//     forward (backward) takes beyond a plain Linear's timed just before it (recipe bf16), over the kernels it
//     launches beyond the plain one's.
// A field without records keeps the base profile's value (named in the report's kept_from_base).
#include "sim/fit/FitState.hpp"

namespace stepsim {

void fitFp8(FitState& s);

}  // namespace stepsim
