// The fit's gaps inside a training step (sim/fit/ProfileFit.hpp, "launch"): kernel_gaps.py's mean gap
// before each class of operation, the median over runs; gemm_gaps.py's by GEMM shape, and beside an all-reduce.
#include <algorithm>
#include <tuple>

#include <gtest/gtest.h>

#include "sim/fit/ProfileFit.hpp"
#include "sim/fit/RawData.hpp"

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

// gemm_gaps.py --beside: per class, the ratio of the units' mean gap beside an all-reduce (moving data, or
// waiting) to alone within one run (file) and rank, the median over runs and ranks, times the fitted gap alone.
// A record with no alone partner in its own run and rank is left out; a class the units lack keeps the base.
// kernel_gaps.py's own gaps beside NCCL (step_gap_<class>_beside_nccl) are not fitted.
RawLaunch unit(const std::string& cls, const std::string& mode, double mean, const std::string& file, int rank) {
    RawLaunch l = gap("step_gap_unit_" + cls, mean);
    l.mode = mode;
    l.file = file;
    l.rank = rank;
    return l;
}

TEST(StepGapFit, GapBesideNcclIsTheAloneGapTimesTheRatioInTheRunByWhatNcclDoes) {
    RawData raw;
    raw.launches = {gap("step_gap_gemm", 2.2),   gap("step_gap_gemm_beside_nccl", 9.0),   gap("step_gap_memory", 1.8),
                    gap("step_gap_copy", 1.6),   unit("gemm", "alone", 2.8, "a", 0),      unit("gemm", "transfer", 3.7, "a", 0),
                    unit("gemm", "waiting", 2.8, "a", 0), unit("gemm", "alone", 2.6, "a", 1), unit("gemm", "transfer", 3.5, "a", 1),
                    unit("gemm", "alone", 2.0, "b", 0),   unit("gemm", "transfer", 2.8, "b", 0),
                    unit("copy", "alone", 1.8, "a", 0),   unit("copy", "transfer", 2.1, "a", 0),
                    unit("copy", "waiting", 1.8, "b", 0),  // no alone record in run b: left out
                    unit("memory", "transfer", 1.9, "a", 1), unit("memory", "alone", 1.5, "a", 1)};
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const StepGaps &t = r.profile.launch.step_gap_beside_transfer_us, &w = r.profile.launch.step_gap_beside_waiting_us;
    EXPECT_DOUBLE_EQ(r.profile.launch.step_gap_us.gemm_us, 2.2);  // the unit records do not feed the gap alone
    EXPECT_DOUBLE_EQ(t.gemm_us, 2.2 * (3.5 / 2.6));  // the median of 3.7/2.8, 3.5/2.6, 2.8/2.0
    EXPECT_DOUBLE_EQ(w.gemm_us, 2.2);
    EXPECT_DOUBLE_EQ(t.copy_us, 1.6 * (2.1 / 1.8));
    EXPECT_DOUBLE_EQ(w.copy_us, 0.0);
    EXPECT_DOUBLE_EQ(t.memory_us, 1.8 * (1.9 / 1.5));
    EXPECT_DOUBLE_EQ(t.attention_us, 0.0);
    const auto& kept = r.report.at("kept_from_base");
    for (const char* k : {"launch.step_gap_beside_waiting_us.copy", "launch.step_gap_beside_waiting_us.memory",
                          "launch.step_gap_beside_transfer_us.attention", "launch.gemm_gap_beside_transfer_by_shape"})
        EXPECT_NE(std::find(kept.begin(), kept.end(), k), kept.end()) << k;
}

// By GEMM shape beside an all-reduce moving data: the shape's ratio beside to alone within a run, rank and form,
// the median over them, times the shape's fitted gap alone (the median over every run's alone records).
TEST(StepGapFit, GemmGapBesideTransferByShapeIsTheShapesGapTimesItsRatio) {
    const auto shaped = [](const std::string& op, const std::string& form, double mean, const std::string& file, int rank) {
        RawLaunch l = gap(op, mean);
        l.m = 8192, l.n = 2048, l.k = 2048, l.form = form, l.file = file, l.rank = rank;
        l.mode = op == "step_gap_gemm_shape" ? "" : "transfer";
        return l;
    };
    RawData raw;
    raw.launches = {shaped("step_gap_gemm_shape", "forward", 3.2, "old", 0),
                    shaped("step_gap_gemm_shape", "forward", 3.6, "new", 0),
                    shaped("step_gap_gemm_shape_beside_nccl", "forward", 5.4, "new", 0),   // x1.5
                    shaped("step_gap_gemm_shape", "dgrad", 1.6, "new", 0),
                    shaped("step_gap_gemm_shape_beside_nccl", "dgrad", 2.0, "new", 0),     // x1.25
                    shaped("step_gap_gemm_shape_beside_nccl", "forward", 9.9, "new", 1)};  // no alone in rank 1
    RawLaunch waiting = shaped("step_gap_gemm_shape_beside_nccl", "forward", 3.6, "new", 0);
    waiting.mode = "waiting";  // not a transfer record
    raw.launches.push_back(waiting);
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    ASSERT_EQ(r.profile.launch.gemm_gap_by_shape.size(), 1u);
    EXPECT_DOUBLE_EQ(r.profile.launch.gemm_gap_by_shape[0].value, 3.2);  // the median of 3.2, 3.6, 1.6
    const auto& by = r.profile.launch.gemm_gap_beside_transfer_by_shape;
    ASSERT_EQ(by.size(), 1u);
    EXPECT_EQ(std::tie(by[0].m, by[0].n, by[0].k), std::tuple(8192L, 2048L, 2048L));
    EXPECT_DOUBLE_EQ(by[0].value, 3.2 * 1.375);  // the median of 1.5 and 1.25
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
