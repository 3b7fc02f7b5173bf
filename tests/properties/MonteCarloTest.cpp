// Monte Carlo over jitter and stragglers (sim.samples, jitter.stragglers): reproducible at any thread count, jitter off
// is the deterministic run, more jitter never shortens the expected step, a straggler holds every rank at its next
// collective.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/report/JsonReport.hpp"
#include "tests/properties/PropertyScenario.hpp"

namespace stepsim::properties {
namespace {

// The small scenario with the profile's noise on.
Scenario noisy(std::vector<std::string> overrides) {
    overrides.push_back("jitter.enabled=true");
    return smallScenario(overrides);
}

std::string json(const Simulation& s) { return toJson(s.results, "x").dump(); }

// The same seed gives the same results, bit for bit, on 1, 3 and 8 threads.
TEST(MonteCarlo, SameSeedSameResultsAtAnyThreadCount) {
    const Scenario sc = noisy({"sim.samples=6"});
    const HardwareProfile p = resolveProfile(sc.cluster, sc.source);
    const std::string one = json(simulate(sc, p, 1));
    EXPECT_EQ(json(simulate(sc, p, 3)), one);
    EXPECT_EQ(json(simulate(sc, p, 8)), one);
    EXPECT_NE(one.find("step_time_ms_p90"), std::string::npos);
    EXPECT_NE(one.find("overlap_windows"), std::string::npos);
}

// The samples are the single runs of their seeds: their mean step time is the Monte Carlo's mean.
TEST(MonteCarlo, SamplesAreTheRunsOfTheirSeedsOneByOne) {
    const Scenario sc = noisy({"sim.samples=4", "sim.seed=7"});
    const HardwareProfile p = resolveProfile(sc.cluster, sc.source);
    double sum = 0.0;
    for (int i = 0; i < 4; ++i) {
        Scenario one = sc;
        one.sim.samples = 1;
        one.sim.seed = sampleSeed(7, i);
        sum += simulate(one, p, 1).results.step_time_ms;
    }
    EXPECT_DOUBLE_EQ(simulate(sc, p, 4).results.step_time_ms, sum / 4);
    EXPECT_EQ(sampleSeed(7, 0), 7u);
    EXPECT_NE(sampleSeed(7, 1), sampleSeed(8, 0));
}

// With jitter off and no straggler every sample is the deterministic run: the same steps, so the percentiles are the
// deterministic run's step times (its two measured steps, 5 times each: p50 the shorter, p99 the longer), and every
// overlap window has no delay.
TEST(MonteCarlo, JitterOffIsTheDeterministicRun) {
    const Simulation det = simulateSmall();
    const Simulation mc = simulateSmall({"sim.samples=5"});
    ASSERT_TRUE(mc.results.step_time_ms_p50 && mc.results.step_time_ms_p99 && mc.results.step_time_ms_std);
    EXPECT_DOUBLE_EQ(mc.results.step_time_ms, det.results.step_time_ms);
    ASSERT_EQ(det.results.per_step.size(), 3u);
    const double a = det.results.per_step[1].step_time_ms, b = det.results.per_step[2].step_time_ms;
    EXPECT_DOUBLE_EQ(*mc.results.step_time_ms_p50, std::min(a, b));
    EXPECT_DOUBLE_EQ(*mc.results.step_time_ms_p99, std::max(a, b));
    for (std::size_t i = 0; i < 3; ++i)
        EXPECT_DOUBLE_EQ(mc.results.per_step[i].step_time_ms, det.results.per_step[i].step_time_ms);
    ASSERT_FALSE(mc.results.overlap_windows.empty());
    for (const OverlapWindow& w : mc.results.overlap_windows) {
        EXPECT_DOUBLE_EQ(w.delta_sync_us, 0.0);
        EXPECT_NEAR(w.delta_kernel_us, 0.0, 1e-6);
    }
}

// More jitter never shortens the expected step. The profile's noise scaled by 1 and by 3 (kernel, straggler, host
// launch and rank spreads); each mean over 24 samples' steps. The bound allows the doubled mean to fall below the
// single one by at most four standard errors of the difference (a false failure about once in 30000 seeds), on
// each of three seeds.
TEST(MonteCarlo, MoreJitterNeverShortensTheExpectedStep) {
    for (int seed : {1, 2, 3}) {
        const Scenario sc = noisy({"sim.samples=24", "sim.seed=" + std::to_string(seed)});
        const HardwareProfile base = resolveProfile(sc.cluster, sc.source);
        const auto stats = [&](double scale) {
            HardwareProfile p = base;
            p.jitter.kernel_cv *= scale;
            p.jitter.straggler_cv *= scale;
            p.jitter.host_rank_cv *= scale;
            p.jitter.device_compute_cv *= scale;
            p.launch.eager_host.p99_us =
                p.launch.eager_host.median_us * std::pow(p.launch.eager_host.p99_us / p.launch.eager_host.median_us, scale);
            const Results r = simulate(sc, p, 0).results;
            const double n = r.samples * (sc.sim.steps - 1);
            return std::pair{r.step_time_ms, *r.step_time_ms_std / std::sqrt(n)};
        };
        const auto [m1, se1] = stats(1.0);
        const auto [m3, se3] = stats(3.0);
        EXPECT_GE(m3, m1 - 4.0 * std::hypot(se1, se3)) << "seed " << seed;
    }
}

// One slow GPU (rank 1's kernels take twice as long, no noise) delays rank 0 too: at its next collective (the first
// gradient all-reduce waits for rank 1), so rank 0's steps are as long as rank 1's.
TEST(MonteCarlo, OneStragglerDelaysEveryRankAtItsNextCollective) {
    const Simulation base = simulateSmall();
    const Simulation slow = simulateSmall({"jitter.stragglers=[{target: gpu, ranks: [1], factor: 2.0}]"});
    ASSERT_EQ(slow.results.per_rank.size(), 2u);
    for (const RankResults& r : slow.results.per_rank)
        EXPECT_GT(r.step_time_ms, 1.5 * base.results.per_rank[std::size_t(r.rank)].step_time_ms) << "rank " << r.rank;
    // Rank 0 reached the first all-reduce of each step first and waited for rank 1 there.
    ASSERT_FALSE(slow.results.overlap_windows.empty());
    EXPECT_GT(slow.results.overlap_windows.front().delta_sync_us, 1000.0);
    EXPECT_GT(slow.results.collectives.barrier_wait_ms_mean, base.results.collectives.barrier_wait_ms_mean + 1.0);
}

// Stragglers drawn per step move the step from step to step; a host straggler slows a host-bound step, a link
// straggler the collectives.
TEST(MonteCarlo, DrawnAndOtherStragglersChangeTheStep) {
    const double base = stepMs();
    const Simulation drawn = simulateSmall({"sim.samples=8", "jitter.stragglers=[{target: rank, random: 1, factor: 1.3, cv: 0.2}]"});
    EXPECT_GT(drawn.results.step_time_ms, base * 1.05);
    EXPECT_GT(*drawn.results.step_time_ms_std, 0.0);
    EXPECT_GT(stepMs({"jitter.stragglers=[{target: link, ranks: [0], factor: 4}]"}), base);
    EXPECT_GT(stepMs({"jitter.stragglers=[{target: host, ranks: [0, 1], factor: 50}]"}), base);
}

}  // namespace
}  // namespace stepsim::properties

namespace stepsim::properties {
namespace {

// FSDP2's windows are its shards' reduce-scatters: the first to become ready has the rest of the backward to hide
// behind (W_ideal > 0), the last has none (W_ideal < 0, broken without any noise).
TEST(MonteCarlo, Fsdp2WindowsAreItsReduceScatters) {
    const Simulation s = simulateSmall({"parallel.data=fsdp2"});
    const auto& w = s.results.overlap_windows;
    ASSERT_GE(w.size(), 2u);
    for (const OverlapWindow& x : w) EXPECT_EQ(x.kind, "reduce_scatter");
    EXPECT_GT(w.front().w_ideal_us, 0.0);
    EXPECT_DOUBLE_EQ(w.front().break_probability, 0.0);
    EXPECT_LT(w.back().w_ideal_us, 0.0);
    EXPECT_DOUBLE_EQ(w.back().break_probability, 1.0);
}

}  // namespace
}  // namespace stepsim::properties
