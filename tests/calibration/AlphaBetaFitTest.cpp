// The α-β segment fit (sim/fit/AlphaBetaFit.hpp) recovers known latencies and bus bandwidths from
// noisy synthetic timings, finds the sizes where the protocol changes, and rejects too few points.
#include "sim/fit/AlphaBetaFit.hpp"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"

namespace stepsim {
namespace {

struct Truth {
    double from_bytes, alpha_us, busbw_gbps;
};

// nccl-tests-like sizes 8 B .. 4 GiB (×2, plus 1.5× points), times from the segment that holds each size,
// with multiplicative Gaussian noise of `noise` (fixed seed).
std::vector<SizeTime> synth(const std::vector<Truth>& segs, double factor, double noise, unsigned seed = 7) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> n(0.0, noise);
    std::vector<SizeTime> pts;
    for (double s = 8; s <= 4294967296.0; s *= 2)
        for (double x : {s, 1.5 * s}) {
            if (x > 4294967296.0) continue;
            const Truth* t = &segs.front();
            for (const auto& g : segs)
                if (x >= g.from_bytes) t = &g;
            pts.push_back({x, (t->alpha_us + x * factor / (t->busbw_gbps * 1e3)) * (1.0 + n(rng))});
        }
    return pts;
}

TEST(AlphaBetaFit, OneLineIsRecoveredFromNoisyTimes) {
    // Expectation: t = 12 µs + S/(300 GB/s) with 2% noise fits as one segment with α, busbw within 5%.
    const double factor = 1.0;  // all_reduce on 2 ranks: 2(n−1)/n = 1
    const auto pts = synth({{0, 12.0, 300.0}}, factor, 0.02);
    CollectiveFit f;
    f.op = "all_reduce";
    fitSegments(pts, factor, f);
    ASSERT_EQ(f.segments.size(), 1u);
    EXPECT_NEAR(f.segments[0].alpha_us, 12.0, 0.6);
    EXPECT_NEAR(f.segments[0].busbw_gbps, 300.0, 15.0);
    EXPECT_LT(f.rel_error, 0.03);
    EXPECT_DOUBLE_EQ(f.segments.front().lo_bytes, 8.0);
    EXPECT_DOUBLE_EQ(f.segments.back().hi_bytes, 4294967296.0);
}

TEST(AlphaBetaFit, ProtocolSwitchesBecomeSegmentBoundaries) {
    // Expectation: LL (8 µs, 20 GB/s) below 64 KiB, LL128 (15 µs, 150 GB/s) to 16 MiB, Simple (30 µs, 350 GB/s)
    // above, 1% noise: three segments starting at 64 KiB and 16 MiB, each α and busbw within 10%.
    const double factor = 0.5;  // all_gather on 2 ranks
    const std::vector<Truth> truth = {{0, 8.0, 20.0}, {65536, 15.0, 150.0}, {16777216, 30.0, 350.0}};
    const auto pts = synth(truth, factor, 0.01);
    CollectiveFit f;
    f.op = "all_gather";
    fitSegments(pts, factor, f);
    ASSERT_EQ(f.segments.size(), 3u);
    EXPECT_DOUBLE_EQ(f.segments[1].lo_bytes, 65536.0);
    EXPECT_DOUBLE_EQ(f.segments[2].lo_bytes, 16777216.0);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_NEAR(f.segments[i].alpha_us, truth[i].alpha_us, 0.1 * truth[i].alpha_us) << "segment " << i;
        EXPECT_NEAR(f.segments[i].busbw_gbps, truth[i].busbw_gbps, 0.1 * truth[i].busbw_gbps) << "segment " << i;
    }
    for (std::size_t i = 0; i + 1 < f.segments.size(); ++i)
        EXPECT_DOUBLE_EQ(f.segments[i].hi_bytes, f.segments[i + 1].lo_bytes);  // contiguous
}

TEST(AlphaBetaFit, HeldOutSizesArePredictedWithinNoise) {
    // Expectation: fitted on 3 of 4 sizes of the three-protocol data, the 4th are predicted to a median
    // relative error below 3% (noise 1%).
    const double factor = 1.0;
    const auto pts = synth({{0, 8.0, 20.0}, {65536, 15.0, 150.0}, {16777216, 30.0, 350.0}}, factor, 0.01, 11);
    std::vector<SizeTime> train, test;
    for (std::size_t i = 0; i < pts.size(); ++i) (i % 4 == 3 ? test : train).push_back(pts[i]);
    CollectiveFit f;
    fitSegments(train, factor, f);
    std::vector<double> e;
    for (const auto& t : test) e.push_back(std::abs(predictMicros(f, factor, t.bytes) - t.us) / t.us);
    std::sort(e.begin(), e.end());
    EXPECT_LT(e[e.size() / 2], 0.03);
}

TEST(AlphaBetaFit, LatencyNeverNegative) {
    // Expectation: pure bandwidth data (α = 0) fits with α ≥ 0.
    std::vector<SizeTime> pts;
    for (double s = 1 << 20; s <= (1u << 31); s *= 2) pts.push_back({s, s / 400e3});
    const AlphaBetaLine l = fitLine(pts, 1.0);
    EXPECT_GE(l.alpha_us, 0.0);
    EXPECT_NEAR(1.0 / (l.us_per_byte * 1e3), 400.0, 1.0);
}

TEST(AlphaBetaFit, TooFewSizesIsAnInputError) {
    CollectiveFit f;
    f.op = "broadcast";
    EXPECT_THROW(fitSegments({{8, 10}, {16, 10}}, 1.0, f), InputError);
}

TEST(AlphaBetaFit, BusFactorsAreNcclTests) {
    EXPECT_DOUBLE_EQ(ncclBusFactor("all_reduce", 8), 1.75);
    EXPECT_DOUBLE_EQ(ncclBusFactor("all_gather", 8), 0.875);
    EXPECT_DOUBLE_EQ(ncclBusFactor("reduce_scatter", 4), 0.75);
    EXPECT_DOUBLE_EQ(ncclBusFactor("alltoall", 2), 0.5);
    EXPECT_DOUBLE_EQ(ncclBusFactor("broadcast", 8), 1.0);
    EXPECT_DOUBLE_EQ(ncclBusFactor("sendrecv", 2), 1.0);
}

}  // namespace
}  // namespace stepsim
