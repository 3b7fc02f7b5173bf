#pragma once
// The power model: the SM clock a training step holds the board at under its power limit, and what that clock does
// to attention.
//
// A step that ran F tensor-core FLOP (GEMMs and attention) and M seconds of memory-bound kernels (memory, optimizer,
// copies: drawsAsMemory) in S seconds, a kernel running for B of them, its kernels taking W seconds at their own
// rates, drew the load
//
//   load  = (F · 1e-12 + memory_busy_tflops · M) / T          TFLOP/s; T = W, or S where idle_headroom is 0
//
// (a GPU streaming HBM draws power as `memory_busy_tflops` of tensor-core work does; W is less than B where NCCL
// kernels beside them slowed them, and what an NCCL kernel takes from a kernel it draws itself), and the next step
// holds
//
//   clock = min(clock_max, intercept + slope · load + idle_headroom · idle / B),    idle = max(0, S − B)
//
// (slope < 0: the limiter lowers the clock as the draw grows; idle time leaves headroom; with idle_headroom 0 the
// load is taken over the whole step and idle time only dilutes it). The first step's clock is that of its kernels
// alone, a GPU-bound step's: S = B = W = their summed time (firstStepClock). The first step is a warm-up (DDP's first
// iteration reduces its gradients after the backward, in registration order): its idle time does not count, S = B
// (nextClock). A step with no time keeps the clock.
//
// The profile's GEMM and memory-bound rates come from loops that already hold the board at its limit, so only
// attention, timed at rest at `attention_reference_mhz`, moves with the clock:
//
//   attention time × (attention_reference_mhz / clock)^β,   β by head_dim (forward, backward), linear between the
//                                                            listed head_dims, held beyond them
//
// Fitted by sim/fit (the profile's `power` section) from calibration/pytorch/power_duty.py's records, the SM
// clock and board power read through NVML beside each measurement (a profile's raw/power_duty_*.jsonl and
// raw/power_loaded_*.jsonl): a least-squares line through the loads held at the limit; β from SDPA's time at the
// held clocks against its rested time. `modelled` false: no measurement, every kernel at its calibrated rate.
#include <algorithm>
#include <vector>

#include "sim/base/Program.hpp"

namespace stepsim {

// Attention's clock sensitivity at one head_dim: its time goes as (reference clock / clock)^exponent.
struct AttentionClockExponent {
    long head_dim = 0;
    double forward = 0.0, backward = 0.0;
};

// What a GPU drew over a step, the power model's input: F, M, W and B above.
struct StepLoad {
    double flops = 0.0;     // tensor-core FLOP: GEMMs and attention
    double memory_s = 0.0;  // seconds in memory-bound kernels
    double work_s = 0.0;    // its kernels' seconds at their own rates
    double busy_s = 0.0;    // seconds with a kernel running

    // A kernel of class `cls` and `kernel_flops` model FLOP that takes `seconds` at its own rate.
    inline void addKernel(KernelClass cls, double kernel_flops, double seconds);
};

struct PowerModel {
    bool modelled = false;  // false: no measurement; every kernel at its calibrated rate
    double clock_max_mhz = 0.0;
    double clock_intercept_mhz = 0.0;   // clock = min(clock_max_mhz, intercept + slope · load + headroom · idle/busy)
    double clock_mhz_per_tflops = 0.0;  // the slope (negative)
    double memory_busy_tflops = 0.0;
    double idle_headroom_mhz = 0.0;     // MHz per unit of idle over busy time; 0: load over the whole step
    double attention_reference_mhz = 0.0;  // the clock the attention points were timed at
    // The board's power limit the rates were measured under, and the part of its draw that does not follow the load
    // at the limit (W; 0: not recorded). Only a derived profile or a host of another limit reads them
    // (sim/cost/ProfileDerive.hpp); optional keys `power.limit_w`, `power.fixed_w`, `power.fixed_w_low`, `power.fixed_w_high`.
    double limit_w = 0.0;
    double fixed_w = 0.0, fixed_w_low = 0.0, fixed_w_high = 0.0;  // the fixed draw and its range (`power.fixed_w_low`, ...)
    // ascending head_dim; linear between, held at the ends; empty: attention at its calibrated rate at every clock
    std::vector<AttentionClockExponent> attention;

    // Kernels whose draw counts as memory-bound time: HBM-streaming work (norms, elementwise, the optimizer's passes,
    // device-to-device copies such as DDP's bucket copies).
    static bool drawsAsMemory(KernelClass c) {
        return c == KernelClass::memory || c == KernelClass::optimizer || c == KernelClass::copy;
    }
    // Kernels whose FLOP count as tensor-core load.
    static bool drawsAsFlops(KernelClass c) { return c == KernelClass::gemm || c == KernelClass::attention; }

    // The clock (MHz) a step holds that ran `flops` tensor-core FLOP and `memory_s` seconds of memory-bound kernels
    // in `step_s` seconds, a kernel running for `busy_s` of them, its kernels taking `work_s` at their own rates.
    double clockAt(double flops, double memory_s, double work_s, double busy_s, double step_s) const {
        const double over = idle_headroom_mhz > 0.0 ? work_s : step_s;
        if (!(over > 0.0) || !(busy_s > 0.0)) return clock_max_mhz;
        const double load = (flops * 1e-12 + memory_busy_tflops * memory_s) / over;
        const double idle = idle_headroom_mhz > 0.0 ? std::max(0.0, step_s - busy_s) / busy_s : 0.0;
        return std::min(clock_max_mhz, clock_intercept_mhz + clock_mhz_per_tflops * load + idle_headroom_mhz * idle);
    }
    // The first step's clock, from its kernels alone (`kernels.work_s` their summed time): a GPU-bound step's.
    double firstStepClock(const StepLoad& kernels) const {
        return clockAt(kernels.flops, kernels.memory_s, kernels.work_s, kernels.work_s, kernels.work_s);
    }
    // The clock of the step after one that drew `load` in `step_s` seconds at `clock`; the warm-up step's idle time
    // does not count. A step with no time keeps `clock`.
    double nextClock(double clock, const StepLoad& load, double step_s, bool warm_up) const {
        const double over = warm_up ? load.busy_s : step_s;
        return over > 0.0 ? clockAt(load.flops, load.memory_s, load.work_s, load.busy_s, over) : clock;
    }
    // An attention kernel's time factor at `clock_mhz` (1 when not modelled).
    double attentionFactor(long head_dim, bool backward, double clock_mhz) const;
};

void StepLoad::addKernel(KernelClass cls, double kernel_flops, double seconds) {
    if (PowerModel::drawsAsFlops(cls)) flops += kernel_flops;
    if (PowerModel::drawsAsMemory(cls)) memory_s += seconds;
    work_s += seconds;
}

}  // namespace stepsim
