// What `run` and `explain` read beyond the schema (Reading::runnable, issue 34): no silent defaults (the model is
// named, a quoted value ends on its line, a B200-class node needs a named profile), no ignored knobs (a setting not
// modelled yet is refused at its line), and limits checked before anything is built. Each test states one
// expectation.
#include <string>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "tests/scenario/ScenarioErrors.hpp"

namespace stepsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A small model, so that what a test adds is all that differs.
const std::string kModel = "model: {layers: 2, hidden: 1024}\n";

// ---- no silent defaults ----

TEST(RunnableScenario, SmallestRunnableScenarioIsTheVersionAndTheModel) {
    EXPECT_EQ(errorOf("stepsim: 1\n" + kModel), "");
}

TEST(RunnableScenario, OnlyTheSchemaVersionIsRefusedNamingTheModel) {
    EXPECT_THAT(errorOf("stepsim: 1\n"), StartsWith("x.yaml:1: model: missing: a scenario names its model"));
}

TEST(RunnableScenario, NoModelSectionIsRefused) {
    EXPECT_THAT(errorOf("stepsim: 1\nname: a\ntraining: {micro_batch: 2}\n"), StartsWith("x.yaml:1: model: missing"));
}

TEST(RunnableScenario, ModelWithoutLayersIsRefusedAtTheModel) {
    EXPECT_THAT(errorOf("stepsim: 1\nmodel:\n  hidden: 1024\n"), StartsWith("x.yaml:3: model.layers: missing"));
}

TEST(RunnableScenario, ModelWithoutHiddenIsRefused) {
    EXPECT_THAT(errorOf("stepsim: 1\nmodel: {layers: 2}\n"), StartsWith("x.yaml:2: model.hidden: missing"));
}

TEST(RunnableScenario, UnterminatedDoubleQuoteIsAnErrorAtItsLine) {
    EXPECT_THAT(errorOf("stepsim: 1\nname: \"gpt-1p3b\n" + kModel + "sim: {steps: 2}\n"),
                StartsWith("x.yaml:2: name: the value opened with \" has no closing \" on its line"));
}

TEST(RunnableScenario, UnterminatedSingleQuoteIsAnErrorAtItsLine) {
    EXPECT_THAT(errorOf("stepsim: 1\n" + kModel + "cluster:\n  node: 'hgx-h200\n  nodes: 2\n"),
                StartsWith("x.yaml:4: cluster.node: the value opened with ' has no closing '"));
}

TEST(RunnableScenario, QuotesWithEscapedQuotesInsideAreRead) {
    EXPECT_EQ(parseScenario("stepsim: 1\nname: \"a \\\"b\\\" c\"\n" + kModel, "x.yaml").name, "a \"b\" c");
    EXPECT_EQ(parseScenario("stepsim: 1\nname: 'it''s'\n" + kModel, "x.yaml").name, "it's");
}

TEST(RunnableScenario, B200NodeWithTheBuiltinProfileIsRefusedAtTheNode) {
    EXPECT_THAT(errorOf("stepsim: 1\ncluster:\n  node: hgx-b200\n" + kModel),
                StartsWith("x.yaml:3: cluster.node: hgx-b200 has B200-class GPUs, and no built-in profile"));
}

TEST(RunnableScenario, Nvl72WithTheBuiltinProfileIsRefused) {
    EXPECT_THAT(errorOf("stepsim: 1\ncluster: {node: nvl72, gpus_per_node: 72}\n" + kModel),
                StartsWith("x.yaml:2: cluster.node: nvl72 has B200-class GPUs"));
}

TEST(RunnableScenario, B200NodeWithANamedProfileIsRead) {
    EXPECT_EQ(errorOf("stepsim: 1\ncluster: {node: hgx-b200, profile: h200x2}\n" + kModel), "");
}

TEST(RunnableScenario, MissingProfileFileIsRefusedAtItsLine) {
    EXPECT_THAT(errorOf("stepsim: 1\n" + kModel + "cluster:\n  profile: no-such-profile.yaml\n"),
                StartsWith("x.yaml:4: cluster.profile: expected builtin, "));
}

TEST(RunnableScenario, UnknownNodeIsRefusedAtItsLine) {
    EXPECT_THAT(errorOf("stepsim: 1\ncluster:\n  node: hgx-z900\n" + kModel),
                StartsWith("x.yaml:3: cluster.node: expected one of hgx-h100"));
}

// ---- no ignored knobs ----

// Each key read but not modelled yet, at a value other than its default: refused at its line.
class UnmodelledKey : public ::testing::TestWithParam<std::tuple<const char*, const char*, const char*>> {};

TEST_P(UnmodelledKey, IsRefusedAtItsLine) {
    const auto [section, key, value] = GetParam();
    const std::string msg = errorOf("stepsim: 1\n" + kModel + section + ":\n  " + key + ": " + value + "\n");
    EXPECT_THAT(msg, StartsWith(std::string("x.yaml:4: ") + section + "." + key + ": ")) << msg;
    EXPECT_THAT(msg, HasSubstr("is not modelled yet by this stepsim version")) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    RunnableScenario, UnmodelledKey,
    ::testing::Values(std::tuple{"nccl", "algo", "collnet"}));

// FP8 settings that cannot act: a recipe or an FP8 all-gather with FP8 off, an FP8 all-gather or the synchronizing
// conversion without FSDP2 have no effect (warnings); an FP8 all-gather of rowwise-scaled weights (torchao gathers
// tensorwise ones only), FP8 beside fp16 autocast or under torch.compile (not modelled) are errors naming the key.
TEST(RunnableScenario, Fp8SettingsThatCannotAct) {
    EXPECT_THAT(warningsOf("stepsim: 1\n" + kModel + "fp8: {recipe: rowwise}\n"),
                ElementsAre(HasSubstr("key fp8.recipe (x.yaml:3) has no effect with fp8.enabled: false")));
    EXPECT_THAT(warningsOf("stepsim: 1\n" + kModel + "fp8: {enabled: true, fp8_all_gather: true}\n"),
                ElementsAre(HasSubstr("key fp8.fp8_all_gather (x.yaml:3) has no effect with parallel.data: ddp")));
    EXPECT_THAT(warningsOf("stepsim: 1\n" + kModel + "fp8: {enabled: true, sync_after_all_gather: true}\n"),
                ElementsAre(HasSubstr("key fp8.sync_after_all_gather (x.yaml:3) has no effect with parallel.data: ddp")));
    EXPECT_THAT(errorOf("stepsim: 1\n" + kModel +
                        "parallel: {data: fsdp2}\nfp8: {enabled: true, recipe: rowwise, fp8_all_gather: true}\n"),
                HasSubstr("fp8.fp8_all_gather: expected fp8.recipe: tensorwise"));
    EXPECT_THAT(errorOf("stepsim: 1\n" + kModel + "training: {compute_dtype: fp16}\nfp8: {enabled: true}\n"),
                HasSubstr("fp8.enabled: FP8 linears beside fp16 autocast"));
    EXPECT_EQ(errorOf("stepsim: 1\n" + kModel + "fp8: {enabled: true, recipe: rowwise}\n"), "");
    EXPECT_EQ(errorOf("stepsim: 1\n" + kModel + "training: {compute_dtype: fp8}\n"), "");
    EXPECT_EQ(errorOf("stepsim: 1\n" + kModel + "ddp: {comm_hook: quantize_4bit}\n"), "");
}

TEST(RunnableScenario, UnmodelledKeyAtItsDefaultIsRead) {
    EXPECT_EQ(errorOf("stepsim: 1\n" + kModel +
                      "ddp: {find_unused_parameters: false, static_graph: false}\ndata_loader: {num_workers: 0}\n"),
              "");
}

// A value not modelled yet, set from the command line, is refused naming the override.
TEST(RunnableScenario, UnmodelledOverrideNamesTheSet) {
    EXPECT_THAT(errorOf("stepsim: 1\n" + kModel, {"nccl.algo=collnet"}),
                StartsWith("x.yaml: --set nccl.algo: CollNet (NCCL's in-network reduction) is not modelled yet"));
}

// compile.loss, compile.optimizer and compile.dynamic are modelled (CompileTransform; a profile that did not measure
// one refuses it when the step is built) but change nothing with compile off: warnings.
TEST(RunnableScenario, CompilePartsWithoutCompileHaveNoEffect) {
    EXPECT_THAT(warningsOf("stepsim: 1\n" + kModel + "compile: {optimizer: true}\n"),
                ElementsAre("key compile.optimizer (x.yaml:3) has no effect with compile.enabled: false"));
    EXPECT_THAT(warningsOf("stepsim: 1\n" + kModel + "compile: {loss: true}\n"),
                ElementsAre("key compile.loss (x.yaml:3) has no effect with compile.enabled: false"));
    EXPECT_THAT(warningsOf("stepsim: 1\n" + kModel + "compile: {dynamic: true}\n"),
                ElementsAre("key compile.dynamic (x.yaml:3) has no effect with compile.enabled: false"));
    EXPECT_EQ(errorOf("stepsim: 1\n" + kModel + "compile: {enabled: true, optimizer: true, loss: true, dynamic: true}\n"),
              "");
}

// explain's output reads back as the same scenario: without a data_loader section (no input pipeline) it writes none,
// with one (even empty) it writes every key of it.
TEST(RunnableScenario, ExplainKeepsTheDataLoaderOnOrOff) {
    const Scenario off = parseScenario("stepsim: 1\n" + kModel, "x.yaml");
    const std::string text = explainScenario(off);
    EXPECT_THAT(text, HasSubstr("# data_loader: none"));
    EXPECT_FALSE(parseScenario(text, "x.yaml").data_loader.modelled);
    const Scenario on = parseScenario("stepsim: 1\n" + kModel + "data_loader: {num_workers: 2}\n", "x.yaml");
    const Scenario back = parseScenario(explainScenario(on), "x.yaml");
    EXPECT_TRUE(back.data_loader.modelled);
    EXPECT_EQ(back.data_loader.num_workers, 2);
    EXPECT_EQ(scenarioSettings(off).count("data_loader.num_workers"), 1u);  // the settings still list every key
}

// Every key of the schema is modelled at every value explain writes: none is marked as modelled at its default only.
TEST(RunnableScenario, ExplainMarksNoKeyAsNotModelled) {
    const std::string text = explainScenario(parseScenario("stepsim: 1\n" + kModel, "x.yaml"));
    EXPECT_THAT(text, HasSubstr("static_graph: false"));
    EXPECT_THAT(text, ::testing::Not(HasSubstr("modelled yet")));
}

// ---- limits checked before anything is built ----

// Each size or count beyond what the simulator holds: refused at its line, saying the limit.
class BeyondTheLimit : public ::testing::TestWithParam<std::tuple<const char*, const char*, const char*, const char*>> {};

TEST_P(BeyondTheLimit, IsRefusedAtItsLineSayingTheLimit) {
    const auto [section, key, value, limit] = GetParam();
    const bool model = std::string(section) == "model";
    const std::string k = key;
    const std::string msg =
        errorOf(std::string("stepsim: 1\n") + (model ? "" : kModel) + section + ":\n  " + key + ": " + value + "\n" +
                (model && k != "layers" ? "  layers: 2\n" : "") + (model && k != "hidden" ? "  hidden: 1024\n" : ""));
    const int line = model ? 3 : 4;
    EXPECT_THAT(msg, StartsWith(fmt::format("x.yaml:{}: {}.{}: ", line, section, key))) << msg;
    EXPECT_THAT(msg, HasSubstr(limit)) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    RunnableScenario, BeyondTheLimit,
    ::testing::Values(std::tuple{"training", "micro_batch", "2147483647", "expected at most 65536"},
                      std::tuple{"model", "seq_len", "100000000", "expected at most 1048576"},
                      std::tuple{"cluster", "gpus_per_node", "100000", "expected at most 8 (the GPUs of a hgx-h200 node)"},
                      std::tuple{"cluster", "nodes", "100000", "expected at most 4096"},
                      std::tuple{"sim", "steps", "1000000", "expected at most 1000"},
                      std::tuple{"sim", "samples", "100000", "expected at most 1000"},
                      std::tuple{"training", "grad_accum", "10000", "expected at most 4096"},
                      std::tuple{"model", "layers", "100000", "expected at most 4096"},
                      std::tuple{"model", "hidden", "1048576", "expected at most 262144"}));

TEST(RunnableScenario, TokensPerMicroBatchBeyondTheLimitAreRefused) {
    EXPECT_THAT(errorOf("stepsim: 1\nmodel: {layers: 2, hidden: 1024, seq_len: 1048576}\ntraining:\n  micro_batch: 128\n"),
                StartsWith("x.yaml:4: training.micro_batch: expected at most 67108864 tokens per micro-batch"));
}

TEST(RunnableScenario, MoreKernelsThanTheSimulatorHoldsAreRefusedAtTheLargestFactor) {
    // 8 ranks x 3 steps x 2000 micro-batches x 24 layers: ~1e8 kernels.
    EXPECT_THAT(errorOf("stepsim: 1\nmodel: {layers: 24, hidden: 1024}\ntraining:\n  grad_accum: 2000\n"),
                StartsWith("x.yaml:4: training.grad_accum: the run would hold about 1.15e+08 kernels and collectives"));
}

TEST(RunnableScenario, RunLongerThanTheTimeTypeHoldsIsRefusedAtTheLargestFactor) {
    // 77B parameters at 512·8192 tokens per GPU and step: ~2e18 FLOPs, 2e5 s per step at 10 TFLOP/s, 10 steps.
    const std::string msg = errorOf(
        "stepsim: 1\nmodel: {layers: 24, hidden: 16384, heads: 128, seq_len: 8192}\ncluster: {gpus_per_node: 1}\n"
        "sim: {steps: 10}\ntraining:\n  micro_batch: 512\n");
    EXPECT_THAT(msg, StartsWith("x.yaml:6: training.micro_batch: the run's 10 steps would take about")) << msg;
    EXPECT_THAT(msg, HasSubstr("s of simulated time at 10 TFLOP/s")) << msg;
}

TEST(RunnableScenario, GpusPerNodeBeyondATopologyFilesGpusAreRefused) {
    const std::string node = std::string(STEPSIM_SOURCE_DIR) + "/topology/examples/quad-nvlink-pairs.yaml";
    EXPECT_THAT(errorOf("stepsim: 1\n" + kModel + "cluster:\n  node: " + node + "\n  gpus_per_node: 8\n"),
                StartsWith("x.yaml:5: cluster.gpus_per_node: expected at most 4 (the GPUs of a quad-nvlink-pairs node)"));
}

TEST(RunnableScenario, FabricOtherThanTheOneBuiltIsRefusedAtItsLine) {
    EXPECT_THAT(errorOf("stepsim: 1\n" + kModel + "cluster:\n  nodes: 2\n  network: {fabric: dragonfly}\n"),
                StartsWith("x.yaml:5: cluster.network.fabric: expected rail-fat-tree"));
}

TEST(RunnableScenario, NicsThatDoNotFitTheNodeAreRefusedAcrossNodes) {
    const std::string node = std::string(STEPSIM_SOURCE_DIR) + "/topology/examples/quad-nvlink-pairs.yaml";
    EXPECT_THAT(errorOf("stepsim: 1\n" + kModel + "cluster: {node: " + node + ", nodes: 2, gpus_per_node: 4}\n"),
                StartsWith("x.yaml:3: cluster.network.nics_per_node: expected a divisor of 4"));
}

}  // namespace
}  // namespace stepsim
