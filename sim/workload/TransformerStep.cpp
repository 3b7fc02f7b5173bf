#include "sim/workload/TransformerStep.hpp"

#include <cstring>

#include <fmt/format.h>

namespace stepsim {

TransformerStep::TransformerStep(StepContext& c, ProgramBuilder& b, bool accumulate, ParallelSchedule* hooks,
                                 ModelSlice slice)
    : accumulate_(accumulate), c_(c), b_(b), t_(c.t), hooks_(hooks), slice_(slice), tp_(c, b) {
    if (fp8Training(c.sc))
        fp8_.emplace(c, b, c.sc.parallel.data == DataParallel::fsdp2 && c.sc.fp8.fp8_all_gather);
}

bool TransformerStep::hasBias(const std::string& name) const {
    if (name == "lm_head") return false;
    if (t_.bias) return true;
    if (!t_.qkv_bias) return false;
    for (const char* x : {"attn.q", "attn.k", "attn.v", "attn.qkv"})
        if (name.size() >= std::strlen(x) && name.compare(name.size() - std::strlen(x), std::string::npos, x) == 0)
            return true;
    return false;
}

void TransformerStep::inputMem(const std::string& name, double bytes, MemKind kind) {
    if (input()) b_.mem(name, bytes, kind);
}

void TransformerStep::forward() {
    b_.phase = Phase::forward;
    if (hooks_) hooks_->beforeForward();
    const double T = double(t_.T), h = double(t_.h), Ts = double(t_.Ts);
    if (slice_.embedding) {
        // Vocabulary-parallel under TP: each rank looks up its rows, then the partial embeddings are reduced.
        b_.mem("embedding", 2 * c_.re() * T * h);
        tp_.reduce("embedding", c_.ce * T * h);
        if (t_.pos_embedding) b_.mem("pos_embedding add", c_.re() * double(t_.s) * h + 2 * c_.re() * Ts * h);
        // Gemma: inputs_embeds * normalizer (sqrt(hidden) as a tensor of the embedding's dtype).
        if (t_.embedding_scale) b_.mem("embedding scale", 2 * c_.re() * Ts * h);
        dropoutForward("embedding dropout", c_.re());
        if (t_.hf) {
            hfMaskForward();
            if (t_.rope) hfRotaryTables();
        }
    }
    for (int l = slice_.begin; l < layerEnd(); ++l) {
        if (hooks_) hooks_->beforeLayerForward(l);
        if (const double s = checkpointHost(/*backward=*/false); s > 0) b_.host(L(l, "checkpoint"), s);
        layerForward(l);
        if (hooks_) hooks_->afterLayerForward(l);
    }
    if (!slice_.head) return;
    norm("norm_f");
    if (c_.autocast) b_.mem("norm_f cast", (4 + c_.ce) * Ts * h, MemKind::cast_down);
    // Float8Linear converts the head too where its dimensions allow (its backward, headBackward, already did).
    if (fp8_ && Fp8Linear::converts(t_.V, t_.h)) {
        fp8Forward("lm_head", t_.V, t_.h, TpSplit::column);
    } else {
        weightCast("lm_head", double(t_.V) * t_.h);
        tp_.gatheredGemm("lm_head", t_.T, t_.V, t_.h);
    }
    if (hooks_) {
        hooks_->afterForward();
        b_.phase = Phase::forward;
    }
    const double TV = T * double(t_.V);
    if (c_.autocast && !t_.fp32_loss) {
        // cross_entropy under autocast: log_softmax on the bf16 logits, its output cast to fp32 for nll_loss
        // (H200 traces, PyTorch 2.11).
        b_.mem("log_softmax", 2 * c_.ce * TV, MemKind::log_softmax_forward);
        b_.mem("log_softmax to fp32", (c_.ce + 4) * TV, MemKind::cast_up);
    } else {
        // Without autocast the loss takes logits.float() (as the validation harness and Hugging Face models do);
        // under autocast model.loss_dtype: fp32 does the same (the same kernel count: model_variants.py's
        // loss_fp32 step replaces the bf16 log-softmax and its output's cast by the logits' cast and an fp32
        // log-softmax, results/validation/variants/NOTES.md).
        b_.mem("logits to fp32", (c_.ce + 4) * TV, MemKind::cast_up);
        b_.mem("log_softmax", 8 * TV, MemKind::log_softmax_forward_fp32);
    }
    b_.mem("nll_loss", 8 * T);  // gathers one logit per token
    tp_.crossEntropy("vocab-parallel cross-entropy", t_.T);
    if (c_.grad_scaler) b_.mem("loss scale", 8);  // scaler.scale(loss)
}

void TransformerStep::backward(const std::function<void(std::size_t)>& ready, BackwardPart part) {
    b_.phase = Phase::backward;
    ready_ = &ready;
    part_ = part;
    const double T = double(t_.T), h = double(t_.h), Ts = double(t_.Ts);
    if (slice_.head && input()) headBackward();
    else if (slice_.head) linearBackward("lm_head", t_.V, t_.h, t_.tied ? npos : paramIndex("lm_head.weight"));
    if (slice_.head) normBackward("norm_f", "norm_f");
    for (int l = layerEnd() - 1; l >= slice_.begin; --l) {
        if (hooks_) {
            hooks_->beforeLayerBackward(l);
            b_.phase = Phase::backward;
        }
        layerBackward(l);
        if (hooks_) {
            hooks_->afterLayerBackward(l);
            b_.phase = Phase::backward;
        }
    }
    if (slice_.embedding && weight()) {
        // SP: the embedding's output gradient is gathered from the sequence shards first.
        tp_.gather("embedding grad", c_.ce * T * h);
        // The embeddings' dropout, backward: on the way to the embedding's gradient (its W part).
        if (t_.dropout) b_.mem("embedding dropout backward", (2 * c_.re() + 1) * T * h, MemKind::dropout_backward);
        if (t_.embedding_scale) b_.mem("embedding scale backward", 2 * c_.re() * T * h);
        // DDP's grad-ready order on a real run ends with the token embedding, then the position embedding.
        b_.mem("embedding backward", 4 * double(t_.V) * h + 12 * T * h);
        // A tied head's weight gradient arrives first; autograd adds the embedding's to it (one add over the V×h
        // weight in the parameters' dtype: a tied-head step's profiler trace, H200, PyTorch 2.11) before the
        // weight's AccumulateGrad.
        if (t_.tied) b_.mem("tied weight grad add", 3 * c_.pe * double(t_.V) * h);
        gradReady(paramIndex("wte.weight"));
        if (t_.pos_embedding) {
            b_.mem("pos_embedding backward", 4 * Ts * h + 4 * double(t_.s) * h);
            gradReady(paramIndex("wpe.weight"));
        }
    }
    ready_ = nullptr;
    part_ = BackwardPart::whole;
}

// The loss's backward and the LM head's (its input gradient reduced over the TP group), to the final norm.
void TransformerStep::headBackward() {
    const double T = double(t_.T), h = double(t_.h), Ts = double(t_.Ts), TV = T * double(t_.V);
    // loss.backward() seeds the gradient with ones; (loss / grad_accum) adds a scale and its backward.
    if (c_.sc.training.grad_accum > 1) b_.mem("loss / grad_accum", 8);
    b_.mem("loss grad seed", 4);
    if (c_.grad_scaler) b_.mem("loss scale backward", 8);
    if (c_.sc.training.grad_accum > 1) b_.mem("loss / grad_accum backward", 8);
    b_.mem("nll_loss backward", 4 * TV);
    if (c_.autocast && !t_.fp32_loss) {
        b_.mem("log_softmax grad cast", (4 + c_.ce) * TV, MemKind::cast_down);
        b_.mem("log_softmax backward", 3 * c_.ce * TV, MemKind::log_softmax_backward);
    } else {
        b_.mem("log_softmax backward", 12 * TV, MemKind::log_softmax_backward_fp32);
        b_.mem("logits grad cast", (4 + c_.ce) * TV, MemKind::cast_down);
    }
    if (hooks_) {
        hooks_->beforeHeadBackward();
        b_.phase = Phase::backward;
    }
    linearBackward("lm_head", t_.V, t_.h, t_.tied ? npos : paramIndex("lm_head.weight"),
                   [&] { tp_.reduce("lm_head input grad", c_.ce * T * h); });
    if (c_.autocast) b_.mem("norm_f cast backward", (c_.ce + 4) * Ts * h, MemKind::cast_up);
}

// Activation checkpointing recomputes forward kernels inside backward; they don't count as model FLOPs.
// Full: the layer's forward up to the last tensor its backward saved: torch.utils.checkpoint (non-reentrant,
// early stop on by default) stops there, so the MLP's output projection and the residual add after it are
// not rerun (measured on H200: 3 of a block's 4 GEMMs come back in backward).
// The recompute runs the forward's code: its kernels are priced and launched as forward ones, after the
// checkpoint's own host work.
void TransformerStep::recompute(int l, bool full) {
    if (const double s = checkpointHost(/*backward=*/true); s > 0) b_.host(L(l, "checkpoint recompute"), s);
    const bool saved = b_.count_flops;
    b_.count_flops = false;
    b_.phase = Phase::forward;
    if (c_.sc.training.activation_checkpointing == Checkpointing::selective_op) recomputeUnsavedOps(l);
    else if (full) layerForward(l, /*recompute=*/true);
    else attentionForward(l);
    b_.phase = Phase::backward;
    b_.count_flops = saved;
}

// torchtitan's op policy (its `selective_ac_option = "op"`): the selective checkpoint context saves the outputs of
// SDPA and of the block's odd-numbered matmuls (the 1st, 3rd, ... in forward order) and reruns in backward what the
// backward needs of the rest, in forward order: the first norm, the even matmuls (with separate q/k/v: k, the output
// projection, the MLP's up projection; fused qkv: the output projection and the MLP's second), rotary embeddings, the
// residual add, the second norm and the MLP's activation and product. The last matmul's output is saved: it stops
// there. Attention itself is not rerun.
void TransformerStep::recomputeUnsavedOps(int l) {
    const double T = double(t_.T), h = double(t_.h), f = double(t_.f), Ts = double(t_.Ts);
    int mm = 0;
    const auto linear = [&](const char* what, long out, long in, TpSplit tp) {
        if (++mm % 2 == 0) linearForward(L(l, what), out, in, tp);
    };
    norm(L(l, "norm1"));
    if (c_.autocast) b_.mem(L(l, "norm1 cast"), (4 + c_.ce) * Ts * h, MemKind::cast_down);
    if (t_.qkv == QkvLayout::separate) {
        linear("attn.q", t_.heads * t_.d, t_.h, TpSplit::column);
        linear("attn.k", t_.kv * t_.d, t_.h, TpSplit::column);
        linear("attn.v", t_.kv * t_.d, t_.h, TpSplit::column);
    } else {
        linear("attn.qkv", t_.qkvOut(), t_.h, TpSplit::column);
    }
    if (t_.rope) ropeForward(l);
    linear("attn.proj", t_.h, t_.attnOut(), TpSplit::row);
    b_.mem(L(l, "residual add"), (2 * c_.re() + c_.ce) * Ts * h, c_.autocast ? MemKind::residual_add : MemKind::elementwise);
    norm(L(l, "norm2"));
    if (c_.autocast) b_.mem(L(l, "norm2 cast"), (4 + c_.ce) * Ts * h, MemKind::cast_down);
    if (t_.mlp == MlpKind::gelu) {
        linear("mlp.fc", t_.f, t_.h, TpSplit::column);
        b_.mem(L(l, "gelu"), 2 * c_.ce * T * f, MemKind::gelu_forward);
        return;
    }
    linear("mlp.gate", t_.f, t_.h, TpSplit::column);
    b_.mem(L(l, "silu"), 2 * c_.ce * T * f);
    linear("mlp.up", t_.f, t_.h, TpSplit::column);
    b_.mem(L(l, "silu mul"), 3 * c_.ce * T * f);
}

// Host cost of one checkpointed layer beyond its kernels' launches (0 without checkpointing).
double TransformerStep::checkpointHost(bool backward) const {
    const CheckpointHost& h = c_.cost.profile().launch.checkpoint_host_us;
    switch (c_.sc.training.activation_checkpointing) {
        case Checkpointing::none: return 0.0;
        case Checkpointing::selective:
        case Checkpointing::selective_op:  // the same selective checkpoint machinery (host_overhead.py's selective)
            return 1e-6 * (backward ? h.selective_backward_us : h.selective_forward_us);
        case Checkpointing::full: return 1e-6 * (backward ? h.full_backward_us : h.full_forward_us);
    }
    return 0.0;
}

std::size_t TransformerStep::paramIndex(const std::string& name) const {
    for (std::size_t i = 0; i < c_.params.size(); ++i)
        if (c_.params[i].name == name) return i;
    return npos;
}

std::string TransformerStep::L(int l, const char* what) const { return fmt::format("h.{}.{}", l, what); }

// A norm kernel of the model's norm, on the residual stream's dtype (under autocast norms run in fp32 on the
// fp32 stream), priced by its rows and width from the profile's measured grid.
void TransformerStep::normKernel(const std::string& name, double passes, MemKind layer, MemKind rms) {
    const double Ts = double(t_.Ts), h = double(t_.h);
    b_.mem(name, passes * c_.re() * Ts * h, t_.norm == NormKind::layernorm ? layer : rms, KernelClass::memory,
           GemmShape{t_.Ts, t_.h, long(c_.re())});
}

void TransformerStep::norm(const std::string& name) {
    if (t_.hf && t_.norm == NormKind::rmsnorm) return hfRmsNorm(name);
    normKernel(name, 2, MemKind::norm_forward, MemKind::rms_forward);
}

void TransformerStep::normBackward(const std::string& name, const std::string& param) {
    if (t_.hf && t_.norm == NormKind::rmsnorm) return hfRmsNormBackward(name, param);
    // Two launches, as PyTorch's CUDA norm backward: the input gradient (reads x, dy, writes dx) and the
    // weight (and bias) gradient, a column reduction over x and dy read again.
    if (input()) normKernel(name + " backward", 3, MemKind::norm_backward, MemKind::rms_backward);
    if (!weight()) return;
    normKernel(name + " weight grad", 2, MemKind::norm_weight_grad, MemKind::rms_weight_grad);
    gradReady(paramIndex(param + ".weight"));
    if (t_.norm == NormKind::layernorm) gradReady(paramIndex(param + ".bias"));
}

void TransformerStep::weightCast(const std::string& name, double numel) {
    if (c_.autocast) b_.mem(name + " weight cast", (c_.pe + c_.ce) * numel, MemKind::cast_down);
}

// `tp`: how the linear is split over the TP group: none (replicated, or the input already gathered), column (its
// input gathered first under SP) or row (its partial output reduced).
void TransformerStep::linearForward(const std::string& name, long out, long in, TpSplit tp) {
    if (fp8_ && Fp8Linear::converts(out, in)) {
        fp8Forward(name, out, in, tp);
        // Float8Linear adds the bias after the scaled GEMM: output + bias.to(output.dtype) (torchao float8_linear.py),
        // the bias cast (fp32 → bf16) and an add over the output.
        if (!hasBias(name)) return;
        if (c_.pe != c_.ce) b_.mem(name + " bias cast", (c_.pe + c_.ce) * double(out), MemKind::cast_down);
        b_.mem(name + " bias add", 3 * c_.ce * double(t_.T) * double(out) + c_.ce * double(out));
        return;
    }
    weightCast(name, double(out) * in);
    // With a bias autocast casts it too (fp32 → bf16, `out` elements); cuBLAS adds it in the GEMM's epilogue.
    if (hasBias(name) && c_.autocast) b_.mem(name + " bias cast", (c_.pe + c_.ce) * double(out), MemKind::cast_down);
    if (tp == TpSplit::column) tp_.gatheredGemm(name, t_.T, out, in);
    else if (tp == TpSplit::row) tp_.reducedGemm(name, t_.T, out, in);
    else b_.gemm(name, t_.T, out, in);
}

// An FP8 linear's forward. Under TP (torchao's Float8 TP plans, TensorParallel.hpp): a column-parallel group's input
// cast on its sequence shard (SP; the whole input without) with its amax all-reduced, gathered in FP8 and shared by
// the group's other linears (TpSplit::none: no cast of their own); a row-parallel linear's sharded input cast with its
// amax all-reduced; the scaled GEMMs chunked with their collectives under async TP.
void TransformerStep::fp8Forward(const std::string& name, long out, long in, TpSplit tp) {
    if (!tp_.on()) return fp8_->forward(name, out, in);
    const auto gemm = [&](const std::string& g, long rows) { fp8_->gemm(g, rows, out, in); };
    switch (tp) {
        case TpSplit::none: return fp8_->forward(name, out, in, /*cast_input=*/false);
        case TpSplit::column:
            fp8_->castInput(name, c_.sp ? t_.Ts : t_.T, in);
            tp_.amaxAllReduce(name + " input");
            fp8_->castWeight(name, out, in);
            return tp_.gatheredGemm(name, t_.T, out, in, gemm, /*elem_bytes=*/1.0);
        case TpSplit::row:
            fp8_->castInput(name, t_.T, in);
            tp_.amaxAllReduce(name + " input");
            fp8_->castWeight(name, out, in);
            return tp_.reducedGemm(name, t_.T, out, in, gemm);
    }
}

// `input_grad`: the kernels the input's gradient goes through next (its cast back to fp32 when the input was
// cast by autocast). Autograd runs them before the weight's AccumulateGrad and DDP's hook (H200 traces, PyTorch
// 2.11: the norm's cast backward, then the weight's cast and the copy into the bucket, then the all-reduce).
// A row-parallel linear's output gradient is gathered from the sequence shards under SP first (`tp` row).
void TransformerStep::linearBackward(const std::string& name, long out, long in, std::size_t param,
                                     const std::function<void()>& input_grad, TpSplit tp) {
    if (fp8_ && Fp8Linear::converts(out, in)) {
        // Under TP a row-parallel linear's output gradient is gathered from the sequence shards first (SP), in the
        // compute dtype; a column-parallel one's input gradient is reduced by `input_grad`.
        if (tp == TpSplit::row && input()) tp_.gather(name + " output grad", c_.ce * double(t_.T) * double(out));
        fp8_->backward(name, out, in);
        if (input_grad) input_grad();
    } else {
        if (input()) {
            if (tp == TpSplit::row) tp_.gatheredGemm(name + " dgrad", t_.T, in, out);
            else b_.gemm(name + " dgrad", t_.T, in, out);
        }
        if (weight()) b_.gemm(name + " wgrad", out, in, t_.T);
        if (input_grad && input()) input_grad();
        if (!weight()) return;
    }
    if (c_.autocast) b_.mem(name + " grad cast", (c_.ce + c_.pe) * double(out) * in, MemKind::cast_up);
    if (param != npos) gradReady(param);
    if (hasBias(name)) biasBackward(name, out);
}

// A Linear bias's gradient: the output gradient summed over the tokens (a column reduction reading T × out in the
// compute dtype, memory.kernels.bias_grad), cast to the parameter's dtype under autocast, then ready.
void TransformerStep::biasBackward(const std::string& name, long out) {
    const double o = double(out);
    b_.mem(name + " bias grad", c_.ce * (double(t_.T) + 1.0) * o, MemKind::bias_grad);
    // HF's Conv1D and Linear biases: sum over the (B·s, out) gradient in two passes (the captures' aten::sum).
    if (t_.hf) b_.mem(name + " bias grad (second pass)", 2 * c_.ce * o);
    if (c_.autocast) b_.mem(name + " bias grad cast", (c_.ce + c_.pe) * o, MemKind::cast_up);
    gradReady(paramIndex(name + ".bias"));
}

// Under autocast a residual add joins the fp32 stream and a bf16 sublayer output; its backward casts the fp32
// gradient down for the sublayer (one per residual add: H200 traces, PyTorch 2.11).
void TransformerStep::residualGradCast(const std::string& name) {
    if (c_.autocast) inputMem(name, (c_.re() + c_.ce) * double(t_.Ts) * double(t_.h), MemKind::cast_down);
}

// The cast of a norm's output to the compute dtype, backward.
void TransformerStep::normCastBackward(const std::string& name) {
    if (c_.autocast) inputMem(name, (c_.ce + 4) * double(t_.Ts) * double(t_.h), MemKind::cast_up);
}

void TransformerStep::gradReady(std::size_t i) {
    if (i == npos) return;
    if (accumulate_) {
        // AccumulateGrad adds the micro-step's gradient into .grad in place: a kernel of its own, issued by the
        // autograd engine at its own host cost, launch.grad_accumulate_host_us (host_overhead.py --only
        // accumulate, raw/accumulate_host-1.jsonl and raw/accumulate_host-2.jsonl: 0.31 of a backward
        // kernel's).
        b_.mem(c_.params[i].name + " grad accumulate", 3 * c_.pe * c_.params[i].numel);
        b_.last().host_s = c_.accumulate_s;
    }
    (*ready_)(i);
}

// Rotary embeddings as eager PyTorch writes them (Llama / Hugging Face: x·cos + rotate_half(x)·sin, rotate_half(x)
// = cat(−x2, x1)) on q (T·heads·d elements) and k (T·kv·d): per tensor a multiply by cos, a negation of one half, a
// concatenation, a multiply by sin and an add, each a kernel over the compute dtype; the cos and sin tables (s × d)
// cast to it first. All at memory.kernels.rope's rate: q and k are strided views of the qkv output, slower per byte
// than contiguous elementwise kernels.
void TransformerStep::ropeForward(int l) {
    const double sd = double(t_.s) * double(t_.d), ce = c_.ce;
    for (const char* tab : {"rope cos cast", "rope sin cast"}) b_.mem(L(l, tab), (4 + ce) * sd, MemKind::rope);
    for (const auto& [x, heads] : {std::pair{"q", t_.heads}, std::pair{"k", t_.kv}}) {
        const double e = double(t_.T) * double(heads * t_.d);
        const std::string n = std::string("rope ") + x;
        b_.mem(L(l, (n + " mul cos").c_str()), 2 * ce * e + ce * sd, MemKind::rope);
        b_.mem(L(l, (n + " neg").c_str()), ce * e, MemKind::rope);
        b_.mem(L(l, (n + " cat").c_str()), 2 * ce * e, MemKind::rope);
        b_.mem(L(l, (n + " mul sin").c_str()), 2 * ce * e + ce * sd, MemKind::rope);
        b_.mem(L(l, (n + " add").c_str()), 3 * ce * e, MemKind::rope);
    }
}

// Rotary embeddings' backward, per tensor in reverse: the gradient times sin, the halves' negation and
// concatenation, the gradient times cos, and the sum of the two paths.
void TransformerStep::ropeBackward(int l) {
    const double sd = double(t_.s) * double(t_.d), ce = c_.ce;
    for (const auto& [x, heads] : {std::pair{"k", t_.kv}, std::pair{"q", t_.heads}}) {
        const double e = double(t_.T) * double(heads * t_.d);
        const std::string n = std::string("rope ") + x;
        b_.mem(L(l, (n + " mul sin backward").c_str()), 2 * ce * e + ce * sd, MemKind::rope);
        b_.mem(L(l, (n + " neg backward").c_str()), ce * e, MemKind::rope);
        b_.mem(L(l, (n + " cat backward").c_str()), 2 * ce * e, MemKind::rope);
        b_.mem(L(l, (n + " mul cos backward").c_str()), 2 * ce * e + ce * sd, MemKind::rope);
        b_.mem(L(l, (n + " grad add").c_str()), 3 * ce * e, MemKind::rope);
    }
}

// nn.Dropout (model.dropout > 0) on a tensor of the residual stream's shape in `e`-byte elements: the forward writes
// the values and a bool mask (memory.kernels.dropout), the backward scales the gradient by the mask
// (memory.kernels.dropout_backward). Nothing without dropout.
void TransformerStep::dropoutForward(const std::string& name, double e) {
    if (t_.dropout) b_.mem(name, (2 * e + 1) * double(t_.Ts) * double(t_.h), MemKind::dropout);
}

void TransformerStep::dropoutBackward(const std::string& name, double e) {
    if (t_.dropout) inputMem(name, (2 * e + 1) * double(t_.Ts) * double(t_.h), MemKind::dropout_backward);
}

// model.qkv: separate. Autograd runs the three Linears' backward in reverse order of creation (v, k, q); each input
// gradient is cast back to fp32 under autocast and the three are summed by two fp32 adds into the norm's output
// gradient (model_variants.py's qkv_separate step, results/validation/variants/NOTES.md). Under TP the sum is a
// partial one: reduced over the group (SP: reduce-scattered) once, as the fused projection's.
void TransformerStep::separateQkvBackward(int l) {
    const double Ts = double(t_.Ts), h = double(t_.h);
    for (const auto& projection : {std::pair{"attn.v", t_.kv * t_.d}, std::pair{"attn.k", t_.kv * t_.d},
                                   std::pair{"attn.q", t_.heads * t_.d}}) {
        const char* x = projection.first;  // (named, not a structured binding: the lambda below captures it)
        const auto out = projection.second;
        // HF: the head-major gradient made token-major before the projection's GEMMs (transpose(1, 2) backward).
        if (t_.hf) inputMem(L(l, (std::string(x) + " grad contiguous").c_str()), 2 * c_.ce * double(t_.T) * double(out));
        linearBackward(L(l, x), out, t_.h, paramIndex(L(l, x) + ".weight"), [&] {
            normCastBackward(L(l, (std::string(x) + " norm1 cast backward").c_str()));
            if (std::string(x) != "attn.v")
                inputMem(L(l, (std::string(x) + " input grad add").c_str()), 3 * c_.re() * Ts * h);
            if (std::string(x) == "attn.q") tp_.reduce(L(l, "attn input grad"), c_.ce * double(t_.T) * h);
        });
    }
}

GemmShape TransformerStep::attnShape() const { return {t_.b * t_.heads, t_.s, t_.d}; }

void TransformerStep::attentionForward(int l) {
    const double T = double(t_.T);
    const double qkv = double(t_.qkvOut());
    if (t_.hf) hfMaskLayer(l);
    // SDPA on Hopper (cuDNN's flash kernels): a small memset of its statistics, then the forward kernel.
    b_.mem(L(l, "attn stats memset"), 4 * double(t_.b * t_.heads * t_.s));
    b_.attention(L(l, "attn.flash"), attentionForwardFlops(t_), (T * qkv + T * double(t_.attnOut())) * c_.ce,
                 attnShape());
    if (t_.dropout) {
        // SDPA with dropout_p: cuDNN's flash kernel with its Philox dropout, attention.dropout_forward_ratio of the
        // kernel without it, after a small kernel that unpacks the generator's seed and offset.
        b_.last().work_s *= c_.cost.profile().attention.dropout_forward_ratio;
        b_.mem(L(l, "attn dropout philox unpack"), 16);
    }
}

void TransformerStep::layerForward(int l, bool recompute) {
    const double T = double(t_.T), h = double(t_.h), f = double(t_.f), Ts = double(t_.Ts);
    norm(L(l, "norm1"));
    if (c_.autocast) b_.mem(L(l, "norm1 cast"), (4 + c_.ce) * Ts * h, MemKind::cast_down);
    if (t_.qkv == QkvLayout::separate) {
        // Three Linears: autocast casts the norm's output again for each (activation casts are not cached). Under
        // TP all three are column-parallel on one input, gathered once (SP) before the first (torchtitan's plan:
        // the attention module's input made Replicate, then wq, wk, wv ColwiseParallel).
        linearForward(L(l, "attn.q"), t_.heads * t_.d, t_.h, TpSplit::column);
        for (const char* x : {"attn.k", "attn.v"}) {
            if (c_.autocast) b_.mem(L(l, (std::string("norm1 cast ") + x).c_str()), (4 + c_.ce) * Ts * h,
                                    MemKind::cast_down);
            linearForward(L(l, x), t_.kv * t_.d, t_.h);
        }
    } else {
        linearForward(L(l, "attn.qkv"), t_.qkvOut(), t_.h, TpSplit::column);
    }
    if (t_.rope) t_.hf ? hfRopeForward(l) : ropeForward(l);
    attentionForward(l);
    // y.transpose(1, 2).reshape(B, T, h) is a view: cuDNN's SDPA allocates its output token-major.
    linearForward(L(l, "attn.proj"), t_.h, t_.attnOut(), TpSplit::row);
    dropoutForward(L(l, "attn residual dropout"), c_.ce);
    b_.mem(L(l, "residual add"), (2 * c_.re() + c_.ce) * Ts * h, c_.autocast ? MemKind::residual_add : MemKind::elementwise);
    norm(L(l, "norm2"));
    if (c_.autocast) b_.mem(L(l, "norm2 cast"), (4 + c_.ce) * Ts * h, MemKind::cast_down);
    if (t_.mlp == MlpKind::gelu) {
        linearForward(L(l, "mlp.fc"), t_.f, t_.h, TpSplit::column);
        // tanh-approximate GELU at its own rate, memory.kernels.gelu_forward: its math makes it slower per byte
        // than an add (stepsim_torch_bench.py, raw/torch.jsonl: 33.0 µs at 8192 × 3072, where the pointwise rate
        // gives 26.7; a profiled training step's GELU took 33.1)
        if (t_.hf) hfGeluNewForward(l);
        else b_.mem(L(l, "gelu"), 2 * c_.ce * T * f, MemKind::gelu_forward);
        if (recompute) return;  // the projection's input is the last saved tensor
        linearForward(L(l, "mlp.proj"), t_.h, t_.f, TpSplit::row);
        dropoutForward(L(l, "mlp residual dropout"), c_.ce);
    } else {
        // silu(gate(z)) * up(z), evaluated in that order. Autocast casts an activation at each op that takes it
        // (only weights' casts are cached): z is cast again for the second linear (a SwiGLU/GQA step's profiler
        // trace, H200, PyTorch 2.11: two fp32 → bf16 casts of the norm's output a layer).
        // geglu: the tanh-approximate GELU on the gate, at its rate. With fused_gate_up one Linear makes both halves
        // (chunk(2, -1): views), so the norm's output is cast once.
        auto gate = [&] {
            if (t_.mlp == MlpKind::geglu) b_.mem(L(l, "gelu"), 2 * c_.ce * T * f, MemKind::gelu_forward);
            else b_.mem(L(l, "silu"), 2 * c_.ce * T * f);
        };
        if (t_.fused_gate_up) {
            linearForward(L(l, "mlp.gate_up"), 2 * t_.f, t_.h, TpSplit::column);
            gate();
        } else {
            linearForward(L(l, "mlp.gate"), t_.f, t_.h, TpSplit::column);
            gate();
            if (c_.autocast) b_.mem(L(l, "norm2 cast 2"), (4 + c_.ce) * Ts * h, MemKind::cast_down);
            linearForward(L(l, "mlp.up"), t_.f, t_.h);
        }
        b_.mem(L(l, "silu mul"), 3 * c_.ce * T * f);
        if (recompute) return;
        linearForward(L(l, "mlp.down"), t_.h, t_.f, TpSplit::row);
        dropoutForward(L(l, "mlp residual dropout"), c_.ce);
    }
    b_.mem(L(l, "residual add 2"), (2 * c_.re() + c_.ce) * Ts * h, c_.autocast ? MemKind::residual_add : MemKind::elementwise);
}

void TransformerStep::layerBackward(int l) {
    const double T = double(t_.T), h = double(t_.h), f = double(t_.f), Ts = double(t_.Ts);
    const Checkpointing ac = c_.sc.training.activation_checkpointing;
    if (ac != Checkpointing::none && input()) recompute(l, ac == Checkpointing::full);
    // The residual branch point sums the two incoming gradients.
    inputMem(L(l, "residual grad add 2"), 3 * c_.re() * Ts * h);
    residualGradCast(L(l, "residual grad cast 2"));
    dropoutBackward(L(l, "mlp residual dropout backward"), c_.ce);
    // Under TP a column-parallel linear's input gradient is a partial sum: reduced over the group (SP:
    // reduce-scattered to the sequence shards) before it joins the norm's backward.
    auto reduced = [&](const char* what) { tp_.reduce(L(l, what), c_.ce * T * h); };
    if (t_.mlp == MlpKind::gelu) {
        linearBackward(L(l, "mlp.proj"), t_.h, t_.f, paramIndex(L(l, "mlp.proj.weight")), {}, TpSplit::row);
        if (t_.hf) hfGeluNewBackward(l);
        else inputMem(L(l, "gelu backward"), 3 * c_.ce * T * f);
        linearBackward(L(l, "mlp.fc"), t_.f, t_.h, paramIndex(L(l, "mlp.fc.weight")), [&] {
            reduced("mlp input grad");
            normCastBackward(L(l, "norm2 cast backward"));
        });
    } else {
        // Each linear's input gradient goes back through its own cast; the two meet in the norm output's dtype
        // (fp32 under autocast: in the SwiGLU/GQA step's trace, a 49 µs add over 8192 × 2048).
        linearBackward(L(l, "mlp.down"), t_.h, t_.f, paramIndex(L(l, "mlp.down.weight")), {}, TpSplit::row);
        if (t_.hf) {  // the product's two gradients, one kernel each (the captures' two aten::mul)
            inputMem(L(l, "silu mul backward"), 3 * c_.ce * T * f);
            inputMem(L(l, "silu mul backward 2"), 3 * c_.ce * T * f);
        } else {
            inputMem(L(l, "silu mul backward"), 5 * c_.ce * T * f);
        }
        const char* act = t_.mlp == MlpKind::geglu ? "gelu backward" : "silu backward";
        if (t_.fused_gate_up) {
            // The two halves' gradients concatenated into the fused projection's (chunk's backward).
            inputMem(L(l, act), 3 * c_.ce * T * f);
            inputMem(L(l, "gate_up grad cat"), 4 * c_.ce * T * f);
            linearBackward(L(l, "mlp.gate_up"), 2 * t_.f, t_.h, paramIndex(L(l, "mlp.gate_up.weight")), [&] {
                reduced("mlp input grad");
                normCastBackward(L(l, "norm2 cast backward"));
            });
        } else {
            linearBackward(L(l, "mlp.up"), t_.f, t_.h, paramIndex(L(l, "mlp.up.weight")),
                           [&] { normCastBackward(L(l, "norm2 cast 2 backward")); });
            inputMem(L(l, act), 3 * c_.ce * T * f);
            linearBackward(L(l, "mlp.gate"), t_.f, t_.h, paramIndex(L(l, "mlp.gate.weight")), [&] {
                normCastBackward(L(l, "norm2 cast backward"));
                inputMem(L(l, "mlp input grad add"), 3 * c_.re() * Ts * h);
                reduced("mlp input grad");
            });
        }
    }
    normBackward(L(l, "norm2"), L(l, "norm2"));
    inputMem(L(l, "residual grad add"), 3 * c_.re() * Ts * h);
    residualGradCast(L(l, "residual grad cast"));
    dropoutBackward(L(l, "attn residual dropout backward"), c_.ce);
    linearBackward(L(l, "attn.proj"), t_.h, t_.attnOut(), paramIndex(L(l, "attn.proj.weight")), {}, TpSplit::row);
    const double qkv = double(t_.qkvOut());
    if (input()) {
        // cuDNN's SDPA backward reads the output gradient in the token-major layout its forward wrote: no copy
        // (H200 traces, PyTorch 2.11).
        // SDPA backward on Hopper (cuDNN): a memset, then one kernel for dQ, dK, dV.
        b_.mem(L(l, "attn backward memset"), 4 * double(t_.b * t_.heads * t_.s));
        b_.attention(L(l, "attn.flash backward"), 2.5 * attentionForwardFlops(t_),
                     (2 * T * qkv + 2 * T * double(t_.attnOut())) * c_.ce, attnShape());
        if (t_.dropout) b_.last().work_s *= c_.cost.profile().attention.dropout_backward_ratio;
        // HF: SDPA given the mask (TransformerStepHf.cpp) launches two more kernels in backward (the captures' op
        // times: four GPU activities, against a memset and the kernel without one).
        if (t_.hf)
            for (const char* k : {"attn backward mask kernel", "attn backward mask kernel 2"})
                b_.mem(L(l, k), 4 * double(t_.b * t_.heads * t_.s));
        // With GQA cuDNN writes dK and dV per query head, then sums each group of heads into its KV head: one
        // reduction each, reading heads·d and writing kv·d per token (12.7 µs each at 8192 tokens, 16 heads onto 4,
        // head_dim 128, in the SwiGLU/GQA step's trace).
        if (t_.kv < t_.heads)
            for (const std::string g : {"attn k grad head reduce", "attn v grad head reduce"})
                if (!(t_.hf && t_.rope && g == "attn k grad head reduce"))  // HF's k reduce: hfRopeBackward
                    b_.mem(L(l, g.c_str()), c_.ce * double(T) * double((t_.heads + t_.kv) * t_.d));
        if (t_.rope) t_.hf ? hfRopeBackward(l) : ropeBackward(l);
        if (t_.qkv == QkvLayout::fused) {
            // split() backward: dq, dk, dv concatenated into the fused QKV output gradient.
            b_.mem(L(l, "qkv grad cat"), 2 * c_.ce * T * qkv);
        } else if (t_.qkv == QkvLayout::fused_permute) {
            // unbind() of the permuted view, backward: dq, dk, dv stacked by a non-vectorized concatenation, then
            // copied into the projection's (B, T, 3, heads, d) layout (memory.kernels.qkv_permute_cat, _copy).
            b_.mem(L(l, "qkv grad stack"), 2 * c_.ce * T * qkv, MemKind::qkv_permute_cat);
            b_.mem(L(l, "qkv grad permute copy"), 2 * c_.ce * T * qkv, MemKind::qkv_permute_copy);
        }
    }
    if (t_.qkv == QkvLayout::separate) {
        separateQkvBackward(l);
    } else {
        linearBackward(L(l, "attn.qkv"), t_.qkvOut(), t_.h, paramIndex(L(l, "attn.qkv.weight")), [&] {
            reduced("attn input grad");
            normCastBackward(L(l, "norm1 cast backward"));
        });
    }
    normBackward(L(l, "norm1"), L(l, "norm1"));
}

std::vector<std::size_t> gradientReadyOrder(StepContext& c) {
    std::vector<std::size_t> order;
    Program scratch;
    ProgramBuilder b(c, scratch);
    TransformerStep ms(c, b);
    ms.backward([&](std::size_t i) { order.push_back(i); });
    return order;
}

}  // namespace stepsim
