// The fit's gaps inside a training step (calibration/fit/ProfileFit.hpp, "launch"): kernel_gaps.py's mean gap
// before each class of operation, the median over runs; the gaps beside NCCL are not these.
#include <algorithm>

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
}

}  // namespace
}  // namespace stepsim
