// Overlap windows (OverlapWindows.hpp) from hand-made observations: W_break is what is left of W_ideal after the
// delays, and a window breaks when the delays exceed it.
#include <vector>

#include <gtest/gtest.h>

#include "sim/metrics/OverlapWindows.hpp"

namespace stepsim {
namespace {

Workload twoRanks() {
    Workload w;
    w.programs.resize(2);
    w.groups = {ProcessGroup{"dp", {0, 1}}};
    return w;
}

// One bucket: ready at `first`, started at `start`, `d` long, the backward ending at `c` (µs).
SyncObservation one(double first, double start, double d, double c) {
    SyncObservation o;
    o.syncs.push_back({0, 0, 1, CollectiveKind::all_reduce, 1e6, first, start, start + d, c});
    return o;
}

// Reference: ready at 100, 200 long, compute ends at 1000: W_ideal = 1000 − 100 − 200 = 700 µs.
TEST(OverlapWindows, WideWindowHoldsAndBreaksWhenTheDelaysExceedIt) {
    const Workload w = twoRanks();
    const SyncObservation ref = one(100, 100, 200, 1000);
    // δsync 50, the collective as long as in the reference, compute at the same place: δkernel 0, 650 µs left.
    const auto wide = overlapWindows(ref, {one(100, 150, 200, 1000)}, w);
    ASSERT_EQ(wide.size(), 1u);
    EXPECT_DOUBLE_EQ(wide[0].w_ideal_us, 700.0);
    EXPECT_DOUBLE_EQ(wide[0].delta_sync_us, 50.0);
    EXPECT_DOUBLE_EQ(wide[0].delta_kernel_us, 0.0);
    EXPECT_DOUBLE_EQ(wide[0].w_break_us, 650.0);
    EXPECT_DOUBLE_EQ(wide[0].break_probability, 0.0);
    // δsync 500 and the bucket ready 300 µs later relative to the end of compute (δkernel 300): 800 > 700, it breaks.
    const auto broken = overlapWindows(ref, {one(400, 900, 200, 1000)}, w);
    ASSERT_EQ(broken.size(), 1u);
    EXPECT_DOUBLE_EQ(broken[0].delta_sync_us, 500.0);
    EXPECT_DOUBLE_EQ(broken[0].delta_kernel_us, 300.0);
    EXPECT_DOUBLE_EQ(broken[0].w_break_us, 0.0);
    EXPECT_DOUBLE_EQ(broken[0].break_probability, 1.0);
    // Half the observations break.
    const auto half = overlapWindows(ref, {one(100, 150, 200, 1000), one(400, 900, 200, 1000)}, w);
    EXPECT_DOUBLE_EQ(half[0].break_probability, 0.5);
    EXPECT_EQ(half[0].observations, 2);
}

// The idle at the sync: mean and sample variance over the observations.
TEST(OverlapWindows, AccumulationIdleMeanAndVariance) {
    SyncObservation a, b;
    a.sync_idle_ms = {1.0, 3.0};
    b.sync_idle_ms = {2.0};
    const auto idle = accumulationIdle({a, b}, 4, 8);
    ASSERT_TRUE(idle);
    EXPECT_DOUBLE_EQ(idle->mean_ms, 2.0);
    EXPECT_DOUBLE_EQ(idle->var_ms2, 1.0);
    EXPECT_EQ(idle->grad_accum, 4);
    EXPECT_FALSE(accumulationIdle({a}, 4, 1));
}

}  // namespace
}  // namespace stepsim
