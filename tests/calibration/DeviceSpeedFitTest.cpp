// The GPUs' speeds loaded at once (device_speed.py): the fit's spread across devices (the raw records' reading:
// RawDataTest.cpp).
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "sim/fit/ProfileFit.hpp"
#include "sim/fit/RawData.hpp"

namespace stepsim {
namespace {

// Two sets of two GPUs: log-rate sample variances (ln 1.02)²/2 and (ln 1.01)²/2 for GEMMs, 0 and (ln 1.001)²/2 for
// memory; the cv is the root of their mean. A set with one GPU carries no spread and is left out.
TEST(DeviceSpeedFit, RootMeanVarianceOfLogRatesOverSets) {
    RawData raw;
    raw.device_speed = {{"a", 0, 680.0, 4400.0}, {"a", 1, 680.0 / 1.02, 4400.0},
                        {"b", 0, 660.0, 4404.4}, {"b", 1, 666.6, 4400.0}, {"c", 0, 500.0, 3000.0}};
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const double l2 = std::log(1.02), l1 = std::log(666.6 / 660.0), lm = std::log(4404.4 / 4400.0);
    EXPECT_NEAR(r.profile.jitter.device_compute_cv, std::sqrt((l2 * l2 / 2 + l1 * l1 / 2) / 2), 1e-12);
    EXPECT_NEAR(r.profile.jitter.device_memory_cv, std::sqrt((lm * lm / 2) / 2), 1e-12);
    EXPECT_EQ(r.report.at("device_speed").at("sets").size(), 2u);
    const ProfileFitResult none = fitProfile(RawData{}, HardwareProfile{}, "t", "test");
    EXPECT_DOUBLE_EQ(none.profile.jitter.device_compute_cv, HardwareProfile{}.jitter.device_compute_cv);
    const auto& kept = none.report.at("kept_from_base");
    EXPECT_NE(std::find(kept.begin(), kept.end(), "jitter.device_compute_cv"), kept.end());
}

}  // namespace
}  // namespace stepsim
