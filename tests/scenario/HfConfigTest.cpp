// model.hf_config: the published configs in scenarios/hf/ set every model key and implementation: hf; the scenario's
// own keys win with a warning; what is not modelled is refused naming the file and the entry.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::filesystem::path kHf = std::filesystem::path(STEPSIM_SOURCE_DIR) / "scenarios/hf";

// A one-GPU scenario beside the configs (so hf_config resolves), `model` its model section's extra lines.
Scenario load(const std::string& config, const std::string& model = "", const std::vector<std::string>& sets = {}) {
    const std::string yaml = "stepsim: 1\ncluster: {node: hgx-h200, gpus_per_node: 1}\nmodel:\n  hf_config: " + config +
                             "\n" + model + "training: {micro_batch: 1}\n";
    return parseScenario(yaml, (kHf / "test.yaml").string(), sets);
}

std::string errorOf(const std::string& config, const std::string& model = "") {
    try {
        load(config, model);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(HfConfig, Gpt2SetsConv1dBiasesTiedHeadGeluNewAndDropout) {
    const ModelSpec m = load("gpt2.config.json").model;
    EXPECT_EQ(m.implementation, ModelImplementation::hf);
    EXPECT_EQ(m.layers, 12);
    EXPECT_EQ(m.hidden, 768);
    EXPECT_EQ(m.heads, 12);
    EXPECT_EQ(kvHeads(m), 12);
    EXPECT_EQ(ffnHidden(m), 3072);
    EXPECT_EQ(m.vocab, 50257);  // unpadded
    EXPECT_EQ(m.seq_len, 1024);  // n_positions: the scenario sets none
    EXPECT_EQ(m.mlp, MlpKind::gelu);
    EXPECT_EQ(m.norm, NormKind::layernorm);
    EXPECT_EQ(m.position_embedding, PositionEmbedding::learned);
    EXPECT_EQ(m.qkv, QkvLayout::fused);
    EXPECT_TRUE(m.linear_bias);
    EXPECT_TRUE(m.tied_embeddings);
    EXPECT_DOUBLE_EQ(m.dropout, 0.1);
    EXPECT_EQ(m.loss_dtype, LossDtype::fp32);
    EXPECT_TRUE(m.hf_overrides.empty());
}

TEST(HfConfig, LlamaQwenMistralGemmaPhi3) {
    const ModelSpec llama = load("llama-3.2-1b.config.json", "  seq_len: 2048\n").model;
    EXPECT_EQ(llama.layers, 16);
    EXPECT_EQ(llama.hidden, 2048);
    EXPECT_EQ(llama.heads, 32);
    EXPECT_EQ(kvHeads(llama), 8);
    EXPECT_EQ(ffnHidden(llama), 8192);
    EXPECT_EQ(llama.vocab, 128256);
    EXPECT_EQ(llama.seq_len, 2048);  // the scenario's, not max_position_embeddings
    EXPECT_TRUE(llama.tied_embeddings);
    EXPECT_EQ(llama.mlp, MlpKind::swiglu);
    EXPECT_EQ(llama.norm, NormKind::rmsnorm);
    EXPECT_EQ(llama.position_embedding, PositionEmbedding::rope);
    EXPECT_EQ(llama.qkv, QkvLayout::separate);
    EXPECT_FALSE(llama.linear_bias);
    EXPECT_FALSE(llama.qkv_bias);
    EXPECT_FALSE(llama.head_dim.has_value());  // 64 = 2048 / 32

    const ModelSpec qwen = load("qwen2.5-0.5b.config.json", "  seq_len: 2048\n").model;
    EXPECT_TRUE(qwen.qkv_bias);
    EXPECT_FALSE(qwen.linear_bias);
    EXPECT_EQ(kvHeads(qwen), 2);
    EXPECT_EQ(qwen.vocab, 151936);
    EXPECT_TRUE(qwen.tied_embeddings);

    const ModelSpec mistral = load("mistral-7b-v0.1.config.json", "  seq_len: 2048\n").model;
    EXPECT_EQ(mistral.layers, 32);
    EXPECT_EQ(ffnHidden(mistral), 14336);
    EXPECT_FALSE(mistral.tied_embeddings);

    const ModelSpec gemma = load("gemma-2b.config.json", "  seq_len: 2048\n").model;
    EXPECT_EQ(gemma.mlp, MlpKind::geglu);
    EXPECT_TRUE(gemma.embedding_scale);
    EXPECT_TRUE(gemma.tied_embeddings);
    EXPECT_EQ(headDim(gemma), 256);
    EXPECT_EQ(kvHeads(gemma), 1);

    const ModelSpec phi = load("phi-3-mini-4k.config.json", "  seq_len: 2040\n").model;
    EXPECT_TRUE(phi.fused_gate_up);
    EXPECT_EQ(phi.qkv, QkvLayout::fused);
    EXPECT_EQ(phi.vocab, 32064);
    EXPECT_DOUBLE_EQ(phi.dropout, 0.0);
}

// The scenario's value wins, with a warning naming both; an equal value warns nothing.
TEST(HfConfig, TheScenarioWinsWithAWarningNamingBoth) {
    const ModelSpec m = load("llama-3.2-1b.config.json", "  seq_len: 2048\n  layers: 4\n  hidden: 2048\n").model;
    EXPECT_EQ(m.layers, 4);
    ASSERT_EQ(m.hf_overrides.size(), 1u);
    EXPECT_THAT(m.hf_overrides[0], AllOf(StartsWith("model.layers: 4 from the scenario replaces 16 from model.hf_config"),
                                         HasSubstr("llama-3.2-1b.config.json")));
    const ModelSpec s = load("gpt2.config.json", "", {"model.dropout=0"}).model;
    EXPECT_DOUBLE_EQ(s.dropout, 0.0);
    ASSERT_EQ(s.hf_overrides.size(), 1u);
    EXPECT_THAT(s.hf_overrides[0], StartsWith("model.dropout: 0 from the scenario replaces 0.1"));
}

TEST(HfConfig, WhatIsNotModelledIsRefusedNamingTheEntry) {
    EXPECT_THAT(errorOf("mixtral-8x7b-v0.1.config.json", "  seq_len: 2048\n"),
                AllOf(HasSubstr("mixtral-8x7b-v0.1.config.json: architectures: MixtralForCausalLM is not modelled"),
                      HasSubstr("mixture of experts")));
    // Phi-3 mini's 2047-token window at 2048 tokens: SDPA would take a mask.
    EXPECT_THAT(errorOf("phi-3-mini-4k.config.json", "  seq_len: 2048\n"),
                AllOf(HasSubstr("phi-3-mini-4k.config.json: sliding_window: a sliding window of 2047 tokens"),
                      HasSubstr("not modelled yet")));
    EXPECT_THAT(errorOf("missing.config.json"), HasSubstr("model.hf_config: cannot open"));
    try {
        load("gpt2.config.json", "", {"fp8.enabled=true"});
        ADD_FAILURE() << "GPT-2 with FP8 linears read";
    } catch (const InputError& e) {
        EXPECT_THAT(e.what(), HasSubstr("FP8 linears on GPT2LMHeadModel are not modelled yet"));
    }
    EXPECT_THAT(errorOf("gpt2.config.json", "  implementation: nanogpt\n"),
                HasSubstr("model.implementation: nanogpt's kernel sequence is not modelled yet"));
    const auto dir = std::filesystem::temp_directory_path() / "stepsim-hf-config-test";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "half-dropout.json")
        << R"({"architectures": ["GPT2LMHeadModel"], "n_layer": 2, "n_embd": 64, "n_head": 4, "vocab_size": 128,
              "resid_pdrop": 0.1, "embd_pdrop": 0.0, "attn_pdrop": 0.1})";
    EXPECT_THAT(errorOf((dir / "half-dropout.json").string()),
                AllOf(HasSubstr("embd_pdrop: embd_pdrop 0 beside resid_pdrop 0.1"), HasSubstr("not modelled yet")));
}

// Every committed scenario under scenarios/hf/ reads as runnable.
TEST(HfConfig, CommittedScenariosRead) {
    int n = 0;
    for (const auto& f : std::filesystem::directory_iterator(kHf))
        if (f.path().extension() == ".yaml") {
            EXPECT_NO_THROW(loadScenario(f.path())) << f.path();
            ++n;
        }
    EXPECT_GE(n, 8);
}

}  // namespace
}  // namespace stepsim
