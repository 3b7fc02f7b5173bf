// stepsim compare (sim/run/Compare.hpp, sim/report/CompareReport.hpp): the demo against itself compiled shows the
// numbers each side's own run gives, the difference, and a noise band over seeds.
#include <algorithm>
#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/report/CompareReport.hpp"
#include "sim/run/Compare.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {
namespace {

const CompareRow& row(const std::vector<CompareRow>& rows, const std::string& key) {
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const CompareRow& r) { return r.key == key; });
    if (it == rows.end()) throw std::runtime_error("no row " + key);
    return *it;
}

TEST(Compare, TheDemoAgainstItselfCompiledShowsEachSidesOwnRun) {
    const std::string file = std::string(STEPSIM_SOURCE_DIR) + "/scenarios/gpt-1p3b-ddp-8xh200.yaml";
    const Scenario a = loadScenario(file);
    const Scenario b = loadScenario(file, {"compile.enabled=true"});
    const HardwareProfile p = resolveProfile(a.cluster, file);
    const Comparison c = compareScenarios(a, p, a.name, b, p, b.name + " --set compile.enabled=true", 2, 0);
    const std::vector<CompareRow> rows = compareRows(c);
    const CompareRow& step = row(rows, "step_time_ms");
    EXPECT_NEAR(*step.a, 184.208, 5e-4);  // the README's demo
    // The table reads the JSON's numbers, 12 significant digits (JsonReport.hpp).
    EXPECT_NEAR(*step.a, simulate(a, p).results.step_time_ms, 1e-9);
    EXPECT_NEAR(*step.b, simulate(b, p).results.step_time_ms, 1e-9);
    EXPECT_DOUBLE_EQ(*step.diff, *step.b - *step.a);
    EXPECT_LT(*step.diff, 0.0);
    ASSERT_TRUE(step.band);
    EXPECT_GE(*step.band, 0.0);
    EXPECT_LT(*step.band, std::abs(*step.diff));  // compile's gain is above the jitter's
    EXPECT_EQ(c.settings_diff.at("compile.enabled"), (std::pair<std::string, std::string>{"false", "true"}));
    EXPECT_TRUE(row(rows, "compile_time_s").b);  // a key only one side has is still a row
    EXPECT_FALSE(row(rows, "compile_time_s").a);
    EXPECT_NO_THROW(row(rows, "breakdown_ms.compute.gemm"));
    EXPECT_THAT(compareText(c), ::testing::HasSubstr("step_time_ms"));
    EXPECT_THAT(compareCsv(c), ::testing::StartsWith("key,a,b,diff,diff_pct,noise_band\n"));
}

TEST(Compare, OneFileWithoutOverridesIsRefused) {
    const std::string cmd = std::string(STEPSIM_BINARY) + " compare " + STEPSIM_SOURCE_DIR +
                            "/scenarios/gpt-1p3b-ddp-8xh200.yaml >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    EXPECT_EQ(WEXITSTATUS(status), 2);
}

}  // namespace
}  // namespace stepsim
