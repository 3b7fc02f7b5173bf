// aggregateSamples: Monte-Carlo samples → means and nearest-rank percentiles of the step time.
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "sim/metrics/Metrics.hpp"

namespace stepsim {
namespace {

Results sample(double step_ms, double mfu) {
    Results r;
    r.step_time_ms = step_ms;
    r.mfu = mfu;
    r.per_rank = {RankResults{0, step_ms, 1.0, 0.0, 2.0, 0.5, 0.25, 1.5, 0.0}};
    r.per_step = {StepResults{0, 2 * step_ms, 0, 0, 0, 0, 0}, StepResults{1, step_ms, 0, 0, 0, 0, 0}};
    return r;
}

// Step times 1..10 in shuffled order. Nearest rank: p50 = x(⌈5⌉) = 5, p99 = x(⌈9.9⌉) = 10; mean 5.5.
TEST(AggregateSamples, NearestRankPercentilesOfAKnownList) {
    std::vector<Results> s;
    for (double v : {7.0, 3.0, 10.0, 1.0, 5.0, 9.0, 2.0, 8.0, 4.0, 6.0}) s.push_back(sample(v, 0.4));
    const Results a = aggregateSamples(s);
    ASSERT_TRUE(a.step_time_ms_p50 && a.step_time_ms_p99);
    EXPECT_DOUBLE_EQ(*a.step_time_ms_p50, 5.0);
    EXPECT_DOUBLE_EQ(*a.step_time_ms_p99, 10.0);
    EXPECT_DOUBLE_EQ(a.step_time_ms, 5.5);
    EXPECT_EQ(a.samples, 10);
}

// 1..100: p99 = x(99) = 99, p50 = x(50) = 50 (the nearest-rank value is always a sample).
TEST(AggregateSamples, PercentileRankIsExactForWholeProducts) {
    std::vector<double> v;
    for (int i = 100; i >= 1; --i) v.push_back(i);
    EXPECT_DOUBLE_EQ(nearestRankPercentile(v, 99.0), 99.0);
    EXPECT_DOUBLE_EQ(nearestRankPercentile(v, 50.0), 50.0);
    EXPECT_DOUBLE_EQ(nearestRankPercentile(v, 100.0), 100.0);
}

// Every number is the mean: mfu (0.2, 0.4) → 0.3; per_rank and per_step element by element.
TEST(AggregateSamples, MeansOfEveryField) {
    const Results a = aggregateSamples({sample(10.0, 0.2), sample(20.0, 0.4)});
    EXPECT_DOUBLE_EQ(a.mfu, 0.3);
    ASSERT_EQ(a.per_rank.size(), 1u);
    EXPECT_DOUBLE_EQ(a.per_rank[0].step_time_ms, 15.0);
    EXPECT_DOUBLE_EQ(a.per_rank[0].comm_busy_ms, 2.0);
    ASSERT_EQ(a.per_step.size(), 2u);
    EXPECT_DOUBLE_EQ(a.per_step[0].step_time_ms, 30.0);
}

// Warnings of all samples, each once, in first-seen order; peak memory the mean of those that have it.
TEST(AggregateSamples, MergesWarningsAndPeakMemory) {
    Results a = sample(1.0, 0.1), b = sample(1.0, 0.1);
    a.warnings = {"x", "y"};
    b.warnings = {"y", "z"};
    a.peak_memory_gib = 40.0;
    b.peak_memory_gib = 42.0;
    const Results m = aggregateSamples({a, b});
    EXPECT_EQ(m.warnings, (std::vector<std::string>{"x", "y", "z"}));
    ASSERT_TRUE(m.peak_memory_gib);
    EXPECT_DOUBLE_EQ(*m.peak_memory_gib, 41.0);
}

// One sample is returned as is (no percentiles); none, or samples of different shape, throw.
TEST(AggregateSamples, SingleSampleUnchangedAndBadInputThrows) {
    const Results one = aggregateSamples({sample(3.0, 0.1)});
    EXPECT_DOUBLE_EQ(one.step_time_ms, 3.0);
    EXPECT_FALSE(one.step_time_ms_p50.has_value());
    EXPECT_THROW(aggregateSamples({}), std::invalid_argument);
    Results odd = sample(1.0, 0.1);
    odd.per_rank.clear();
    EXPECT_THROW(aggregateSamples({sample(1.0, 0.1), odd}), std::invalid_argument);
}

}  // namespace
}  // namespace stepsim
