// A training step's kernels beside NCCL (interference_training.py): the fit's median slowdown by kernel class and
// by what the NCCL kernel is doing (the raw records' reading: RawDataTest.cpp).
#include <algorithm>

#include <gtest/gtest.h>

#include "calibration/fit/ProfileFit.hpp"
#include "calibration/fit/RawData.hpp"

namespace stepsim {
namespace {

RawStepInterference rec(const std::string& mode, const std::string& cls, double slowdown) {
    return {mode, cls, "op", 100.0, 100.0 * slowdown};
}

// The median per (mode, class); a class measured in neither mode keeps 0 and the report lists what was kept; the
// bucketed records only reach the report.
TEST(InterferenceFit, MedianByModeAndClass) {
    RawData raw;
    raw.step_interference = {rec("transfer", "gemm", 1.1), rec("transfer", "gemm", 1.3), rec("transfer", "gemm", 1.2),
                             rec("waiting", "gemm", 1.5),  rec("waiting", "gemm", 1.4),  rec("transfer", "memory", 1.18),
                             rec("waiting", "memory", 0.98), rec("bucketed", "gemm", 1.2)};
    raw.step_interference.back().comm_slowdown = 3.5;  // reported, not fitted
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const Interference& i = r.profile.interference;
    EXPECT_DOUBLE_EQ(i.beside_transfer.gemm, 1.2);
    EXPECT_DOUBLE_EQ(i.beside_waiting.gemm, 1.45);
    EXPECT_DOUBLE_EQ(i.beside_transfer.memory, 1.18);
    EXPECT_DOUBLE_EQ(i.beside_waiting.memory, 1.0);  // never faster than alone
    EXPECT_DOUBLE_EQ(i.beside_transfer.attention, 0.0);
    EXPECT_DOUBLE_EQ(r.profile.interference.comm_slowdown, HardwareProfile{}.interference.comm_slowdown);
    EXPECT_DOUBLE_EQ(r.report.at("interference_training").at("bucketed").at("gemm")[0].at("comm_slowdown"), 3.5);
    const ProfileFitResult none = fitProfile(RawData{}, HardwareProfile{}, "t", "test");
    const auto& kept = none.report.at("kept_from_base");
    EXPECT_NE(std::find(kept.begin(), kept.end(), "interference.beside_waiting"), kept.end());
}

}  // namespace
}  // namespace stepsim
