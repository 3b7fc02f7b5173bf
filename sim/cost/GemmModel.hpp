#pragma once
// GEMM time from peak rate and a shape-dependent efficiency (tile/wave quantization).
//
//   t(m, n, k) = overhead + 2mnk / (peak · e_max · e_wave · e_k) · c(m, n, k)
//   e_wave = tiles / (⌈tiles / SMs⌉ · SMs),  tiles = ⌈m / tile_m⌉ · ⌈n / tile_n⌉
//   e_k    = k / (k + k_half)
// e_wave is the share of SM-slots busy in the last wave (NVIDIA, "Matrix Multiplication Background User's
// Guide": tile and wave quantization); e_k models the main loop's prologue/epilogue amortised over K.
// c corrects the model towards measurements: the ratio measured/model at the measured point nearest in
// log-shape (within a factor 2 on every dimension, else c = 1 and the query is outside the measured domain).
#include "sim/cost/HardwareProfile.hpp"
#include "sim/workload/Program.hpp"

namespace stepsim {

struct GemmEstimate {
    double seconds = 0.0;
    bool in_domain = true;  // a measured point was near enough to anchor the model
};

// Model time without correction (what calibration fits e_max, k_half and overhead against).
double gemmModelSeconds(const GemmShape& s, const GemmEfficiency& e, double peak_flops, int sms);
GemmEstimate gemmSeconds(const GemmShape& s, const GemmEfficiency& e, double peak_flops, int sms);

}  // namespace stepsim
