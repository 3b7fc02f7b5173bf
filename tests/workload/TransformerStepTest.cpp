// TransformerStep, through expand: a micro-step's kernels under autocast or not, checkpointing, accumulation, GQA,
// the tied head and the loss.
#include "sim/workload/Expand.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/scenario/ProfileYaml.hpp"
#include "sim/workload/Transformer.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

// Counts per step 1 of rank 0: GEMMs by phase, and the checkpoint host work ops with their host times.
struct CheckpointCounts {
    int forward_gemms = 0, backward_gemms = 0, attention_forward = 0, host_forward = 0, host_backward = 0;
    double host_forward_s = 0, host_backward_s = 0;
};
CheckpointCounts countCheckpointOps(Checkpointing ac) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    sc.training.activation_checkpointing = ac;
    const Expansion e = expand(sc, cost);
    const Program& p = e.workload.programs[0];
    CheckpointCounts c;
    for (const Op& op : p.ops) {
        if (op.step != 1) continue;
        if (op.kind == OpKind::host_work && p.names[op.name].find("checkpoint") != std::string::npos) {
            const bool bwd = p.names[op.name].find("recompute") != std::string::npos;
            (bwd ? c.host_backward : c.host_forward) += 1;
            (bwd ? c.host_backward_s : c.host_forward_s) += op.host_s;
        }
        if (op.cls == KernelClass::gemm) (op.phase == Phase::forward ? c.forward_gemms : c.backward_gemms) += 1;
        if (op.cls == KernelClass::attention && op.phase == Phase::forward) ++c.attention_forward;
    }
    return c;
}

// torch.utils.checkpoint, as a PyTorch step runs it: full checkpointing recomputes each layer's forward up to
// its last saved tensor (early stop: 3 of the 4 GEMMs of a GELU block), selective only the attention; the
// recomputed kernels are forward kernels (priced and launched as such), and each checkpointed layer costs the
// profile's host time in the forward and before its recompute.
TEST(Expand, CheckpointingRecomputesUpToTheLastSavedTensorWithItsHostCost) {
    const CheckpointHost& h = builtinProfile("h200-sxm").launch.checkpoint_host_us;
    const CheckpointCounts none = countCheckpointOps(Checkpointing::none);
    const CheckpointCounts full = countCheckpointOps(Checkpointing::full);
    const CheckpointCounts sel = countCheckpointOps(Checkpointing::selective);
    const int L = 2;
    EXPECT_EQ(none.host_forward + none.host_backward, 0);
    EXPECT_EQ(full.forward_gemms, none.forward_gemms + 3 * L);
    EXPECT_EQ(full.backward_gemms, none.backward_gemms);
    EXPECT_EQ(full.attention_forward, none.attention_forward + L);
    EXPECT_EQ(sel.forward_gemms, none.forward_gemms);
    EXPECT_EQ(sel.attention_forward, none.attention_forward + L);
    EXPECT_EQ(full.host_forward, L);
    EXPECT_EQ(full.host_backward, L);
    EXPECT_DOUBLE_EQ(full.host_forward_s, L * h.full_forward_us * 1e-6);
    EXPECT_DOUBLE_EQ(full.host_backward_s, L * h.full_backward_us * 1e-6);
    EXPECT_DOUBLE_EQ(sel.host_forward_s, L * h.selective_forward_us * 1e-6);
    EXPECT_DOUBLE_EQ(sel.host_backward_s, L * h.selective_backward_us * 1e-6);
}

// A norm's backward is two kernels, as PyTorch runs it: the input gradient (reads x and dy, writes dx: 12 bytes per
// fp32 element) and the weight gradient, which reads x and dy again (8 bytes), each its own kind of its own norm
// (LayerNorm or RMSNorm), with its rows and width for the profile's grid.
TEST(Expand, NormBackwardPricesItsWeightGradientPass) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    for (NormKind norm : {NormKind::layernorm, NormKind::rmsnorm}) {
        Scenario sc = tiny(1);
        sc.model.norm = norm;
        const Expansion e = expand(sc, cost);
        const Program& p = e.workload.programs[0];
        const double T = 256, h = 256;
        const bool rms = norm == NormKind::rmsnorm;
        int found = 0;
        for (const Op& op : p.ops) {
            if (op.step != 1) continue;
            const std::string& name = p.names[op.name];
            if (name == "h.0.norm1 backward" || name == "h.0.norm1 weight grad") {
                ++found;
                const bool input = name == "h.0.norm1 backward";
                EXPECT_EQ(op.mem, input ? (rms ? MemKind::rms_backward : MemKind::norm_backward)
                                        : (rms ? MemKind::rms_weight_grad : MemKind::norm_weight_grad))
                    << name;
                EXPECT_DOUBLE_EQ(op.bytes, (input ? 12 : 8) * T * h) << name;
                // Rows, width and element bytes (fp32 under autocast) for the grid.
                EXPECT_EQ(op.gemm.m, 256);
                EXPECT_EQ(op.gemm.n, 256);
                EXPECT_EQ(op.gemm.k, 4);
                EXPECT_GT(op.work_s, 0.0) << name;
            }
        }
        EXPECT_EQ(found, 2);
    }
}

// SwiGLU's norm output feeds two linears. Under autocast each casts it (activation casts are not cached), each
// input gradient goes back through its cast, and the two meet in fp32 (a SwiGLU/GQA step's profiler trace); a model
// trained in bf16 has no casts and adds in bf16.
TEST(Expand, SwigluCastsTheNormOutputForEachLinear) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    for (DType param : {DType::fp32, DType::bf16}) {
        Scenario sc = tiny(1);
        sc.model.mlp = MlpKind::swiglu;
        sc.training.param_dtype = param;
        const Expansion e = expand(sc, cost);
        const Program& p = e.workload.programs[0];
        const double T = 256, h = 256;
        const bool autocast = param == DType::fp32;
        std::vector<std::string> seen;
        double add_bytes = 0;
        for (const Op& op : p.ops) {
            if (op.step != 1) continue;
            const std::string& name = p.names[op.name];
            if (name.starts_with("h.0.norm2 cast")) seen.push_back(name);
            if (name == "h.0.mlp input grad add") add_bytes = op.bytes;
        }
        const std::vector<std::string> casts = {"h.0.norm2 cast", "h.0.norm2 cast 2", "h.0.norm2 cast 2 backward",
                                                "h.0.norm2 cast backward"};
        EXPECT_EQ(seen, autocast ? casts : std::vector<std::string>{}) << (autocast ? "autocast" : "bf16");
        EXPECT_DOUBLE_EQ(add_bytes, 3 * (autocast ? 4 : 2) * T * h);
    }
}

// With gradient accumulation every micro-step after the first adds each gradient into .grad (one kernel a
// parameter), issued at the profile's AccumulateGrad host cost rather than a backward kernel's.
TEST(Expand, AccumulatedGradientsAddAtTheirOwnHostCost) {
    HardwareProfile prof = builtinProfile("h200-sxm");
    prof.launch.grad_accumulate_host_us = 7.0;
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    sc.training.grad_accum = 2;
    const Expansion e = expand(sc, cost);
    const Program& p = e.workload.programs[0];
    int adds = 0;
    for (const Op& op : p.ops) {
        if (op.step != 1 || !p.names[op.name].ends_with(" grad accumulate")) continue;
        ++adds;
        EXPECT_DOUBLE_EQ(op.host_s, 7.0e-6) << p.names[op.name];
    }
    EXPECT_EQ(adds, int(transformerParams(transformerShape(sc.model, sc.training.micro_batch)).size()));
}

// With GQA the attention backward sums dK and dV over each group of query heads (cuDNN's fmha_reduce_head, twice per
// layer): bf16 heads·d read and kv·d written per token. Without GQA there is no such kernel.
TEST(Expand, GqaBackwardReducesKeyAndValueGradientsOverHeads) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    for (int kv : {4, 1}) {
        Scenario sc = tiny(1);
        sc.model.kv_heads = kv;
        const Expansion e = expand(sc, cost);
        const Program& p = e.workload.programs[0];
        int found = 0;
        for (const Op& op : p.ops) {
            const std::string& name = p.names[op.name];
            if (op.step != 1 || name.find("grad head reduce") == std::string::npos) continue;
            ++found;
            EXPECT_DOUBLE_EQ(op.bytes, 2.0 * 256 * (4 + 1) * 64) << name;  // T = 256 tokens, 4 heads of 64 onto 1
            EXPECT_GT(op.work_s, 0.0) << name;
        }
        EXPECT_EQ(found, kv < 4 ? 4 : 0) << "kv_heads " << kv;  // two per layer, two layers
    }
}

// A model trained in bf16 without autocast: the residual stream, its norms and adds are bf16 (half the bytes of
// autocast's fp32 stream), no weight or gradient casts, and fused AdamW runs over bf16 states at its own rate.
TEST(Expand, Bf16ParametersHalveTheResidualStreamAndUseTheirOptimizerRate) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    sc.training.optimizer_impl = OptimizerImpl::fused;
    sc.training.param_dtype = DType::bf16;
    const Expansion e = expand(sc, cost);
    const auto ops = stepOps(e.workload.programs[0]);
    const double T = 256, h = 256;
    EXPECT_DOUBLE_EQ(ops.at("h.0.norm1")->bytes, 4 * T * h);
    EXPECT_DOUBLE_EQ(ops.at("h.0.norm1 backward")->bytes, 6 * T * h);
    EXPECT_DOUBLE_EQ(ops.at("h.0.residual add")->bytes, 6 * T * h);
    EXPECT_EQ(ops.at("h.0.residual add")->mem, MemKind::elementwise);
    EXPECT_EQ(ops.count("h.0.attn.qkv weight cast"), 0u);
    EXPECT_EQ(ops.count("h.0.attn.qkv grad cast"), 0u);
    EXPECT_EQ(ops.at("fused adamw")->mem, MemKind::optimizer_bf16);
    EXPECT_DOUBLE_EQ(ops.at("fused adamw")->bytes, 14 * e.params);
}

// Under autocast each residual add's backward casts the fp32 gradient down for the bf16 sublayer output, two per layer
// (H200 traces: as many bf16 casts as the model's, 195 a step of the 1.4B model); cuDNN's attention backward reads
// the output gradient as it is, with no transpose. Without autocast there is nothing to cast.
TEST(Expand, ResidualAddsCastTheirGradientDownUnderAutocast) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    const double T = 256, h = 256;
    const Expansion e = expand(sc, cost);
    const auto ops = stepOps(e.workload.programs[0]);
    for (const char* k : {"h.0.residual grad cast", "h.0.residual grad cast 2", "h.1.residual grad cast"}) {
        ASSERT_EQ(ops.count(k), 1u) << k;
        EXPECT_EQ(ops.at(k)->mem, MemKind::cast_down) << k;
        EXPECT_DOUBLE_EQ(ops.at(k)->bytes, 6 * T * h) << k;
    }
    EXPECT_EQ(ops.count("h.0.attn grad transpose"), 0u);
    sc.training.param_dtype = DType::bf16;
    EXPECT_EQ(stepOps(expand(sc, cost).workload.programs[0]).count("h.0.residual grad cast"), 0u);
}

// The loss: autocast runs log_softmax on the bf16 logits and casts its output to fp32 for nll_loss; a model without
// autocast takes logits.float() and runs log_softmax in fp32. Each at its own calibrated rate.
TEST(Expand, LossLogSoftmaxRunsInTheLogitsDtype) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    const double TV = 256.0 * 1024;
    const Expansion with_autocast = expand(sc, cost);
    const auto autocast = stepOps(with_autocast.workload.programs[0]);
    EXPECT_EQ(autocast.at("log_softmax")->mem, MemKind::log_softmax_forward);
    EXPECT_DOUBLE_EQ(autocast.at("log_softmax")->bytes, 4 * TV);
    EXPECT_DOUBLE_EQ(autocast.at("log_softmax to fp32")->bytes, 6 * TV);
    EXPECT_EQ(autocast.at("log_softmax backward")->mem, MemKind::log_softmax_backward);
    EXPECT_DOUBLE_EQ(autocast.at("log_softmax backward")->bytes, 6 * TV);
    EXPECT_EQ(autocast.count("logits to fp32"), 0u);
    sc.training.param_dtype = DType::bf16;
    const Expansion without_autocast = expand(sc, cost);
    const auto pure = stepOps(without_autocast.workload.programs[0]);
    EXPECT_EQ(pure.at("log_softmax")->mem, MemKind::log_softmax_forward_fp32);
    EXPECT_DOUBLE_EQ(pure.at("log_softmax")->bytes, 8 * TV);
    EXPECT_DOUBLE_EQ(pure.at("logits to fp32")->bytes, 6 * TV);
    EXPECT_EQ(pure.at("log_softmax backward")->mem, MemKind::log_softmax_backward_fp32);
    EXPECT_DOUBLE_EQ(pure.at("log_softmax backward")->bytes, 12 * TV);
}

// A head tied to the token embedding has no weight of its own; autograd adds its gradient to the embedding's (one
// fp32 add over V×h) before the weight is ready.
TEST(Expand, TiedHeadAddsItsGradientToTheEmbeddings) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    const Expansion untied = expand(sc, cost);
    sc.model.tied_embeddings = true;
    const Expansion tied = expand(sc, cost);
    const double V = 1024, h = 256;
    EXPECT_DOUBLE_EQ(untied.params - tied.params, V * h);
    const auto a = stepOps(untied.workload.programs[0]), b = stepOps(tied.workload.programs[0]);
    EXPECT_EQ(a.count("tied weight grad add"), 0u);
    ASSERT_EQ(b.count("tied weight grad add"), 1u);
    EXPECT_DOUBLE_EQ(b.at("tied weight grad add")->bytes, 12 * V * h);
}

}  // namespace
}  // namespace stepsim
