#include "sim/workload/OptimizerStep.hpp"

#include <string>

namespace stepsim {
namespace {

// One element-wise pass over every parameter-sized tensor of the optimizer (a multi-tensor kernel, launched in chunks
// like the fused step), `accesses` tensors read or written, at the rate of `kind`.
void multiTensor(ProgramBuilder& b, const StepContext& c, const std::string& name, double params, int accesses,
                 MemKind kind = MemKind::optimizer) {
    b.mem(name, accesses * c.pe * params, kind, KernelClass::optimizer);
}

// The rate of a foreach pass over the parameters' (or gradients') dtype.
MemKind foreachKind(const StepContext& c) {
    return c.pe == 2 ? MemKind::optimizer_foreach_bf16 : MemKind::optimizer_foreach;
}

// An 8-byte kernel on a scalar (GradScaler's and clipping's bookkeeping).
void tiny(ProgramBuilder& b, const std::string& name) { b.mem(name, 8, MemKind::elementwise, KernelClass::optimizer); }

// scaler.unscale_: the inverse scale and found_inf made, every gradient divided by the scale and checked for
// inf/NaN in place (_amp_foreach_non_finite_check_and_unscale_).
void unscale(ProgramBuilder& b, const StepContext& c, double params) {
    for (const char* k : {"inv_scale", "found_inf fill"}) tiny(b, std::string("grad scaler ") + k);
    multiTensor(b, c, "grad scaler check and unscale", params, 2);
}

// torch.nn.utils.clip_grad_norm_ (foreach): every gradient's norm (_foreach_norm, one read of each), their
// total, the clip coefficient max_norm / (total + 1e-6) clamped at 1, every gradient scaled by it in place.
void clipGradNorm(ProgramBuilder& b, const StepContext& c, double params) {
    multiTensor(b, c, "clip grad norm: per-tensor norms", params, 1, foreachKind(c));
    for (const char* k : {"stack", "total norm", "+ 1e-6", "max_norm / total", "clamp"})
        tiny(b, std::string("clip grad norm: ") + k);
    multiTensor(b, c, "clip grad norm: grads *= coef", params, 2, foreachKind(c));
}

// scaler.step hands the scale to a fused optimizer: found_inf and a dummy inverse scale (1.0) made and copied
// per device, every gradient checked for inf/NaN in place (_amp_foreach_non_finite_check_and_unscale_),
// found_inf summed over devices, the scale passed on (an fp16 step's profiler trace, H200, PyTorch 2.11).
void scaleToFusedStep(ProgramBuilder& b, const StepContext& c, double params) {
    for (const char* k : {"found_inf fill", "inv_scale fill", "found_inf copy", "inv_scale copy"})
        tiny(b, std::string("grad scaler ") + k);
    multiTensor(b, c, "grad scaler check and unscale", params, 2);
    tiny(b, "grad scaler found_inf sum");
    tiny(b, "grad scaler grad_scale");
}

const char* optimizerName(Optimizer o) {
    switch (o) {
        case Optimizer::adamw: return "adamw";
        case Optimizer::adam: return "adam";
        case Optimizer::sgd: return "sgd";
    }
    return "adamw";
}

// Element accesses of the fused kernel per parameter: Adam(W) reads param, grad, exp_avg, exp_avg_sq and writes
// param, exp_avg, exp_avg_sq; SGD reads param, grad (and the momentum buffer) and writes param (and the buffer).
int fusedAccesses(const TrainingSpec& t) {
    if (t.optimizer != Optimizer::sgd) return 7;
    return t.sgd_momentum > 0 ? 5 : 3;
}

// `scaled`: the gradients still carry GradScaler's scale, which the fused step takes.
void fusedStep(ProgramBuilder& b, const StepContext& c, double params, bool scaled) {
    const std::string name = optimizerName(c.sc.training.optimizer);
    // Adam(W) keeps a step count per parameter tensor on the GPU with the fused kernel; SGD has none.
    if (c.sc.training.optimizer != Optimizer::sgd)
        b.mem(name + " step count", 8 * double(c.params.size()), MemKind::elementwise, KernelClass::optimizer);
    // With GradScaler's scale it writes the unscaled gradient back too. 16-bit parameters keep 16-bit states and run
    // at their own rate.
    b.mem("fused " + name, (fusedAccesses(c.sc.training) + (scaled ? 1 : 0)) * c.pe * params,
          c.pe == 2 ? MemKind::optimizer_bf16 : MemKind::optimizer, KernelClass::optimizer);
    if (c.grad_scaler) {
        // The fused step takes found_inf back off each step count (_foreach_sub_).
        b.mem("grad scaler step count fixup", 8 * double(c.params.size()), MemKind::elementwise,
              KernelClass::optimizer);
    }
}

// torch.optim.AdamW's foreach path (_multi_tensor_adam, decoupled weight decay): the step counts live on the
// host; on the GPU one multi-tensor pass per arithmetic step, the bias corrections as host-side scalars. The
// passes run at the rate the whole foreach step was calibrated at, memory.kernels.optimizer_foreach, over bf16
// states at their own, optimizer_foreach_bf16 (stepsim_torch_bench.py --groups adamw_foreach,
// adamw_foreach_bf16 over GPT models' own tensors, raw/torch_adamw_gpt.jsonl: 3.65 and 3.04 TB/s).
// torch.optim.Adam's is the same less the decay pass (weight_decay 0, its default).
void foreachAdam(ProgramBuilder& b, const StepContext& c, double params, bool decoupled_decay) {
    const MemKind k = foreachKind(c);
    const std::string n = decoupled_decay ? "adamw" : "adam";
    if (decoupled_decay) multiTensor(b, c, "adamw weight decay (params *= 1 - lr*wd)", params, 2, k);
    multiTensor(b, c, n + " exp_avg lerp", params, 3, k);
    multiTensor(b, c, n + " exp_avg_sq *= beta2", params, 2, k);
    multiTensor(b, c, n + " exp_avg_sq addcmul", params, 3, k);
    multiTensor(b, c, n + " denom = sqrt(exp_avg_sq)", params, 2, k);
    multiTensor(b, c, n + " denom /= sqrt(bias correction)", params, 2, k);
    multiTensor(b, c, n + " denom += eps", params, 2, k);
    multiTensor(b, c, n + " params addcdiv", params, 4, k);
}

// torch.optim.SGD's foreach path (_multi_tensor_sgd, weight_decay 0): with momentum the buffers scaled and the
// gradients added to them (dampening 0), then the parameters stepped along the buffers; without, along the gradients.
void foreachSgd(ProgramBuilder& b, const StepContext& c, double params) {
    const MemKind k = foreachKind(c);
    if (c.sc.training.sgd_momentum > 0) {
        multiTensor(b, c, "sgd momentum_buffer *= momentum", params, 2, k);
        multiTensor(b, c, "sgd momentum_buffer += grad", params, 3, k);
    }
    multiTensor(b, c, "sgd params += -lr * update", params, 3, k);
}

// One eager op's host cost.
double eagerHost(const StepContext& c) { return c.cost.profile().launch.eager_host.median_us * 1e-6; }

}  // namespace

void zeroGrad(ProgramBuilder& b, const StepContext& c) {
    b.phase = Phase::other;
    b.host("zero_grad", eagerHost(c));
}

// GradScaler's work around the step for fp16 autocast and gradient clipping before it: scaler.step launches its own
// kernels, then calls optimizer.step().
void optimizerStep(ProgramBuilder& b, const StepContext& c, double params) {
    const double per_tensor = c.cost.profile().launch.optimizer_host_per_tensor_us * 1e-6 * double(c.params.size());
    const bool fused = c.sc.training.optimizer_impl == OptimizerImpl::fused;
    const bool clip = c.sc.training.grad_clip_norm > 0.0;
    b.phase = Phase::optimizer;
    // PyTorch's AMP recipe unscales before clipping; scaler.step then finds the gradients unscaled and hands no scale
    // to a fused step.
    if (c.grad_scaler && clip) unscale(b, c, params);
    if (clip) clipGradNorm(b, c, params);
    const bool scale_to_step = c.grad_scaler && !clip;  // scaler.step still holds scaled gradients
    if (scale_to_step && fused) scaleToFusedStep(b, c, params);
    else if (scale_to_step) unscale(b, c, params);  // any other optimizer: scaler.step unscales first
    if (c.grad_scaler && !fused) {
        // scaler.step reads found_inf back on the host (.item()) to decide whether to step; the GPU then idles while
        // the host runs optimizer.step()'s Python (1.5-1.7 ms at 1.4B in an fp16 foreach step's profiler trace).
        b.hostSync(b.record(kComputeStream));
    }
    b.host("optimizer.step", per_tensor > 0 ? per_tensor : eagerHost(c));
    if (fused) fusedStep(b, c, params, scale_to_step);
    else if (c.sc.training.optimizer == Optimizer::sgd) foreachSgd(b, c, params);
    else foreachAdam(b, c, params, c.sc.training.optimizer == Optimizer::adamw);
    if (c.grad_scaler) tiny(b, "grad scaler update");
}

int optimizerStatesPerParam(const TrainingSpec& t) {
    if (t.optimizer == Optimizer::sgd) return t.sgd_momentum > 0 ? 1 : 0;
    return 2;
}

}  // namespace stepsim
