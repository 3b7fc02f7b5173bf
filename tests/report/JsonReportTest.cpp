// toJson: the stable result keys of docs/scenario.md, deterministic text.
#include "sim/report/JsonReport.hpp"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/metrics/Metrics.hpp"
#include "tests/metrics/TestTimeline.hpp"

namespace stepsim {
namespace {

Results someResults() {
    test::TestRun t(2);
    for (int r = 0; r < 2; ++r) {
        t.kernel(r, KernelClass::gemm, 0, 10, 0);
        t.kernel(r, KernelClass::gemm, 20, 27, 1);
        t.kernel(r, KernelClass::copy, 27, 29, 1);
        t.steps(r, {15, 40 + r});
    }
    t.collective(CollectiveKind::all_reduce, 0, 3e6, 1, {25, 26}, 35);
    t.wl.tokens_per_step = 8192;
    t.wl.samples_per_step = 4;
    t.wl.model_flops_per_step = 1e11;
    t.tl.warnings = {"a warning"};
    Results r = computeMetrics(t.tl, t.wl, 989e12);
    r.peak_memory_gib = 17.25;
    return r;
}

std::vector<std::string> keys(const nlohmann::ordered_json& j) {
    std::vector<std::string> k;
    for (const auto& [key, value] : j.items()) k.push_back(key);
    return k;
}

// Expect exactly, in this order: docs/scenario.md's keys with the documented additions.
TEST(JsonReport, HasExactlyTheStableKeys) {
    const auto j = toJson(someResults(), "demo");
    EXPECT_EQ(keys(j), (std::vector<std::string>{
                           "name", "step_time_ms", "tokens_per_s", "tokens_per_s_per_gpu", "samples_per_s", "mfu",
                           "compute_busy_ms", "copy_busy_ms", "comm_busy_ms", "overlap_ms", "overlap_ratio",
                           "exposed_comm_ms", "idle_ms", "gpu_busy_pct", "kernel_gap_us_mean", "sm_clock_mhz", "collectives",
                           "kernels_per_step", "peak_memory_gib", "breakdown_ms", "warnings", "per_rank", "per_step"}));
    EXPECT_EQ(keys(j["collectives"]), (std::vector<std::string>{"count", "bytes", "algbw_GBps", "busbw_GBps",
                                                                "barrier_wait_ms_mean", "barrier_wait_ms_max"}));
    EXPECT_EQ(keys(j["per_rank"][0]),
              (std::vector<std::string>{"rank", "step_time_ms", "compute_busy_ms", "copy_busy_ms", "comm_busy_ms",
                                        "overlap_ms", "overlap_ratio", "exposed_comm_ms", "idle_ms"}));
    EXPECT_EQ(keys(j["per_step"][0]), (std::vector<std::string>{"step", "step_time_ms", "compute_busy_ms",
                                                                "comm_busy_ms", "overlap_ms", "exposed_comm_ms",
                                                                "idle_ms"}));
    EXPECT_EQ(j["per_rank"].size(), 2u);
    EXPECT_EQ(j["per_step"].size(), 2u);
    EXPECT_EQ(j["warnings"], nlohmann::ordered_json::array({"a warning"}));
    EXPECT_DOUBLE_EQ(j["peak_memory_gib"].get<double>(), 17.25);
}

// Two independent runs from the same inputs give byte-identical text.
TEST(JsonReport, ByteIdenticalOnTwoRuns) {
    const std::string a = toJson(someResults(), "demo").dump(2);
    const std::string b = toJson(someResults(), "demo").dump(2);
    EXPECT_EQ(a, b);
}

// With Monte-Carlo samples: samples, step_time_ms_p50 and _p99 follow step_time_ms.
TEST(JsonReport, PercentileKeysOnlyWithSamples) {
    Results r = someResults();
    Results s = r;
    s.step_time_ms *= 1.1;
    const auto j = toJson(aggregateSamples({r, s, r}), "demo");
    const auto k = keys(j);
    ASSERT_GE(k.size(), 5u);
    EXPECT_EQ((std::vector<std::string>(k.begin(), k.begin() + 5)),
              (std::vector<std::string>{"name", "step_time_ms", "samples", "step_time_ms_p50", "step_time_ms_p99"}));
    EXPECT_EQ(j["samples"], 3);
}

// A host-bound step's range (Simulation::host_range_ms) follows the step time, only when there is one.
TEST(JsonReport, HostRangeOnlyForAHostBoundStep) {
    Results r = someResults();
    EXPECT_FALSE(toJson(r, "demo").contains("step_time_ms_host_range"));
    r.step_time_ms_host_range = std::pair{11.25, 38.75};
    const auto j = toJson(r, "demo");
    const auto k = keys(j);
    ASSERT_GE(k.size(), 3u);
    EXPECT_EQ(k[2], "step_time_ms_host_range");
    EXPECT_EQ(j["step_time_ms_host_range"], nlohmann::ordered_json::array({11.25, 38.75}));
}

// Numbers have 12 significant digits: 0.1 + 0.2 prints as 0.3; 1/3 as 0.333333333333.
TEST(JsonReport, NumbersRoundedToTwelveDigits) {
    Results r = someResults();
    r.step_time_ms = 0.1 + 0.2;
    r.mfu = 1.0 / 3.0;
    const std::string s = toJson(r, "demo").dump();
    EXPECT_NE(s.find(R"("step_time_ms":0.3,)"), std::string::npos) << s;
    EXPECT_NE(s.find(R"("mfu":0.333333333333,)"), std::string::npos) << s;
}

// Peak memory not computed is null, not a made-up number.
TEST(JsonReport, MissingPeakMemoryIsNull) {
    Results r = someResults();
    r.peak_memory_gib.reset();
    EXPECT_TRUE(toJson(r, "demo")["peak_memory_gib"].is_null());
}

}  // namespace
}  // namespace stepsim
