#pragma once
// The optimizer's part of a training step, as PyTorch runs it: optimizer.zero_grad() before the first forward, and
// after the last backward the step, with gradient clipping (torch.nn.utils.clip_grad_norm_) and fp16 autocast's
// torch.amp.GradScaler around it. Each optimizer fused (one kernel over every parameter) or foreach (one multi-tensor
// pass per arithmetic step), accesses per parameter element:
//   adamw (torch.optim.AdamW, decoupled weight decay 0.01): fused 7 (read p, g, m, v; write p, m, v); foreach eight
//     passes, 20 (the decay p *= 1 − lr·wd first);
//   adam (torch.optim.Adam, weight_decay 0: no decay pass): fused 7, the same kernel; foreach the seven passes after
//     the decay, 18;
//   sgd (torch.optim.SGD, training.sgd_momentum μ): without momentum fused 3 (read p, g; write p), foreach one pass
//     p += −lr·g (3); with momentum fused 5 (read p, g, buf; write p, buf), foreach buf *= μ, buf += g, p += −lr·buf
//     (8 in three passes; _multi_tensor_sgd once every buffer exists).
// Each pass at the profile's calibrated rate for its kind (memory.kernels optimizer, optimizer_bf16,
// optimizer_foreach, optimizer_foreach_bf16: measured on AdamW's passes, which are the same multi-tensor-apply and
// fused kernels).
// State per parameter element, in the parameter dtype: adamw, adam 2 (exp_avg, exp_avg_sq); sgd 1 with momentum (the
// momentum buffer), 0 without.
//
// Host costs: zero_grad is one eager op (launch.eager_host); optimizer.step() costs
// launch.optimizer_host_per_tensor_us per parameter tensor (eager_host when that is 0).
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

// optimizer.zero_grad(set_to_none=True): host work only, in Phase::other.
void zeroGrad(ProgramBuilder& b, const StepContext& c);

// The step over `params` parameters (their count), in Phase::optimizer.
void optimizerStep(ProgramBuilder& b, const StepContext& c, double params);

// The optimizer's state tensors per parameter element (2 for Adam and AdamW, 1 for SGD with momentum, 0 without).
int optimizerStatesPerParam(const TrainingSpec& t);

}  // namespace stepsim
