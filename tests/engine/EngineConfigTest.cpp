// engineConfig: the engine's parameters read from the cost model's profile (sim/engine/EngineConfig.hpp), and the
// interference by a collective's size.
#include "sim/engine/EngineConfig.hpp"

#include <gtest/gtest.h>

namespace stepsim {
namespace {

// engineConfig of a cost model on profile `p`, without jitter.
EngineConfig configOf(const HardwareProfile& p) { return engineConfig(CostModel(p, NcclSpec{}, false), false, 1); }

// engineConfig takes each class's gap from the profile's training-step gaps, and the back-to-back launch gap
// for the classes it has none for (collectives, markers) or when the profile has no step gaps at all.
TEST(EngineConfig, TakesStepGapsByClassElseTheLaunchGap) {
    HardwareProfile prof;
    prof.launch.device_gap = {1.5, 1.6};
    EngineConfig bare = configOf(prof);
    for (double g : bare.device_gap_s) EXPECT_DOUBLE_EQ(g, 1.5e-6);
    prof.launch.step_gap_us = {2.3, 2.5, 1.7, 1.5, 1.6};
    EngineConfig c = configOf(prof);
    EXPECT_DOUBLE_EQ(c.device_gap_s[std::size_t(KernelClass::gemm)], 2.3e-6);
    EXPECT_DOUBLE_EQ(c.device_gap_s[std::size_t(KernelClass::attention)], 2.5e-6);
    EXPECT_DOUBLE_EQ(c.device_gap_s[std::size_t(KernelClass::memory)], 1.7e-6);
    EXPECT_DOUBLE_EQ(c.device_gap_s[std::size_t(KernelClass::optimizer)], 1.5e-6);
    EXPECT_DOUBLE_EQ(c.device_gap_s[std::size_t(KernelClass::copy)], 1.6e-6);
    EXPECT_DOUBLE_EQ(c.device_gap_s[std::size_t(KernelClass::comm)], 1.5e-6);
    EXPECT_DOUBLE_EQ(c.device_gap_s[std::size_t(KernelClass::other)], 1.5e-6);
}

// engineConfig takes the linger's tile and the GPU's SMs from the profile.
TEST(EngineConfig, ReadsTheLingerTile) {
    HardwareProfile prof;
    prof.gpu.sms = 114;
    prof.interference.linger_tile_m = 128;
    prof.interference.linger_tile_n = 256;
    const EngineConfig c = configOf(prof);
    EXPECT_EQ(c.linger_tile_m, 128);
    EXPECT_EQ(c.linger_tile_n, 256);
    EXPECT_EQ(c.sms, 114);
}

// engineConfig takes the profile's measured factors by class (memory for every memory-bound class), and the one
// compute_slowdown for what was not measured.
TEST(EngineConfig, TakesSlowdownsByClassElseTheOneFactor) {
    HardwareProfile prof;
    prof.interference.compute_slowdown = 1.17;
    prof.interference.beside_transfer = {1.23, 0.0, 1.18};
    prof.interference.beside_waiting = {1.42, 1.15, 1.14};
    const EngineConfig c = configOf(prof);
    EXPECT_DOUBLE_EQ(c.slowdown_transfer[std::size_t(KernelClass::gemm)], 1.23);
    EXPECT_DOUBLE_EQ(c.slowdown_transfer[std::size_t(KernelClass::attention)], 1.17);
    EXPECT_DOUBLE_EQ(c.slowdown_transfer[std::size_t(KernelClass::optimizer)], 1.18);
    EXPECT_DOUBLE_EQ(c.slowdown_waiting[std::size_t(KernelClass::gemm)], 1.42);
    EXPECT_DOUBLE_EQ(c.slowdown_waiting[std::size_t(KernelClass::attention)], 1.15);
    EXPECT_DOUBLE_EQ(c.slowdown_waiting[std::size_t(KernelClass::copy)], 1.14);
    EXPECT_DOUBLE_EQ(c.slowdown_waiting[std::size_t(KernelClass::other)], 1.17);
    const EngineConfig bare = configOf(HardwareProfile{});
    for (double x : bare.slowdown_waiting) EXPECT_DOUBLE_EQ(x, HardwareProfile{}.interference.compute_slowdown);
}

// Between measured sizes the factor is linear in log bytes (8 MiB: halfway from 4 to 16 MiB in log), held at the
// ends; without sizes it is the one transfer factor.
TEST(EngineConfig, TransferSlowdownInterpolatesInLogBytes) {
    EngineConfig c;
    c.slowdown_transfer = EngineConfig::filled(1.2);
    EXPECT_DOUBLE_EQ(transferSlowdown(c, 1e6)[std::size_t(KernelClass::gemm)], 1.2);
    c.transfer_by_size = {{4.0 * (1 << 20), EngineConfig::filled(1.0)}, {16.0 * (1 << 20), EngineConfig::filled(1.4)}};
    const auto at = [&](double mib) { return transferSlowdown(c, mib * (1 << 20))[std::size_t(KernelClass::gemm)]; };
    EXPECT_DOUBLE_EQ(at(1), 1.0);
    EXPECT_DOUBLE_EQ(at(4), 1.0);
    EXPECT_NEAR(at(8), 1.2, 1e-12);
    EXPECT_DOUBLE_EQ(at(16), 1.4);
    EXPECT_DOUBLE_EQ(at(256), 1.4);
}

// engineConfig's sizes take beside_transfer's value for a class a size did not measure.
TEST(EngineConfig, TakesTransferSlowdownsBySize) {
    HardwareProfile prof;
    prof.interference.compute_slowdown = 1.17;
    prof.interference.beside_transfer = {1.23, 1.14, 1.18};
    SizedSlowdown small;
    small.bytes = 4 << 20;
    small.gemm = 1.02;
    prof.interference.beside_transfer_by_size = {small};
    const EngineConfig c = configOf(prof);
    ASSERT_EQ(c.transfer_by_size.size(), 1u);
    EXPECT_DOUBLE_EQ(c.transfer_by_size[0].second[std::size_t(KernelClass::gemm)], 1.02);
    EXPECT_DOUBLE_EQ(c.transfer_by_size[0].second[std::size_t(KernelClass::attention)], 1.14);
    EXPECT_DOUBLE_EQ(c.transfer_by_size[0].second[std::size_t(KernelClass::copy)], 1.18);
}

}  // namespace
}  // namespace stepsim
