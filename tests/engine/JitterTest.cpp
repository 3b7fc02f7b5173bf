// The GPUs' and hosts' speeds fixed for a run: expected order statistics dealt by the seed (sim/engine/Jitter.hpp).
#include "sim/engine/Jitter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace stepsim {
namespace {

// One GPU runs at the median speed; two at the expected order statistics of two draws, Φ⁻¹(0.625 / 2.25) =
// −0.5894 and +0.5894 times the cv, the same z for compute and memory-bound classes, none for communication.
TEST(Jitter, DeviceSpeedFactorsAreTheExpectedOrderStatistics) {
    const auto one = deviceSpeedFactors(1, 0.01, 0.002, 7);
    for (double f : one[0]) EXPECT_DOUBLE_EQ(f, 1.0);
    const auto two = deviceSpeedFactors(2, 0.01, 0.002, 7);
    ASSERT_EQ(two.size(), 2u);
    const std::size_t slow = two[0][std::size_t(KernelClass::gemm)] > 1.0 ? 0 : 1;
    const auto at = [&](std::size_t r, KernelClass k) { return two[r][std::size_t(k)]; };
    EXPECT_NEAR(at(slow, KernelClass::gemm), std::exp(0.01 * 0.589456), 1e-6);
    EXPECT_NEAR(at(1 - slow, KernelClass::gemm), std::exp(-0.01 * 0.589456), 1e-6);
    EXPECT_DOUBLE_EQ(at(slow, KernelClass::attention), at(slow, KernelClass::gemm));
    for (KernelClass k : {KernelClass::memory, KernelClass::optimizer, KernelClass::copy})
        EXPECT_NEAR(at(slow, k), std::exp(0.002 * 0.589456), 1e-6);
    EXPECT_DOUBLE_EQ(at(slow, KernelClass::comm), 1.0);
    // the slowest of 1024: z = Φ⁻¹(1023.625 / 1024.25) ≈ 3.2
    const auto many = deviceSpeedFactors(1024, 0.01, 0.0, 7);
    double worst = 0;
    for (const auto& f : many) worst = std::max(worst, f[std::size_t(KernelClass::gemm)]);
    EXPECT_NEAR(std::log(worst) / 0.01, 3.2, 0.05);
}

// Which rank is slow is dealt by the seed (each rank is the slow one for some seed); a seed always deals alike.
TEST(Jitter, DeviceSpeedFactorsAreDealtBySeed) {
    std::set<std::size_t> slowest;
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
        const auto f = deviceSpeedFactors(2, 0.01, 0.0, seed);
        EXPECT_EQ(f, deviceSpeedFactors(2, 0.01, 0.0, seed));
        slowest.insert(f[0][0] > f[1][0] ? 0 : 1);
    }
    EXPECT_EQ(slowest.size(), 2u);
}

// One host keeps the calibrated cost; of two, the slower host's costs are exp(0.5894 cv) the calibrated ones and the
// faster's exp(−0.5894 cv), dealt by the seed apart from the GPUs' (each rank the slow host for some seed).
TEST(Jitter, HostSpeedFactorsAreTheExpectedOrderStatisticsDealtBySeed) {
    EXPECT_EQ(hostSpeedFactors(1, 0.1, 7), std::vector<double>{1.0});
    std::set<std::size_t> slowest;
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
        const std::vector<double> f = hostSpeedFactors(2, 0.1, seed);
        ASSERT_EQ(f.size(), 2u);
        EXPECT_EQ(f, hostSpeedFactors(2, 0.1, seed));
        const std::size_t slow = f[0] > f[1] ? 0 : 1;
        EXPECT_NEAR(f[slow], std::exp(0.1 * 0.589456), 1e-6);
        EXPECT_NEAR(f[1 - slow], std::exp(-0.1 * 0.589456), 1e-6);
        slowest.insert(slow);
    }
    EXPECT_EQ(slowest.size(), 2u);
}

}  // namespace
}  // namespace stepsim
