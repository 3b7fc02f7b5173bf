#pragma once
// The profile's jitter section (JitterRates): how much kernel times, GPUs and hosts vary. straggler_cv stays the
// base's.
#include "sim/fit/FitState.hpp"

namespace stepsim {

// kernel_cv: the median coefficient of variation of the harness's BF16 GEMMs longer than 200 µs.
void fitKernelJitter(FitState& s);

// device_compute_cv, device_memory_cv (GPU-to-GPU spread, device_speed.py): per set, the sample variance of the
// ranks' log rates (GEMM TFLOP/s, memory GB/s); the cv is the root of their mean over the sets of 2 GPUs or more.
void fitDeviceSpeedSpread(FitState& s);

// host_rank_cv (host-to-host spread, host_spread.py): per window, the sample variance of the processes' log step
// times (of two processes it estimates one process's variance); the cv is the root of their mean over every window
// of every record.
void fitHostSpread(FitState& s);

}  // namespace stepsim
