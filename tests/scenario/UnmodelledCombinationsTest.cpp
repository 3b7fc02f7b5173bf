// Combinations of modelled settings that the workload does not build yet (issue 34, no ignored knobs): refused when
// the scenario is read, at the line of the key that asks for them, with the file named, never later at line 0. Each
// test states one combination.
#include <string>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scenario/ScenarioErrors.hpp"

namespace stepsim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kHead = "stepsim: 1\nmodel: {layers: 4, hidden: 1024}\n";  // lines 1-2

// torch.compile and FP8 linears (tensorwise) are built under tensor and pipeline parallelism (docs/parallelism.md).
TEST(UnmodelledCombination, CompileAndTensorwiseFp8WithTensorOrPipelineParallelismAreRead) {
    EXPECT_EQ(errorOf(kHead + "parallel: {tp: 2}\ncompile:\n  enabled: true\n"), "");
    EXPECT_EQ(errorOf(kHead + "parallel: {pp: 2}\ncompile:\n  enabled: true\n"), "");
    EXPECT_EQ(errorOf(kHead + "parallel: {tp: 2}\nfp8:\n  enabled: true\n"), "");
    EXPECT_EQ(errorOf(kHead + "parallel: {pp: 2}\ntraining:\n  compute_dtype: fp8\n"), "");
}

TEST(UnmodelledCombination, CheckpointIoWithPipelineParallelismIsRefusedAtTheInterval) {
    EXPECT_THAT(errorOf(kHead + "parallel: {pp: 2}\ncheckpoint:\n  interval_steps: 1\n"),
                StartsWith("x.yaml:5: checkpoint.interval_steps: checkpoint I/O with tensor or pipeline parallelism is "
                           "not modelled yet"));
}

TEST(UnmodelledCombination, InputPipelineWithTensorParallelismIsRefusedAtItsSection) {
    EXPECT_THAT(errorOf(kHead + "parallel: {tp: 2}\ndata_loader:\n  pin_memory: true\n"),
                StartsWith("x.yaml:5: data_loader: the input pipeline with tensor or pipeline parallelism"));
}

TEST(UnmodelledCombination, RowwiseFp8WithTensorParallelismIsRefusedAtTheRecipe) {
    EXPECT_THAT(errorOf(kHead + "parallel: {tp: 2}\nfp8:\n  enabled: true\n  recipe: rowwise\n"),
                StartsWith("x.yaml:6: fp8.recipe: rowwise FP8 linears with tensor parallelism"));
}

TEST(UnmodelledCombination, TiedEmbeddingsAcrossPipelineStagesAreRefusedAtTheKey) {
    EXPECT_THAT(errorOf("stepsim: 1\nparallel: {pp: 2}\nmodel:\n  layers: 4\n  hidden: 1024\n  tied_embeddings: true\n"),
                StartsWith("x.yaml:6: model.tied_embeddings: tied embeddings across pipeline stages"));
}

// An override that turns on the parallelism points at the setting in the file that cannot go with it.
TEST(UnmodelledCombination, TensorParallelismFromAnOverrideNamesTheKeyInTheFile) {
    EXPECT_THAT(errorOf(kHead + "data_loader:\n  pin_memory: true\n", {"parallel.tp=2"}),
                StartsWith("x.yaml:4: data_loader: the input pipeline with tensor or pipeline parallelism"));
}

TEST(UnmodelledCombination, Fsdp2BackwardPostPrefetchIsRefusedAtItsLine) {
    EXPECT_THAT(errorOf(kHead + "parallel: {data: fsdp2}\nfsdp:\n  backward_prefetch: post\n"),
                StartsWith("x.yaml:5: fsdp.backward_prefetch: backward_prefetch: post (FSDP1's BACKWARD_POST) with "
                           "fsdp2 is not modelled yet"));
}

TEST(UnmodelledCombination, Fsdp2Fp8MixedPrecisionDtypesAreRefusedAtTheirLines) {
    EXPECT_THAT(errorOf(kHead + "parallel: {data: fsdp2}\nfsdp:\n  param_dtype: fp8\n"),
                StartsWith("x.yaml:5: fsdp.param_dtype: an fp8 MixedPrecisionPolicy dtype"));
    EXPECT_THAT(errorOf(kHead + "parallel: {data: fsdp2}\nfsdp:\n  reduce_dtype: fp8\n"),
                StartsWith("x.yaml:5: fsdp.reduce_dtype: an fp8 MixedPrecisionPolicy dtype"));
}

TEST(UnmodelledCombination, Fsdp2GatherDtypeOtherThanTheComputeDtypeIsRefused) {
    EXPECT_THAT(errorOf(kHead + "parallel: {data: fsdp2}\nfsdp:\n  param_dtype: fp16\n"),
                StartsWith("x.yaml:5: fsdp.param_dtype: a 16-bit fsdp.param_dtype must equal training.compute_dtype"));
    EXPECT_EQ(errorOf(kHead + "parallel: {data: fsdp2}\nfsdp:\n  param_dtype: bf16\n"), "");
    EXPECT_EQ(errorOf(kHead + "parallel: {data: fsdp2}\nfsdp:\n  param_dtype: fp32\n"), "");
}

// Each setting alone, and each with data parallelism only, is read.
TEST(UnmodelledCombination, EachSettingWithoutTensorOrPipelineParallelismIsRead) {
    EXPECT_EQ(errorOf(kHead + "parallel: {tp: 2}\n"), "");
    EXPECT_EQ(errorOf(kHead + "parallel: {pp: 2}\n"), "");
    EXPECT_EQ(errorOf(kHead + "fp8: {enabled: true}\n"), "");
    EXPECT_EQ(errorOf(kHead + "data_loader: {pin_memory: true}\n"), "");
    EXPECT_EQ(errorOf(kHead + "checkpoint: {interval_steps: 1}\n"), "");
    EXPECT_EQ(errorOf("stepsim: 1\nmodel: {layers: 4, hidden: 1024, tied_embeddings: true}\n"), "");
}

// DDP's options and the model variants with compile or tensor parallelism: refused at the key's line.
TEST(UnmodelledCombination, DdpOptionsAndModelVariantsAreRefusedAtTheirLine) {
    EXPECT_THAT(errorOf(kHead + "compile: {enabled: true}\nddp:\n  find_unused_parameters: true\n"),
                StartsWith("x.yaml:5: ddp.find_unused_parameters: ddp.find_unused_parameters under torch.compile"));
    EXPECT_THAT(errorOf(kHead + "parallel: {tp: 2}\nddp:\n  comm_hook: powersgd\n"),
                StartsWith("x.yaml:5: ddp.comm_hook: ddp.comm_hook with tensor or pipeline parallelism"));
    EXPECT_THAT(errorOf("stepsim: 1\nmodel:\n  layers: 4\n  hidden: 1024\n  linear_bias: true\n"
                        "parallel: {tp: 2}\n"),
                StartsWith("x.yaml:5: model.linear_bias: model.linear_bias with tensor parallelism"));
    // Llama's variants run split over the TP ranks.
    EXPECT_EQ(errorOf("stepsim: 1\nmodel:\n  layers: 4\n  hidden: 1024\n  position_embedding: rope\n"
                      "  qkv: separate\n  loss_dtype: fp32\nparallel: {tp: 2}\n"),
              "");
}

// ---- settings that change nothing where they are set: run, named in the warnings with their line ----

class ChangesNothing : public ::testing::TestWithParam<std::tuple<const char*, const char*, const char*>> {};

// `context` (a line of its own, line 3) sets the scene; the setting is on line 5 under its section on line 4.
TEST_P(ChangesNothing, IsAWarningNamingItsLine) {
    const auto [context, section_key, value] = GetParam();
    const std::string path = section_key;
    const auto dot = path.find('.');
    const std::vector<std::string> w = warningsOf("stepsim: 1\nmodel: {layers: 4, hidden: 1024}\n" +
                                                  std::string(context) + "\n" + path.substr(0, dot) + ":\n  " +
                                                  path.substr(dot + 1) + ": " + value + "\n");
    ASSERT_EQ(w.size(), 1u);
    EXPECT_THAT(w[0], StartsWith("key " + path + " (x.yaml:5) has no effect with ")) << w[0];
}

INSTANTIATE_TEST_SUITE_P(
    UnmodelledCombination, ChangesNothing,
    ::testing::Values(std::tuple{"name: no-checkpoint", "checkpoint.mode", "async"},
                      std::tuple{"name: no-checkpoint", "checkpoint.pinned_staging", "true"},
                      std::tuple{"name: no-checkpoint", "checkpoint.storage_GBps", "5"},
                      std::tuple{"parallel: {data: ddp}", "fsdp.param_dtype", "bf16"},
                      std::tuple{"parallel: {data: ddp}", "fsdp.reduce_dtype", "fp32"}));

// DataLoader raises on a prefetch_factor without workers: an error, not a key without effect.
TEST(UnmodelledCombination, APrefetchFactorWithoutWorkersIsRefused) {
    EXPECT_THAT(errorOf(kHead + "data_loader:\n  prefetch_factor: 4\n"),
                StartsWith("x.yaml:4: data_loader.prefetch_factor: expected data_loader.num_workers > 0"));
}

// The documented what-if of scenarios/io/gpt-1p3b-ckpt-2x8xh200.yaml: checkpoints off beside the checkpoint's keys
// runs, each key named.
TEST(UnmodelledCombination, CheckpointsOffBesideTheirKeysRun) {
    const std::vector<std::string> w =
        warningsOf(kHead + "checkpoint: {interval_steps: 2, mode: async, pinned_staging: true, storage_GBps: 5}\n",
                   {"checkpoint.interval_steps=0"});
    ASSERT_EQ(w.size(), 3u);
    EXPECT_EQ(w[0], "key checkpoint.mode (x.yaml:3) has no effect with checkpoint.interval_steps: 0 (no checkpoint is "
                    "taken)");
}

TEST(UnmodelledCombination, PinnedStagingOfASynchronousSaveHasNoEffect) {
    EXPECT_THAT(warningsOf(kHead + "checkpoint: {interval_steps: 1, mode: sync,\n  pinned_staging: true}\n"),
                ::testing::ElementsAre("key checkpoint.pinned_staging (x.yaml:4) has no effect with checkpoint.mode: "
                                       "sync (a synchronous save stages nothing)"));
    EXPECT_EQ(errorOf(kHead + "checkpoint: {interval_steps: 1, mode: async, pinned_staging: true}\n"), "");
}

TEST(UnmodelledCombination, SettingsWhereTheyActAreRead) {
    EXPECT_TRUE(warningsOf(kHead + "data_loader: {num_workers: 2, prefetch_factor: 4}\n").empty());
    EXPECT_EQ(errorOf(kHead + "data_loader: {num_workers: 2, prefetch_factor: 4}\n"), "");
    EXPECT_EQ(errorOf(kHead + "checkpoint: {interval_steps: 2, storage_GBps: 5}\n"), "");
    EXPECT_EQ(errorOf(kHead + "ddp: {bucket_cap_mb: 100, comm_hook: bf16_compress}\n"), "");
    EXPECT_EQ(errorOf(kHead + "parallel: {data: fsdp2}\nfsdp: {param_dtype: bf16, reduce_dtype: fp32}\n"), "");
}

}  // namespace
}  // namespace stepsim
