// GEMM pricing near measured shapes: the nearest point's time, carried to the query by the model without its wave
// term, never faster than the fastest point; outside the measured domain the model alone.
#include "sim/cost/GemmModel.hpp"

#include <gtest/gtest.h>

namespace stepsim {
namespace {

constexpr double kPeak = 989e12;  // H200 dense BF16
constexpr int kSms = 132;

double flops(long m, long n, long k) { return 2.0 * double(m) * double(n) * double(k); }

// The built-in H200 profile's fitted model (64x256 tiles) with the given points.
GemmEfficiency h200(std::vector<GemmPoint> points) {
    GemmEfficiency e;
    e.max_efficiency = 0.896;
    e.k_half = 279.17;
    e.tile_m = 64;
    e.tile_n = 256;
    e.overhead_us = 0.0;
    e.points = std::move(points);
    return e;
}

// A measured shape is priced at its measured time.
TEST(GemmModel, MeasuredShapeTakesItsMeasuredTime) {
    const GemmEfficiency e = h200({{8192, 8192, 2048, 667.7}, {768, 3072, 2048, 621.6}});
    const GemmEstimate g = gemmSeconds({8192, 8192, 2048}, e, kPeak, kSms);
    EXPECT_TRUE(g.in_domain);
    EXPECT_NEAR(g.seconds, flops(8192, 8192, 2048) / 667.7e12, 1e-12);
}

// (1024, 2048, 2048) is one wave of 64x256 tiles on 132 SMs, its nearest point (768, 3072, 2048) two (144 tiles):
// carried with the wave term the point's correction priced it at ~1485 TFLOP/s, above the 989 peak; without it the
// same K keeps the point's rate (the GEMM runs at 602 TFLOP/s on H200).
TEST(GemmModel, WaveCountIsNotCarriedFromTheNearestPoint) {
    const GemmEfficiency e = h200({{768, 3072, 2048, 621.6}});
    const GemmEstimate g = gemmSeconds({1024, 2048, 2048}, e, kPeak, kSms);
    EXPECT_TRUE(g.in_domain);
    EXPECT_NEAR(flops(1024, 2048, 2048) / g.seconds / 1e12, 621.6, 1e-6);
    // what the model alone gives at the two shapes differs by the wave term, which the price no longer follows
    const double model_q = gemmModelSeconds({1024, 2048, 2048}, e, kPeak, kSms);
    const double model_p = gemmModelSeconds({768, 3072, 2048}, e, kPeak, kSms);
    EXPECT_LT(model_q / model_p, 0.6);
}

// A longer K gains e_k = k / (k + k_half) over the point (4096, 4096, 1024): 1.12x its 700 TFLOP/s, 784, more than
// any GEMM measured, so the price holds at the fastest point's rate.
TEST(GemmModel, NeverFasterThanTheFastestMeasuredPoint) {
    const GemmEfficiency e = h200({{4096, 4096, 1024, 700.0}, {512, 512, 512, 150.0}});
    const GemmEstimate g = gemmSeconds({4096, 4096, 2048}, e, kPeak, kSms);
    EXPECT_NEAR(flops(4096, 4096, 2048) / g.seconds / 1e12, 700.0, 1e-6);
    // a shorter K loses e_k, below the cap: 700 x e_k(768) / e_k(1024)
    const GemmEstimate shorter = gemmSeconds({4096, 4096, 768}, e, kPeak, kSms);
    const auto e_k = [](double k) { return k / (k + 279.17); };
    EXPECT_NEAR(flops(4096, 4096, 768) / shorter.seconds / 1e12, 700.0 * e_k(768) / e_k(1024), 1e-6);
}

// More than a factor 2 from every point on some dimension: the model alone, wave term included, out of domain.
TEST(GemmModel, OutsideTheMeasuredDomainTheModelAlone) {
    const GemmEfficiency e = h200({{4096, 4096, 1024, 700.0}});
    const GemmEstimate g = gemmSeconds({16384, 4096, 1024}, e, kPeak, kSms);
    EXPECT_FALSE(g.in_domain);
    EXPECT_DOUBLE_EQ(g.seconds, gemmModelSeconds({16384, 4096, 1024}, e, kPeak, kSms));
}

}  // namespace
}  // namespace stepsim
