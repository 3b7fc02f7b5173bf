#pragma once
// Profiles derived from a measured one: another GPU of the same die, another host of the same GPU (its power limit,
// HBM capacity and bandwidth), or, marked extrapolated, another die (`stepsim profile derive`, docs/calibration.md).
//
// What carries over and what is scaled, each step recorded in the profile's `derivation` with its factor and the
// low and high ends of its uncertainty (ProfileDerivation, HardwareProfile.hpp):
//   HBM bandwidth B → B': the memory-bound kernels' fitted model t = fixed + bytes / (B · efficiency) keeps its
//     fixed (latency-bound) term and its efficiency; its bandwidth term goes by B / B' (gpu.hbm_gbps). The norms'
//     measured grid is split the same way: t' = f + (t − f) · B / B', f = the fixed cost of the kind the grid's pass
//     falls back to (norm_forward, norm_backward; rms_* where listed), capped at t. The power model's
//     memory_busy_tflops (what streaming HBM draws, in tensor-core load) goes by B' / B (energy per byte kept).
//   power limit P → P': the fitted clock line, clock = I + s · load at the limit, says which load the board holds
//     at each clock. The part of the draw that follows the load is P − F (F: the draw that does not, power.fixed_w),
//     so at P' the load held at a clock is ρ = (P' − F) / (P − F) times as large: s' = s / ρ, I kept. A GEMM measured
//     at T TFLOP/s held clock f = min(clock_max, I + s · T) while it ran; at P' its load is T · f'/f and it holds
//     f' = min(clock_max, I / (1 − s' · T / f)), so its rate goes by f'/f. Every GEMM point, and max_efficiency at
//     T = max_efficiency · peak, moves by its own factor; FP8 (and other dtypes') points draw as the BF16 load of the
//     same fraction of their peak. Attention was timed at rest and already follows the step's clock (PowerModel.hpp).
//     The uncertainty: F between power.fixed_w's low and high ends (DatasheetDelta::fixed_w_low, _high).
//   HBM capacity: gpu.memory_gib, the usable GiB.
//   another die (extrapolated): GEMM and attention rates by the ratio of dense peaks per dtype (the same fraction of
//     peak), NVLink and NCCL's bus bandwidths and the measured collectives' by the NVLink ratio, SMs and clocks set;
//     launch, host and interference costs carried over as measured.
// Every other number (launch and host costs, gaps, interference, jitter, I/O) carries over as measured.
#include <string>

#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

// The measured GPU's facts its profile does not record (its power limit and the load-independent part of its draw
// at the limit), and the target GPU's datasheet: what a derived profile changes. 0: the measured GPU's value.
struct DatasheetDelta {
    std::string name;              // the derived profile's name
    std::string from;              // the measured profile: a built-in name or a profile YAML path
    std::string model;             // the target's gpu.model
    bool extrapolated = false;     // another die (different SMs, tensor cores, NVLink generation)
    std::string notes;             // the NOTES.md that explains the derivation
    // The measured GPU.
    double source_limit_w = 0.0;   // the power limit its rates were measured at (W)
    double fixed_w = 0.0, fixed_w_low = 0.0, fixed_w_high = 0.0;  // its draw that does not follow the load (W)
    // The target GPU.
    int sms = 0;
    double memory_gib = 0.0, hbm_gbps = 0.0, power_limit_w = 0.0, clock_max_mhz = 0.0;
    double peak_tflops_bf16 = 0.0, peak_tflops_fp16 = 0.0, peak_tflops_fp8 = 0.0, peak_tflops_fp32 = 0.0;
    double nvlink_gbps = 0.0;      // per GPU, per direction (datasheet)
    // The uncertainty of the extrapolated steps (a fraction, e.g. 0.3: ×0.7 to ×1.3), by what the die changes.
    double extrapolation_uncertainty = 0.0;
};

// The measured profile `measured` carried to the GPU `delta` describes; every step recorded in its derivation.
// An inconsistent delta (a limit at or below the fixed draw, a power model not fitted when the limit moves) is an
// InputError naming the key.
HardwareProfile deriveProfile(const HardwareProfile& measured, const DatasheetDelta& delta);

// A host of the same GPU with another HBM bandwidth (GB/s), capacity (GiB) or power limit (W): the steps above,
// applied to `p` in place and recorded in its derivation. `key` names the scenario key in errors (a power limit on a
// profile that records none).
void scaleHbmBandwidth(HardwareProfile& p, double hbm_gbps);
void setHbmCapacity(HardwareProfile& p, double gib);
void scalePowerLimit(HardwareProfile& p, double watts, double fixed_low_w, double fixed_high_w, const std::string& key);

// The rate factor of a GEMM measured at `tflops` (BF16-equivalent load) when the limit moves by the power model's
// ρ = (P' − F) / (P − F): f'/f above.
double gemmClockFactor(const PowerModel& pw, double tflops, double rho);

}  // namespace stepsim
