// The `sweep:` section reader: axes, linked keys, points, constraints and objective; each mistake names the file,
// the line and the key.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/scenario/SweepYaml.hpp"

namespace stepsim {
namespace {

using ::testing::HasSubstr;

const std::string kBase = R"(stepsim: 1
name: s
cluster: {node: hgx-h200, nodes: 1, gpus_per_node: 2}
model: {type: transformer, layers: 2, hidden: 512, heads: 8, vocab: 1024, seq_len: 256}
training: {micro_batch: 2}
)";

std::filesystem::path write(const std::string& text) {
    const auto p = std::filesystem::temp_directory_path() /
                   ("sweep-yaml-" + std::to_string(std::hash<std::string>{}(text)) + ".yaml");
    std::ofstream(p) << text;
    return p;
}

std::string errorOf(const std::string& sweep) {
    try {
        loadSweepSpec(write(kBase + sweep));
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(SweepYaml, ReadsGridLinkedPointsConstraintsAndObjective) {
    const SweepSpec s = loadSweepSpec(write(kBase + R"(sweep:
  grid: {ddp.bucket_cap_mb: [1, 5], parallel.data: [ddp, fsdp2]}
  linked: [{training.micro_batch: [1, 2], training.grad_accum: [2, 1]}]
  points: [{compile.enabled: true}]
  random: {samples: 3, seed: 7}
  objective: cost_per_token
  gpu_hour_usd: 2.5
  constraints: [fits_memory, {global_batch: 4}]
)"));
    ASSERT_EQ(s.dimensions.size(), 3u);
    EXPECT_EQ(s.dimensions[0].keys, std::vector<std::string>{"ddp.bucket_cap_mb"});
    EXPECT_EQ(s.dimensions[1].values, (std::vector<std::vector<std::string>>{{"ddp"}, {"fsdp2"}}));
    EXPECT_EQ(s.dimensions[2].keys, (std::vector<std::string>{"training.micro_batch", "training.grad_accum"}));
    EXPECT_EQ(s.dimensions[2].values, (std::vector<std::vector<std::string>>{{"1", "2"}, {"2", "1"}}));
    ASSERT_EQ(s.points.size(), 1u);
    EXPECT_EQ(s.points[0], (std::vector<SweepSetting>{{"compile.enabled", "true"}}));
    EXPECT_EQ(s.random_samples, 3);
    EXPECT_EQ(s.random_seed, 7u);
    EXPECT_EQ(s.objective, "cost_per_token");
    EXPECT_EQ(s.gpu_hour_usd, 2.5);
    EXPECT_TRUE(s.fits_memory);
    EXPECT_EQ(s.global_batch, 4);
}

TEST(SweepYaml, UnknownKeyPathNamesLineAndSuggests) {
    const std::string e = errorOf("sweep:\n  grid:\n    ddp.bucket_cap: [1, 5]\n");
    EXPECT_THAT(e, HasSubstr(":8: sweep.grid.ddp.bucket_cap"));
    EXPECT_THAT(e, HasSubstr("did you mean ddp.bucket_cap_mb?"));
}

TEST(SweepYaml, ValueTheSchemaRefusesNamesItsItem) {
    const std::string e = errorOf("sweep:\n  grid:\n    training.micro_batch: [1, 0]\n");
    EXPECT_THAT(e, HasSubstr("sweep.grid.training.micro_batch[1]"));
    EXPECT_THAT(e, HasSubstr("positive integer"));
}

TEST(SweepYaml, UnmodelledValueIsAcceptedHere) {
    // compile.enabled: true is valid schema; the sweep records the point as infeasible instead of failing here.
    EXPECT_EQ(errorOf("sweep:\n  grid: {compile.enabled: [false, true]}\n"), "");
}

TEST(SweepYaml, LinkedListsOfUnequalLengthAreRefused) {
    EXPECT_THAT(errorOf("sweep:\n  linked: [{training.micro_batch: [1, 2], training.grad_accum: [1]}]\n"),
                HasSubstr("expected 2 values, as many as training.micro_batch has"));
}

TEST(SweepYaml, UnknownSectionKeyAndBadConstraint) {
    EXPECT_THAT(errorOf("sweep:\n  grid: {ddp.bucket_cap_mb: [1]}\n  objectve: mfu\n"),
                HasSubstr("did you mean objective?"));
    EXPECT_THAT(errorOf("sweep:\n  grid: {ddp.bucket_cap_mb: [1]}\n  constraints: [fast]\n"),
                HasSubstr("sweep.constraints[0]: expected fits_memory or {global_batch: N}"));
    EXPECT_THAT(errorOf("sweep:\n  grid: {ddp.bucket_cap_mb: [1]}\n  objective: cost_per_token\n"),
                HasSubstr("gpu_hour_usd"));
    EXPECT_THAT(errorOf("sweep:\n  grid: {ddp.bucket_cap_mb: [1, 1]}\n"), HasSubstr("duplicate value 1"));
    EXPECT_THAT(errorOf("sweep: {}\n"), HasSubstr("nothing to vary"));
}

TEST(SweepYaml, AFileWithoutASweepSectionIsRefused) {
    EXPECT_THAT(errorOf(""), HasSubstr("sweep: missing"));
}

TEST(SweepYaml, TheScenarioLoaderReadsASweepFileAsItsBaseScenario) {
    const auto file = write(kBase + "sweep:\n  grid: {ddp.bucket_cap_mb: [1, 5]}\n");
    EXPECT_TRUE(hasSweepSection(file));
    const Scenario s = loadScenario(file);
    EXPECT_EQ(s.training.micro_batch, 2);
    EXPECT_FALSE(hasSweepSection(write(kBase)));
}

}  // namespace
}  // namespace stepsim
