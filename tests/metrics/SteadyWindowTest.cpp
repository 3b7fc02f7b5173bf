// The measured window (Metrics.hpp's steadyWindow) on hand-built step ends: the steps whose GPU ran on its host's head
// start are left out, and a run that ends inside the head start says how many more steps it needs.
#include "sim/metrics/Metrics.hpp"

#include <gtest/gtest.h>

#include "tests/metrics/TestTimeline.hpp"

namespace stepsim {
namespace {

using test::kUs;
using test::TestRun;

// One rank: its GPU's step ends and its host's (µs).
TestRun run(const std::vector<std::int64_t>& gpu, const std::vector<std::int64_t>& host) {
    TestRun t(1);
    t.steps(0, gpu);
    t.tl.host_step_end.assign(1, {});
    for (std::int64_t h : host) t.tl.host_step_end[0].push_back(Time::us(h));
    return t;
}

// GPU-bound: the GPU trails its host more every step (leads 9, 18, 27, 36): every step after the first is measured.
TEST(SteadyWindow, AGpuBoundRunIsMeasuredFromStepOne) {
    const TestRun t = run({10, 20, 30, 40}, {1, 2, 3, 4});
    const SteadyWindow w = steadyWindow(t.tl);
    EXPECT_EQ(w.first, 1);
    EXPECT_EQ(w.steps_to_steady, 0);
}

// Host-bound, the host issuing a step every 10 µs: the GPU's lead of 6 µs after step 0 shrinks to 3 and then 1 and stays.
// Steps 1 and 2 (7 and 8 µs) ran on the head start; the measured steps 3 and 4 take the host's 10 µs.
TEST(SteadyWindow, TheHeadStartStepsOfAHostBoundRunAreLeftOut) {
    const TestRun t = run({16, 23, 31, 41, 51}, {10, 20, 30, 40, 50});
    const SteadyWindow w = steadyWindow(t.tl);
    EXPECT_EQ(w.first, 3);
    EXPECT_EQ(w.steps_to_steady, 0);
    const Results r = computeMetrics(t.tl, t.wl, 1e15);
    EXPECT_EQ(r.measured_from_step, 3);
    EXPECT_DOUBLE_EQ(r.step_time_ms, 10 * kUs);
}

// The lead shrinks at every step up to the last (8, 4, 0.5 µs): the run ended inside the head start, and at the last
// step's rate (3.5 µs a step) the 0.5 µs left vanish within one more step.
TEST(SteadyWindow, ARunEndingInTheHeadStartSaysHowManyStepsItNeeds) {
    TestRun t(1);
    t.tl.step_end.assign(1, {Time::us(18), Time::us(24), Time::ps(30'500'000)});
    t.tl.host_step_end.assign(1, {Time::us(10), Time::us(20), Time::us(30)});
    const SteadyWindow w = steadyWindow(t.tl);
    EXPECT_EQ(w.first, 2);
    EXPECT_EQ(w.steps_to_steady, 1);
}

// A lead that shrinks by less than kSteadyTolerance of a step per step is steady: the window it reads is within that of
// the host's period. Here it shrinks by 0.05 µs a step against a tolerance of 0.1 µs (1% of 10 µs).
TEST(SteadyWindow, ALeadShrinkingWithinTheToleranceIsSteady) {
    TestRun t(1);
    t.tl.step_end.assign(1, {Time::ps(15'000'000), Time::ps(24'950'000), Time::ps(34'900'000)});
    t.tl.host_step_end.assign(1, {Time::us(10), Time::us(20), Time::us(30)});
    EXPECT_EQ(steadyWindow(t.tl).first, 1);
    EXPECT_EQ(steadyWindow(t.tl).steps_to_steady, 0);
}

// On two ranks a step ran on the head start when it did on either: here rank 1's lead shrinks in step 1.
TEST(SteadyWindow, AnyRanksHeadStartCounts) {
    TestRun t(2);
    t.steps(0, {20, 40, 60, 80});
    t.steps(1, {26, 40, 60, 80});
    t.tl.host_step_end.assign(2, {});
    for (std::int64_t h : {10, 20, 30, 40}) t.tl.host_step_end[0].push_back(Time::us(h));
    for (std::int64_t h : {15, 30, 45, 60}) t.tl.host_step_end[1].push_back(Time::us(h));
    EXPECT_EQ(steadyWindow(t.tl).first, 2);
}

// Without the hosts' step ends (a timeline built by hand) the steps after the first are measured; one step is
// measured alone.
TEST(SteadyWindow, WithoutHostStepEndsStepOneOn) {
    TestRun t(1);
    t.steps(0, {16, 23, 31});
    EXPECT_EQ(steadyWindow(t.tl).first, 1);
    TestRun one(1);
    one.steps(0, {16});
    EXPECT_EQ(steadyWindow(one.tl).first, 0);
}

// A host-bound rank saving a checkpoint every 3 steps (in the windows of steps 3 and 6): each blocking save drains
// the GPU, so the lead of 2 µs drops to 0 there. That is no head start: every step after the first is measured,
// checkpoints included, as whole intervals (2 of 3 steps).
TEST(SteadyWindow, ACheckpointThatDrainsTheGpuIsNoHeadStart) {
    const TestRun t = run({12, 22, 32, 130, 142, 152, 250}, {10, 20, 30, 130, 140, 150, 250});
    const SteadyWindow w = steadyWindow(t.tl, 3);
    EXPECT_EQ(w.first, 1);
    EXPECT_EQ(w.steps_to_steady, 0);
    TestRun with = t;
    with.wl.checkpoint_interval = 3;
    const Results r = computeMetrics(with.tl, with.wl, 1e15);
    EXPECT_EQ(r.measured_from_step, 1);
    EXPECT_NEAR(r.step_time_ms, (250 - 12) / 6.0 * kUs, 1e-12);
}

// The measured steps are whole checkpoint intervals, the last ones: of 8 steps with a save every 3, steps 2 to 7
// (the saves of steps 3 and 6 and four steps without).
TEST(SteadyWindow, TheMeasuredStepsAreWholeCheckpointIntervals) {
    TestRun t(1);
    t.steps(0, {10, 20, 30, 130, 140, 150, 250, 260});
    EXPECT_EQ(steadyWindow(t.tl, 3).first, 2);
    EXPECT_EQ(steadyWindow(t.tl, 0).first, 1);
    // Fewer steady steps than an interval: the last interval is measured and the run asks for the steps it lacks.
    const TestRun late = run({16, 23, 31, 41, 51}, {10, 20, 30, 40, 50});  // steady from step 3
    const SteadyWindow w = steadyWindow(late.tl, 4);
    EXPECT_EQ(w.first, 1);
    EXPECT_EQ(w.steps_to_steady, 2);
}

}  // namespace
}  // namespace stepsim
