// The model variants a scenario can name (model.linear_bias, model.position_embedding, model.qkv, model.loss_dtype,
// model.dropout): their parameters, the
// kernels they add to a micro-step and how those are priced, and that they are refused where not modelled.
#include "sim/workload/Expand.hpp"

#include <string>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/workload/Transformer.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

int countContaining(const std::map<std::string, const Op*>& ops, const std::string& what) {
    int n = 0;
    for (const auto& [name, op] : ops) n += name.find(what) != std::string::npos;
    return n;
}

// Every Linear of the blocks gets a bias of its output width, after its weight; the head none.
TEST(ModelVariants, LinearBiasAddsOneVectorPerBlockLinear) {
    Scenario sc = tiny(1);
    const TransformerShape plain = transformerShape(sc.model, 2);
    sc.model.linear_bias = true;
    const TransformerShape biased = transformerShape(sc.model, 2);
    const auto a = transformerParams(plain), b = transformerParams(biased);
    const double h = 256, f = 4 * h, L = 2;
    ASSERT_EQ(b.size(), a.size() + 4 * 2);
    double extra = 0;
    for (const ParamInfo& p : b) extra += p.numel;
    for (const ParamInfo& p : a) extra -= p.numel;
    EXPECT_DOUBLE_EQ(extra, L * (3 * h + h + f + h));
    for (std::size_t i = 0; i + 1 < b.size(); ++i)
        if (b[i + 1].name.ends_with(".bias") && b[i].matmul)
            EXPECT_EQ(b[i].name.substr(0, b[i].name.size() - 7), b[i + 1].name.substr(0, b[i + 1].name.size() - 5));
    for (const ParamInfo& p : b) EXPECT_NE(p.name, "lm_head.bias");
}

// A bias's kernels: its autocast cast in forward; in backward the gradient's reduction over the tokens (read T × out
// in bf16) at memory.kernels.bias_grad's rate, and its cast to fp32. Its gradient becomes ready after the weight's.
TEST(ModelVariants, LinearBiasKernelsArePricedAsTheirKinds) {
    const HardwareProfile prof = builtinProfile("h200x2");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    sc.model.linear_bias = true;
    const Expansion e = expand(sc, cost);
    const auto ops = stepOps(e.workload.programs[0]);
    const double T = 256, h = 256;
    EXPECT_EQ(countContaining(ops, "bias cast"), 8);
    EXPECT_EQ(countContaining(ops, "bias grad cast"), 8);
    ASSERT_EQ(ops.count("h.0.attn.qkv bias grad"), 1u);
    const Op* g = ops.at("h.0.attn.qkv bias grad");
    EXPECT_EQ(g->mem, MemKind::bias_grad);
    EXPECT_DOUBLE_EQ(g->bytes, 2 * (T + 1) * 3 * h);
    EXPECT_DOUBLE_EQ(g->work_s, cost.memorySeconds(g->bytes, MemKind::bias_grad));
    EXPECT_EQ(ops.at("h.1.mlp.fc bias cast")->mem, MemKind::cast_down);
    EXPECT_DOUBLE_EQ(ops.at("h.1.mlp.fc bias cast")->bytes, 6 * 4 * h);
    Scenario plain = tiny(1);
    const Expansion plainExpansion = expand(plain, cost);
    const auto plainOps = stepOps(plainExpansion.workload.programs[0]);
    EXPECT_EQ(countContaining(plainOps, "bias cast") + countContaining(plainOps, "bias grad"), 0);
}

// position_embedding: none drops the position table and its kernels; rope drops them too and adds the rotary
// kernels on q and k in every layer, forward and backward.
TEST(ModelVariants, PositionEmbeddingChoosesTheTableOrRotaryKernels) {
    const HardwareProfile prof = builtinProfile("h200x2");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    const Expansion learned = expand(sc, cost);
    sc.model.position_embedding = PositionEmbedding::none;
    const Expansion none = expand(sc, cost);
    sc.model.position_embedding = PositionEmbedding::rope;
    const Expansion rope = expand(sc, cost);
    EXPECT_DOUBLE_EQ(learned.params - none.params, 128.0 * 256);
    EXPECT_DOUBLE_EQ(rope.params, none.params);
    const auto l = stepOps(learned.workload.programs[0]), n = stepOps(none.workload.programs[0]),
               r = stepOps(rope.workload.programs[0]);
    EXPECT_EQ(countContaining(l, "pos_embedding"), 2);
    EXPECT_EQ(countContaining(n, "pos_embedding"), 0);
    EXPECT_EQ(countContaining(n, "rope"), 0);
    EXPECT_EQ(r.size() - n.size(), std::size_t(countContaining(r, "rope")));
    EXPECT_GT(countContaining(r, "h.1.rope"), 0);
    EXPECT_EQ(countContaining(r, "h.0.rope"), countContaining(r, "h.1.rope"));
}

// The kernels each layout of q/k/v adds over the fused split, per layer, as model_variants.py's profiled steps counted
// them (results/validation/variants/NOTES.md): fused_permute one (the vectorized concatenation replaced by a
// non-vectorized one and a copy), separate fifteen (forward two activation casts, two weight casts, two GEMMs;
// backward four GEMMs, two gradient casts, two input-gradient casts and two adds, less the concatenation).
TEST(ModelVariants, QkvLayoutsAddTheMeasuredKernels) {
    const HardwareProfile prof = builtinProfile("h200x2");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    const Expansion ef = expand(sc, cost);
    const auto fused = stepOps(ef.workload.programs[0]);
    sc.model.qkv = QkvLayout::fused_permute;
    const Expansion ep = expand(sc, cost);
    const auto permute = stepOps(ep.workload.programs[0]);
    sc.model.qkv = QkvLayout::separate;
    const Expansion sep = expand(sc, cost);
    const auto separate = stepOps(sep.workload.programs[0]);
    EXPECT_EQ(permute.size(), fused.size() + 2);
    EXPECT_EQ(separate.size(), fused.size() + 2 * 15);
    const Op* stack = permute.at("h.0.qkv grad stack");
    EXPECT_EQ(stack->mem, MemKind::qkv_permute_cat);
    EXPECT_DOUBLE_EQ(stack->bytes, 2 * 2 * 256.0 * 3 * 256);
    EXPECT_EQ(permute.at("h.0.qkv grad permute copy")->mem, MemKind::qkv_permute_copy);
    EXPECT_EQ(countContaining(separate, "qkv"), 0);
    // Three weights of one layer's width replace the fused one: the same parameter count.
    sc.model.qkv = QkvLayout::fused;
    EXPECT_DOUBLE_EQ(sep.params, ef.params);
    sc.model.qkv = QkvLayout::separate;
    EXPECT_EQ(transformerParams(transformerShape(sc.model, 2)).size(),
              transformerParams(transformerShape(tiny(1).model, 2)).size() + 2 * 2);
}

// loss_dtype: fp32 runs the same number of kernels (model_variants.py's loss_fp32 step: +0), the log-softmax over
// fp32 logits at its fp32 rates.
TEST(ModelVariants, Fp32LossCastsTheLogitsFirst) {
    const HardwareProfile prof = builtinProfile("h200x2");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    const Expansion ep = expand(sc, cost);
    const auto plain = stepOps(ep.workload.programs[0]);
    sc.model.loss_dtype = LossDtype::fp32;
    const Expansion ef = expand(sc, cost);
    const auto fp32 = stepOps(ef.workload.programs[0]);
    EXPECT_EQ(fp32.size(), plain.size());
    EXPECT_EQ(fp32.at("log_softmax")->mem, MemKind::log_softmax_forward_fp32);
    EXPECT_EQ(fp32.at("log_softmax backward")->mem, MemKind::log_softmax_backward_fp32);
    EXPECT_EQ(fp32.count("logits to fp32"), 1u);
    EXPECT_EQ(plain.at("log_softmax")->mem, MemKind::log_softmax_forward);
}

// dropout adds, as the profiled dropout step counted (+62 at 12 layers): per layer two dropouts on the residual
// branches and their backward, one Philox unpack before SDPA; the embeddings' dropout and its backward. SDPA's
// kernels take the profile's dropout ratios.
TEST(ModelVariants, DropoutAddsItsKernelsAndSlowsAttention) {
    const HardwareProfile prof = builtinProfile("h200x2");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    const Expansion ep = expand(sc, cost);
    const auto plain = stepOps(ep.workload.programs[0]);
    sc.model.dropout = 0.1;
    const Expansion ed = expand(sc, cost);
    const auto drop = stepOps(ed.workload.programs[0]);
    EXPECT_EQ(drop.size(), plain.size() + 2 * 5 + 2);
    EXPECT_EQ(drop.at("h.0.attn residual dropout")->mem, MemKind::dropout);
    EXPECT_DOUBLE_EQ(drop.at("h.0.attn residual dropout")->bytes, 5 * 256.0 * 256);
    EXPECT_EQ(drop.at("h.1.mlp residual dropout backward")->mem, MemKind::dropout_backward);
    EXPECT_DOUBLE_EQ(drop.at("embedding dropout")->bytes, 9 * 256.0 * 256);
    ASSERT_GT(prof.attention.dropout_forward_ratio, 1.0);
    EXPECT_DOUBLE_EQ(drop.at("h.0.attn.flash")->work_s,
                     plain.at("h.0.attn.flash")->work_s * prof.attention.dropout_forward_ratio);
    EXPECT_DOUBLE_EQ(drop.at("h.0.attn.flash backward")->work_s,
                     plain.at("h.0.attn.flash backward")->work_s * prof.attention.dropout_backward_ratio);
}

// A profile without the SDPA-with-dropout measurement refuses model.dropout (the datasheet profiles).
TEST(ModelVariants, DropoutNeedsItsMeasurement) {
    HardwareProfile prof = builtinProfile("h200x2");
    prof.attention.dropout_forward_ratio = 0.0;
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    sc.model.dropout = 0.1;
    EXPECT_THROW(expand(sc, cost), InputError);
}

// Refused with tensor parallelism (but Llama's: rotary embeddings, separate q/k/v, the fp32 loss, built split); under
// torch.compile every variant runs, its elementwise kernels fused by the profile's rates (fewer kernels and less
// memory-bound time than eager), and with FP8 linears too.
TEST(ModelVariants, RefusedWithTensorParallelismRunUnderCompileAndFp8) {
    const HardwareProfile prof = builtinProfile("h200x2");
    CostModel cost(prof, NcclSpec{}, true);
    auto kernels = [](const Expansion& e, double* memory_s) {
        int n = 0;
        *memory_s = 0;
        for (const Op& op : e.workload.programs[0].ops)
            if (op.step == 1 && op.kind == OpKind::kernel && (op.phase == Phase::forward || op.phase == Phase::backward)) {
                ++n;
                if (op.cls == KernelClass::memory) *memory_s += op.work_s;
            }
        return n;
    };
    for (auto set : {+[](Scenario& s) { s.model.linear_bias = true; },
                     +[](Scenario& s) { s.model.position_embedding = PositionEmbedding::rope; },
                     +[](Scenario& s) { s.model.qkv = QkvLayout::separate; },
                     +[](Scenario& s) { s.model.loss_dtype = LossDtype::fp32; },
                     +[](Scenario& s) { s.model.dropout = 0.1; }}) {
        Scenario sc = tiny(2);
        sc.parallel.tp = 2;
        set(sc);
        const bool llama = sc.model.position_embedding == PositionEmbedding::rope ||
                           sc.model.qkv == QkvLayout::separate || sc.model.loss_dtype == LossDtype::fp32;
        if (llama) EXPECT_NO_THROW(expand(sc, cost));
        else EXPECT_THROW(expand(sc, cost), InputError);
        sc = tiny(1);
        set(sc);
        double eager_s = 0, compiled_s = 0;
        const int eager = kernels(expand(sc, cost), &eager_s);
        sc.compile.enabled = true;
        const int compiled = kernels(expand(sc, cost), &compiled_s);
        EXPECT_LT(compiled, eager);
        EXPECT_LT(compiled_s, eager_s);
        sc.fp8.enabled = true;
        EXPECT_NO_THROW(expand(sc, cost));
        sc.compile.enabled = false;
        EXPECT_NO_THROW(expand(sc, cost));
    }
}

// Float8Linear with a bias: the bias cast to bf16 and added after the scaled GEMM (torchao's output +
// bias.to(output.dtype)); its gradient's reduction and cast as in BF16.
TEST(ModelVariants, Fp8LinearsWithBiasesAddThemAfterTheScaledGemm) {
    const HardwareProfile prof = builtinProfile("h200x2");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    sc.model.linear_bias = true;
    sc.fp8.enabled = true;
    const Expansion e = expand(sc, cost);
    const auto ops = stepOps(e.workload.programs[0]);
    const double T = 256, h = 256;
    ASSERT_EQ(ops.count("h.0.attn.qkv bias add"), 1u);
    EXPECT_DOUBLE_EQ(ops.at("h.0.attn.qkv bias add")->bytes, 3 * 2 * T * 3 * h + 2 * 3 * h);
    EXPECT_EQ(ops.at("h.0.attn.qkv bias cast")->mem, MemKind::cast_down);
    EXPECT_EQ(ops.count("h.0.attn.qkv bias grad"), 1u);
    EXPECT_EQ(ops.count("h.0.attn.qkv fp8 a transpose") + ops.count("h.0.attn.qkv wgrad fp8 a transpose"), 1u);
}

}  // namespace
}  // namespace stepsim

namespace stepsim {
namespace {

// FP8 linears under torch.compile: each region's casts to FP8 become the compiled Float8Linear's kernels,
// compile.fp8's kernels_per_cast per cast (2 casts a linear before its forward GEMM, 2 before each backward GEMM), their
// time × its time_ratio; the rest of the region fuses by the general rule.
TEST(ModelVariants, Fp8CastsUnderCompileTakeTheCompiledFloat8LinearsRates) {
    const HardwareProfile prof = builtinProfile("h200x2");
    ASSERT_TRUE(prof.compile.fp8.measured);
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    sc.fp8.enabled = true;
    auto fp8Work = [](const Expansion& e, Phase phase, int* kernels) {
        double w = 0;
        *kernels = 0;
        const Program& p = e.workload.programs[0];
        for (const Op& op : p.ops) {
            const std::string& n = p.names[op.name];
            if (op.step != 1 || op.kind != OpKind::kernel || op.phase != phase || op.cls != KernelClass::memory) continue;
            if (n.find(" fp8") == std::string::npos && n.find("scale reciprocal") == std::string::npos) continue;
            w += op.work_s;
            ++*kernels;
        }
        return w;
    };
    int eager_f = 0, eager_b = 0, compiled_f = 0, compiled_b = 0;
    const Expansion eager = expand(sc, cost);
    const double ef = fp8Work(eager, Phase::forward, &eager_f), eb = fp8Work(eager, Phase::backward, &eager_b);
    sc.compile.enabled = true;
    const Expansion compiled = expand(sc, cost);
    const double cf = fp8Work(compiled, Phase::forward, &compiled_f), cb = fp8Work(compiled, Phase::backward, &compiled_b);
    const int linears = 2 * 4 + 1;  // per layer qkv, proj, fc, proj; the LM head (1024 × 256)
    EXPECT_EQ(compiled_f, linears * 2 * 3);      // 3 kernels per cast, tensorwise forward
    EXPECT_EQ(compiled_b, linears * 2 * 3);      // two regions of 2 casts a linear, round(1.5 · 2) = 3 kernels each
    EXPECT_NEAR(cf, ef * prof.compile.fp8.tensorwise_forward.time_ratio, 1e-9 * ef);
    EXPECT_NEAR(cb, eb * prof.compile.fp8.tensorwise_backward.time_ratio, 1e-9 * eb);
    EXPECT_GT(eager_f, compiled_f);
    EXPECT_GT(eager_b, compiled_b);
}

}  // namespace
}  // namespace stepsim
