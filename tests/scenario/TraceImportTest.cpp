// The profiler-trace import (sim/scenario/TraceImport.hpp) on the hand-built traces of tests/data/trace
// (make_synthetic.py says what each holds) and on the trace captured on an H200 (tests/data/trace/NOTES.md).
#include <array>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/scenario/TraceImport.hpp"

namespace stepsim {
namespace {

std::string data(const std::string& name) {
    return (std::filesystem::path(STEPSIM_SOURCE_DIR) / "tests" / "data" / "trace" / name).string();
}

std::array<int, kKernelClasses> byClass(const TraceStep& t) {
    std::array<int, kKernelClasses> n{};
    for (const TraceActivity& a : t.activities) n[std::size_t(a.cls)]++;
    return n;
}

std::string errorOf(const std::string& file) {
    try {
        importTrace(file);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(TraceImport, SyntheticStepParsesIntoItsKernelsByClass) {
    const TraceStep t = importTrace(data("synthetic-step.json.gz"));
    EXPECT_EQ(t.boundary, "ProfilerStep#2");
    EXPECT_EQ(t.gpu, "NVIDIA H200");
    ASSERT_EQ(t.activities.size(), 22u);
    const auto n = byClass(t);
    EXPECT_EQ(n[std::size_t(KernelClass::gemm)], 12);
    EXPECT_EQ(n[std::size_t(KernelClass::attention)], 2);
    EXPECT_EQ(n[std::size_t(KernelClass::memory)], 5);
    EXPECT_EQ(n[std::size_t(KernelClass::optimizer)], 1);
    EXPECT_EQ(n[std::size_t(KernelClass::copy)], 1);
    EXPECT_EQ(n[std::size_t(KernelClass::comm)], 0);
    EXPECT_EQ(n[std::size_t(KernelClass::other)], 1);
    EXPECT_EQ(t.streams, std::vector<std::string>{"stream 7"});
    // Forward GEMMs 512x256x256: 512 tokens; each MmBackward0's second mm reduces over them (a weight gradient).
    EXPECT_EQ(t.tokens, 512);
    int grads = 0, backward = 0, forward = 0, optimizer = 0;
    for (const TraceActivity& a : t.activities) {
        grads += a.weight_grad;
        backward += a.phase == Phase::backward;
        forward += a.phase == Phase::forward;
        optimizer += a.phase == Phase::optimizer;
        if (a.weight_grad) EXPECT_EQ((std::array<long, 3>{a.shape.m, a.shape.n, a.shape.k}), (std::array<long, 3>{256, 256, 512}));
    }
    EXPECT_EQ(grads, 4);
    EXPECT_EQ(forward, 10);
    EXPECT_EQ(backward, 10);
    EXPECT_EQ(optimizer, 2);  // the memset under Optimizer.step and the fused Adam kernel
    // The trace's step: the second step's GPU end (2389 us) minus the first's (1202 us).
    EXPECT_TRUE(t.step_from_previous);
    EXPECT_NEAR(t.step_us, 2389.0 - 1202.0, 1e-9);
    // Queued kernels: their device gap is the 2 us the generator leaves between kernels.
    EXPECT_NEAR(t.activities[1].gap_us, 2.0, 1e-9);
}

TEST(TraceImport, NoGpuActivityIsALocatedError) {
    const std::string e = errorOf(data("no-gpu.json"));
    EXPECT_NE(e.find("no-gpu.json: traceEvents: no GPU activity"), std::string::npos) << e;
}

TEST(TraceImport, NoStepBoundaryIsALocatedError) {
    const std::string e = errorOf(data("no-step.json"));
    EXPECT_NE(e.find("no-step.json: traceEvents: no step boundary"), std::string::npos) << e;
}

TEST(TraceImport, MissingFileIsALocatedError) {
    const std::string e = errorOf(data("absent.json"));
    EXPECT_NE(e.find("absent.json: cannot open the trace file"), std::string::npos) << e;
}

TEST(TraceImport, ScenarioNamesTheKeyAndTheTrace) {
    const std::string yaml = "stepsim: 1\ncluster: {gpus_per_node: 1}\nmodel:\n  type: trace\n  trace: no-gpu.json\n";
    try {
        parseScenario(yaml, data("x.yaml"));
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("x.yaml:5: model.trace: "), std::string::npos) << m;
        EXPECT_NE(m.find("no-gpu.json: traceEvents: no GPU activity"), std::string::npos) << m;
    }
}

TEST(TraceImport, TransformerKeysBesideATraceHaveNoEffect) {
    const std::string yaml =
        "stepsim: 1\ncluster: {gpus_per_node: 1}\nmodel:\n  type: trace\n  trace: synthetic-step.json.gz\n  layers: 4\n";
    const Scenario sc = parseScenario(yaml, data("x.yaml"));
    ASSERT_EQ(sc.warnings.size(), 1u);
    EXPECT_NE(sc.warnings[0].find("key model.layers (" + data("x.yaml") + ":6) has no effect with model.type: trace"),
              std::string::npos)
        << sc.warnings[0];
}

TEST(TraceImport, ExplainReportsWhatWasImported) {
    const Scenario sc = parseScenario(
        "stepsim: 1\ncluster: {gpus_per_node: 1}\nmodel:\n  type: trace\n  trace: synthetic-step.json.gz\n", data("x.yaml"));
    ASSERT_TRUE(sc.model.imported);
    const std::string text = explainScenario(sc);
    for (const char* what : {"step ProfilerStep#2 (22 GPU activities, 1 streams)", "trace step time 1.187 ms",
                             "gemm         12 kernels", "stream 7: 22 activities", "unknown kernels 1 (0.030 ms)",
                             "weight gradients from backward GEMMs 4 (262144 parameters; tokens 512)"})
        EXPECT_NE(text.find(what), std::string::npos) << what << "\n" << text;
}

}  // namespace
}  // namespace stepsim

namespace stepsim {
namespace {

// The trace of the 4-layer GPT captured on an H200 (tests/data/trace/NOTES.md): one stream, no collectives, the
// kernels of its last ProfilerStep by class as the classifier names them, and the 17 weight gradients of its Linears
// (4 layers of qkv, proj, fc, fc_out and the LM head) over its 8192 tokens.
TEST(TraceImport, CapturedGptStepParsesIntoItsKernelsByClass) {
    const TraceStep t = importTrace(std::string(STEPSIM_SOURCE_DIR) + "/tests/data/trace/gpt-l4-h768-s1024-mb8-1xh200.json.gz");
    EXPECT_EQ(t.boundary, "ProfilerStep#4");
    EXPECT_EQ(t.gpu, "NVIDIA H200");
    EXPECT_EQ(t.streams.size(), 1u);
    EXPECT_EQ(t.activities.size(), 255u);
    const auto n = byClass(t);
    EXPECT_EQ(n[std::size_t(KernelClass::gemm)], 51);
    EXPECT_EQ(n[std::size_t(KernelClass::comm)], 0);
    EXPECT_EQ(t.tokens, 8192);
    int grads = 0;
    double params = 0;
    for (const TraceActivity& a : t.activities)
        if (a.weight_grad) ++grads, params += double(a.shape.m) * double(a.shape.n);
    EXPECT_EQ(grads, 17);
    // 4·(768·2304 + 768·768 + 768·3072 + 3072·768) + 50304·768
    EXPECT_DOUBLE_EQ(params, 4.0 * (768 * 2304 + 768 * 768 + 768 * 3072 + 3072 * 768) + 50304.0 * 768);
    EXPECT_EQ(t.host_collectives, 0);
}

// The repeated blocks (FSDP units, TraceImportUnits.hpp): the 4 transformer blocks, 19 forward activities each
// (LayerNorm to the MLP's residual add), their backward each one span in reverse order; the parameters from the ops
// that make their gradients: per block its 4 Linear weights and 2 LayerNorms' weight and bias; the root the LM head,
// the token embedding and the final LayerNorm (the position embedding's gradient is a slice's: not found).
TEST(TraceImport, CapturedGptStepHasFourRepeatedBlocks) {
    const TraceStep t = importTrace(std::string(STEPSIM_SOURCE_DIR) + "/tests/data/trace/gpt-l4-h768-s1024-mb8-1xh200.json.gz");
    ASSERT_EQ(t.units, 4) << t.units_note;
    EXPECT_EQ(t.unit_activities, 19);
    std::array<double, 5> params{};
    std::array<int, 5> tensors{};
    for (const TraceParam& p : t.params) {
        params[std::size_t(p.unit + 1)] += p.numel;
        tensors[std::size_t(p.unit + 1)] += p.tensors;
    }
    for (int u = 0; u < 4; ++u) {
        EXPECT_DOUBLE_EQ(params[std::size_t(u + 1)], 768.0 * 2304 + 768 * 768 + 3072 * 768 + 768 * 3072 + 4 * 768) << u;
        EXPECT_EQ(tensors[std::size_t(u + 1)], 8) << u;
    }
    EXPECT_DOUBLE_EQ(params[0], 2 * 50304.0 * 768 + 2 * 768);
    EXPECT_EQ(tensors[0], 4);
    // The forward's blocks in order, none of the root's activities (embeddings before, final norm and head after).
    int last = -1, forward_in_blocks = 0;
    for (const TraceActivity& a : t.activities) {
        if (a.phase != Phase::forward || a.unit < 0) continue;
        EXPECT_GE(a.unit, last);
        last = a.unit;
        ++forward_in_blocks;
    }
    EXPECT_EQ(forward_in_blocks, 4 * 19);
    EXPECT_EQ(t.activities[2].unit, 0);  // block 0 starts at its first LayerNorm, after the embeddings' two kernels
    EXPECT_EQ(t.activities[1].unit, -1);
}

// explain states the blocks found and the profiler's host overhead against the scenario's profile (TraceHostCost.hpp).
TEST(TraceImport, ExplainStatesTheBlocksAndTheProfilersOverhead) {
    const Scenario sc = parseScenario("stepsim: 1\ncluster: {gpus_per_node: 1}\nmodel:\n  type: trace\n  trace: "
                                      "gpt-l4-h768-s1024-mb8-1xh200.json.gz\n", data("x.yaml"));
    const std::string text = explainScenario(sc);
    for (const char* what : {"repeated blocks (FSDP units) 4, 19 forward activities each; parameters per block 7080960, "
                             "7080960, 7080960, 7080960; root 77268480",
                             "host time a step: traced 11.322 ms", "the profiler's overhead"})
        EXPECT_NE(text.find(what), std::string::npos) << what << "\n" << text;
}

// The synthetic step's forward repeats GEMM and GELU four times, but its backward ops carry no autograd sequence
// numbers: no block's backward is found, so it has no blocks, and says why.
TEST(TraceImport, SyntheticStepHasNoBlocksAndSaysWhy) {
    const TraceStep t = importTrace(data("synthetic-step.json.gz"));
    EXPECT_EQ(t.units, 0);
    EXPECT_NE(t.units_note.find("block 0 of the 4 repeated in the forward has no backward found"), std::string::npos)
        << t.units_note;
    for (const TraceActivity& a : t.activities) EXPECT_EQ(a.unit, -1);
    EXPECT_EQ(t.params.size(), 4u);  // the 4 weight gradients, all in the root
}

// The DDP step at world size 1: its all-reduces ran no NCCL kernel, and the host's are counted.
TEST(TraceImport, DdpWorldOneTraceCountsItsHostCollectives) {
    const TraceStep t =
        importTrace(std::string(STEPSIM_SOURCE_DIR) + "/tests/data/trace/gpt-l4-h768-s1024-mb8-ddp1-1xh200.json.gz");
    EXPECT_GT(t.host_collectives, 0);
    for (const TraceActivity& a : t.activities) EXPECT_NE(a.cls, KernelClass::comm);
}

}  // namespace
}  // namespace stepsim
