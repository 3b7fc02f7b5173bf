// CompileTransform, through expand: what torch.compile does to a step's kernels, launches and collectives.
#include "sim/workload/CompileTransform.hpp"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/workload/Expand.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

// A profile with compile rates of the kind the fit makes (fewer, faster kernels per region; graph calls cost the host).
HardwareProfile compiledProfile() {
    HardwareProfile p = builtinProfile("h200-sxm");
    p.compile.measured = true;
    p.compile.forward = {1.5, 0.6};
    p.compile.backward = {2.0, 0.65};
    p.compile.gemm_time_ratio = 1.0;
    p.compile.gemm_time_ratio_max_autotune = 0.9;
    p.compile.graph_host_us = 300;
    p.compile.kernel_host_ratio = 0.9;
    p.compile.cudagraph_kernel_host_us = 2;
    p.compile.compile_s_per_block = 3;
    p.compile.compile_s_per_block_max_autotune = 60;
    return p;
}

Scenario compiled(Scenario sc, CompileMode mode = CompileMode::default_) {
    sc.compile.enabled = true;
    sc.compile.fullgraph = true;
    sc.compile.mode = mode;
    return sc;
}

struct StepTotals {
    int kernels = 0, collectives = 0, graph_calls = 0;
    double bytes = 0, work_s = 0, kernel_host_s = 0, host_work_s = 0;
};

StepTotals totals(const Program& p, int step = 1) {
    StepTotals t;
    for (const Op& op : p.ops) {
        if (op.step != step) continue;
        if (op.kind == OpKind::kernel) {
            ++t.kernels;
            t.bytes += op.bytes;
            t.work_s += op.work_s;
            t.kernel_host_s += op.host_s;
        } else if (op.kind == OpKind::collective) {
            ++t.collectives;
        } else if (op.kind == OpKind::host_work) {
            t.host_work_s += op.host_s;
            const std::string& n = p.names[op.name];
            if (n == "compiled graph call" || n == "CUDA graph replay") ++t.graph_calls;
        }
    }
    return t;
}

// Inductor fuses each run of memory-bound kernels: the compiled step launches fewer kernels, moves fewer bytes and
// takes less kernel time than the eager one of the same model.
TEST(CompileTransform, CompiledStepLaunchesFewerKernelsAndMovesFewerBytes) {
    const HardwareProfile prof = compiledProfile();
    CostModel cost(prof, NcclSpec{}, true);
    const StepTotals eager = totals(expand(tiny(1), cost).workload.programs[0]);
    const Expansion ce = expand(compiled(tiny(1)), cost);
    const StepTotals comp = totals(ce.workload.programs[0]);
    EXPECT_LT(comp.kernels, eager.kernels);
    EXPECT_LT(comp.bytes, eager.bytes);
    EXPECT_LT(comp.work_s, eager.work_s);
    EXPECT_EQ(comp.graph_calls, 2);  // one forward graph, one backward graph
    EXPECT_DOUBLE_EQ(ce.compile_time_s, 3.0 * 2);
}

// Under CUDA graphs (reduce-overhead) a kernel costs the host only what remains per kernel in a replay, not its
// launch: the step's kernel host time falls to kernels × cudagraph_kernel_host_us.
TEST(CompileTransform, CudaGraphsRemoveThePerKernelLaunchCost) {
    HardwareProfile prof = compiledProfile();
    prof.compile.cudagraph_kernel_host_us = 0;
    CostModel cost(prof, NcclSpec{}, true);
    const Program def = expand(compiled(tiny(1)), cost).workload.programs[0];
    const Program ro = expand(compiled(tiny(1), CompileMode::reduce_overhead), cost).workload.programs[0];
    double territory_host_ro = 0, territory_host_def = 0;
    for (const Program* p : {&def, &ro})
        for (const Op& op : p->ops)
            if (op.step == 1 && op.kind == OpKind::kernel && (op.phase == Phase::forward || op.phase == Phase::backward) &&
                op.cls != KernelClass::copy && p->names[op.name].find("loss") == std::string::npos &&
                p->names[op.name].find("log_softmax") == std::string::npos &&
                p->names[op.name].find("logits") == std::string::npos)
                (p == &ro ? territory_host_ro : territory_host_def) += op.host_s;
    EXPECT_GT(territory_host_def, 0.0);
    EXPECT_EQ(territory_host_ro, 0.0);
    EXPECT_EQ(totals(ro).graph_calls, 2);
}

// graph_breaks: N breaks make N + 1 graphs of the forward and of the backward, each call paying graph_host_us.
TEST(CompileTransform, GraphBreaksAddGraphCalls) {
    const HardwareProfile prof = compiledProfile();
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = compiled(tiny(1));
    sc.compile.fullgraph = false;
    sc.compile.graph_breaks = 1;
    const StepTotals t = totals(expand(sc, cost).workload.programs[0]);
    EXPECT_EQ(t.graph_calls, 4);
}

// optimize_ddp none: one graph for the whole backward, so DDP's hooks fire after it and every all-reduce is launched
// after the last backward kernel of the model; ddp_optimizer launches the first bucket before it.
TEST(CompileTransform, OptimizeDdpNoneStartsEveryAllReduceAfterTheLastBackwardKernel) {
    const HardwareProfile prof = compiledProfile();
    CostModel cost(prof, NcclSpec{}, true);
    auto firstCollectiveAfterLastBackward = [&](DdpCompileStrategy strategy) {
        Scenario sc = compiled(tiny(2));
        sc.compile.optimize_ddp = strategy;
        sc.ddp.bucket_cap_mb = 1;
        const Program p = expand(sc, cost).workload.programs[0];
        std::size_t last_backward = 0, first_collective = p.ops.size();
        for (std::size_t i = 0; i < p.ops.size(); ++i) {
            const Op& op = p.ops[i];
            if (op.step != 1) continue;
            if (op.kind == OpKind::kernel && op.phase == Phase::backward && op.cls != KernelClass::copy) last_backward = i;
            if (op.kind == OpKind::collective) first_collective = std::min(first_collective, i);
        }
        return first_collective > last_backward;
    };
    EXPECT_TRUE(firstCollectiveAfterLastBackward(DdpCompileStrategy::no_optimization));
    EXPECT_FALSE(firstCollectiveAfterLastBackward(DdpCompileStrategy::ddp_optimizer));
}

// ddp_optimizer splits the backward graph after each bucket's all-reduce: more graph calls than python_reducer's one.
TEST(CompileTransform, DdpOptimizerSplitsTheGraphsAtBuckets) {
    const HardwareProfile prof = compiledProfile();
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = compiled(tiny(2));
    sc.ddp.bucket_cap_mb = 1;
    const Expansion split = expand(sc, cost);
    sc.compile.optimize_ddp = DdpCompileStrategy::python_reducer;
    const Expansion traced = expand(sc, cost);
    EXPECT_GT(split.buckets.size(), 1u);
    EXPECT_GT(totals(split.workload.programs[0]).graph_calls, totals(traced.workload.programs[0]).graph_calls);
    EXPECT_EQ(totals(traced.workload.programs[0]).graph_calls, 2);
}

// comm_fusion_depth k merges k consecutive all-reduces into one: the count falls to ceil(n / k), the bytes stay.
TEST(CompileTransform, FusionDepthDividesTheCollectiveCount) {
    const HardwareProfile prof = compiledProfile();
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = compiled(tiny(2));
    sc.ddp.bucket_cap_mb = 0.25;
    const StepTotals one = totals(expand(sc, cost).workload.programs[0]);
    ASSERT_GE(one.collectives, 6);
    for (int k : {2, 3, 4}) {
        sc.compile.comm_fusion_depth = k;
        const Program p = expand(sc, cost).workload.programs[0];
        double bytes = 0, bytes_one = 0;
        for (const Op& op : p.ops)
            if (op.step == 1 && op.kind == OpKind::collective) bytes += op.bytes;
        sc.compile.comm_fusion_depth = 1;
        const Program unfused = expand(sc, cost).workload.programs[0];
        for (const Op& op : unfused.ops)
            if (op.step == 1 && op.kind == OpKind::collective) bytes_one += op.bytes;
        EXPECT_EQ(totals(p).collectives, (one.collectives + k - 1) / k) << "k = " << k;
        EXPECT_DOUBLE_EQ(bytes, bytes_one);
    }
}

// Functional collectives with the wait deferred to first use hide at least the communication that synchronous ones
// (the compute stream waiting at each launch) hide, and the synchronous ones expose some.
TEST(CompileTransform, AsyncCollectivesHideAtLeastWhatSynchronousOnesHide) {
    const HardwareProfile prof = compiledProfile();
    Scenario sc = compiled(tiny(8));
    sc.jitter.enabled = false;
    sc.ddp.bucket_cap_mb = 1;
    const Results async = simulate(sc, prof).results;
    sc.compile.async_collectives = false;
    const Results sync = simulate(sc, prof).results;
    EXPECT_GE(async.overlap_ms, sync.overlap_ms);
    EXPECT_LE(async.exposed_comm_ms, sync.exposed_comm_ms);
    EXPECT_GT(sync.exposed_comm_ms, 0.0);
}

// The compile examples (scenarios/compile/) load and run to the end with the built-in profile (no deadlock: FSDP2
// with collective fusion once stopped there), and report a compile time exactly when compiled.
TEST(CompileTransform, ExampleScenariosRun) {
    const std::filesystem::path dir = std::filesystem::path(STEPSIM_SOURCE_DIR) / "scenarios" / "compile";
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".yaml") continue;
        SCOPED_TRACE(entry.path().string());
        Scenario sc = loadScenario(entry.path());
        sc.sim.steps = 2;
        const Simulation s = simulate(sc, resolveProfile(sc.cluster, sc.source));
        EXPECT_GT(s.results.step_time_ms, 0.0);
        EXPECT_EQ(s.results.compile_time_s.has_value(), sc.compile.enabled);
        ++count;
    }
    EXPECT_EQ(count, 6);
}

// A profile without compile measurements cannot price a compiled step: refused, naming the key.
TEST(CompileTransform, ProfileWithoutCompileRatesIsRefused) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    try {
        expand(compiled(tiny(1)), cost);
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("compile.enabled"), std::string::npos) << e.what();
    }
}

// A forward kernel on the compute stream: a GEMM of `shape`, or a memory-bound one of `bytes` (its eager time
// `work_s`; `fused` ≥ 0: a kernel of a decomposed chain, Op::fused_bytes).
Op kernel(Program& p, const std::string& name, KernelClass cls, double work_s, double bytes = 0, double fused = -1,
          GemmShape shape = {}) {
    Op op;
    op.kind = OpKind::kernel;
    op.cls = cls;
    op.phase = Phase::forward;
    op.name = p.intern(name);
    op.work_s = work_s;
    op.bytes = bytes;
    op.fused_bytes = float(fused);
    op.gemm = shape;
    op.host_s = 5e-6;
    return op;
}

double fusedWork(const Program& p) {
    double w = 0;
    for (const Op& op : p.ops)
        if (op.kind == OpKind::kernel && p.names[op.name].rfind("triton", 0) == 0) w += op.work_s;
    return w;
}

// A decomposed chain's kernels (Hugging Face's eager RMSNorm, say) take not a ratio of their eager time but the
// memory-bound time of the bytes the fused kernel moves; a kernel of its own in the region keeps the fitted ratio.
TEST(CompileTransform, DecomposedChainIsPricedByItsFusedBytes) {
    const HardwareProfile prof = builtinProfile("h200x2");
    const CostModel cost(prof, NcclSpec{}, false);
    Scenario sc = compiled(tiny(1));
    sc.sim.steps = 1;
    Program p;
    p.streams = {{StreamKind::compute, "compute"}};
    const GemmShape g{4096, 2048, 2048};
    p.ops.push_back(kernel(p, "a", KernelClass::gemm, 1e-4, 0, -1, g));
    for (const auto& [what, fused] : {std::pair{"x pow", 1e8}, std::pair{"x mean", 0.0}, std::pair{"x mul", 1e8}})
        p.ops.push_back(kernel(p, what, KernelClass::memory, 2e-4, 8e8, fused));
    p.ops.push_back(kernel(p, "b", KernelClass::gemm, 1e-4, 0, -1, g));
    Program q = p;
    compileProgram(p, sc, prof);
    EXPECT_NEAR(fusedWork(p), cost.memorySeconds(2e8), 1e-12);  // not 0.57 × 600 µs of eager time
    q.ops[2].fused_bytes = -1;  // the mean as a kernel of its own: its eager time × the forward ratio on top
    compileProgram(q, sc, prof);
    EXPECT_NEAR(fusedWork(q), cost.memorySeconds(2e8) + prof.compile.forward.time_ratio * 2e-4, 1e-12);
}

// Inductor pads a GEMM dimension that is not a multiple of 8 (GPT-2's vocabulary 50257): under compile the LM head's
// GEMM runs at the padded shape's rate, an aligned GEMM as it was.
TEST(CompileTransform, UnalignedGemmRunsAtThePaddedShapesRate) {
    const HardwareProfile prof = builtinProfile("h200x2");
    const CostModel cost(prof, NcclSpec{}, false);
    Scenario sc = compiled(tiny(1));
    sc.sim.steps = 1;
    const GemmShape odd{8192, 50257, 768}, padded{8192, 50264, 768}, even{8192, 50304, 768};
    for (const GemmShape& s : {odd, even}) {
        Program p;
        p.streams = {{StreamKind::compute, "compute"}};
        const double eager = cost.gemmSeconds(s, DType::bf16);
        p.ops.push_back(kernel(p, "lm_head", KernelClass::gemm, eager, 0, -1, s));
        compileProgram(p, sc, prof);
        const double want = (s == odd ? cost.gemmSeconds(padded, DType::bf16) : eager) * prof.compile.gemm_time_ratio;
        EXPECT_NEAR(p.ops.back().work_s, want, 1e-12);
        if (s == odd) EXPECT_LT(p.ops.back().work_s, 0.5 * eager);  // the unaligned kernels ran at 95-150 TFLOP/s
    }
}

}  // namespace
}  // namespace stepsim
