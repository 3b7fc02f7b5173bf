// A profiler trace's step as Programs (sim/workload/TraceSchedule.hpp): replayed unchanged it takes the trace's own
// step time; wrapped in DDP, more ranks change only the communication and what waits on it; another GPU's profile
// rescales its kernels by class; what it cannot model is refused at its key.
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/workload/Expand.hpp"

namespace stepsim {
namespace {

std::string dataFile(const std::string& name) {
    return (std::filesystem::path(STEPSIM_SOURCE_DIR) / "tests" / "data" / "trace" / name).string();
}

Scenario traceScenario(int gpus, const std::string& extra = "", const std::string& trace = "synthetic-step.json.gz") {
    return parseScenario(fmt::format("stepsim: 1\ncluster: {{gpus_per_node: {}}}\nmodel:\n  type: trace\n  trace: {}\n"
                                     "jitter: {{enabled: false}}\nsim: {{steps: 4}}\n{}",
                                     gpus, trace, extra),
                         dataFile("x.yaml"));
}

std::string errorOf(const Scenario& sc) {
    try {
        const HardwareProfile prof = builtinProfile("h200x2");
        const CostModel cost(prof, sc.nccl, true);
        expand(sc, cost);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

// The compute kernels of a program (everything but collectives, DDP's bucket copies and event ops), in order.
std::vector<std::pair<std::string, double>> computeKernels(const Program& p) {
    std::vector<std::pair<std::string, double>> out;
    for (const Op& op : p.ops)
        if (op.kind == OpKind::kernel && op.cls != KernelClass::copy) out.push_back({p.names[op.name], op.work_s});
    return out;
}

TEST(TraceSchedule, ReplayUnchangedTakesTheTracesStepWithinThreePercent) {
    const Scenario sc = traceScenario(1);
    const Simulation s = simulate(sc, builtinProfile("h200x2"));
    const double trace_ms = sc.model.imported->step_us * 1e-3;
    EXPECT_NEAR(s.results.step_time_ms, trace_ms, 0.03 * trace_ms) << "replay " << s.results.step_time_ms;
    EXPECT_EQ(s.expansion.workload.programs.size(), 1u);
    EXPECT_DOUBLE_EQ(s.results.comm_busy_ms, 0.0);
}

TEST(TraceSchedule, DoublingDataParallelRanksChangesOnlyCommunication) {
    const HardwareProfile prof = builtinProfile("h200x2");
    const Simulation one = simulate(traceScenario(1), prof);
    const Simulation two = simulate(traceScenario(2), prof);
    const Simulation four = simulate(traceScenario(4), prof);
    const Program& p1 = one.expansion.workload.programs.front();
    const Program& p2 = two.expansion.workload.programs.front();
    const Program& p4 = four.expansion.workload.programs.front();
    // The same compute kernels, in the same order, at the same durations; DDP's buckets the same at 2 and 4 ranks.
    EXPECT_EQ(computeKernels(p2), computeKernels(p1));
    EXPECT_EQ(computeKernels(p4), computeKernels(p2));
    ASSERT_EQ(p2.ops.size(), p4.ops.size());
    ASSERT_EQ(p2.collectives.size(), p4.collectives.size());
    EXPECT_GT(p2.collectives.size(), 0u);
    for (std::size_t i = 0; i < p2.ops.size(); ++i) {
        EXPECT_EQ(p2.ops[i].kind, p4.ops[i].kind);
        EXPECT_EQ(p2.ops[i].work_s, p4.ops[i].work_s);
        EXPECT_EQ(p2.ops[i].host_s, p4.ops[i].host_s);
    }
    for (std::size_t i = 0; i < p2.collectives.size(); ++i)
        EXPECT_EQ(p2.collectives[i].bytes, p4.collectives[i].bytes);
    // 4 weight gradients of 256x256 fp32: DDP reduces 4·65536·4 bytes a step.
    double bytes = 0;
    for (const CollectiveCall& c : p2.collectives) bytes += c.bytes;
    EXPECT_DOUBLE_EQ(bytes, 4.0 * (4 * 65536 * 4));  // sim.steps 4, each step all of them
    EXPECT_EQ(two.expansion.workload.groups.front().ranks.size(), 2u);
    EXPECT_EQ(four.expansion.workload.groups.front().ranks.size(), 4u);
    // Simulated: communication now runs, and the step takes no less than the one-GPU replay.
    EXPECT_GT(two.results.comm_busy_ms, 0.0);
    EXPECT_GT(four.results.comm_busy_ms, 0.0);
    EXPECT_GE(two.results.step_time_ms, one.results.step_time_ms);
}

TEST(TraceSchedule, TraceParamsAddTheGradientsTheGemmsMiss) {
    const HardwareProfile prof = builtinProfile("h200x2");
    const CostModel cost(prof, NcclSpec{}, true);
    const Expansion plain = expand(traceScenario(2), cost);
    const Expansion more = expand(traceScenario(2, "", "synthetic-step.json.gz\n  trace_params: 1000000"), cost);
    EXPECT_DOUBLE_EQ(plain.params, 4.0 * 65536);
    EXPECT_DOUBLE_EQ(more.params, 1e6);
    const std::string e = errorOf(traceScenario(2, "", "synthetic-step.json.gz\n  trace_params: 1000"));
    EXPECT_NE(e.find("model.trace_params: expected at least the 262144 parameters"), std::string::npos) << e;
}

TEST(TraceSchedule, AnotherGpusProfileRescalesKernelsByClass) {
    const Scenario sc = traceScenario(1);
    const HardwareProfile h200 = builtinProfile("h200x2");
    const CostModel same(h200, sc.nccl, true);
    const HardwareProfile h100 = builtinProfile("h100-sxm");
    const CostModel other(h100, sc.nccl, true);
    const Program a = expand(sc, same).workload.programs.front();
    const Program b = expand(sc, other).workload.programs.front();
    ASSERT_EQ(a.ops.size(), b.ops.size());
    int checked = 0;
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
        const Op& x = a.ops[i];
        if (x.kind != OpKind::kernel) continue;
        const double gap = x.gap_s;
        double f = 1.0;
        if (x.cls == KernelClass::gemm || x.cls == KernelClass::attention)
            f = h200.gpu.peak_tflops_bf16 / h100.gpu.peak_tflops_bf16;
        if (x.cls == KernelClass::memory || x.cls == KernelClass::optimizer || x.cls == KernelClass::copy)
            f = h200.gpu.hbm_gbps / h100.gpu.hbm_gbps;
        EXPECT_NEAR(b.ops[i].work_s - gap, (x.work_s - gap) * f, 1e-12) << i;
        ++checked;
    }
    EXPECT_EQ(checked, 4 * 22);
}

TEST(TraceSchedule, WhatItDoesNotModelIsRefusedAtItsKey) {
    EXPECT_NE(errorOf(traceScenario(2, "parallel: {data: fsdp2}\n")).find("parallel.data"), std::string::npos);
    EXPECT_NE(errorOf(traceScenario(1, "compile: {enabled: true}\n")).find("compile.enabled"), std::string::npos);
    EXPECT_NE(errorOf(traceScenario(1, "fp8: {enabled: true}\n")).find("fp8.enabled"), std::string::npos);
    EXPECT_NE(errorOf(traceScenario(1, "training: {grad_accum: 2}\n")).find("training.grad_accum"), std::string::npos);
}

}  // namespace
}  // namespace stepsim

namespace stepsim {
namespace {

// The trace captured on an H200 (tests/data/trace/NOTES.md), replayed unchanged on the H200 profile: within 3% of
// the trace's own step.
TEST(TraceSchedule, CapturedGptStepReplaysWithinThreePercent) {
    const Scenario sc = traceScenario(1, "", "gpt-l4-h768-s1024-mb8-1xh200.json.gz");
    const Simulation s = simulate(sc, builtinProfile("h200x2"));
    const double trace_ms = sc.model.imported->step_us * 1e-3;
    EXPECT_NEAR(s.results.step_time_ms, trace_ms, 0.03 * trace_ms) << "replay " << s.results.step_time_ms;
}

// A DDP step traced at world size 1 replays at one rank, and a larger world is refused at its key.
TEST(TraceSchedule, DdpWorldOneTraceIsNotWrappedAgain) {
    EXPECT_EQ(errorOf(traceScenario(1, "", "gpt-l4-h768-s1024-mb8-ddp1-1xh200.json.gz")), "");
    const std::string e = errorOf(traceScenario(2, "", "gpt-l4-h768-s1024-mb8-ddp1-1xh200.json.gz"));
    EXPECT_NE(e.find("cluster.gpus_per_node: the trace's step issued"), std::string::npos) << e;
}

}  // namespace
}  // namespace stepsim
