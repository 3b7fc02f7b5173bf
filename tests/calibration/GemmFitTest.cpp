// The GEMM fit (sim/fit/GemmFit.hpp) recovers the tile/wave model's parameters from noisy synthetic
// measurements over the harness's transformer grid.
#include "sim/fit/GemmFit.hpp"

#include <random>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/cost/GemmModel.hpp"

namespace stepsim {
namespace {

std::vector<GemmPoint> synth(const GemmEfficiency& truth, double peak_tflops, int sms, double noise) {
    std::mt19937 rng(3);
    std::normal_distribution<double> n(0.0, noise);
    std::vector<GemmPoint> pts;
    for (long t : {2048L, 4096L, 8192L, 16384L})
        for (long h : {1024L, 2048L, 4096L, 8192L})
            for (auto [m, nn, k] : {std::tuple{t, h, h}, std::tuple{t, 3 * h, h}, std::tuple{t, 4 * h, h},
                                   std::tuple{t, h, 4 * h}, std::tuple{h, 4 * h, t}}) {
                const double s = gemmModelSeconds({m, nn, k}, truth, peak_tflops * 1e12, sms) * (1.0 + n(rng));
                pts.push_back({m, nn, k, 2.0 * double(m) * nn * k / (s * 1e12)});
            }
    return pts;
}

TEST(GemmFit, RecoversEfficiencyKHalfOverheadAndTile) {
    // Expectation: data from e_max 0.78, k_half 256, tile 128x256, overhead 5 µs with 1% noise gives
    // e_max within 2%, k_half within 30%, overhead within 2 µs, the same tile, and model error below 2%.
    GemmEfficiency truth;
    truth.max_efficiency = 0.78;
    truth.k_half = 256;
    truth.tile_m = 128;
    truth.tile_n = 256;
    truth.overhead_us = 5.0;
    const auto pts = synth(truth, 989.0, 132, 0.01);
    const GemmEfficiency e = fitGemm(pts, 989.0, 132);
    EXPECT_NEAR(e.max_efficiency, 0.78, 0.02 * 0.78);
    EXPECT_NEAR(e.k_half, 256.0, 0.3 * 256.0);
    EXPECT_NEAR(e.overhead_us, 5.0, 2.0);
    EXPECT_EQ(e.tile_m, 128);
    EXPECT_EQ(e.tile_n, 256);
    EXPECT_LT(e.rel_error, 0.02);
    EXPECT_EQ(e.points.size(), pts.size());
}

TEST(GemmFit, Fp8EfficiencyAgainstFp8Peak) {
    // Expectation: an FP8 grid at e_max 0.72 of 1979 TFLOP/s is recovered within 2%.
    GemmEfficiency truth;
    truth.max_efficiency = 0.72;
    truth.k_half = 400;
    truth.overhead_us = 3.0;
    const GemmEfficiency e = fitGemm(synth(truth, 1979.0, 132, 0.01), 1979.0, 132);
    EXPECT_NEAR(e.max_efficiency, 0.72, 0.02 * 0.72);
}

TEST(GemmFit, HeldOutErrorWithMeasuredPointCorrection) {
    // Expectation: fitted on 3 of 4 shapes, the held-out shapes are predicted (model + nearest-point
    // correction) to a median error below 3% at 1% noise.
    GemmEfficiency truth;
    truth.max_efficiency = 0.75;
    truth.k_half = 300;
    const auto pts = synth(truth, 989.0, 132, 0.01);
    std::vector<GemmPoint> train, test;
    for (std::size_t i = 0; i < pts.size(); ++i) (i % 4 == 3 ? test : train).push_back(pts[i]);
    const GemmEfficiency e = fitGemm(train, 989.0, 132);
    EXPECT_LT(gemmCorrectedError(test, e, 989.0, 132), 0.03);
    EXPECT_LT(gemmModelError(test, e, 989.0, 132), 0.03);
}

TEST(GemmFit, TooFewShapesIsAnInputError) {
    EXPECT_THROW(fitGemm({{4096, 4096, 4096, 700.0}}, 989.0, 132), InputError);
}

}  // namespace
}  // namespace stepsim
