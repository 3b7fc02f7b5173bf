// computeMetrics on hand-built Timelines; each test states its system and its expectations.
#include "sim/metrics/Metrics.hpp"

#include <array>
#include <random>
#include <stdexcept>

#include <gtest/gtest.h>

#include "tests/metrics/TestTimeline.hpp"

namespace stepsim {
namespace {

using test::kUs;
using test::TestRun;

constexpr double kPeak = 1e15;

// Kernel gaps: compute [2,6) and [10,14), comm [14,16), one step of 20: the idle intervals [0,2),
// [6,10) and [16,20): 10 µs over 3 holes.
TEST(Metrics, KernelGapIsIdleOverItsIntervals) {
    TestRun t(1);
    t.kernel(0, KernelClass::gemm, 2, 6);
    t.kernel(0, KernelClass::memory, 10, 14);
    t.comm(0, 14, 16);
    t.steps(0, {20});
    const Results r = computeMetrics(t.tl, t.wl, kPeak);
    EXPECT_DOUBLE_EQ(r.kernel_gap_us_mean, 10.0 / 3.0);
}

// compute [0,10) and [12,20), comm [5,15), one step of 20.
// Expect: compute 18, comm 10, overlap |[5,10)|+|[12,15)| = 8, exposed 2, idle 20 − 20 = 0, ratio 8/18.
TEST(Metrics, OverlapOfKnownIntervalSets) {
    TestRun t(1);
    t.kernel(0, KernelClass::gemm, 0, 10);
    t.kernel(0, KernelClass::gemm, 12, 20);
    t.comm(0, 5, 15);
    t.steps(0, {20});
    const Results r = computeMetrics(t.tl, t.wl, kPeak);
    EXPECT_DOUBLE_EQ(r.compute_busy_ms, 18 * kUs);
    EXPECT_DOUBLE_EQ(r.comm_busy_ms, 10 * kUs);
    EXPECT_DOUBLE_EQ(r.overlap_ms, 8 * kUs);
    EXPECT_DOUBLE_EQ(r.exposed_comm_ms, 2 * kUs);
    EXPECT_DOUBLE_EQ(r.idle_ms, 0.0);
    EXPECT_DOUBLE_EQ(r.overlap_ratio, 8.0 / 18.0);
    EXPECT_DOUBLE_EQ(r.gpu_busy_pct, 100.0);
}

// compute [0,6) only in a step of 10. Expect: ratio 0, exposed 0, comm 0, idle 4.
TEST(Metrics, RankWithoutCommHasNoOverlapAndNoExposure) {
    TestRun t(1);
    t.kernel(0, KernelClass::gemm, 0, 6);
    t.steps(0, {10});
    const Results r = computeMetrics(t.tl, t.wl, kPeak);
    EXPECT_DOUBLE_EQ(r.overlap_ratio, 0.0);
    EXPECT_DOUBLE_EQ(r.exposed_comm_ms, 0.0);
    EXPECT_DOUBLE_EQ(r.comm_busy_ms, 0.0);
    EXPECT_DOUBLE_EQ(r.idle_ms, 4 * kUs);
}

// compute [0,10) with [2,5) nested inside (two streams), [10,15) touching it; comm [15,20) touching the
// compute; step 25. Expect: compute 15 (nested counted once, touching merged), comm 5, overlap 0
// (touching is not overlapping), exposed 5, idle 5.
TEST(Metrics, NestedAndTouchingIntervalsCountOnce) {
    TestRun t(1);
    t.kernel(0, KernelClass::gemm, 0, 10);
    t.kernel(0, KernelClass::copy, 2, 5);
    t.kernel(0, KernelClass::memory, 10, 15);
    t.comm(0, 15, 20);
    t.steps(0, {25});
    const Results r = computeMetrics(t.tl, t.wl, kPeak);
    EXPECT_DOUBLE_EQ(r.compute_busy_ms, 15 * kUs);
    EXPECT_DOUBLE_EQ(r.copy_busy_ms, 3 * kUs);
    EXPECT_DOUBLE_EQ(r.comm_busy_ms, 5 * kUs);
    EXPECT_DOUBLE_EQ(r.overlap_ms, 0.0);
    EXPECT_DOUBLE_EQ(r.exposed_comm_ms, 5 * kUs);
    EXPECT_DOUBLE_EQ(r.idle_ms, 5 * kUs);
}

// Steps end at 10 and 20; a compute span [5,15) crosses the boundary, comm [8,12) too.
// Expect per step: compute 5 and 5, comm 2 and 2, overlap 2 and 2; measured (step 1): compute 5,
// idle 10 − |[10,15)| = 5.
TEST(Metrics, StepWindowsClipSpans) {
    TestRun t(1);
    t.kernel(0, KernelClass::gemm, 5, 15);
    t.comm(0, 8, 12);
    t.steps(0, {10, 20});
    const Results r = computeMetrics(t.tl, t.wl, kPeak);
    ASSERT_EQ(r.per_step.size(), 2u);
    for (const StepResults& s : r.per_step) {
        EXPECT_DOUBLE_EQ(s.compute_busy_ms, 5 * kUs);
        EXPECT_DOUBLE_EQ(s.comm_busy_ms, 2 * kUs);
        EXPECT_DOUBLE_EQ(s.overlap_ms, 2 * kUs);
    }
    EXPECT_DOUBLE_EQ(r.compute_busy_ms, 5 * kUs);
    EXPECT_DOUBLE_EQ(r.idle_ms, 5 * kUs);
}

// Steps of 100 (warm-up), 10 and 20 µs; compute fills 90, 4, 6 of them.
// Expect: step_time = (10 + 20)/2 = 15, compute = (4 + 6)/2 = 5; step 0 is in per_step but not averaged.
TEST(Metrics, PerStepAveragingSkipsStepZero) {
    TestRun t(1);
    t.kernel(0, KernelClass::gemm, 0, 90, 0);
    t.kernel(0, KernelClass::gemm, 100, 104, 1);
    t.kernel(0, KernelClass::gemm, 110, 116, 2);
    t.steps(0, {100, 110, 130});
    const Results r = computeMetrics(t.tl, t.wl, kPeak);
    EXPECT_DOUBLE_EQ(r.step_time_ms, 15 * kUs);
    EXPECT_DOUBLE_EQ(r.compute_busy_ms, 5 * kUs);
    ASSERT_EQ(r.per_step.size(), 3u);
    EXPECT_DOUBLE_EQ(r.per_step[0].step_time_ms, 100 * kUs);
}

// One step only: it is the measured one. Expect step_time = 40.
TEST(Metrics, SingleStepIsMeasured) {
    TestRun t(1);
    t.kernel(0, KernelClass::gemm, 0, 30);
    t.steps(0, {40});
    EXPECT_DOUBLE_EQ(computeMetrics(t.tl, t.wl, kPeak).step_time_ms, 40 * kUs);
}

// Rank 0 steps take 10, 10; rank 1 takes 10, 14. Expect step 1's time = max = 14; per-rank step times 10, 14.
TEST(Metrics, StepTimeIsTheSlowestRank) {
    TestRun t(2);
    t.steps(0, {10, 20});
    t.steps(1, {10, 24});
    const Results r = computeMetrics(t.tl, t.wl, kPeak);
    EXPECT_DOUBLE_EQ(r.step_time_ms, 14 * kUs);
    ASSERT_EQ(r.per_rank.size(), 2u);
    EXPECT_DOUBLE_EQ(r.per_rank[0].step_time_ms, 10 * kUs);
    EXPECT_DOUBLE_EQ(r.per_rank[1].step_time_ms, 14 * kUs);
}

// 2 ranks, step 10 ms, 4096 tokens and 2 samples per GPU per step, 5e12 model FLOPs per GPU per step,
// peak 1e15. Expect tokens/s per GPU 409600, total 819200, samples/s 400, MFU 5e12 / (0.01 · 1e15) = 0.5.
TEST(Metrics, ThroughputAndMfu) {
    TestRun t(2);
    t.steps(0, {10'000});
    t.steps(1, {10'000});
    t.wl.tokens_per_step = 4096;
    t.wl.samples_per_step = 2;
    t.wl.model_flops_per_step = 5e12;
    const Results r = computeMetrics(t.tl, t.wl, 1e15);
    EXPECT_DOUBLE_EQ(r.tokens_per_s_per_gpu, 409600.0);
    EXPECT_DOUBLE_EQ(r.tokens_per_s, 819200.0);
    EXPECT_DOUBLE_EQ(r.samples_per_s, 400.0);
    EXPECT_DOUBLE_EQ(r.mfu, 0.5);
}

// 4 ranks, one group; steps end at 100 and 3100. Step 1 has two all_reduces of 1e9 bytes: arrivals
// {100,101,102,103} run [103,1103) and arrivals {1110,1110,1111,1114} run [1114,2114); step 0 has one that
// must be ignored. Expect: count 2, bytes 2e9 per GPU; algbw = 2e9 B / 2000 µs = 1000 GB/s;
// busbw = 1000·2·3/4 = 1500; barrier wait mean (3 + 4)/2 = 3.5 µs, max 4 µs.
TEST(Metrics, CollectiveCountsBandwidthAndBarrierWait) {
    TestRun t(4);
    t.collective(CollectiveKind::all_reduce, 0, 5e8, 0, {0, 0, 0, 0}, 10);
    t.collective(CollectiveKind::all_reduce, 0, 1e9, 1, {100, 101, 102, 103}, 1103);
    t.collective(CollectiveKind::all_reduce, 0, 1e9, 1, {1110, 1110, 1111, 1114}, 2114);
    for (int r = 0; r < 4; ++r) t.steps(r, {100, 3100});
    const Results r = computeMetrics(t.tl, t.wl, kPeak);
    EXPECT_DOUBLE_EQ(r.collectives.count, 2.0);
    EXPECT_DOUBLE_EQ(r.collectives.bytes, 2e9);
    EXPECT_NEAR(r.collectives.algbw_GBps, 1000.0, 1e-9);
    EXPECT_NEAR(r.collectives.busbw_GBps, 1500.0, 1e-9);
    EXPECT_DOUBLE_EQ(r.collectives.barrier_wait_ms_mean, 3.5 * kUs);
    EXPECT_DOUBLE_EQ(r.collectives.barrier_wait_ms_max, 4 * kUs);
}

// 300 random spans (integer µs, overlapping, out of order, some crossing step ends) on 2 ranks, steps ending
// at 400, 700, 1000. Expect every per-step number to equal a brute-force count over 1-µs cells.
TEST(Metrics, AgreesWithBruteForceOnRandomSpans) {
    TestRun t(2);
    std::mt19937 g(7);
    std::uniform_int_distribution<int> start(0, 990), len(1, 60), kind(0, 2);
    std::array<std::array<bool, 1000>, 2> comp{}, comm{};  // [rank][1-µs cell]
    for (int i = 0; i < 300; ++i) {
        const int r = i % 2, a = start(g), b = std::min(1000, a + len(g)), k = kind(g);
        if (k == 2) {
            t.comm(r, a, b);
        } else {
            t.kernel(r, k == 0 ? KernelClass::gemm : KernelClass::copy, a, b);
        }
        for (int c = a; c < b; ++c) (k == 2 ? comm : comp)[r][c] = true;
    }
    for (int r = 0; r < 2; ++r) t.steps(r, {400, 700, 1000});
    const Results res = computeMetrics(t.tl, t.wl, kPeak);
    const std::array<int, 4> ends{0, 400, 700, 1000};
    for (int s = 0; s < 3; ++s) {
        double cp = 0, cm = 0, ov = 0, idle = 0;
        for (int r = 0; r < 2; ++r)
            for (int c = ends[s]; c < ends[s + 1]; ++c) {
                const bool x = comp[r][c], y = comm[r][c];
                cp += x;
                cm += y;
                ov += x && y;
                idle += !x && !y;
            }
        const StepResults& st = res.per_step[static_cast<std::size_t>(s)];
        EXPECT_NEAR(st.compute_busy_ms, cp / 2 * kUs, 1e-12) << s;
        EXPECT_NEAR(st.comm_busy_ms, cm / 2 * kUs, 1e-12) << s;
        EXPECT_NEAR(st.overlap_ms, ov / 2 * kUs, 1e-12) << s;
        EXPECT_NEAR(st.idle_ms, idle / 2 * kUs, 1e-12) << s;
    }
}

// The timeline's warnings are carried into the results.
TEST(Metrics, WarningsAreCarried) {
    TestRun t(1);
    t.steps(0, {10});
    t.tl.warnings = {"profile queried outside its measured domain"};
    EXPECT_EQ(computeMetrics(t.tl, t.wl, kPeak).warnings, t.tl.warnings);
}

// Ranks that finished different numbers of steps, or no step at all, are a program error.
TEST(Metrics, InconsistentStepsThrow) {
    TestRun t(2);
    t.steps(0, {10, 20});
    t.steps(1, {10});
    EXPECT_THROW(computeMetrics(t.tl, t.wl, kPeak), std::invalid_argument);
    TestRun none(1);
    EXPECT_THROW(computeMetrics(none.tl, none.wl, kPeak), std::invalid_argument);
}

// A step that ends before it began (the engine's 0 for a step that never finished) is an error, not a
// negative step time.
TEST(Metrics, UnfinishedStepThrows) {
    TestRun t(1);
    t.steps(0, {10, 0, 30});
    EXPECT_THROW(computeMetrics(t.tl, t.wl, kPeak), std::invalid_argument);
}

// peak_memory_gib is the caller's: computeMetrics leaves it empty.
TEST(Metrics, PeakMemoryLeftToTheCaller) {
    TestRun t(1);
    t.steps(0, {10});
    EXPECT_FALSE(computeMetrics(t.tl, t.wl, kPeak).peak_memory_gib.has_value());
}

}  // namespace
}  // namespace stepsim
