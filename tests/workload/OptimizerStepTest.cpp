// OptimizerStep, through expand: fused and foreach AdamW, GradScaler's work and gradient clipping.
#include "sim/workload/Expand.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/scenario/ProfileYaml.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

// fp16 autocast trains with GradScaler: the loss is scaled, every fp32 gradient is checked for inf/NaN in place
// (read and written, at the optimizer's multi-tensor rate), and the fused AdamW step writes the unscaled gradient
// back (8 accesses per parameter instead of 7). bf16 autocast has none of it.
TEST(Expand, Fp16AutocastAddsGradScalerWork) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    sc.training.optimizer_impl = OptimizerImpl::fused;
    const Expansion bf16 = expand(sc, cost);
    sc.training.compute_dtype = DType::fp16;
    const Expansion fp16 = expand(sc, cost);
    const auto a = stepOps(bf16.workload.programs[0]), b = stepOps(fp16.workload.programs[0]);
    const double n = fp16.params;
    EXPECT_EQ(a.count("grad scaler check and unscale"), 0u);
    EXPECT_EQ(a.count("loss scale"), 0u);
    ASSERT_EQ(b.count("grad scaler check and unscale"), 1u);
    EXPECT_DOUBLE_EQ(b.at("grad scaler check and unscale")->bytes, 8 * n);
    EXPECT_EQ(b.at("grad scaler check and unscale")->mem, MemKind::optimizer);
    EXPECT_DOUBLE_EQ(a.at("fused adamw")->bytes, 28 * n);
    EXPECT_DOUBLE_EQ(b.at("fused adamw")->bytes, 32 * n);
    for (const char* k : {"loss scale", "loss scale backward", "grad scaler update", "grad scaler step count fixup"})
        EXPECT_EQ(b.count(k), 1u) << k;
    EXPECT_GT(b.size(), a.size());
}

// AdamW's foreach path (PyTorch's default on CUDA): eight multi-tensor passes over the parameters, 80 bytes per fp32
// parameter against the fused step's 28 in one kernel, at the foreach step's own calibrated rate, and no step-count
// kernel (the counts live on the host). With
// GradScaler the gradients are unscaled first and the host reads found_inf back (.item()) before the step: a host
// sync after the unscale, then optimizer.step()'s host work while the GPU idles (1.5-1.7 ms a step at 1.4B in an fp16
// foreach step's profiler trace); the fused optimizer takes the scale itself and the host never waits.
TEST(Expand, ForeachAdamwRunsEightPassesAndGradScalerWaitsForFoundInf) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    for (bool fp16 : {false, true})
        for (OptimizerImpl impl : {OptimizerImpl::foreach, OptimizerImpl::fused}) {
            Scenario sc = tiny(1);
            sc.training.optimizer_impl = impl;
            if (fp16) sc.training.compute_dtype = DType::fp16;
            const Expansion e = expand(sc, cost);
            const Program& p = e.workload.programs[0];
            double bytes = 0;
            int passes = 0, syncs = 0;
            bool stepped_after_sync = false;  // optimizer.step()'s host work runs once the host has found_inf
            for (const Op& op : p.ops) {
                if (op.step != 1) continue;
                if (op.kind == OpKind::host_sync) ++syncs;
                if (op.kind == OpKind::host_work && p.names[op.name] == "optimizer.step") stepped_after_sync = syncs > 0;
                const std::string& name = p.names[op.name];
                if (op.kind == OpKind::kernel && op.phase == Phase::optimizer && name.rfind("adamw", 0) == 0 &&
                    name != "adamw step count") {
                    ++passes;
                    bytes += op.bytes;
                    EXPECT_EQ(op.mem, MemKind::optimizer_foreach) << name;
                }
            }
            const bool foreach = impl == OptimizerImpl::foreach;
            EXPECT_EQ(passes, foreach ? 8 : 0) << fp16;
            if (foreach) EXPECT_DOUBLE_EQ(bytes, 80 * e.params) << fp16;
            EXPECT_EQ(syncs, fp16 && foreach ? 1 : 0) << fp16 << " " << foreach;
            EXPECT_EQ(stepped_after_sync, fp16 && foreach) << fp16 << " " << foreach;
            EXPECT_EQ(stepOps(p).count("fused adamw"), foreach ? 0u : 1u);
        }
}

// clip_grad_norm_ reads every gradient once for the per-tensor norms and scales every gradient in place; under fp16
// the gradients are unscaled first (scaler.unscale_), so the fused step gets no scale and writes no gradient back.
TEST(Expand, GradClippingReadsAndScalesEveryGradient) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    sc.training.optimizer_impl = OptimizerImpl::fused;
    EXPECT_EQ(stepOps(expand(sc, cost).workload.programs[0]).count("clip grad norm: grads *= coef"), 0u);
    sc.training.grad_clip_norm = 1.0;
    sc.training.compute_dtype = DType::fp16;
    const Expansion e = expand(sc, cost);
    const Program& p = e.workload.programs[0];
    const auto ops = stepOps(p);
    EXPECT_DOUBLE_EQ(ops.at("clip grad norm: per-tensor norms")->bytes, 4 * e.params);
    EXPECT_DOUBLE_EQ(ops.at("clip grad norm: grads *= coef")->bytes, 8 * e.params);
    EXPECT_DOUBLE_EQ(ops.at("fused adamw")->bytes, 28 * e.params);
    std::vector<std::string> order;
    for (const Op& op : p.ops)
        if (op.step == 1 && op.kind == OpKind::kernel) order.push_back(p.names[op.name]);
    const auto at = [&](const char* name) { return std::find(order.begin(), order.end(), name) - order.begin(); };
    EXPECT_LT(at("grad scaler check and unscale"), at("clip grad norm: per-tensor norms"));
    EXPECT_LT(at("clip grad norm: grads *= coef"), at("fused adamw"));
}

}  // namespace
}  // namespace stepsim
