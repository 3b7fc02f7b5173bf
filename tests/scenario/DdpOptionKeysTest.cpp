// The keys of DDP's options, PowerSGD and the optimizer: read when they mean something, a warning of the result where
// they change nothing (the key, its line and why), refused (file, key, what was expected) where PyTorch would refuse
// them.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scenario/ScenarioErrors.hpp"

namespace stepsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kBase = "stepsim: 1\nmodel: {layers: 2, hidden: 256, heads: 4}\ncluster: {gpus_per_node: 2}\n";

TEST(DdpOptionKeys, ReadWhenMeaningful) {
    EXPECT_EQ(errorOf(kBase + "ddp: {find_unused_parameters: true, static_graph: true, duplicate_gradients: 4}\n"), "");
    EXPECT_EQ(errorOf(kBase + "ddp: {comm_hook: powersgd, powersgd_rank: 2, powersgd_start_iter: 2}\n"), "");
    EXPECT_EQ(errorOf(kBase + "training: {optimizer: sgd, sgd_momentum: 0.9}\n"), "");
    EXPECT_EQ(errorOf(kBase + "training: {optimizer: adam}\n"), "");
    const Scenario sc = parseScenario(kBase + "ddp: {comm_hook: powersgd, powersgd_rank: 2, powersgd_start_iter: 5, "
                                              "powersgd_warm_start: false}\ntraining: {optimizer: adam}\n", "x.yaml");
    EXPECT_EQ(sc.ddp.powersgd_rank, 2);
    EXPECT_EQ(sc.ddp.powersgd_start_iter, 5);
    EXPECT_FALSE(sc.ddp.powersgd_warm_start);
    EXPECT_EQ(sc.training.optimizer, Optimizer::adam);
}

TEST(DdpOptionKeys, PowerSgdKeysWithoutTheHookHaveNoEffect) {
    const Scenario sc = parseScenario(kBase + "ddp: {powersgd_rank: 2}\n", "x.yaml");
    EXPECT_THAT(sc.warnings, ElementsAre("key ddp.powersgd_rank (x.yaml:4) has no effect with ddp.comm_hook: none "
                                         "(PowerSGD's settings apply to comm_hook: powersgd)"));
    EXPECT_EQ(sc.ddp.powersgd_rank, DdpSpec{}.powersgd_rank);  // run as without it
}

TEST(DdpOptionKeys, PowerSgdRefusesWhatPyTorchRefuses) {
    EXPECT_THAT(errorOf(kBase + "ddp: {comm_hook: powersgd, powersgd_start_iter: 1}\n"),
                HasSubstr("ddp.powersgd_start_iter: expected > 1 with powersgd_error_feedback"));
    EXPECT_THAT(errorOf(kBase + "ddp: {comm_hook: powersgd, powersgd_rank: 4}\n"),
                HasSubstr("torch.linalg.qr, not modelled"));
}

TEST(DdpOptionKeys, MomentumIsSgds) {
    EXPECT_THAT(warningsOf(kBase + "training: {sgd_momentum: 0.9}\n"),
                ElementsAre(HasSubstr("key training.sgd_momentum (x.yaml:4) has no effect with training.optimizer: adamw")));
    EXPECT_THAT(errorOf(kBase + "training: {optimizer: sgd, sgd_momentum: 1.5}\n"), HasSubstr("0 <= momentum < 1"));
}

TEST(DdpOptionKeys, DdpOptionsWithoutDdpHaveNoEffect) {
    EXPECT_THAT(warningsOf(kBase + "parallel: {data: fsdp2}\nddp: {find_unused_parameters: true}\n"),
                ElementsAre("key ddp.find_unused_parameters (x.yaml:5) has no effect with parallel.data: fsdp2 (DDP's "
                            "settings apply to parallel.data: ddp)"));
    EXPECT_THAT(errorOf(kBase + "ddp: {duplicate_gradients: -1}\n"), HasSubstr("ddp.duplicate_gradients: expected 0"));
}

// A strategy's own section (ddp, fsdp, zero) set away from its defaults under another strategy: a warning naming the
// key's line (or its --set) and the strategies that read it; the key is back at its default. At its defaults, no
// warning.
struct StrategyKeyCase {
    const char* data;     // parallel.data
    const char* section;
    const char* key;
    const char* value;
    const char* reads;    // the message's list of the strategies that read it
};

class StrategyKeyUnderAnotherStrategy : public ::testing::TestWithParam<StrategyKeyCase> {};

TEST_P(StrategyKeyUnderAnotherStrategy, HasNoEffectAndSaysWhere) {
    const StrategyKeyCase c = GetParam();
    const std::string head = kBase + "parallel: {data: " + c.data + "}\n" + c.section + ":\n";
    const std::string path = std::string(c.section) + "." + c.key;
    const std::vector<std::string> file = warningsOf(head + "  " + c.key + ": " + c.value + "\n");
    ASSERT_EQ(file.size(), 1u);
    EXPECT_THAT(file[0], ::testing::StartsWith("key " + path + " (x.yaml:6) has no effect with parallel.data: " +
                                               c.data));
    EXPECT_THAT(file[0], HasSubstr(c.reads));
    const std::vector<std::string> set = warningsOf(kBase + "parallel: {data: " + c.data + "}\n", {path + "=" + c.value});
    ASSERT_EQ(set.size(), 1u);
    EXPECT_THAT(set[0], HasSubstr("(--set " + path + ")"));
    // The run is the one without it.
    const Scenario with = parseScenario(head + "  " + c.key + ": " + c.value + "\n", "x.yaml");
    const Scenario without = parseScenario(kBase + "parallel: {data: " + std::string(c.data) + "}\n", "x.yaml");
    EXPECT_EQ(scenarioSettings(with), scenarioSettings(without));
}

INSTANTIATE_TEST_SUITE_P(
    DdpOptionKeys, StrategyKeyUnderAnotherStrategy,
    ::testing::Values(StrategyKeyCase{"fsdp2", "ddp", "bucket_cap_mb", "100", "parallel.data: ddp"},
                      StrategyKeyCase{"fsdp2", "ddp", "first_bucket_mb", "2", "parallel.data: ddp"},
                      StrategyKeyCase{"zero2", "ddp", "gradient_as_bucket_view", "true", "parallel.data: ddp"},
                      StrategyKeyCase{"fsdp1", "ddp", "static_graph", "true", "parallel.data: ddp"},
                      StrategyKeyCase{"fsdp2", "ddp", "comm_hook", "fp16_compress", "parallel.data: ddp"},
                      StrategyKeyCase{"fsdp2", "ddp", "duplicate_gradients", "4", "parallel.data: ddp"},
                      StrategyKeyCase{"ddp", "fsdp", "reshard_after_forward", "false", "fsdp1, fsdp2 and hsdp"},
                      StrategyKeyCase{"ddp", "fsdp", "backward_prefetch", "post", "fsdp1, fsdp2 and hsdp"},
                      StrategyKeyCase{"zero3", "fsdp", "forward_prefetch", "true", "fsdp1, fsdp2 and hsdp"},
                      StrategyKeyCase{"ddp", "fsdp", "limit_all_gathers", "false", "fsdp1, fsdp2 and hsdp"},
                      StrategyKeyCase{"ddp", "zero", "reduce_bucket_size", "1000", "zero1, zero2 and zero3"},
                      StrategyKeyCase{"fsdp2", "zero", "overlap_comm", "false", "zero1, zero2 and zero3"},
                      StrategyKeyCase{"zero2", "zero", "stage3_prefetch_bucket_size", "1000", "stage3_* keys to zero3"}));

TEST(DdpOptionKeys, StrategySectionsAtTheirDefaultsAreAccepted) {
    EXPECT_EQ(errorOf(kBase + "parallel: {data: fsdp2}\nddp: {bucket_cap_mb: 25, gradient_as_bucket_view: false}\n"), "");
    EXPECT_EQ(errorOf(kBase + "parallel: {data: ddp}\nfsdp: {reshard_after_forward: true}\n"), "");
}

TEST(DdpOptionKeys, EachStrategySectionNamesItsReaders) {
    EXPECT_EQ(strategiesReading("ddp.bucket_cap_mb"), std::vector<std::string_view>{"ddp"});
    EXPECT_EQ(strategiesReading("fsdp.limit_all_gathers"), std::vector<std::string_view>{"fsdp1"});
    EXPECT_EQ(strategiesReading("zero.stage3_max_reuse_distance"), std::vector<std::string_view>{"zero3"});
    EXPECT_EQ(strategiesReading("zero.overlap_comm").size(), 3u);
    EXPECT_TRUE(strategiesReading("training.micro_batch").empty());
}

}  // namespace
}  // namespace stepsim
