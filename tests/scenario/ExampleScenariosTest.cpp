// Every example scenario in scenarios/ loads with the loader and resolves its profile; the demo files hold
// what the README and the brief say they hold.
#include <filesystem>

#include <gtest/gtest.h>

#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "tests/scenario/ScenarioEquality.hpp"

namespace stepsim {
namespace {

const std::filesystem::path kScenarios = std::filesystem::path(STEPSIM_SOURCE_DIR) / "scenarios";

TEST(ExampleScenarios, EveryFileLoadsAndResolvesItsProfile) {
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kScenarios)) {
        if (entry.path().extension() != ".yaml") continue;
        SCOPED_TRACE(entry.path().string());
        const Scenario s = loadScenario(entry.path());
        EXPECT_EQ(s.name, entry.path().stem().string());
        EXPECT_NO_THROW(resolveProfile(s.cluster, s.source));
        ++count;
    }
    EXPECT_GE(count, 4);
}

TEST(ExampleScenarios, EveryFileExplainsToAnEqualScenario) {
    for (const auto& entry : std::filesystem::directory_iterator(kScenarios)) {
        if (entry.path().extension() != ".yaml") continue;
        SCOPED_TRACE(entry.path().string());
        const Scenario s = loadScenario(entry.path());
        expectSameScenario(parseScenario(explainScenario(s), s.source), s);
    }
}

TEST(ExampleScenarios, DemoIsGpt1p3bOnEightH200) {
    const Scenario s = loadScenario(kScenarios / "gpt-1p3b-ddp-8xh200.yaml");
    EXPECT_EQ(s.cluster.node, "hgx-h200");
    EXPECT_EQ(s.cluster.worldSize(), 8);
    EXPECT_EQ(s.model.layers, 24);
    EXPECT_EQ(s.model.hidden, 2048);
    EXPECT_EQ(s.model.heads, 16);
    EXPECT_EQ(ffnHidden(s.model), 8192);
    EXPECT_EQ(s.model.vocab, 50304);
    EXPECT_EQ(s.model.seq_len, 2048);
    EXPECT_EQ(s.training.micro_batch, 4);
    EXPECT_EQ(s.parallel.data, DataParallel::ddp);
    EXPECT_EQ(resolveProfile(s.cluster, s.source).name, "h200x2");
}

// The FSDP2 example trains the DDP demo's model on the same node, so `stepsim run` on both compares the strategies;
// the 13B one is sharded over two nodes.
TEST(ExampleScenarios, Fsdp2DemoIsTheDdpDemosModel) {
    const Scenario ddp = loadScenario(kScenarios / "gpt-1p3b-ddp-8xh200.yaml");
    const Scenario fsdp = loadScenario(kScenarios / "gpt-1p3b-fsdp2-8xh200.yaml");
    EXPECT_EQ(fsdp.parallel.data, DataParallel::fsdp2);
    EXPECT_EQ(fsdp.model.layers, ddp.model.layers);
    EXPECT_EQ(fsdp.model.hidden, ddp.model.hidden);
    EXPECT_EQ(fsdp.model.heads, ddp.model.heads);
    EXPECT_EQ(ffnHidden(fsdp.model), ffnHidden(ddp.model));
    EXPECT_EQ(fsdp.model.vocab, ddp.model.vocab);
    EXPECT_EQ(fsdp.model.seq_len, ddp.model.seq_len);
    EXPECT_EQ(fsdp.cluster.worldSize(), ddp.cluster.worldSize());
    EXPECT_EQ(fsdp.training.micro_batch, ddp.training.micro_batch);
    EXPECT_EQ(fsdp.fsdp.param_dtype, DType::bf16);
    const Scenario big = loadScenario(kScenarios / "gpt-13b-fsdp2-2x8xh200.yaml");
    EXPECT_EQ(big.parallel.data, DataParallel::fsdp2);
    EXPECT_EQ(big.cluster.worldSize(), 16);
    EXPECT_EQ(big.model.layers, 40);
    EXPECT_EQ(big.model.hidden, 5120);
}

TEST(ExampleScenarios, H100DemoUsesTheH100Profile) {
    const Scenario s = loadScenario(kScenarios / "gpt-1p3b-ddp-8xh100.yaml");
    EXPECT_EQ(s.cluster.node, "hgx-h100");
    EXPECT_EQ(resolveProfile(s.cluster, s.source).name, "h100-sxm-derived");
}

TEST(ExampleScenarios, Gpt350mRunsOnTwoGpus) {
    const Scenario s = loadScenario(kScenarios / "gpt-350m-ddp-2xh200.yaml");
    EXPECT_EQ(s.cluster.worldSize(), 2);
    EXPECT_EQ(s.model.hidden, 1024);
}

TEST(ExampleScenarios, LlamaUsesGroupedQueryAttentionAndSwiglu) {
    const Scenario s = loadScenario(kScenarios / "llama-1b-ddp-8xh200.yaml");
    EXPECT_EQ(s.model.heads, 32);
    EXPECT_EQ(kvHeads(s.model), 8);
    EXPECT_EQ(s.model.mlp, MlpKind::swiglu);
    EXPECT_EQ(s.model.norm, NormKind::rmsnorm);
    EXPECT_EQ(s.model.vocab, 128256);
}

}  // namespace
}  // namespace stepsim
