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

// host_rank_cv (host-to-host spread, host_spread.py): the part of the processes' spread that lasts a run, the one a
// rank's host speed fixed for the run stands for (Jitter.hpp). The records' windows swing by more (window_cv in the
// report), and which process is faster changes from window to window: a host that leads its GPU absorbs such a swing,
// so it does not set a data-parallel step's pace the way a lastingly slow host does (JitterFit.cpp has the estimate).
void fitHostSpread(FitState& s);

}  // namespace stepsim
