// The power model (sim/cost/PowerModel.hpp): the clock a step's load sets, and attention's time at that clock.
#include "sim/cost/PowerModel.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace stepsim {
namespace {

// A clock line of 2000 MHz less 1 MHz per TFLOP/s of load, capped at 1980, with 300 MHz of headroom per unit of
// idle over busy time.
PowerModel line() {
    PowerModel m;
    m.modelled = true;
    m.clock_max_mhz = 1980;
    m.clock_intercept_mhz = 2000;
    m.clock_mhz_per_tflops = -1.0;
    m.idle_headroom_mhz = 300;
    return m;
}

// attentionFactor: the exponent by head_dim, linear between the listed ones and held beyond them; backward its own.
TEST(PowerModel, AttentionExponentByHeadDim) {
    PowerModel m;
    m.modelled = true;
    m.attention_reference_mhz = 2000;
    m.attention = {{64, 1.0, 0.8}, {128, 0.5, 0.6}};
    EXPECT_DOUBLE_EQ(m.attentionFactor(128, false, 1000), std::pow(2.0, 0.5));
    EXPECT_DOUBLE_EQ(m.attentionFactor(96, false, 1000), std::pow(2.0, 0.75));
    EXPECT_DOUBLE_EQ(m.attentionFactor(96, true, 1000), std::pow(2.0, 0.7));
    EXPECT_DOUBLE_EQ(m.attentionFactor(32, false, 1000), 2.0);
    EXPECT_DOUBLE_EQ(m.attentionFactor(256, true, 1000), std::pow(2.0, 0.6));
    EXPECT_DOUBLE_EQ(m.clockAt(0.0, 0.0, 1.0, 1.0, 1.0), 0.0);  // clock_max_mhz 0 caps it
    m.modelled = false;
    EXPECT_DOUBLE_EQ(m.attentionFactor(128, false, 1000), 1.0);
}

// A step's load counts the FLOP of GEMMs and attention, the seconds of memory-bound kernels (memory, optimizer,
// copies) and every kernel's seconds.
TEST(PowerModel, StepLoadCountsFlopsAndMemoryTimeByClass) {
    StepLoad l;
    l.addKernel(KernelClass::gemm, 2e11, 1e-3);
    l.addKernel(KernelClass::attention, 1e11, 5e-4);
    l.addKernel(KernelClass::memory, 7e9, 2e-4);
    l.addKernel(KernelClass::optimizer, 0.0, 1e-4);
    l.addKernel(KernelClass::copy, 0.0, 1e-4);
    l.addKernel(KernelClass::other, 5e9, 1e-4);
    EXPECT_DOUBLE_EQ(l.flops, 3e11);
    EXPECT_DOUBLE_EQ(l.memory_s, 4e-4);
    EXPECT_DOUBLE_EQ(l.work_s, 2e-3);
    EXPECT_EQ(l.busy_s, 0.0);  // the engine accounts the time a kernel ran
}

// The first step's clock is that of its kernels alone: 1e12 FLOP in 1 ms is 1000 TFLOP/s, 2000 − 1000 MHz.
// Idle time raises the next step's clock by the headroom (1 ms idle over 1 ms busy: +300), except after the warm-up
// step; a step with no time keeps the clock; and the clock never exceeds the cap.
TEST(PowerModel, ClockFromTheStepsLoad) {
    const PowerModel m = line();
    StepLoad gemm;
    gemm.addKernel(KernelClass::gemm, 1e12, 1e-3);
    EXPECT_DOUBLE_EQ(m.firstStepClock(gemm), 1000.0);
    gemm.busy_s = 1e-3;
    EXPECT_DOUBLE_EQ(m.nextClock(1234.0, gemm, 2e-3, false), 1300.0);
    EXPECT_DOUBLE_EQ(m.nextClock(1234.0, gemm, 2e-3, true), 1000.0);
    EXPECT_DOUBLE_EQ(m.nextClock(1234.0, StepLoad{}, 0.0, false), 1234.0);
    EXPECT_DOUBLE_EQ(m.firstStepClock(StepLoad{}), 1980.0);
}

// Without the headroom measured the load is taken over the whole step: idle time only dilutes it.
TEST(PowerModel, WithoutHeadroomTheLoadIsOverTheWholeStep) {
    PowerModel m = line();
    m.idle_headroom_mhz = 0;
    StepLoad gemm;
    gemm.addKernel(KernelClass::gemm, 1e12, 1e-3);
    gemm.busy_s = 1e-3;
    EXPECT_DOUBLE_EQ(m.nextClock(0.0, gemm, 2e-3, false), 1500.0);
}

}  // namespace
}  // namespace stepsim
