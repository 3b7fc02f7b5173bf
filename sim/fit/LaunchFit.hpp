#pragma once
// The profile's launch section (LaunchRates): what launching a kernel costs the host and the gaps it leaves on the
// device.
#include "sim/fit/FitState.hpp"

namespace stepsim {

// The whole section, in this order: device_gap ← the harness's device_gap; graph_host ← cudaGraphLaunch's host time
// over the 100 kernels of the harness's graph; the step gaps (fitStepGaps); eager_host ← PyTorch eager dispatch; the
// host costs of a training step (fitHostCosts, HostFit.hpp). compiled_host stays the base's.
void fitLaunch(FitState& s);

// The gaps inside a training step, into the report's launch entry `lj`:
//   step_gap_us[class]  kernel_gaps.py's mean gap before each class of operation (median over runs)
//   gemm_gap_by_shape   gemm_gaps.py's mean gap before each GEMM shape (median over runs)
//   step_gap_beside_{transfer,waiting}_us[class], gemm_gap_beside_transfer_by_shape   the same beside a resident NCCL
//                       kernel moving data or waiting for its peer (gemm_gaps.py --beside): the gap alone times the
//                       median ratio beside / alone within a run and rank
void fitStepGaps(FitState& s, nlohmann::json& lj);

}  // namespace stepsim
