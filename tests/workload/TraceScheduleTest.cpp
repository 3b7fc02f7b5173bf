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
#include "sim/workload/Fsdp2Schedule.hpp"

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

// The loader refuses them at the key's line (sim/base/TraceSupport.hpp); the expansion again for a Scenario changed
// in code.
TEST(TraceSchedule, WhatItDoesNotModelIsRefusedAtItsKey) {
    const auto loadError = [](const std::string& extra) {
        try {
            traceScenario(1, extra);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    // The scenario's lines: stepsim, cluster, model, type, trace, jitter, sim, then `extra` from line 8.
    EXPECT_NE(loadError("parallel: {data: zero3}\n").find("x.yaml:8: parallel.data"), std::string::npos);
    const std::string compile = loadError("compile:\n  enabled: true\n");
    EXPECT_NE(compile.find("x.yaml:9: compile.enabled: torch.compile is not modelled from a trace"), std::string::npos) << compile;
    EXPECT_NE(compile.find("profile the compiled step"), std::string::npos) << compile;
    const std::string fp8 = loadError("fp8:\n  enabled: true\n");
    EXPECT_NE(fp8.find("x.yaml:9: fp8.enabled: FP8 training is not modelled from a trace"), std::string::npos) << fp8;
    EXPECT_NE(loadError("training: {grad_accum: 2}\n").find("x.yaml:8: training.grad_accum"), std::string::npos);
    EXPECT_NE(loadError("parallel: {data: fsdp2}\nfsdp: {param_dtype: bf16}\n").find("x.yaml:9: fsdp.param_dtype"),
              std::string::npos);
    Scenario sc = traceScenario(1);
    sc.compile.enabled = true;
    EXPECT_NE(errorOf(sc).find("compile.enabled"), std::string::npos);
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

namespace stepsim {
namespace {

const std::string kGpt = "gpt-l4-h768-s1024-mb8-1xh200.json.gz";

Expansion expandGpt(int gpus, const std::string& extra) {
    const HardwareProfile prof = builtinProfile("h200x2");
    const Scenario sc = traceScenario(gpus, extra, kGpt + "\n  trace_params: 106378752");
    const CostModel cost(prof, sc.nccl, true);
    return expand(sc, cost);
}

// The collectives of a program's first step by kind: their names and bytes, in program order.
std::vector<std::pair<std::string, double>> collectivesOf(const Program& p, CollectiveKind kind, std::uint8_t stream) {
    std::vector<std::pair<std::string, double>> out;
    for (const Op& op : p.ops)
        if (op.kind == OpKind::collective && op.step == 0 && p.collectives[op.collective].kind == kind) {
            EXPECT_EQ(op.stream, stream) << p.names[op.name];
            out.push_back({p.names[op.name], p.collectives[op.collective].bytes});
        }
    return out;
}

// The 4-layer GPT's blocks (4 GEMM weights, 2 LayerNorms, as the trace's backward makes their gradients) and root (LM
// head, token and position embeddings, final LayerNorm: the position embedding's gradient, a slice's, is not found,
// model.trace_params gives the rest); fp32 parameters.
constexpr double kBlock = 768.0 * 2304 + 768 * 768 + 3072 * 768 + 768 * 3072 + 2 * 2 * 768;
constexpr double kRoot = 50304.0 * 768 * 2 + 1024 * 768 + 2 * 768;

// FSDP2 over the one-GPU trace: an all-gather per block before its forward and again before its backward (resharded
// after forward), one without; the root's once; a reduce-scatter per unit after its backward; each on its own stream.
TEST(TraceSchedule, Fsdp2CollectivesPerStepFromTheTrace) {
    const Expansion e = expandGpt(2, "parallel: {data: fsdp2}\n");
    EXPECT_DOUBLE_EQ(e.params, 4 * kBlock + kRoot);
    EXPECT_DOUBLE_EQ(e.params, 106378752.0);  // the model's parameters (calibration/validation/configs.py)
    const Program& p = e.workload.programs.front();
    const auto ag = collectivesOf(p, CollectiveKind::all_gather, Fsdp2Schedule::kAllGatherStream);
    const auto rs = collectivesOf(p, CollectiveKind::reduce_scatter, Fsdp2Schedule::kReduceScatterStream);
    const std::vector<std::string> ag_order = {"root", "h.0", "h.1", "h.2", "h.3", "h.3", "h.2", "h.1", "h.0"};
    ASSERT_EQ(ag.size(), ag_order.size());
    for (std::size_t i = 0; i < ag.size(); ++i) {
        EXPECT_EQ(ag[i].first.substr(0, ag[i].first.find(' ')), ag_order[i]) << ag[i].first;
        EXPECT_DOUBLE_EQ(ag[i].second, 4 * (i == 0 ? kRoot : kBlock)) << ag[i].first;
    }
    const std::vector<std::string> rs_order = {"h.3", "h.2", "h.1", "h.0", "root"};
    ASSERT_EQ(rs.size(), rs_order.size());
    for (std::size_t i = 0; i < rs.size(); ++i) {
        EXPECT_EQ(rs[i].first.substr(0, rs[i].first.find(' ')), rs_order[i]) << rs[i].first;
        EXPECT_DOUBLE_EQ(rs[i].second, 4 * (i + 1 == rs.size() ? kRoot : kBlock)) << rs[i].first;
    }
    const Expansion keep = expandGpt(2, "parallel: {data: fsdp2}\nfsdp: {reshard_after_forward: false}\n");
    const Program& k = keep.workload.programs.front();
    EXPECT_EQ(collectivesOf(k, CollectiveKind::all_gather, Fsdp2Schedule::kAllGatherStream).size(), 5u);
    EXPECT_EQ(collectivesOf(k, CollectiveKind::reduce_scatter, Fsdp2Schedule::kReduceScatterStream).size(), 5u);
}

// Stream order: each block's all-gather is issued before its first forward kernel and waited for by the compute
// stream; its reduce-scatter after its last backward kernel; the optimizer after the last reduce-scatter.
TEST(TraceSchedule, Fsdp2StreamOrder) {
    const Expansion e = expandGpt(2, "parallel: {data: fsdp2}\n");
    const Program& p = e.workload.programs.front();
    const Scenario traced = traceScenario(1, "", kGpt);  // holds the imported step `t` refers to
    const TraceStep& t = *traced.model.imported;
    ASSERT_EQ(t.units, 4);
    ASSERT_EQ(t.unit_activities, 19);
    // Program positions of the trace's kernels (step 0, in order) and of the collectives.
    std::vector<std::size_t> kernel_at;
    std::size_t first_rs = 0, last_rs = 0, first_opt = 0;
    std::vector<std::size_t> ag_at;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (op.step != 0) continue;
        if (op.kind == OpKind::kernel && op.stream == kComputeStream && p.names[op.name].find("fsdp") == std::string::npos)
            kernel_at.push_back(i);
        if (op.kind == OpKind::collective && p.collectives[op.collective].kind == CollectiveKind::all_gather)
            ag_at.push_back(i);
        if (op.kind == OpKind::collective && p.collectives[op.collective].kind == CollectiveKind::reduce_scatter) {
            if (!first_rs) first_rs = i;
            last_rs = i;
        }
        if (op.kind == OpKind::kernel && op.phase == Phase::optimizer && !first_opt) first_opt = i;
    }
    ASSERT_EQ(kernel_at.size(), t.activities.size());
    std::size_t fwd0 = 0;
    while (t.activities[fwd0].unit != 0) ++fwd0;
    for (int u = 0; u < 4; ++u) EXPECT_LT(ag_at[std::size_t(1 + u)], kernel_at[fwd0 + std::size_t(19 * u)]) << u;
    std::size_t last_bwd3 = 0;
    for (std::size_t i = 0; i < t.activities.size(); ++i)
        if (t.activities[i].unit == 3 && t.activities[i].phase == Phase::backward) last_bwd3 = i;
    EXPECT_GT(first_rs, kernel_at[last_bwd3]);
    EXPECT_GT(first_opt, last_rs);
}

// Doubling the ranks changes only communication and what waits on it: the trace's kernels are the same but for the
// optimizer's (the local shard halves); the collectives the same in number and size (nccl-tests' S is the whole
// buffer); FSDP's copy-in kernels move their shard (half); the simulated step is no shorter for the same compute.
TEST(TraceSchedule, Fsdp2DoublingRanksChangesOnlyCommunication) {
    const Expansion two = expandGpt(2, "parallel: {data: fsdp2}\n");
    const Expansion four = expandGpt(4, "parallel: {data: fsdp2}\n");
    const Program& a = two.workload.programs.front();
    const Program& b = four.workload.programs.front();
    ASSERT_EQ(a.ops.size(), b.ops.size());
    ASSERT_EQ(a.collectives.size(), b.collectives.size());
    int optimizer = 0;
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
        const Op& x = a.ops[i];
        const Op& y = b.ops[i];
        EXPECT_EQ(x.kind, y.kind);
        EXPECT_EQ(x.stream, y.stream);
        EXPECT_EQ(x.host_s, y.host_s);
        if (x.kind != OpKind::kernel) continue;
        const std::string name = a.names[x.name];
        if (x.phase == Phase::optimizer) {
            EXPECT_NEAR(y.work_s - y.gap_s, (x.work_s - x.gap_s) / 2, 1e-12) << name;
            ++optimizer;
        } else if (name.find("fsdp") == std::string::npos) {
            EXPECT_EQ(x.work_s, y.work_s) << name;
        }
    }
    EXPECT_EQ(optimizer, 4 * 7);
    for (std::size_t i = 0; i < a.collectives.size(); ++i) EXPECT_EQ(a.collectives[i].bytes, b.collectives[i].bytes);
    EXPECT_EQ(four.workload.groups.front().ranks.size(), 4u);
}

// The profile's host costs in place of the traced ones (model.trace_host: profile): the same GPU work, the host's
// launches at the profile's cost per phase, no host time outside them.
TEST(TraceSchedule, ProfileHostCostsReplaceTheTracedOnes) {
    const HardwareProfile prof = builtinProfile("h200x2");
    const Scenario traced = traceScenario(1, "", kGpt);
    const Scenario profiled = traceScenario(1, "", kGpt + "\n  trace_host: profile");
    const CostModel cost(prof, traced.nccl, true);
    const Program a = expand(traced, cost).workload.programs.front();
    const Expansion e = expand(profiled, cost);
    const Program& b = e.workload.programs.front();
    ASSERT_EQ(a.ops.size(), b.ops.size());
    double host_a = 0, host_b = 0;
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
        EXPECT_EQ(a.ops[i].work_s, b.ops[i].work_s);
        if (a.ops[i].step != 0) continue;
        host_a += a.ops[i].host_s;
        host_b += b.ops[i].host_s;
        if (b.ops[i].kind != OpKind::kernel) continue;
        const double want = b.ops[i].phase == Phase::forward    ? prof.launch.forward_host.median_us
                            : b.ops[i].phase == Phase::backward ? prof.launch.backward_host.median_us
                                                                : -1;
        if (want > 0) EXPECT_NEAR(b.ops[i].host_s, want * 1e-6, 1e-12);
    }
    const TraceStep& t = *traced.model.imported;
    EXPECT_NEAR(host_a, (t.cpu_end_us - t.cpu_start_us) * 1e-6, 1e-9);
    EXPECT_LT(host_b, host_a);
    bool stated = false;
    for (const std::string& w : e.warnings) stated = stated || w.find("the profiler's overhead") != std::string::npos;
    EXPECT_TRUE(stated);
}

}  // namespace
}  // namespace stepsim
