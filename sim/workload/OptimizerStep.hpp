#pragma once
// The optimizer's part of a training step, as PyTorch runs it: optimizer.zero_grad() before the first forward, and
// after the last backward the step, with gradient clipping (torch.nn.utils.clip_grad_norm_) and fp16 autocast's
// torch.amp.GradScaler around it. AdamW only, fused (one kernel over p, g, m, v: 7 element accesses per parameter)
// or foreach (eight multi-tensor passes, 20 accesses per parameter); each pass at the profile's calibrated rate for
// its kind (memory.kernels optimizer, optimizer_bf16, optimizer_foreach, optimizer_foreach_bf16).
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

}  // namespace stepsim
