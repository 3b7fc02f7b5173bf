#include "sim/workload/MemoryEstimate.hpp"

#include <vector>

#include "sim/workload/OptimizerStep.hpp"

namespace stepsim {

namespace {

// Saved for backward per layer (A): the norms' inputs on the residual stream, 2·r·Ts·h (under sequence parallelism the
// sequence shard, Ts = T/tp); the linears' inputs, the norms' outputs as the GEMMs read them, k·c·T·h (under SP the
// all-gathered T rows each column-parallel linear keeps; k = 2, 3 for SwiGLU under autocast, which casts the second
// norm's output once per linear); q/k/v, c·T·qkvOut (this rank's heads); the attention's output, c·T·attnOut (this
// rank's heads: h/tp); the MLP's intermediates, 2·c·T·f (GELU: fc and GELU outputs) or 4·c·T·f (SwiGLU: gate, up,
// SiLU, product), f this rank's share. r, c: the residual and compute element bytes.
double perLayerActivations(const StepContext& c) {
    const TransformerShape& t = c.t;
    const double T = double(t.T), Ts = double(t.Ts), h = double(t.h), f = double(t.f), ce = c.ce;
    const double mlp = t.mlp == MlpKind::gelu ? 2 * ce * T * f : 4 * ce * T * f;
    const double norm_outs = (gatedMlp(t.mlp) && c.autocast ? 3 : 2) * ce * T * h;
    return 2 * c.re() * Ts * h + norm_outs + ce * T * double(t.qkvOut()) + ce * T * double(t.attnOut()) + mlp;
}

// What torchtitan's op policy (Checkpointing::selective_op, TransformerStep::recomputeUnsavedOps) keeps of a block:
// its input, r·Ts·h; SDPA's output, c·T·attnOut; and the outputs of the block's odd-numbered matmuls in forward order,
// c·T·width each (separate q/k/v with SwiGLU: q, v, gate, down; fused qkv: qkv, gate, down; GELU: q, v, fc or qkv,
// fc).
double opPolicySaved(const StepContext& c) {
    const TransformerShape& t = c.t;
    std::vector<double> widths;
    if (t.qkv == QkvLayout::separate) widths = {double(t.attnOut()), double(t.kv * t.d), double(t.kv * t.d)};
    else widths = {double(t.qkvOut())};
    widths.push_back(double(t.h));
    if (t.mlp == MlpKind::gelu) widths.insert(widths.end(), {double(t.f), double(t.h)});
    else widths.insert(widths.end(), {double(t.f), double(t.f), double(t.h)});
    double saved = 0;
    for (std::size_t i = 0; i < widths.size(); i += 2) saved += widths[i];
    const double T = double(t.T);
    return c.re() * double(t.Ts) * double(t.h) + c.ce * T * double(t.attnOut()) + c.ce * T * saved;
}

// The activations alive at the end of forward: A·L without checkpointing; Megatron's selective (the attention's
// recompute) keeps q/k/v in one layer only, (A − Q)·L + Q; torchtitan's op policy its saved tensors S per layer, S·L,
// plus one layer's A while it is recomputed; full each layer's input, r·Ts·h·L (the sequence shard under SP), plus one
// layer's A.
double allActivations(const StepContext& c) {
    const TransformerShape& t = c.t;
    const double per_layer = perLayerActivations(c), qkv = c.ce * double(t.T) * double(t.qkvOut());
    switch (c.sc.training.activation_checkpointing) {
        case Checkpointing::none: return per_layer * t.L;
        case Checkpointing::selective: return (per_layer - qkv) * t.L + qkv;
        case Checkpointing::selective_op: return opPolicySaved(c) * t.L + per_layer;
        case Checkpointing::full: return c.re() * double(t.Ts) * double(t.h) * t.L + per_layer;
    }
    return per_layer * t.L;
}

}  // namespace

MemoryEstimate estimateMemory(const StepContext& c, bool ddp) {
    MemoryEstimate m;
    double n = 0, n_mm = 0;
    for (const ParamInfo& p : c.params) {
        n += p.numel;
        if (p.matmul) n_mm += p.numel;
    }
    const TransformerShape& t = c.t;
    m.params = c.pe * n;
    m.grads = c.pe * n;
    m.buckets = ddp && !c.sc.ddp.gradient_as_bucket_view ? c.pe * n : 0.0;
    m.optimizer = optimizerStatesPerParam(c.sc.training) * c.pe * n;  // states in the parameter dtype
    m.weight_cache = c.autocast ? c.ce * n_mm : 0.0;
    m.activations = allActivations(c);
    // Loss: bf16 logits, fp32 logits and log-softmax output alive together at the end of forward.
    m.loss = (c.ce + 4 + 4) * double(t.T) * double(t.V);
    return m;
}

StepTransients stepTransients(const StepContext& c) {
    StepTransients s;
    const TransformerShape& t = c.t;
    const double cache = c.autocast ? c.ce : 0.0;
    for (const ParamInfo& p : c.params) {
        if (!p.matmul) continue;
        s.cache_all += cache * p.numel;
        if (p.layer == 0) s.cache_block += cache * p.numel;
        if (p.layer < 0) s.cache_head += cache * p.numel;
    }
    s.act_all = allActivations(c);
    s.act_layer = perLayerActivations(c);
    // In the first block's backward: its recomputed A and what the checkpoint kept of it.
    if (c.sc.training.activation_checkpointing == Checkpointing::full)
        s.act_layer += c.re() * double(t.Ts) * double(t.h);
    if (c.sc.training.activation_checkpointing == Checkpointing::selective_op) s.act_layer += opPolicySaved(c);
    s.loss_backward = 12 * double(t.T) * double(t.V);
    s.head_numel = double(t.V) * double(t.h);
    for (const ParamInfo& p : c.params)
        if (p.layer < 0 && !p.matmul && p.rows == 0) s.head_numel += p.numel;  // the final norm
    return s;
}

double optimizerTemporaries(const TrainingSpec& t, double numel, double bytes) {
    const bool adam = t.optimizer == Optimizer::adamw || t.optimizer == Optimizer::adam;
    return adam && t.optimizer_impl == OptimizerImpl::foreach ? bytes * numel : 0.0;
}

MemoryEstimate phasePeak(const StepTransients& s, const PhaseTerms& t) {
    MemoryEstimate base;
    base.params = t.params;
    base.optimizer = t.optimizer;
    base.buckets = t.buffers;
    MemoryEstimate loss = base, start = base, end = base, step = base;
    loss.phase = "loss_backward";
    loss.weight_cache = s.cache_all;
    loss.activations = s.act_all;
    loss.loss = s.loss_backward;
    loss.grads = t.grads_loss;
    loss.gathered = t.gathered_loss;
    start.phase = "blocks_backward_start";
    start.weight_cache = s.cache_all - s.cache_head;
    start.activations = s.act_all;
    start.grads = t.grads_start;
    start.gathered = t.gathered_start;
    end.phase = "backward_end";
    end.weight_cache = s.cache_block;
    end.activations = s.act_layer;
    end.grads = t.grads_end;
    end.gathered = t.gathered_end;
    end.buckets += t.buffers_end;
    step.phase = "optimizer_step";
    step.grads = t.grads_step;
    step.gathered = t.gathered_step;
    step.optimizer += t.optimizer_temp;
    MemoryEstimate best = loss;
    for (const MemoryEstimate* m : {&start, &end, &step})
        if (m->peak() > best.peak()) best = *m;
    best.phases = {loss, start, end, step};
    return best;
}

MemoryEstimate estimateStepPeak(const StepContext& c, bool ddp) {
    double n = 0;
    for (const ParamInfo& p : c.params) n += p.numel;
    const StepTransients s = stepTransients(c);
    const double p = c.pe;
    // With gradient_as_bucket_view the gradients are the buckets' views: nothing more than the buckets.
    const double g = ddp && c.sc.ddp.gradient_as_bucket_view ? 0.0 : p;
    PhaseTerms t;
    t.params = p * n;
    t.optimizer = optimizerStatesPerParam(c.sc.training) * p * n;
    t.buffers = ddp ? p * n : 0.0;
    // Gradient accumulation: the earlier micro-batches' gradients are there from the last backward's start.
    const bool accumulated = c.sc.training.grad_accum > 1;
    t.grads_loss = accumulated ? g * n : 0.0;
    t.grads_start = accumulated ? g * n : g * s.head_numel;
    t.grads_end = t.grads_step = g * n;
    t.optimizer_temp = optimizerTemporaries(c.sc.training, n, p);
    return phasePeak(s, t);
}

}  // namespace stepsim
