// model.qkv, model.loss_dtype and model.dropout in a scenario file: read with their defaults (today's built-in GPT),
// their values checked, and refused at their line where they are not modelled (tensor parallelism, FP8 linears,
// torch.compile; fp32 loss without autocast, where it changes nothing).
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/scenario/ScenarioLoader.hpp"
#include "tests/scenario/ScenarioErrors.hpp"

namespace stepsim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kModel = "stepsim: 1\nmodel:\n  layers: 4\n  hidden: 1024\n";  // lines 1-4

TEST(ModelVariantKeys, DefaultsAreTheBuiltInGpt) {
    const Scenario s = parseScenario(kModel, "x.yaml");
    EXPECT_EQ(s.model.qkv, QkvLayout::fused);
    EXPECT_EQ(s.model.loss_dtype, LossDtype::compute);
    EXPECT_EQ(s.model.dropout, 0.0);
    const Scenario t = parseScenario(kModel + "  qkv: fused_permute\n  loss_dtype: fp32\n  dropout: 0.1\n", "x.yaml");
    EXPECT_EQ(t.model.qkv, QkvLayout::fused_permute);
    EXPECT_EQ(t.model.loss_dtype, LossDtype::fp32);
    EXPECT_EQ(t.model.dropout, 0.1);
    // explain writes them and reads them back.
    const Scenario u = parseScenario(explainScenario(t), "x.yaml");
    EXPECT_EQ(u.model.qkv, QkvLayout::fused_permute);
    EXPECT_EQ(u.model.loss_dtype, LossDtype::fp32);
    EXPECT_EQ(u.model.dropout, 0.1);
}

TEST(ModelVariantKeys, ValuesAreChecked) {
    EXPECT_THAT(errorOf(kModel + "  qkv: split\n"), StartsWith("x.yaml:5: model.qkv:"));
    EXPECT_THAT(errorOf(kModel + "  dropout: 1.0\n"), StartsWith("x.yaml:5: model.dropout: expected a probability"));
    EXPECT_THAT(errorOf(kModel + "  dropout: -0.1\n"), StartsWith("x.yaml:5: model.dropout:"));
}

TEST(ModelVariantKeys, RefusedAtTheirLineWhereNotModelled) {
    EXPECT_THAT(errorOf(kModel + "  qkv: fused_permute\nparallel: {tp: 2}\n"),
                StartsWith("x.yaml:5: model.qkv: model.qkv with tensor parallelism"));
    EXPECT_EQ(errorOf(kModel + "  qkv: separate\nparallel: {tp: 2}\n"), "");  // Llama's: built split
    EXPECT_THAT(errorOf(kModel + "  qkv_bias: true\nparallel: {tp: 2}\n"),
                StartsWith("x.yaml:5: model.qkv_bias: model.qkv_bias with tensor parallelism"));
    // Under torch.compile, with FP8 linears and with bf16 parameters they run (docs/variants.md).
    EXPECT_EQ(errorOf(kModel + "  dropout: 0.1\ncompile: {enabled: true}\n"), "");
    EXPECT_EQ(errorOf(kModel + "  loss_dtype: fp32\ntraining: {compute_dtype: fp8}\n"), "");
    EXPECT_EQ(errorOf(kModel + "  loss_dtype: fp32\ntraining: {param_dtype: bf16, compute_dtype: bf16}\n"), "");
    EXPECT_EQ(errorOf(kModel + "  qkv: fused\n  loss_dtype: compute\n  dropout: 0.0\nparallel: {tp: 2}\n"), "");
}

}  // namespace
}  // namespace stepsim
