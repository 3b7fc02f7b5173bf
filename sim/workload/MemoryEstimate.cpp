#include "sim/workload/MemoryEstimate.hpp"

#include "sim/workload/OptimizerStep.hpp"

namespace stepsim {

MemoryEstimate estimateMemory(const StepContext& c, bool ddp) {
    MemoryEstimate m;
    double n = 0, n_mm = 0;
    for (const ParamInfo& p : c.params) {
        n += p.numel;
        if (p.matmul) n_mm += p.numel;
    }
    const TransformerShape& t = c.t;
    const double T = double(t.T), h = double(t.h), f = double(t.f), V = double(t.V), ce = c.ce;
    m.params = c.pe * n;
    m.grads = c.pe * n;
    m.buckets = ddp && !c.sc.ddp.gradient_as_bucket_view ? c.pe * n : 0.0;
    m.optimizer = optimizerStatesPerParam(c.sc.training) * c.pe * n;  // states in the parameter dtype
    m.weight_cache = c.autocast ? ce * n_mm : 0.0;
    // Saved for backward per layer: fp32 norm inputs (2), cast norm outputs (2; under autocast SwiGLU's second
    // norm output is cast for each of its two linears: 3), q/k/v, attention output, MLP intermediates (gelu: fc
    // output and gelu output; swiglu: gate, up, silu, product).
    const double mlp = t.mlp == MlpKind::gelu ? 2 * ce * T * f : 4 * ce * T * f;
    const double norm_outs = (t.mlp == MlpKind::swiglu && c.autocast ? 3 : 2) * ce * T * h;
    const double per_layer = 2 * c.re() * T * h + norm_outs + ce * T * double(t.qkvOut()) + ce * T * h + mlp;
    switch (c.sc.training.activation_checkpointing) {
        case Checkpointing::none: m.activations = per_layer * t.L; break;
        case Checkpointing::selective:
            m.activations = (per_layer - ce * T * double(t.qkvOut())) * t.L + ce * T * double(t.qkvOut());
            break;
        case Checkpointing::full: m.activations = c.re() * T * h * t.L + per_layer; break;
    }
    // Loss: bf16 logits, fp32 logits and log-softmax output alive together at the end of forward.
    m.loss = (ce + 4 + 4) * T * V;
    return m;
}

}  // namespace stepsim
