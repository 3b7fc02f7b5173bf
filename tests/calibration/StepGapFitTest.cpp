// The fit's gaps inside a training step (calibration/fit/ProfileFit.hpp, "launch"): kernel_gaps.py's mean gap
// before each class of operation, the median over runs; the gaps beside NCCL are not these.
#include <algorithm>
#include <tuple>

#include <gtest/gtest.h>

#include "calibration/fit/ProfileFit.hpp"
#include "calibration/fit/RawData.hpp"

namespace stepsim {
namespace {

RawLaunch gap(const std::string& op, double mean) {
    RawLaunch l;
    l.op = op;
    l.time.median = mean - 0.2;  // the fit must read the mean, not the median
    l.time.mean = mean;
    return l;
}

TEST(StepGapFit, MedianOverRunsOfEachClassMean) {
    RawData raw;
    raw.launches = {gap("step_gap_gemm", 2.0),     gap("step_gap_gemm", 2.6),      gap("step_gap_gemm", 2.2),
                    gap("step_gap_memory", 1.7),   gap("step_gap_attention", 2.5), gap("step_gap_optimizer", 1.5),
                    gap("step_gap_copy", 1.3),     gap("step_gap", 1.9),           gap("step_gap_gemm_beside_nccl", 9.0),
                    gap("step_gap_gemm_beside_nccl", 9.0)};
    const StepGaps g = fitProfile(raw, HardwareProfile{}, "t", "test").profile.launch.step_gap_us;
    EXPECT_DOUBLE_EQ(g.gemm_us, 2.2);  // median of 2.0, 2.6, 2.2; the beside-NCCL records left out
    EXPECT_DOUBLE_EQ(g.memory_us, 1.7);
    EXPECT_DOUBLE_EQ(g.attention_us, 2.5);
    EXPECT_DOUBLE_EQ(g.optimizer_us, 1.5);
    EXPECT_DOUBLE_EQ(g.copy_us, 1.3);
}

// A class with no record keeps the base's gap, and the report says so.
TEST(StepGapFit, UnmeasuredClassKeepsTheBase) {
    RawData raw;
    raw.launches = {gap("step_gap_gemm", 2.4)};
    HardwareProfile base;
    base.launch.step_gap_us = {1.0, 2.0, 3.0, 4.0, 5.0};
    const ProfileFitResult r = fitProfile(raw, base, "t", "test");
    EXPECT_DOUBLE_EQ(r.profile.launch.step_gap_us.gemm_us, 2.4);
    EXPECT_DOUBLE_EQ(r.profile.launch.step_gap_us.copy_us, 5.0);
    const auto& kept = r.report.at("kept_from_base");
    EXPECT_NE(std::find(kept.begin(), kept.end(), "launch.step_gap_us.copy"), kept.end());
    EXPECT_EQ(std::find(kept.begin(), kept.end(), "launch.step_gap_us.gemm"), kept.end());
    EXPECT_NE(std::find(kept.begin(), kept.end(), "launch.gemm_gap_by_shape"), kept.end());
}

// Beside NCCL: the ratio beside/alone within the runs that recorded their all-reduces' size (pairs by comm_bytes)
// and saw 50 gaps beside or more, times the fitted gap alone; a run without the size (run 19's chain) is left out,
// and so is a class with too few gaps beside (run 49's attention: 14).
TEST(StepGapFit, GapBesideNcclIsTheAloneGapTimesTheRatioInTheRun) {
    const auto sized = [](const std::string& op, double mean, double bytes, int n) {
        RawLaunch l = gap(op, mean);
        l.comm_bytes = bytes;
        l.time.n = n;
        return l;
    };
    RawData raw;
    raw.launches = {gap("step_gap_gemm", 2.2), gap("step_gap_gemm_beside_nccl", 4.4),
                    sized("step_gap_gemm", 2.5, 25 << 20, 780), sized("step_gap_gemm_beside_nccl", 3.5, 25 << 20, 219),
                    gap("step_gap_memory", 1.8), sized("step_gap_attention", 2.8, 25 << 20, 120),
                    sized("step_gap_attention_beside_nccl", 1.6, 25 << 20, 14)};
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const StepGaps& b = r.profile.launch.step_gap_beside_nccl_us;
    EXPECT_DOUBLE_EQ(r.profile.launch.step_gap_us.gemm_us, 2.35);  // median of both runs' gaps alone
    EXPECT_DOUBLE_EQ(b.gemm_us, 2.35 * 3.5 / 2.5);
    EXPECT_DOUBLE_EQ(b.memory_us, 0.0);
    EXPECT_DOUBLE_EQ(b.attention_us, 0.0);
    const auto& kept = r.report.at("kept_from_base");
    EXPECT_NE(std::find(kept.begin(), kept.end(), "launch.step_gap_beside_nccl_us.memory"), kept.end());
    EXPECT_NE(std::find(kept.begin(), kept.end(), "launch.step_gap_beside_nccl_us.attention"), kept.end());
}

// gemm_gaps.py's records: the median over runs of each shape's mean gap, in ascending shape order, apart from the
// class's gap (which they do not feed).
TEST(StepGapFit, GemmGapByShape) {
    const auto shaped = [](long m, long n, long k, double mean) {
        RawLaunch l = gap("step_gap_gemm_shape", mean);
        l.m = m, l.n = n, l.k = k;
        return l;
    };
    RawData raw;
    raw.launches = {shaped(8192, 2048, 2048, 3.3), shaped(8192, 2048, 2048, 3.1), shaped(8192, 2048, 2048, 3.2),
                    shaped(8192, 768, 768, 1.6), gap("step_gap_gemm", 2.3)};
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const auto& by = r.profile.launch.gemm_gap_by_shape;
    ASSERT_EQ(by.size(), 2u);
    EXPECT_EQ(std::tie(by[0].m, by[0].n, by[0].k), std::tuple(8192L, 768L, 768L));
    EXPECT_DOUBLE_EQ(by[0].value, 1.6);
    EXPECT_DOUBLE_EQ(by[1].value, 3.2);
    EXPECT_DOUBLE_EQ(r.profile.launch.step_gap_us.gemm_us, 2.3);
    EXPECT_EQ(r.report.at("launch").at("gemm_gap_by_shape").at("shapes"), 2);
}

}  // namespace
}  // namespace stepsim
