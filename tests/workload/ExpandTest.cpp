#include "sim/workload/Expand.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/workload/Transformer.hpp"
#include "sim/workload/Transformer.hpp"

namespace stepsim {
namespace {

// GPT-2 small (124M): 12 layers, hidden 768, vocab 50257, context 1024, no biases in Linear here.
// Parameters: wte 50257·768 + wpe 1024·768 + 12·(2·2·768 + 3·768² + 768² + 2·4·768²) + 2·768 + lm_head 50257·768.
TEST(Transformer, ParameterCountMatchesTheFormula) {
    ModelSpec m;
    m.layers = 12;
    m.hidden = 768;
    m.heads = 12;
    m.vocab = 50257;
    m.seq_len = 1024;
    const TransformerShape t = transformerShape(m, 1);
    double n = 0;
    for (const ParamInfo& p : transformerParams(t)) n += p.numel;
    const double h = 768;
    const double expected = 50257 * h + 1024 * h + 12 * (4 * h + 12 * h * h) + 2 * h + 50257 * h;
    EXPECT_DOUBLE_EQ(n, expected);
}

Scenario tiny(int gpus) {
    Scenario sc;
    sc.name = "tiny";
    sc.cluster.gpus_per_node = gpus;
    sc.model.layers = 2;
    sc.model.hidden = 256;
    sc.model.heads = 4;
    sc.model.vocab = 1024;
    sc.model.seq_len = 128;
    sc.training.micro_batch = 2;
    sc.sim.steps = 2;
    return sc;
}

// Model FLOPs = 6·N_linear·T + 7·b·s²·h·L (causal flash attention forward 2bs²h, backward 2.5x).
TEST(Expand, ModelFlopsAreSixNTPlusAttention) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Scenario sc = tiny(2);
    const Expansion e = expand(sc, cost);
    const double h = 256, f = 1024, L = 2, V = 1024, T = 256, b = 2, s = 128;
    const double n_linear = L * (4 * h * h + 2 * h * f) + V * h;
    EXPECT_DOUBLE_EQ(e.workload.model_flops_per_step, 6 * n_linear * T + 7 * b * s * s * h * L);
}

// Each step after the first all-reduces exactly the rebuilt buckets, and every gradient byte once.
TEST(Expand, DdpReducesEveryGradientOncePerStep) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Expansion e = expand(tiny(2), cost);
    const Program& p = e.workload.programs[0];
    double bytes_step1 = 0;
    int count_step1 = 0;
    for (const Op& op : p.ops)
        if (op.kind == OpKind::collective && op.step == 1) bytes_step1 += op.bytes, ++count_step1;
    EXPECT_EQ(count_step1, int(e.buckets.size()));
    EXPECT_DOUBLE_EQ(bytes_step1, 4 * e.params);
}

// The first step uses DDP's initial single bucket.
TEST(Expand, FirstStepUsesOneBucket) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Expansion e = expand(tiny(2), cost);
    int count = 0;
    for (const Op& op : e.workload.programs[0].ops)
        if (op.kind == OpKind::collective && op.step == 0) ++count;
    EXPECT_EQ(count, 1);
}

// gradient_as_bucket_view removes the copy back from buckets and the bucket memory.
TEST(Expand, GradientAsBucketViewDropsCopyBackAndBucketMemory) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(2);
    const Expansion plain = expand(sc, cost);
    sc.ddp.gradient_as_bucket_view = true;
    const Expansion view = expand(sc, cost);
    EXPECT_LT(view.workload.programs[0].ops.size(), plain.workload.programs[0].ops.size());
    EXPECT_EQ(view.memory.buckets, 0.0);
    EXPECT_DOUBLE_EQ(plain.memory.buckets, 4 * plain.params);
}

// finalize_backward copies every parameter's gradient back once per step (reducer.cpp's copy_bucket_to_grad,
// one eager op each), and the reducer pays launch.nccl_host to issue each bucket's all-reduce.
TEST(Expand, CopyBackIsOnePerParameterAndAllReducesCostTheNcclIssue) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Expansion e = expand(tiny(2), cost);
    const Program& p = e.workload.programs[0];
    const std::size_t params = transformerParams(transformerShape(tiny(2).model, 2)).size();
    std::size_t copies = 0;
    for (const Op& op : p.ops) {
        if (op.step != 1) continue;
        const std::string& name = p.names[op.name];
        if (name.size() > 13 && name.compare(name.size() - 13, 13, " copy to grad") == 0) {
            ++copies;
            EXPECT_DOUBLE_EQ(op.host_s, prof.launch.eager_host.median_us * 1e-6) << name;
        }
        if (op.kind == OpKind::collective) EXPECT_DOUBLE_EQ(op.host_s, prof.launch.nccl_host.median_us * 1e-6);
    }
    EXPECT_EQ(copies, params);
}

// Autograd runs a norm-fed linear's input cast before the weight's hook (H200 traces, PyTorch 2.11): in layer 0's
// backward the order is qkv wgrad, norm1 cast backward, qkv grad cast, qkv weight copy to bucket, norm1 backward.
TEST(Expand, NormInputCastRunsBeforeTheWeightsHook) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Expansion e = expand(tiny(2), cost);
    const Program& p = e.workload.programs[0];
    std::vector<std::string> order;
    for (const Op& op : p.ops) {
        if (op.step != 1 || op.kind != OpKind::kernel) continue;
        const std::string& name = p.names[op.name];
        for (const char* want : {"h.0.attn.qkv wgrad", "h.0.norm1 cast backward", "h.0.attn.qkv grad cast",
                                 "h.0.attn.qkv.weight copy to bucket", "h.0.norm1 backward"})
            if (name == want) order.push_back(name);
    }
    EXPECT_EQ(order, (std::vector<std::string>{"h.0.attn.qkv wgrad", "h.0.norm1 cast backward", "h.0.attn.qkv grad cast",
                                               "h.0.attn.qkv.weight copy to bucket", "h.0.norm1 backward"}));
}

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

// One step's ops by name (step 1, after the first step's single bucket).
std::map<std::string, const Op*> stepOps(const Program& p) {
    std::map<std::string, const Op*> ops;
    for (const Op& op : p.ops)
        if (op.step == 1 && op.kind == OpKind::kernel) ops[p.names[op.name]] = &op;
    return ops;
}

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

// Under autocast each residual add's backward casts the fp32 gradient down for the bf16 sublayer output, two per layer
// (H200 traces: as many bf16 casts as the model's, 195 a step of the 1.4B model); cuDNN's attention backward reads
// the output gradient as it is, with no transpose. Without autocast there is nothing to cast.
TEST(Expand, ResidualAddsCastTheirGradientDownUnderAutocast) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    const double T = 256, h = 256;
    const auto ops = stepOps(expand(sc, cost).workload.programs[0]);
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
    const auto autocast = stepOps(expand(sc, cost).workload.programs[0]);
    EXPECT_EQ(autocast.at("log_softmax")->mem, MemKind::log_softmax_forward);
    EXPECT_DOUBLE_EQ(autocast.at("log_softmax")->bytes, 4 * TV);
    EXPECT_DOUBLE_EQ(autocast.at("log_softmax to fp32")->bytes, 6 * TV);
    EXPECT_EQ(autocast.at("log_softmax backward")->mem, MemKind::log_softmax_backward);
    EXPECT_DOUBLE_EQ(autocast.at("log_softmax backward")->bytes, 6 * TV);
    EXPECT_EQ(autocast.count("logits to fp32"), 0u);
    sc.training.param_dtype = DType::bf16;
    const auto pure = stepOps(expand(sc, cost).workload.programs[0]);
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

// Features not modelled yet are refused with the key named, never silently ignored: FSDP, and FP8 compute (FP8
// training, not a 1-byte autocast, which PyTorch does not have).
TEST(Expand, UnsupportedFeatureIsAnErrorNamingTheKey) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const std::vector<std::pair<std::string, std::function<void(Scenario&)>>> cases = {
        {"parallel.data", [](Scenario& sc) { sc.parallel.data = DataParallel::fsdp2; }},
        {"training.compute_dtype", [](Scenario& sc) { sc.training.compute_dtype = DType::fp8; }}};
    for (const auto& [key, set] : cases) {
        Scenario sc = tiny(2);
        sc.source = "x.yaml";
        set(sc);
        try {
            expand(sc, cost);
            ADD_FAILURE() << "expected an InputError naming " << key;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace stepsim
