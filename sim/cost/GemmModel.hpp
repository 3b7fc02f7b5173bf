#pragma once
// GEMM time from peak rate and a shape-dependent efficiency (tile/wave quantization).
//
//   t(m, n, k) = overhead + 2mnk / (peak · e_max · e_wave · e_k) · c(m, n, k)
//   e_wave = tiles / (⌈tiles / SMs⌉ · SMs),  tiles = ⌈m / tile_m⌉ · ⌈n / tile_n⌉
//   e_k    = k / (k + k_half)
// e_wave is the share of SM-slots busy in the last wave (NVIDIA, "Matrix Multiplication Background User's
// Guide": tile and wave quantization); e_k models the main loop's prologue/epilogue amortised over K.
// Near measurements the time is the nearest measured point's (in log-shape, within a factor 2 on every dimension),
// carried to the query's shape by the model without its wave term, and never faster than the fastest point:
//   t = t_point · t'(m, n, k) / t'(point),   t' = overhead + 2mnk / (peak · e_max · e_k)
// The wave term is left out of that transfer because cuBLAS picks its tile per shape, so the fixed tile's wave
// count is not the kernel's: with it, (1024, 2048, 2048), one wave of 64x256 tiles, took the correction of its
// nearest point (768, 3072, 2048), two waves, and was priced at 1485 TFLOP/s, above H200's 989 peak (it runs at
// 602). Outside the measured domain the model alone (e_wave included) prices it. e_max, k_half, overhead and the tile
// are fitted by sim/fit (the profile's `gemm` section) against the measured points: PyTorch's GEMMs called
// back to back (calibration/pytorch/gemm_training_shapes.py), or the harness's cuBLASLt grid (calibration/bench).
//
// Alignment: a GEMM with a dimension x not a multiple of `unaligned.alignment` elements leaves cuBLAS's aligned
// tensor-core kernels. With p(x) the largest power of two dividing x, each such dimension has the rate its row of
// `unaligned.rates` gives (the row of the largest measured multiple ≤ p(x), the first row below every measured one;
// the row's slowest rate when that dimension was not measured), and
//   t = max(t_aligned, 2mnk / min over the unaligned dimensions of their rate)
// The model knows shapes, not layouts: it treats every unaligned dimension as some operand's leading dimension, as
// the LM head's three GEMMs have it (forward: n = vocabulary; input gradient: k; weight gradient: m). Fitted from
// calibration/pytorch/gemm_alignment.py's records (sim/fit/GemmFit.cpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/cost/HardwareProfile.hpp"
#include "sim/base/Program.hpp"

namespace stepsim {

struct GemmEstimate {
    double seconds = 0.0;
    bool in_domain = true;  // a measured point was near enough to anchor the model
};

// The entry of `points` (anything with m, n, k) nearest `s` in log-shape among those within a factor 2 of it on
// every dimension; nullptr when none is.
template <class Point>
const Point* nearestShape(const std::vector<Point>& points, const GemmShape& s) {
    const Point* best = nullptr;
    double best_d = 0.0;
    for (const Point& p : points) {
        const double dm = std::log2(double(s.m) / double(p.m)), dn = std::log2(double(s.n) / double(p.n)),
                     dk = std::log2(double(s.k) / double(p.k));
        if (std::max({std::abs(dm), std::abs(dn), std::abs(dk)}) > 1.0) continue;
        const double d = dm * dm + dn * dn + dk * dk;
        if (!best || d < best_d) best = &p, best_d = d;
    }
    return best;
}

// Model time without correction (what calibration fits e_max, k_half and overhead against).
double gemmModelSeconds(const GemmShape& s, const GemmEfficiency& e, double peak_flops, int sms);
GemmEstimate gemmSeconds(const GemmShape& s, const GemmEfficiency& e, double peak_flops, int sms);
// gemmSeconds without the alignment term.
GemmEstimate alignedGemmSeconds(const GemmShape& s, const GemmEfficiency& e, double peak_flops, int sms);
// The unaligned kernels' time for `s` (above), 0 when every dimension is a multiple of the alignment or the profile
// has no alignment measurement.
double unalignedGemmSeconds(const GemmShape& s, const GemmAlignment& a);

}  // namespace stepsim
