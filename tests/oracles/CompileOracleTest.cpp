// Oracle of torch.compile's fusion (CompileTransform.hpp, docs/compile.md) under the round-number profile
// (OracleProfile.hpp) with a compile section of round rates: kernels_per_region k_f = 1 forward and k_b = 2 backward,
// time_ratio ρ_f = 1/2 forward and ρ_b = 1/4 backward, gemm_time_ratio γ = 0.8, no host cost per graph or kernel,
// compile_s_per_block 3 s. The case: oracleScenario(1) (L = 4 GPT blocks, one GPU, jitter off), default mode,
// fullgraph, no breaks: its eager step against the same step compiled.
//
// The model's semantics (Inductor's as CompileTransform.hpp states them): the compiled territory is the model's forward
// and backward kernels on the compute stream, the loss's (log-softmax, its casts, nll_loss, the loss's seed) and the
// optimizer's outside it. A region is a maximal run of consecutive memory-bound territory kernels of one phase (cut by
// anything else: a GEMM, attention, a loss kernel); it becomes min(n_r, k) kernels for an integer k (the running
// rounding of an integer is exact, and a region capped at its n_r kernels carries no debt), taking ρ of its eager
// time; GEMMs keep their count at γ of their time; attention is unchanged.
//
// Expectations:
//   per layer (a region counted in the layer of its first kernel, "h.<i>."), per phase: GEMM and attention kernels
//     unchanged; memory-bound kernels Σ_regions min(n_r, k) where eager had Σ n_r (the GPT block here: regions of
//     1, 1, 4, 2 and 4 kernels forward, 12 → 5; 2, 6, 2, 1 and 6 backward, 17 → 9);
//   time: Σ fused kernels' time = ρ · Σ the eager regions' time per phase; the compiled GEMMs' γ · the eager ones';
//     one GPU with no host cost is its kernels: step_compiled = step_eager − (1 − ρ_f)·W_f − (1 − ρ_b)·W_b −
//     (1 − γ)·G_territory;
//   graphs: one forward and one backward graph per micro-step (fullgraph, no breaks), 2(N + 1) with N graph breaks;
//     compile time compile_s_per_block × L.
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/oracles/OracleProfile.hpp"

namespace stepsim::oracles {
namespace {

constexpr int L = 4;
constexpr double kRhoF = 0.5, kRhoB = 0.25, kGamma = 0.8;
constexpr int kKf = 1, kKb = 2;

HardwareProfile compileProfile() {
    HardwareProfile p = roundProfile();
    CompileRates& c = p.compile;
    c.measured = true;
    c.forward = {double(kKf), kRhoF};
    c.backward = {double(kKb), kRhoB};
    c.gemm_time_ratio = c.gemm_time_ratio_max_autotune = kGamma;
    c.graph_host_us = 0;
    c.kernel_host_ratio = 1;
    c.cudagraph_kernel_host_us = 0;
    c.compile_s_per_block = c.compile_s_per_block_max_autotune = 3;
    return p;
}

Simulation run(bool compiled, int graph_breaks = 0) {
    static const HardwareProfile profile = compileProfile();
    Scenario sc = oracleScenario(1);
    sc.compile.enabled = compiled;
    sc.compile.fullgraph = graph_breaks == 0;
    sc.compile.graph_breaks = graph_breaks;
    return simulateOn(sc, profile);
}

// The loss's kernels, by the names docs/compile.md gives them (outside torch.compile(model)).
bool lossKernel(const std::string& name) {
    return name.find("loss") != std::string::npos || name.find("log_softmax") != std::string::npos;
}

bool territory(const Op& op, const Program& p) {
    return op.kind == OpKind::kernel && op.step == 1 && op.stream == 0 &&
           (op.phase == Phase::forward || op.phase == Phase::backward) && op.cls != KernelClass::copy &&
           op.cls != KernelClass::comm && !lossKernel(p.names[op.name]);
}

// The layer "h.<i>." a kernel's name belongs to, or −1 (embeddings, final norm, LM head).
int layerOf(const std::string& name) {
    const std::size_t at = name.find("h.");
    if (at == std::string::npos || (at > 0 && name[at - 1] != ' ')) return -1;
    return std::stoi(name.substr(at + 2));
}

struct Counts {
    std::map<int, int> mem, gemm, attention;  // by layer
    double mem_s = 0, gemm_s = 0;
};

// Per phase: the territory's kernels by class and layer, a region's memory-bound kernels in the layer of its first
// kernel and counted min(n_r, k) (the default: all of them).
Counts count(const Program& p, Phase phase, int k = std::numeric_limits<int>::max()) {
    Counts c;
    int run = 0, run_layer = -1;
    auto close = [&] {
        if (run > 0) c.mem[run_layer] += std::min(run, k);
        run = 0;
    };
    for (const Op& op : p.ops) {
        const bool mine = territory(op, p) && op.phase == phase;
        if (!mine || op.cls != KernelClass::memory) close();
        if (!mine) continue;
        const int layer = layerOf(p.names[op.name]);
        if (op.cls == KernelClass::memory) {
            if (run++ == 0) run_layer = layer;
            c.mem_s += op.work_s;
        } else if (op.cls == KernelClass::gemm) {
            c.gemm[layer] += 1;
            c.gemm_s += op.work_s;
        } else if (op.cls == KernelClass::attention) {
            c.attention[layer] += 1;
        }
    }
    close();
    return c;
}

TEST(CompileOracle, EachLayersRegionsFuseIntoMinOfTheirKernelsAndKPerRegion) {
    const Simulation eager = run(false), compiled = run(true);
    const Program& e = eager.expansion.workload.programs[0];
    const Program& c = compiled.expansion.workload.programs[0];
    for (const auto& [phase, k] : {std::pair{Phase::forward, kKf}, std::pair{Phase::backward, kKb}}) {
        const Counts before = count(e, phase), want = count(e, phase, k), after = count(c, phase);
        for (int layer = 0; layer < L; ++layer) {
            SCOPED_TRACE(testing::Message() << "layer " << layer
                                            << (phase == Phase::forward ? " forward" : " backward"));
            EXPECT_GT(before.mem.at(layer), want.mem.at(layer));  // something fused
            EXPECT_EQ(after.mem.at(layer), want.mem.at(layer));
            EXPECT_EQ(after.gemm.at(layer), before.gemm.at(layer));
            EXPECT_EQ(after.attention.at(layer), before.attention.at(layer));
        }
        EXPECT_EQ(after.mem, want.mem);  // the root's regions too
    }
    // The case's GPT block, by the regions of the header.
    for (int layer = 0; layer < L; ++layer) {
        EXPECT_EQ(count(e, Phase::forward).mem.at(layer), 12);
        EXPECT_EQ(count(c, Phase::forward).mem.at(layer), 5);
        EXPECT_EQ(count(e, Phase::backward).mem.at(layer), 17);
        EXPECT_EQ(count(c, Phase::backward).mem.at(layer), 9);
    }
}

TEST(CompileOracle, FusedRegionsTakeRhoOfTheirTimeAndTheStepLosesExactlyThat) {
    const Simulation eager = run(false), compiled = run(true);
    const Program& e = eager.expansion.workload.programs[0];
    const Program& c = compiled.expansion.workload.programs[0];
    const Counts ef = count(e, Phase::forward), eb = count(e, Phase::backward);
    const Counts cf = count(c, Phase::forward), cb = count(c, Phase::backward);
    EXPECT_NEAR(cf.mem_s, kRhoF * ef.mem_s, 1e-9 * ef.mem_s);
    EXPECT_NEAR(cb.mem_s, kRhoB * eb.mem_s, 1e-9 * eb.mem_s);
    EXPECT_NEAR(cf.gemm_s + cb.gemm_s, kGamma * (ef.gemm_s + eb.gemm_s), 1e-9 * (ef.gemm_s + eb.gemm_s));
    const double saved_ms =
        ((1 - kRhoF) * ef.mem_s + (1 - kRhoB) * eb.mem_s + (1 - kGamma) * (ef.gemm_s + eb.gemm_s)) * 1e3;
    const double ops = double(std::count_if(e.ops.begin(), e.ops.end(), [](const Op& op) { return op.step == 1; }));
    EXPECT_NEAR(compiled.results.step_time_ms, eager.results.step_time_ms - saved_ms, 2 * ops * 1e-9);
    EXPECT_NEAR(compiled.results.step_time_ms, kernelSeconds(c, 1) * 1e3, ops * 1e-9);
}

TEST(CompileOracle, OneGraphEachWayPerMicroStepAndOneMorePerBreak) {
    const Simulation whole = run(true), broken = run(true, 2);
    EXPECT_EQ(whole.expansion.compiled_graphs_per_step, 2);
    EXPECT_EQ(broken.expansion.compiled_graphs_per_step, 2 * (2 + 1));
    EXPECT_DOUBLE_EQ(whole.expansion.compile_time_s, 3.0 * L);
    // A cut ends a region: never fewer fused kernels than without it.
    int whole_k = 0, broken_k = 0;
    for (const auto& [layer, k] : count(whole.expansion.workload.programs[0], Phase::forward).mem) whole_k += k;
    for (const auto& [layer, k] : count(broken.expansion.workload.programs[0], Phase::forward).mem) broken_k += k;
    EXPECT_GE(broken_k, whole_k);
}

}  // namespace
}  // namespace stepsim::oracles
