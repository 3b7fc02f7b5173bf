// jitter.stragglers: read as docs/scenario.md shows, and each mistake an error naming file:line: key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/scenario/ScenarioLoader.hpp"
#include "tests/scenario/ScenarioEquality.hpp"
#include "tests/scenario/ScenarioErrors.hpp"

namespace stepsim {
namespace {

using ::testing::HasSubstr;

constexpr const char* kHead = "stepsim: 1\ncluster: {node: hgx-h200, gpus_per_node: 8}\nmodel: {layers: 2, hidden: 256}\n";

TEST(StragglerSyntax, ReadsFixedAndDrawnStragglers) {
    const Scenario s = parseScenario(std::string(kHead) +
                                         "jitter:\n"
                                         "  stragglers:\n"
                                         "    - {target: gpu, ranks: [3], factor: 1.5}\n"
                                         "    - {target: link, random: 2, factor: 1.2, cv: 0.1}\n",
                                     "x.yaml");
    ASSERT_EQ(s.jitter.stragglers.size(), 2u);
    EXPECT_EQ(s.jitter.stragglers[0].target, StragglerTarget::gpu);
    EXPECT_EQ(s.jitter.stragglers[0].ranks, std::vector<int>{3});
    EXPECT_DOUBLE_EQ(s.jitter.stragglers[0].factor, 1.5);
    EXPECT_EQ(s.jitter.stragglers[1].target, StragglerTarget::link);
    EXPECT_EQ(s.jitter.stragglers[1].random, 2);
    EXPECT_DOUBLE_EQ(s.jitter.stragglers[1].cv, 0.1);
    // `stepsim explain` writes them back as a file that reads to the same scenario.
    expectSameScenario(parseScenario(explainScenario(s), "x.yaml"), s);
}

TEST(StragglerSyntax, MistakesNameFileLineAndKey) {
    const std::string j = std::string(kHead) + "jitter:\n  stragglers:\n";
    EXPECT_THAT(errorOf(j + "    - {target: disk, ranks: [1]}\n"),
                HasSubstr("x.yaml:6: jitter.stragglers[0].target: expected one of gpu, host, rank, link"));
    EXPECT_THAT(errorOf(j + "    - {target: gpu, ranks: [8], factor: 2}\n"),
                HasSubstr("x.yaml:6: jitter.stragglers[0].ranks: expected ranks from 0 to 7 (the world size is 8), got 8"));
    EXPECT_THAT(errorOf(j + "    - {target: gpu, factor: 2}\n"),
                HasSubstr("jitter.stragglers[0]: expected either `ranks: [r, ...]` (fixed ranks) or `random: n`"));
    EXPECT_THAT(errorOf(j + "    - {target: gpu, ranks: [1], random: 1}\n"),
                HasSubstr("x.yaml:6: jitter.stragglers[0].random: expected either"));
    EXPECT_THAT(errorOf(j + "    - {target: gpu, ranks: [1], factor: 0}\n"),
                HasSubstr("x.yaml:6: jitter.stragglers[0].factor: expected a positive slowdown factor"));
    EXPECT_THAT(errorOf(j + "    - {target: gpu, ranks: [1], cv: -1}\n"),
                HasSubstr("x.yaml:6: jitter.stragglers[0].cv: expected 0 (a fixed factor)"));
    EXPECT_THAT(errorOf(j + "    - {target: gpu, ranks: [1], factor: 1e9}\n"),
                HasSubstr("x.yaml:6: jitter.stragglers[0].factor: expected a positive slowdown factor up to 1000"));
    EXPECT_THAT(errorOf(j + "    - {target: gpu, rank: [1]}\n"), HasSubstr("x.yaml:6: jitter.stragglers[0].rank: unknown key"));
    EXPECT_THAT(errorOf(std::string(kHead) + "jitter: {stragglers: 3}\n"),
                HasSubstr("x.yaml:4: jitter.stragglers: expected a list of mappings"));
}

}  // namespace
}  // namespace stepsim
