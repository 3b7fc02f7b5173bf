// ScenarioLoader: the schema's defaults (docs/scenario.md), each error kind's file:line:key message, --set
// overrides, derived values and `explain` round trips. Each test states one expectation.
#include "sim/scenario/ScenarioLoader.hpp"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "tests/scenario/ScenarioEquality.hpp"
#include "tests/scenario/ScenarioErrors.hpp"

namespace stepsim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The schema alone (Reading::schema): what a file spells, without what a runnable scenario also needs (a model) or
// refuses (settings not modelled yet); RunnableScenarioTest.cpp tests those.
Scenario readSchema(const std::string& yaml, const std::string& source, const std::vector<std::string>& overrides = {}) {
    return parseScenario(yaml, source, overrides, Reading::schema);
}

// The scenario schema's full example: it spells out every key at its default (docs/scenario.md lists them).
constexpr const char* kScenarioMd = R"(stepsim: 1                      # schema version
name: gpt-1p3b-ddp-8xh200
cluster:
  node: hgx-h200                # built-in node type, or a topology YAML file
  nodes: 1
  gpus_per_node: 8
  profile: builtin              # or a calibrated profile YAML
  network: {fabric: rail-fat-tree, nic_gbps: 400, nics_per_node: 8, oversubscription: 1.0}
model:
  type: transformer             # or: trace (with `trace: FILE`, a PyTorch profiler trace)
  layers: 24
  hidden: 2048
  heads: 16
  kv_heads: 16
  ffn_hidden: 8192
  vocab: 50304
  seq_len: 2048
  mlp: gelu                     # gelu (GPT: two matrices) | swiglu (Llama: three matrices)
  norm: layernorm               # layernorm | rmsnorm
  tied_embeddings: false
training:
  micro_batch: 4
  grad_accum: 1
  param_dtype: fp32
  compute_dtype: bf16           # bf16 | fp16 | fp8
  optimizer: adamw
  activation_checkpointing: none   # none | selective | full
parallel: {data: ddp, tp: 1, pp: 1, pp_schedule: 1f1b}   # data: ddp | fsdp1 | fsdp2 | hsdp | zero1 | zero2 | zero3
ddp: {bucket_cap_mb: 25, first_bucket_mb: 1, gradient_as_bucket_view: false,
      find_unused_parameters: false, static_graph: false, comm_hook: none}
fsdp: {reshard_after_forward: true, backward_prefetch: pre, forward_prefetch: false, limit_all_gathers: true}
compile: {enabled: false, fullgraph: false, dynamic: null, mode: default, optimize_ddp: ddp_optimizer}
fp8: {enabled: false, recipe: tensorwise, fp8_all_gather: false}
data_loader: {pin_memory: false, num_workers: 0}
checkpoint: {interval_steps: 0, mode: sync}
nccl: {algo: auto, proto: auto, nvls: auto}
jitter: {enabled: true}
sim: {steps: 3, seed: 1, samples: 1}
)";

TEST(ScenarioLoader, EmptyScenarioTakesEveryDefaultOfScenarioMd) {
    // Expectation: as the schema reads it, a file with only `stepsim: 1` equals the fully spelled-out
    // example. Issue 34 decided that a runnable scenario names its model: `run` and `explain` refuse this file
    // (RunnableScenario.OnlyTheSchemaVersionIsRefusedNamingTheModel), so this holds for Reading::schema only.
    Scenario spelled = readSchema(kScenarioMd, "gpt-1p3b-ddp-8xh200.yaml");
    Scenario defaults = readSchema("stepsim: 1\n", "gpt-1p3b-ddp-8xh200.yaml");
    expectSameScenario(spelled, defaults);
}

TEST(ScenarioLoader, DefaultsMatchTheStructsDefaults) {
    // Expectation: the loader adds no defaults of its own beyond Scenario.hpp's (name aside).
    Scenario s = readSchema("stepsim: 1\nname: demo\n", "x.yaml");
    Scenario plain;
    plain.name = "demo";
    plain.source = "x.yaml";
    expectSameScenario(s, plain);
    EXPECT_FALSE(s.compile.dynamic.has_value());
    EXPECT_EQ(s.parallel.pp_schedule, PipelineSchedule::one_f_one_b);
}

TEST(ScenarioLoader, NameDefaultsToTheFileStem) {
    EXPECT_EQ(readSchema("stepsim: 1\n", "scenarios/my-run.yaml").name, "my-run");
}

TEST(ScenarioLoader, EnumSpellingsOfScenarioMdAreRead) {
    Scenario s = readSchema(
        "stepsim: 1\ntraining: {grad_accum: 2}\nparallel: {data: fsdp2, pp: 2, pp_schedule: interleaved}\n"
        "compile: {mode: max-autotune, dynamic: true}\n"
        "nccl: {algo: ring, proto: ll128, nvls: off}\n",
        "x.yaml");
    EXPECT_EQ(s.parallel.data, DataParallel::fsdp2);
    EXPECT_EQ(s.parallel.pp_schedule, PipelineSchedule::interleaved);
    EXPECT_EQ(s.compile.mode, CompileMode::max_autotune);
    EXPECT_EQ(s.compile.dynamic, std::optional<bool>(true));
    EXPECT_EQ(s.nccl.algo, NcclAlgo::ring);
    EXPECT_EQ(s.nccl.proto, NcclProto::ll128);
    EXPECT_EQ(s.nccl.nvls, Switch::off);
}

TEST(ScenarioLoader, EmptySectionMeansAllDefaults) {
    Scenario s = readSchema("stepsim: 1\nddp:\n", "x.yaml");
    EXPECT_EQ(s.ddp.bucket_cap_mb, 25.0);
}

// ---- derived values ----

TEST(ScenarioLoader, KvHeadsDefaultsToHeads) {
    Scenario s = readSchema("stepsim: 1\nmodel: {heads: 32}\n", "x.yaml");
    EXPECT_FALSE(s.model.kv_heads.has_value());
    EXPECT_EQ(kvHeads(s.model), 32);
}

TEST(ScenarioLoader, FfnHiddenDefaultsToFourHiddenForGelu) {
    Scenario s = readSchema("stepsim: 1\nmodel: {hidden: 1024, mlp: gelu}\n", "x.yaml");
    EXPECT_EQ(ffnHidden(s.model), 4096);
}

TEST(ScenarioLoader, FfnHiddenDefaultsToEightThirdsRoundedTo256ForSwiglu) {
    // LLaMA-7B: hidden 4096 → 8/3·4096 = 10922.7 → 11008 (its published intermediate size).
    Scenario s = readSchema("stepsim: 1\nmodel: {hidden: 4096, heads: 32, mlp: swiglu}\n", "x.yaml");
    EXPECT_EQ(ffnHidden(s.model), 11008);
    s.model.hidden = 2048;  // 5461.3 → 5632
    EXPECT_EQ(ffnHidden(s.model), 5632);
}

// ---- errors: each names file:line: key and what was expected ----

TEST(ScenarioLoader, UnknownKeyListsAllowedKeysAndSuggestsClosest) {
    EXPECT_EQ(errorOf("stepsim: 1\nmodel:\n  layers: 2\n  hiden: 10\n"),
              "x.yaml:4: model.hiden: unknown key; allowed in model: type, trace, trace_params, trace_host, ops, "
              "op_times, hf_config, implementation, layers, hidden, heads, kv_heads, head_dim, ffn_hidden, vocab, "
              "seq_len, mlp, norm, tied_embeddings, linear_bias, qkv_bias, fused_gate_up, embedding_scale, "
              "position_embedding, qkv, loss_dtype, dropout (did you mean 'hidden'?)");
}

TEST(ScenarioLoader, UnrelatedUnknownKeyGetsNoSuggestion) {
    // Expectation: "did you mean" names only a near miss; a key like no allowed one gets the allowed list alone.
    const std::string msg = errorOf("stepsim: 1\nmodel:\n  layers: 2\n  foo: 10\n");
    EXPECT_THAT(msg, HasSubstr("x.yaml:4: model.foo: unknown key; allowed in model:"));
    EXPECT_THAT(msg, ::testing::Not(HasSubstr("did you mean")));
}

TEST(ScenarioLoader, UnknownTopLevelSectionIsAnError) {
    EXPECT_THAT(errorOf("stepsim: 1\ndpp: {bucket_cap_mb: 1}\n"),
                HasSubstr("x.yaml:2: dpp: unknown key; allowed at the top level: stepsim, name, cluster"));
    EXPECT_THAT(errorOf("stepsim: 1\ndpp: {bucket_cap_mb: 1}\n"), HasSubstr("(did you mean 'ddp'?)"));
}

TEST(ScenarioLoader, WrongTypeSaysWhatWasExpected) {
    EXPECT_EQ(errorOf("stepsim: 1\ntraining:\n  micro_batch: four\n"),
              "x.yaml:3: training.micro_batch: expected an integer, got 'four'");
    EXPECT_EQ(errorOf("stepsim: 1\nddp: {static_graph: 1}\n"),
              "x.yaml:2: ddp.static_graph: expected true or false, got '1'");
    EXPECT_EQ(errorOf("stepsim: 1\nmodel: {layers: 2.5}\n"), "x.yaml:2: model.layers: expected an integer, got '2.5'");
    EXPECT_EQ(errorOf("stepsim: 1\nmodel: [1, 2]\n"), "x.yaml:2: model: expected a mapping, got a list");
}

TEST(ScenarioLoader, QuotedNumberIsAString) {
    EXPECT_EQ(errorOf("stepsim: 1\nmodel: {layers: \"24\"}\n"), "x.yaml:2: model.layers: expected an integer, got '24'");
}

TEST(ScenarioLoader, BadEnumValueListsTheAllowedOnes) {
    EXPECT_EQ(errorOf("stepsim: 1\nparallel:\n  data: fsdp3\n"),
              "x.yaml:3: parallel.data: expected one of ddp, fsdp1, fsdp2, hsdp, zero1, zero2, zero3, got 'fsdp3'");
    EXPECT_EQ(errorOf("stepsim: 1\nparallel: {pp_schedule: one_f_one_b}\n"),
              "x.yaml:2: parallel.pp_schedule: expected one of gpipe, 1f1b, interleaved, zero_bubble, got 'one_f_one_b'");
}

TEST(ScenarioLoader, ZeroOrNegativeSizeIsRejected) {
    EXPECT_EQ(errorOf("stepsim: 1\nmodel:\n  layers: 0\n"), "x.yaml:3: model.layers: expected a positive integer, got 0");
    EXPECT_EQ(errorOf("stepsim: 1\ncluster: {gpus_per_node: -8}\n"),
              "x.yaml:2: cluster.gpus_per_node: expected a positive integer, got -8");
    EXPECT_EQ(errorOf("stepsim: 1\nddp: {bucket_cap_mb: 0}\n"),
              "x.yaml:2: ddp.bucket_cap_mb: expected a positive number, got 0");
}

TEST(ScenarioLoader, HeadsMustDivideHidden) {
    EXPECT_EQ(errorOf("stepsim: 1\nmodel:\n  hidden: 2048\n  heads: 30\n"),
              "x.yaml:4: model.heads: expected a positive integer that divides model.hidden (2048), got 30");
}

TEST(ScenarioLoader, KvHeadsMustDivideHeads) {
    EXPECT_EQ(errorOf("stepsim: 1\nmodel:\n  heads: 32\n  kv_heads: 6\n"),
              "x.yaml:4: model.kv_heads: expected a positive integer that divides model.heads (32), got 6");
}

class CountBelowOne : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(CountBelowOne, IsRejected) {
    const auto [section, key] = GetParam();
    EXPECT_EQ(errorOf(fmt::format("stepsim: 1\n{}:\n  {}: 0\n", section, key)),
              fmt::format("x.yaml:3: {}.{}: expected a positive integer, got 0", section, key));
}

INSTANTIATE_TEST_SUITE_P(ScenarioLoader, CountBelowOne,
                         ::testing::Values(std::pair{"training", "micro_batch"}, std::pair{"training", "grad_accum"},
                                           std::pair{"sim", "steps"}, std::pair{"sim", "samples"}));

TEST(ScenarioLoader, TpTimesPpMustDivideTheWorldSize) {
    EXPECT_EQ(errorOf("stepsim: 1\ncluster: {gpus_per_node: 8}\nparallel:\n  tp: 2\n  pp: 3\n"),
              "x.yaml:4: parallel.tp: tp*pp = 2*3 = 6 must divide the world size 8 "
              "(cluster.nodes*cluster.gpus_per_node)");
}

TEST(ScenarioLoader, TraceModelNeedsATraceFile) {
    EXPECT_EQ(errorOf("stepsim: 1\nmodel:\n  type: trace\n"),
              "x.yaml:3: model.type: model.type: trace needs model.trace: FILE (a PyTorch profiler trace)");
    EXPECT_EQ(readSchema("stepsim: 1\nmodel: {type: trace, trace: run.json}\n", "x.yaml").model.trace, "run.json");
}

TEST(ScenarioLoader, SchemaVersionIsRequired) {
    EXPECT_EQ(errorOf("name: x\n"), "x.yaml:1: stepsim: missing: the schema version is required (expected `stepsim: 1`)");
}

TEST(ScenarioLoader, OtherSchemaVersionsAreRejected) {
    EXPECT_EQ(errorOf("name: x\nstepsim: 2\n"),
              "x.yaml:2: stepsim: unsupported schema version 2; this stepsim reads version 1");
}

TEST(ScenarioLoader, IntegerOutOfRangeIsRejected) {
    EXPECT_EQ(errorOf("stepsim: 1\nsim: {steps: 99999999999}\n"),
              "x.yaml:2: sim.steps: expected an integer, got '99999999999' (out of range)");
    EXPECT_EQ(errorOf("stepsim: 1\nsim: {seed: -1}\n"), "x.yaml:2: sim.seed: expected a non-negative integer, got '-1'");
}

TEST(ScenarioLoader, EmptyFileIsAnError) {
    EXPECT_EQ(errorOf(""), "x.yaml: expected a scenario: a mapping that starts with `stepsim: 1`, got null");
}

TEST(ScenarioLoader, DuplicateKeyIsAnError) {
    EXPECT_EQ(errorOf("stepsim: 1\nsim: {steps: 2}\nsim: {steps: 3}\n"), "x.yaml:3: sim: duplicate key");
}

TEST(ScenarioLoader, YamlSyntaxErrorNamesTheLine) {
    // yaml-cpp reports the line where it found the error.
    EXPECT_EQ(errorOf("stepsim: 1\nmodel: {layers: 2\nddp: 3\n"), "x.yaml:3: YAML syntax error: end of map flow not found");
    EXPECT_EQ(errorOf("stepsim: 1\n\tmodel: 3\n"), "x.yaml:2: YAML syntax error: illegal tab when looking for indentation");
}

TEST(ScenarioLoader, MissingFileIsAnInputError) {
    try {
        loadScenario("/nonexistent/dir/run.yaml");
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "/nonexistent/dir/run.yaml: cannot open the scenario file (does it exist?)");
    }
}

TEST(ScenarioLoader, LoadsAFileAndRecordsItsSource) {
    const auto file = std::filesystem::temp_directory_path() / "stepsim-loader-test.yaml";
    std::ofstream(file) << "stepsim: 1\nmodel: {layers: 12}\n";
    Scenario s = loadScenario(file, {}, Reading::schema);
    EXPECT_EQ(s.source, file.string());
    EXPECT_EQ(s.name, "stepsim-loader-test");
    EXPECT_EQ(s.model.layers, 12);
    std::filesystem::remove(file);
}

// ---- --set overrides ----

TEST(ScenarioLoader, OverridesReplaceFileValues) {
    Scenario s = readSchema("stepsim: 1\nddp: {bucket_cap_mb: 25}\ntraining: {grad_accum: 1}\n", "x.yaml",
                               {"ddp.bucket_cap_mb=100", "training.grad_accum=4"});
    EXPECT_EQ(s.ddp.bucket_cap_mb, 100.0);
    EXPECT_EQ(s.training.grad_accum, 4);
}

TEST(ScenarioLoader, OverrideCreatesAnAbsentSection) {
    Scenario s = readSchema("stepsim: 1\n", "x.yaml", {"compile.enabled=true", "compile.mode=reduce-overhead"});
    EXPECT_TRUE(s.compile.enabled);
    EXPECT_EQ(s.compile.mode, CompileMode::reduce_overhead);
}

TEST(ScenarioLoader, OverrideTakesAFlowNode) {
    Scenario s = readSchema("stepsim: 1\nparallel: {tp: 1}\n", "x.yaml", {"parallel={tp: 2, pp: 2}"});
    EXPECT_EQ(s.parallel.tp, 2);
    EXPECT_EQ(s.parallel.pp, 2);
}

TEST(ScenarioLoader, LaterOverrideWins) {
    Scenario s = readSchema("stepsim: 1\n", "x.yaml", {"sim.seed=5", "sim.seed=7"});
    EXPECT_EQ(s.sim.seed, 7u);
}

TEST(ScenarioLoader, OverrideIsValidatedLikeTheFileAndNamedInErrors) {
    EXPECT_EQ(errorOf("stepsim: 1\nmodel: {hidden: 2048}\n", {"model.heads=30"}),
              "x.yaml: --set model.heads: expected a positive integer that divides model.hidden (2048), got 30");
    EXPECT_EQ(errorOf("stepsim: 1\n", {"training.micro_batch=big"}),
              "x.yaml: --set training.micro_batch: expected an integer, got 'big'");
}

TEST(ScenarioLoader, OverrideOfAnUnknownKeyIsAnError) {
    EXPECT_EQ(errorOf("stepsim: 1\n", {"ddp.bucket_cap=100"}),
              "x.yaml: --set ddp.bucket_cap: unknown key; allowed in ddp: bucket_cap_mb, first_bucket_mb, "
              "gradient_as_bucket_view, find_unused_parameters, static_graph, comm_hook, duplicate_gradients, "
              "powersgd_rank, powersgd_start_iter, powersgd_min_compression_rate, powersgd_error_feedback, "
              "powersgd_warm_start (did you mean 'bucket_cap_mb'?)");
    EXPECT_THAT(errorOf("stepsim: 1\n", {"dpp.bucket_cap_mb=100"}),
                HasSubstr("x.yaml: --set dpp.bucket_cap_mb: dpp: unknown key; allowed at the top level:"));
}

TEST(ScenarioLoader, OverrideErrorInsideAFlowNodeNamesTheOverride) {
    EXPECT_EQ(errorOf("stepsim: 1\n", {"parallel={tp: x}"}),
              "x.yaml: --set parallel: parallel.tp: expected an integer, got 'x'");
}

TEST(ScenarioLoader, OverrideWithoutValueIsAnError) {
    EXPECT_EQ(errorOf("stepsim: 1\n", {"ddp.bucket_cap_mb"}),
              "x.yaml: --set ddp.bucket_cap_mb: expected key.path=value (e.g. ddp.bucket_cap_mb=100)");
}

TEST(ScenarioLoader, OverrideBelowAScalarIsAnError) {
    EXPECT_EQ(errorOf("stepsim: 1\nsim: {steps: 3}\n", {"sim.steps.x=1"}),
              "x.yaml: --set sim.steps.x: sim.steps is '3' (line 2), not a section with keys");
}

TEST(ScenarioLoader, OverridesChangeDerivedValues) {
    Scenario s = readSchema("stepsim: 1\nmodel: {hidden: 2048}\n", "x.yaml", {"model.hidden=4096"});
    EXPECT_EQ(ffnHidden(s.model), 16384);
}

// ---- explain ----

TEST(ScenarioLoader, ExplainReparsesToAnEqualScenario) {
    Scenario s = readSchema(
        "stepsim: 1\nname: 'odd: name'\ncluster: {nodes: 2, gpus_per_node: 4, profile: my.yaml,"
        " network: {nic_gbps: 200.5, oversubscription: 2}}\n"
        "model: {layers: 16, hidden: 2048, heads: 32, kv_heads: 8, mlp: swiglu, norm: rmsnorm, vocab: 128256,"
        " tied_embeddings: true}\n"
        "training: {micro_batch: 2, grad_accum: 8, param_dtype: bf16, compute_dtype: fp8, optimizer: sgd, sgd_momentum: 0.5,"
        " activation_checkpointing: selective}\n"
        "parallel: {data: hsdp, tp: 2, pp: 2, pp_schedule: gpipe}\n"
        "ddp: {bucket_cap_mb: 0.1, first_bucket_mb: 3.3, comm_hook: powersgd,"
        " powersgd_rank: 2, powersgd_start_iter: 7, powersgd_min_compression_rate: 1.5, powersgd_error_feedback: false,"
        " powersgd_warm_start: false}\n"
        "fsdp: {reshard_after_forward: false, backward_prefetch: post}\n"
        "compile: {enabled: true, dynamic: false, mode: reduce-overhead, optimize_ddp: python_reducer, graph_breaks: 2,"
        " comm_fusion_depth: 3, async_collectives: false}\n"
        "fp8: {enabled: true, recipe: rowwise, fp8_all_gather: true}\n"
        "data_loader: {pin_memory: true, num_workers: 4}\ncheckpoint: {interval_steps: 100, mode: async}\n"
        "nccl: {algo: tree, proto: simple, nvls: on}\njitter: {enabled: false}\n"
        "sim: {steps: 10, seed: 18446744073709551615, samples: 32}\n",
        "in.yaml");
    Scenario again = readSchema(explainScenario(s), "in.yaml");
    expectSameScenario(s, again);
}

TEST(ScenarioLoader, ExplainFillsInAndMarksDerivedValues) {
    const std::string text = explainScenario(readSchema("stepsim: 1\nmodel: {heads: 16, hidden: 2048}\n", "x.yaml"));
    EXPECT_THAT(text, HasSubstr("kv_heads: 16"));
    EXPECT_THAT(text, HasSubstr("# default: heads"));
    EXPECT_THAT(text, HasSubstr("ffn_hidden: 8192"));
    EXPECT_THAT(text, HasSubstr("# default: 4*hidden (gelu)"));
    EXPECT_THAT(text, HasSubstr("dynamic: null"));
    EXPECT_THAT(text, HasSubstr("pp_schedule: 1f1b"));
    EXPECT_THAT(text, HasSubstr("bucket_cap_mb: 25"));
}

TEST(ScenarioLoader, ExplainOfAnExplainIsUnchanged) {
    Scenario s = readSchema("stepsim: 1\nmodel: {mlp: swiglu}\n", "x.yaml");
    const std::string once = explainScenario(s);
    EXPECT_EQ(explainScenario(readSchema(once, "x.yaml")), once);
}

// A scenario's settings are explain's keys with every default filled in: two scenarios that differ in one setting,
// written or defaulted, differ in one entry; the name is not a setting.
TEST(ScenarioLoader, SettingsDifferInTheOneKeyTwoScenariosDiffer) {
    const auto a = scenarioSettings(readSchema("stepsim: 1\nname: a\nmodel: {heads: 16, hidden: 2048}\n", "a.yaml"));
    const auto b = scenarioSettings(readSchema(
        "stepsim: 1\nname: b\nmodel: {heads: 16, hidden: 2048}\ntraining: {activation_checkpointing: full}\n", "b.yaml"));
    EXPECT_FALSE(a.contains("name"));
    EXPECT_EQ(a.at("model.kv_heads"), "16");          // derived, resolved
    EXPECT_EQ(a.at("ddp.bucket_cap_mb"), "25");       // defaulted
    EXPECT_EQ(a.at("compile.dynamic"), "null");
    EXPECT_EQ(a.at("training.activation_checkpointing"), "none");
    ASSERT_EQ(a.size(), b.size());
    std::vector<std::string> differ;
    for (const auto& [key, value] : a)
        if (b.at(key) != value) differ.push_back(key);
    EXPECT_THAT(differ, ElementsAre("training.activation_checkpointing"));
    // hidden moves the derived ffn_hidden with it: two entries
    const auto c = scenarioSettings(readSchema("stepsim: 1\nmodel: {heads: 16, hidden: 4096}\n", "c.yaml"));
    EXPECT_EQ(c.at("model.ffn_hidden"), "16384");
    EXPECT_NE(c.at("model.hidden"), a.at("model.hidden"));
}

}  // namespace
}  // namespace stepsim
