// The keys of DDP's options, PowerSGD and the optimizer: read when they mean something, refused (file, key, what was
// expected) where they would change nothing or PyTorch would refuse them.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scenario/ScenarioErrors.hpp"

namespace stepsim {
namespace {

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

TEST(DdpOptionKeys, PowerSgdKeysNeedTheHook) {
    EXPECT_THAT(errorOf(kBase + "ddp: {powersgd_rank: 2}\n"),
                HasSubstr("ddp.powersgd_rank: a PowerSGD setting without ddp.comm_hook: powersgd changes nothing"));
}

TEST(DdpOptionKeys, PowerSgdRefusesWhatPyTorchRefuses) {
    EXPECT_THAT(errorOf(kBase + "ddp: {comm_hook: powersgd, powersgd_start_iter: 1}\n"),
                HasSubstr("ddp.powersgd_start_iter: expected > 1 with powersgd_error_feedback"));
    EXPECT_THAT(errorOf(kBase + "ddp: {comm_hook: powersgd, powersgd_rank: 4}\n"),
                HasSubstr("torch.linalg.qr, not modelled"));
}

TEST(DdpOptionKeys, MomentumIsSgds) {
    EXPECT_THAT(errorOf(kBase + "training: {sgd_momentum: 0.9}\n"), HasSubstr("expected training.optimizer: sgd"));
    EXPECT_THAT(errorOf(kBase + "training: {optimizer: sgd, sgd_momentum: 1.5}\n"), HasSubstr("0 <= momentum < 1"));
}

TEST(DdpOptionKeys, DdpOptionsRefusedWithoutDdp) {
    EXPECT_THAT(errorOf(kBase + "parallel: {data: fsdp2}\nddp: {find_unused_parameters: true}\n"),
                HasSubstr("ddp.find_unused_parameters: a DDP setting with parallel.data other than ddp"));
    EXPECT_THAT(errorOf(kBase + "ddp: {duplicate_gradients: -1}\n"), HasSubstr("ddp.duplicate_gradients: expected 0"));
}

}  // namespace
}  // namespace stepsim
