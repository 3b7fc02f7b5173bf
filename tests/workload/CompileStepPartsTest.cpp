// CompileTransform's compile.optimizer, compile.loss and compile.dynamic: what each does to a step's kernels, launches
// and compile time, and that each is refused where it was not measured.
#include "sim/workload/CompileTransform.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/workload/Expand.hpp"
#include "sim/workload/StepContext.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

// Compile rates of the kind the fit makes, each part measured.
HardwareProfile partsProfile() {
    HardwareProfile p = builtinProfile("h200-sxm");
    CompileRates& c = p.compile;
    c.measured = true;
    c.forward = {1.5, 0.6};
    c.backward = {2.0, 0.65};
    c.graph_host_us = 300;
    c.kernel_host_ratio = 0.9;
    c.compile_s_per_block = 3;
    c.optimizer = {true, 0.1, 0.5, 100, 2, 0.25};
    c.loss = {true, 1, 2, 0.4, 0.3};
    c.dynamic = {true, 1.0, 1.0, 1.2, 1.1, 1.05, 2.0};
    return p;
}

Scenario compiled(Scenario sc) {
    sc.compile.enabled = true;
    sc.compile.fullgraph = true;
    return sc;
}

// Kernel count and summed work (s) of step 1's kernels whose name passes `pick`, and its host work named `host`.
struct Picked {
    int kernels = 0;
    double work_s = 0, host_s = 0;
};

template <class F>
Picked picked(const Program& p, F pick, const std::string& host = "") {
    Picked r;
    for (const Op& op : p.ops) {
        if (op.step != 1) continue;
        const std::string& n = p.names[op.name];
        if (op.kind == OpKind::kernel && pick(op, n)) ++r.kernels, r.work_s += op.work_s;
        if (op.kind == OpKind::host_work && n == host) r.host_s += op.host_s;
    }
    return r;
}

bool foreachPass(const Op& op, const std::string& n) {
    return op.phase == Phase::optimizer && n.rfind("adamw ", 0) == 0 && n != "adamw step count";
}

bool lossKernel(const Op& op, const std::string& n, Phase phase) {
    return op.phase == phase && (n.find("loss") != std::string::npos || n.find("log_softmax") != std::string::npos ||
                                 n.find("logits") != std::string::npos);
}

std::size_t tensors(const Scenario& sc, const CostModel& cost) { return makeStepContext(sc, cost).params.size(); }

// compile.optimizer: the foreach step's eight passes become kernels_per_tensor × tensors compiled kernels taking
// time_ratio of their time; optimizer.step's host work becomes the compiled call's host_us + per_tensor × tensors; the
// first step's compile time grows by compile_s_per_tensor × tensors.
TEST(CompileStepParts, CompiledOptimizerFusesTheForeachPasses) {
    const HardwareProfile prof = partsProfile();
    CostModel cost(prof, NcclSpec{}, true);
    const Scenario sc = compiled(tiny(1));
    Scenario with = sc;
    with.compile.optimizer = true;
    const std::size_t n = tensors(sc, cost);
    ASSERT_GT(n, 10u);
    const Expansion a = expand(sc, cost), b = expand(with, cost);
    const Picked eager = picked(a.workload.programs[0], foreachPass, "optimizer.step");
    const Picked comp = picked(
        b.workload.programs[0], [](const Op&, const std::string& s) { return s == "triton compiled adamw"; },
        "compiled optimizer.step");
    EXPECT_EQ(eager.kernels, 8);
    EXPECT_EQ(picked(b.workload.programs[0], foreachPass).kernels, 0);
    EXPECT_EQ(comp.kernels, std::lround(0.1 * double(n)));
    EXPECT_NEAR(comp.work_s, 0.5 * eager.work_s, 1e-12);
    EXPECT_NEAR(comp.host_s, (100 + 2 * double(n)) * 1e-6, 1e-12);
    EXPECT_NEAR(b.compile_time_s - a.compile_time_s, 0.25 * double(n), 1e-9);
}

// compile.loss: each phase's loss kernels become the measured compiled count at the measured time ratio.
TEST(CompileStepParts, CompiledLossFusesTheCrossEntropy) {
    const HardwareProfile prof = partsProfile();
    CostModel cost(prof, NcclSpec{}, true);
    const Scenario sc = compiled(tiny(1));
    Scenario with = sc;
    with.compile.loss = true;
    const Program a = expand(sc, cost).workload.programs[0], b = expand(with, cost).workload.programs[0];
    for (const auto& [ph, k, ratio] : {std::tuple{Phase::forward, 1, 0.4}, std::tuple{Phase::backward, 2, 0.3}}) {
        const Phase phase = ph;  // (a plain variable: clang 14 cannot capture a structured binding)
        const auto pick = [phase](const Op& op, const std::string& n) { return lossKernel(op, n, phase); };
        const Picked eager = picked(a, pick), comp = picked(b, pick);
        EXPECT_GT(eager.kernels, k);
        EXPECT_EQ(comp.kernels, k);
        EXPECT_NEAR(comp.work_s, ratio * eager.work_s, 1e-12);
    }
}

// compile.dynamic: true: the fused kernels and the GEMMs take the measured dynamic/static ratios of their time, the
// compile time its ratio; false and null are the static compile.
TEST(CompileStepParts, DynamicShapesScaleTheCompiledKernelsAndTheCompileTime) {
    const HardwareProfile prof = partsProfile();
    CostModel cost(prof, NcclSpec{}, true);
    const Scenario sc = compiled(tiny(1));
    Scenario dyn = sc;
    dyn.compile.dynamic = true;
    Scenario off = sc;
    off.compile.dynamic = false;
    const Expansion a = expand(sc, cost), b = expand(dyn, cost), c = expand(off, cost);
    const auto fused = [](Phase ph) {
        return [ph](const Op& op, const std::string& n) { return op.phase == ph && n.rfind("triton ", 0) == 0; };
    };
    const auto gemm = [](const Op& op, const std::string&) {
        return op.cls == KernelClass::gemm && (op.phase == Phase::forward || op.phase == Phase::backward);
    };
    const Program& pa = a.workload.programs[0];
    const Program& pb = b.workload.programs[0];
    EXPECT_NEAR(picked(pb, fused(Phase::forward)).work_s, 1.2 * picked(pa, fused(Phase::forward)).work_s, 1e-12);
    EXPECT_NEAR(picked(pb, fused(Phase::backward)).work_s, 1.1 * picked(pa, fused(Phase::backward)).work_s, 1e-12);
    EXPECT_NEAR(picked(pb, gemm).work_s, 1.05 * picked(pa, gemm).work_s, 1e-12);
    EXPECT_DOUBLE_EQ(b.compile_time_s, 2.0 * a.compile_time_s);
    EXPECT_DOUBLE_EQ(c.compile_time_s, a.compile_time_s);
    EXPECT_EQ(picked(c.workload.programs[0], gemm).work_s, picked(pa, gemm).work_s);
}

// Each key is refused, naming it, by a profile that did not measure it, and compile.optimizer beside what its
// measurement did not include (the fused optimizer, GradScaler).
TEST(CompileStepParts, UnmeasuredPartsAreRefused) {
    const auto refused = [](const HardwareProfile& prof, const Scenario& sc, const std::string& key) {
        CostModel cost(prof, NcclSpec{}, true);
        try {
            expand(sc, cost);
            ADD_FAILURE() << "expected an InputError naming " << key;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
        }
    };
    HardwareProfile none = partsProfile();
    none.compile.optimizer.measured = false;
    none.compile.loss.measured = false;
    none.compile.dynamic.measured = false;
    Scenario sc = compiled(tiny(1));
    sc.compile.optimizer = true;
    refused(none, sc, "compile.optimizer");
    sc.training.optimizer_impl = OptimizerImpl::fused;
    refused(partsProfile(), sc, "compile.optimizer");
    sc.training.optimizer_impl = OptimizerImpl::foreach;
    sc.training.compute_dtype = DType::fp16;
    refused(partsProfile(), sc, "compile.optimizer");
    sc = compiled(tiny(1));
    sc.compile.loss = true;
    refused(none, sc, "compile.loss");
    sc = compiled(tiny(1));
    sc.compile.dynamic = true;
    refused(none, sc, "compile.dynamic");
}

}  // namespace
}  // namespace stepsim

namespace stepsim {
namespace {

// GPT-2 small (12 × 768, vocabulary 50304, tied embeddings, seq 1024, micro-batch 8) on one H200 with the built-in
// h200x2 profile: the parameters of compile_parts.py's 12 × 768 GPT (stepsim's linears have no biases).
Scenario gpt2Small() {
    Scenario sc = compiled(tiny(1));
    sc.model.layers = 12;
    sc.model.hidden = 768;
    sc.model.heads = 12;
    sc.model.vocab = 50304;
    sc.model.seq_len = 1024;
    sc.model.tied_embeddings = true;
    sc.training.micro_batch = 8;
    return sc;
}

// Predicted against compile_parts.py's measurement on one H200 (calibration/profiles/h200x2/raw/
// compile_parts.jsonl, 12 × 768): the compiled AdamW step launched 10 kernels taking 0.910 ms (foreach eager:
// 56 kernels, 2.740 ms); the compiled loss over 8192 tokens 2 + 2 kernels taking 0.561 and 0.506 ms (eager 3 + 5,
// 1.747 and 1.697 ms). The kernel times within 10%; the optimizer's kernel count follows the tensors (7 for stepsim's
// 100, where the measured GPT's 148 took 10).
TEST(CompileStepParts, PredictedAgainstMeasuredOnOneH200) {
    const HardwareProfile prof = builtinProfile("h200x2");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = gpt2Small();
    double params = 0;
    for (const ParamInfo& q : makeStepContext(sc, cost).params) params += q.numel;
    EXPECT_NEAR(params, 124475904.0, 0.002 * 124475904.0);  // the measured GPT's parameters (its biases: 0.1%)
    ASSERT_EQ(tensors(sc, cost), 100u);  // no biases: 100 tensors, not the measured GPT's 148
    sc.compile.optimizer = true;
    sc.compile.loss = true;
    const Program p = expand(sc, cost).workload.programs[0];
    const Picked opt = picked(p, [](const Op&, const std::string& n) { return n == "triton compiled adamw"; });
    EXPECT_EQ(opt.kernels, 7);  // 0.0676 per tensor; the measured GPT's 148 tensors took 10
    EXPECT_NEAR(opt.work_s * 1e3, 0.910, 0.10 * 0.910);
    const Picked fwd = picked(p, [](const Op& op, const std::string& n) { return lossKernel(op, n, Phase::forward); });
    const Picked bwd = picked(p, [](const Op& op, const std::string& n) { return lossKernel(op, n, Phase::backward); });
    EXPECT_EQ(fwd.kernels, 2);
    EXPECT_EQ(bwd.kernels, 2);
    EXPECT_NEAR(fwd.work_s * 1e3, 0.561, 0.10 * 0.561);
    EXPECT_NEAR(bwd.work_s * 1e3, 0.506, 0.10 * 0.506);
    std::printf("predicted: optimizer %d kernels %.3f ms; loss %d + %d kernels %.3f + %.3f ms\n", opt.kernels,
                opt.work_s * 1e3, fwd.kernels, bwd.kernels, fwd.work_s * 1e3, bwd.work_s * 1e3);
}

}  // namespace
}  // namespace stepsim
