// Profiles derived from a measured one (sim/cost/ProfileDerive.hpp): what each step moves and what it keeps.
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/cost/ProfileDerive.hpp"

namespace stepsim {
namespace {

// A measured-looking profile: a fitted clock line, two GEMM points, a norm grid and one memory kind.
HardwareProfile measured() {
    HardwareProfile p;
    p.name = "measured";
    p.gpu.hbm_gbps = 4800;
    p.gpu.memory_gib = 140;
    p.power.modelled = true;
    p.power.clock_max_mhz = 1980;
    p.power.clock_intercept_mhz = 2288;
    p.power.clock_mhz_per_tflops = -1.285;
    p.power.memory_busy_tflops = 172;
    p.power.limit_w = 700;
    p.power.fixed_w = 123;
    p.gemm["bf16"].max_efficiency = 0.9;
    p.gemm["bf16"].points = {{8192, 8192, 8192, 700.0}, {1024, 1024, 1024, 200.0}};
    p.memory.kernels["norm_forward"] = {0.5, 10.0};
    p.memory.kernels["norm_backward"] = {0.6, 4.0};
    p.memory.norms.layer_fp32 = {{8192, 2048, 30.0, 20.0, 3.0}};
    return p;
}

TEST(ProfileDerive, HbmBandwidthMovesOnlyTheBandwidthTerm) {
    HardwareProfile p = measured();
    scaleHbmBandwidth(p, 2400);
    EXPECT_DOUBLE_EQ(p.gpu.hbm_gbps, 2400);
    // The kinds keep their fitted efficiency and fixed cost: t = fixed + bytes / (HBM · efficiency).
    EXPECT_DOUBLE_EQ(p.memory.kernels["norm_forward"].efficiency, 0.5);
    EXPECT_DOUBLE_EQ(p.memory.kernels["norm_forward"].fixed_us, 10.0);
    // The grid: t' = f + (t − f) · 4800/2400, f the kind's fixed cost, capped at t.
    const NormPoint& q = p.memory.norms.layer_fp32.front();
    EXPECT_DOUBLE_EQ(q.forward_us, 10.0 + 20.0 * 2);
    EXPECT_DOUBLE_EQ(q.backward_us, 4.0 + 16.0 * 2);
    EXPECT_DOUBLE_EQ(q.weight_grad_us, 3.0);  // all of it under the fixed cost
    EXPECT_DOUBLE_EQ(p.power.memory_busy_tflops, 86);
    ASSERT_EQ(p.derivation.steps.size(), 1u);
    EXPECT_DOUBLE_EQ(p.derivation.steps[0].factor, 0.5);
}

TEST(ProfileDerive, ALowerLimitSlowsTheHeavierGemmsMore) {
    const PowerModel pw = measured().power;
    EXPECT_DOUBLE_EQ(gemmClockFactor(pw, 700, 1.0), 1.0);
    const double rho = (500.0 - 123) / (700.0 - 123);
    const double heavy = gemmClockFactor(pw, 700, rho), light = gemmClockFactor(pw, 200, rho);
    EXPECT_LT(heavy, light);
    EXPECT_LT(heavy, 1.0);
    // At 700 TFLOP/s the GEMM held 2288 − 1.285·700 = 1388.5 MHz; at ρ its clock solves f' = I / (1 − s/ρ · T/f).
    const double f = 2288 - 1.285 * 700, f2 = 2288 / (1 + 1.285 / rho * 700 / f);
    EXPECT_NEAR(heavy, f2 / f, 1e-12);
    // A GEMM light enough to run at the clock's cap at the limit stays capped when the load it draws allows it.
    EXPECT_DOUBLE_EQ(gemmClockFactor(pw, 100, 0.99), 1.0);
}

TEST(ProfileDerive, PowerLimitScalesPointsAndRecordsItsRange) {
    HardwareProfile p = measured();
    scalePowerLimit(p, 500, 123, 305, "cluster.power_limit_w");
    EXPECT_DOUBLE_EQ(p.power.limit_w, 500);
    EXPECT_LT(p.gemm["bf16"].points[0].tflops, 700);
    EXPECT_LT(p.power.clock_mhz_per_tflops, -1.285);  // the same load holds a lower clock
    ASSERT_EQ(p.derivation.steps.size(), 1u);
    const DerivationStep& d = p.derivation.steps[0];
    EXPECT_LT(d.low, d.factor);  // a larger fixed draw leaves less for the load
    EXPECT_DOUBLE_EQ(d.high, d.factor);
}

TEST(ProfileDerive, APowerLimitNeedsTheMeasuredOne) {
    HardwareProfile p = measured();
    p.power.limit_w = 0;
    EXPECT_THROW(scalePowerLimit(p, 500, 123, 123, "cluster.power_limit_w"), InputError);
    p.power.limit_w = 700;
    EXPECT_THROW(scalePowerLimit(p, 100, 123, 123, "cluster.power_limit_w"), InputError);  // below the fixed draw
}

TEST(ProfileDerive, SameDieRefusesAnotherDiesDatasheet) {
    DatasheetDelta d;
    d.name = "x";
    d.sms = 148;
    EXPECT_THROW(deriveProfile(measured(), d), InputError);
}

TEST(ProfileDerive, ExtrapolationKeepsTheFractionOfPeakAndTurnsThePowerStateOff) {
    DatasheetDelta d;
    d.name = "other";
    d.extrapolated = true;
    d.extrapolation_uncertainty = 0.3;
    d.peak_tflops_bf16 = 2 * 989;
    d.nvlink_gbps = 900;
    const HardwareProfile p = deriveProfile(measured(), d);
    EXPECT_DOUBLE_EQ(p.gemm.at("bf16").points[0].tflops, 1400);
    EXPECT_DOUBLE_EQ(p.links.nvlink_gbps, 900);
    EXPECT_FALSE(p.power.modelled);
    EXPECT_TRUE(p.derivation.extrapolated);
    EXPECT_EQ(p.derivation.from, "measured");
    for (const DerivationStep& s : p.derivation.steps) EXPECT_LE(s.low, s.factor);
}

}  // namespace
}  // namespace stepsim
