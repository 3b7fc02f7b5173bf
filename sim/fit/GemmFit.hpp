#pragma once
// Fits GemmEfficiency (max_efficiency, k_half, tile_m × tile_n, overhead_us) to measured GEMM times.
//
// Model (sim/cost/GemmModel.hpp): t = overhead + 2mnk / (peak · e_max · e_wave · e_k),
//   e_wave = tiles / (⌈tiles/SMs⌉·SMs), tiles = ⌈m/tile_m⌉·⌈n/tile_n⌉,  e_k = k / (k + k_half).
// For fixed (k_half, tile) the model is linear in (overhead, 1/e_max): t = o + x/e_max with
// x = 2mnk / (peak · e_wave · e_k). So: grid search over k_half (0, then 16 .. 4096 log-spaced) and the
// tiles cuBLASLt uses on Hopper (128×128, 128×256, 256×128, 64×256), and for each a relative-error least
// squares for (o ≥ 0, 1/e_max) in closed form; keep the best. rel_error = median |relative residual| of
// the model on the points (without the measured-point correction of gemmSeconds).
#include <vector>

#include "sim/fit/FitState.hpp"
#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

// points: measured (m, n, k, TFLOP/s); at least 3. peak_tflops: the dtype's dense datasheet peak.
GemmEfficiency fitGemm(const std::vector<GemmPoint>& points, double peak_tflops, int sms);

// Median |relative error| of gemmModelSeconds on `points` (model only), and with the correction towards
// `anchors` that gemmSeconds applies (held-out check: anchors exclude the points).
double gemmModelError(const std::vector<GemmPoint>& points, const GemmEfficiency& e, double peak_tflops, int sms);
double gemmCorrectedError(const std::vector<GemmPoint>& points, const GemmEfficiency& e_with_anchors,
                          double peak_tflops, int sms);

// The profile's gemm section: gemm.bf16 and gemm.fp16 by fitGemm on PyTorch's own GEMM calls over the transformer
// grid (gemm_training_shapes.py --step, source "pytorch-step") when there are any for the dtype, else stepsim-bench's
// cuBLASLt points, else stepsim_torch_bench.py's; gemm.fp8 likewise on FP8 E4M3 with fast accumulation (the report
// also fits FP8 without it). GEMMs timed as a training step launches them (source "pytorch-loop") join the fitted
// model's measured points as anchors. Returns the median relative error of the held-out shapes (model + correction)
// over the profile's dtypes.
double fitGemms(FitState& s);

}  // namespace stepsim
