// The op graph reader (sim/scenario/OpsImport.hpp) and model.type: ops in the loader: dimensions evaluated at the
// scenario's symbols, errors that name the file and the field, the op_times table checked against the capture.
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/OpsImport.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {
namespace {

using ::testing::HasSubstr;

std::string dataFile(const std::string& name) {
    return (std::filesystem::path(STEPSIM_SOURCE_DIR) / "tests" / "data" / "ops" / name).string();
}

// A one-op graph (edited() replaces a substring of it).
std::string minimalGraph() {
    return R"({"format": "stepsim.ops", "version": 1, "torch": "2.11.0",
  "device": {"type": "cuda", "name": "NVIDIA H200", "capability": [9, 0]},
  "model": {"source": "test", "config": {}, "parameters": 4},
  "step": {"micro_batch": 2, "seq_len": 8, "dtype_policy": "bf16", "optimizer": "adamw",
           "optimizer_impl": "foreach", "loss": "cross_entropy", "activation_checkpointing": "none"},
  "symbols": {"B": 2, "S": 8}, "scaled": true,
  "modules": [{"path": "", "class": "M", "parent": null}],
  "params": [{"name": "w", "shape": [2, 2], "dtype": "bfloat16", "module": 0, "tensor": 0, "grad_ready_op": null}],
  "tensors": [{"bytes": 8, "kind": "param"}, {"bytes": "4*B*S", "kind": "temp"}],
  "ops": [{"op": "aten::mul", "overload": "Tensor", "phase": "forward", "module": 0,
           "in": [{"t": 1, "shape": ["B*S", 2], "stride": [2, 1], "dtype": "bfloat16", "offset": 0}],
           "out": [{"t": 1, "shape": ["B*S", 2], "stride": [2, 1], "dtype": "bfloat16", "offset": 0}],
           "args": {"1": 2.0}, "view": false, "seq_nr": null, "fwd_op": null, "recompute": false,
           "alloc": [1], "free": [1]}]})";
}

std::string write(const std::string& name, const std::string& text) {
    const auto path = std::filesystem::temp_directory_path() / ("stepsim-ops-" + name);
    std::ofstream(path) << text;
    return path.string();
}

std::string edited(const std::string& from, const std::string& to) {
    std::string g = minimalGraph();
    const std::size_t at = g.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return g.replace(at, from.size(), to);
}

std::string readError(const std::string& file, long long b = 0, long long s = 0) {
    try {
        readOpGraph(file, b, s);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(OpsImport, EvaluatesMonomialsOfTheSymbols) {
    EXPECT_EQ(evalDimension("2048", 3, 5), 2048);
    EXPECT_EQ(evalDimension("B", 3, 5), 3);
    EXPECT_EQ(evalDimension("2*B*S", 3, 5), 30);
    EXPECT_EQ(evalDimension("B*S^2", 3, 5), 75);
    EXPECT_EQ(evalDimension("4*B^2*S", 3, 5), 180);
    EXPECT_EQ(evalDimension("S+1", 3, 5), 6);
    EXPECT_EQ(evalDimension("8*B*S+8*B", 3, 5), 144);
    EXPECT_EQ(evalDimension("S-1", 3, 5), 4);
    EXPECT_THROW(evalDimension("2*X", 3, 5), std::invalid_argument);
    EXPECT_THROW(evalDimension("S+", 3, 5), std::invalid_argument);
    EXPECT_THROW(evalDimension("2**B", 3, 5), std::invalid_argument);
    EXPECT_THROW(evalDimension("S^", 3, 5), std::invalid_argument);
}

TEST(OpsImport, ReadsTheSyntheticGraphAtItsOwnAndOtherSymbols) {
    const OpGraph own = readOpGraph(dataFile("synthetic-step.ops.json.gz"));
    EXPECT_EQ(own.b, 2);
    EXPECT_EQ(own.s, 64);
    EXPECT_EQ(own.ops.size(), 45u);
    EXPECT_EQ(own.params.size(), 6u);
    EXPECT_EQ(own.ops[0].op, "aten::embedding");
    EXPECT_EQ(own.ops[0].out[0].items[0].shape, (std::vector<long long>{128, 256}));
    EXPECT_EQ(own.sha256.size(), 64u);
    const OpGraph big = readOpGraph(dataFile("synthetic-step.ops.json.gz"), 4, 256);
    EXPECT_EQ(big.ops[0].out[0].items[0].shape, (std::vector<long long>{1024, 256}));
    EXPECT_DOUBLE_EQ(big.tensors[big.ops[0].out[0].items[0].t].bytes, 1024.0 * 256 * 4);
}

TEST(OpsImport, RefusesAVersionItDoesNotRead) {
    const std::string f = write("v2.json", edited("\"version\": 1", "\"version\": 2"));
    const std::string e = readError(f);
    EXPECT_THAT(e, HasSubstr(f));
    EXPECT_THAT(e, HasSubstr("version 1, the file is version 2"));
}

TEST(OpsImport, AMissingFieldIsNamedWithItsOpIndex) {
    const std::string f = write("nophase.json", edited("\"phase\": \"forward\", ", ""));
    EXPECT_THAT(readError(f), HasSubstr("ops[0].phase: missing"));
    const std::string g = write("badshape.json", edited("\"shape\": [\"B*S\", 2]", "\"shape\": [\"B*Q\", 2]"));
    EXPECT_THAT(readError(g), HasSubstr("ops[0].in[0].shape[0]: expected a sum of monomials"));
    const std::string h = write("badstore.json", edited("\"t\": 1,", "\"t\": 7,"));
    EXPECT_THAT(readError(h), HasSubstr("ops[0].in[0].t: expected a storage index below 2"));
}

TEST(OpsImport, AnUnscaledCaptureRunsOnlyAtItsOwnSymbols) {
    const std::string f = write("unscaled.json", edited("\"scaled\": true", "\"scaled\": false"));
    EXPECT_EQ(readError(f, 2, 8), "");
    EXPECT_THAT(readError(f, 4, 8), HasSubstr("not scaled"));
}

std::string timesTable(const OpGraph& g, const std::string& sha, long long b, long long s) {
    return fmt::format(R"({{"format": "stepsim.op_times", "version": 1, "torch": "2.11.0", "device": "NVIDIA H200",
      "capture_sha256": "{}", "symbols": {{"B": {}, "S": {}}}, "ops": [[0, 1, 12.5, 30.0]]}})",
                       sha, b, s);
}

TEST(OpsImport, OpTimesMustNameTheCaptureAndItsSymbols) {
    const std::string f = write("graph.json", minimalGraph());
    OpGraph g = readOpGraph(f);
    readOpTimes(g, write("times.json", timesTable(g, g.sha256, 2, 8)));
    ASSERT_EQ(g.times.size(), 1u);
    EXPECT_TRUE(g.times[0].measured);
    EXPECT_EQ(g.times[0].kernels, 1);
    EXPECT_DOUBLE_EQ(g.times[0].device_us, 12.5);
    const auto error = [&](const std::string& text) {
        OpGraph h = readOpGraph(f);
        try {
            readOpTimes(h, write("bad-times.json", text));
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_THAT(error(timesTable(g, std::string(64, '0'), 2, 8)),
                HasSubstr("capture_sha256: the table was timed for another capture"));
    EXPECT_THAT(error(timesTable(g, g.sha256, 4, 8)), HasSubstr("symbols: the table was timed at B = 4, S = 8"));
    EXPECT_THAT(error(R"({"format": "stepsim.op_times", "version": 1, "capture_sha256": ")" + g.sha256 +
                      R"(", "symbols": {"B": 2, "S": 8}, "ops": []})"),
                HasSubstr("op 0 (aten::mul) is not a view and has no row"));
}

Scenario opsScenario(const std::string& extra) {
    return parseScenario(
        "stepsim: 1\ncluster: {gpus_per_node: 1}\nmodel:\n  type: ops\n  ops: synthetic-step.ops.json.gz\n" + extra,
        dataFile("x.yaml"));
}

std::string loadError(const std::string& extra) {
    try {
        opsScenario(extra);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(OpsImport, TheLoaderReadsTheGraphAtTheScenariosSymbols) {
    const Scenario own = opsScenario("");
    ASSERT_TRUE(own.model.graph);
    EXPECT_EQ(own.training.micro_batch, 2);
    EXPECT_EQ(own.model.seq_len, 64);
    EXPECT_EQ(own.training.param_dtype, DType::fp32);
    EXPECT_EQ(own.training.compute_dtype, DType::bf16);
    const Scenario other = opsScenario("  seq_len: 128\ntraining: {micro_batch: 8}\n");
    EXPECT_EQ(other.model.graph->b, 8);
    EXPECT_EQ(other.model.graph->ops[0].out[0].items[0].shape[0], 8 * 128);
}

TEST(OpsImport, ABuiltInTransformersKeyIsAWarningNotARefusal) {
    const Scenario sc = opsScenario("  hidden: 1024\n  mlp: swiglu\n");
    ASSERT_TRUE(sc.model.graph);
    std::string all;
    for (const std::string& w : sc.warnings) all += w + "\n";
    EXPECT_THAT(all, HasSubstr("key model.hidden (")) << all;
    EXPECT_THAT(all, HasSubstr("x.yaml:"));
    EXPECT_THAT(all, HasSubstr("no effect with model.type ops"));
    EXPECT_THAT(all, HasSubstr("key model.mlp ("));
}

TEST(OpsImport, TheLoaderRefusesWhatTheGraphFixes) {
    EXPECT_THAT(loadError("training: {param_dtype: bf16}\n"), HasSubstr("training.param_dtype: the op graph"));
    EXPECT_THAT(loadError("compile: {enabled: true}\n"), HasSubstr("compile.enabled: torch.compile is not modelled"));
    EXPECT_THAT(loadError("parallel: {tp: 2}\n"), HasSubstr("parallel.tp"));
    EXPECT_THAT(loadError("fsdp: {units: Block}\n"), HasSubstr("fsdp.units"));
    EXPECT_THAT(loadError("  op_times: missing.json\n"), HasSubstr("model.op_times"));
    std::string none;
    try {
        parseScenario("stepsim: 1\nmodel: {type: ops}\n", dataFile("x.yaml"));
    } catch (const InputError& e) {
        none = e.what();
    }
    EXPECT_THAT(none, HasSubstr("model.type: ops needs model.ops"));
}

}  // namespace
}  // namespace stepsim
