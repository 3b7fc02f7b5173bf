#pragma once
// The host's cost of a PyTorch training step, in the launch section (LaunchRates), from host_overhead.py's runs
// (one GPU, then DDP), checkpoint_host, accumulate_host and ddp_host.py's records. The host's speed moves ~2×
// between machine starts, so each field is a median over runs, and a quantity measured beside a run's own cost per
// kernel is carried over as a ratio to it. A run times medians only: a p99 keeps the base's spread.
//   forward_host, backward_host, optimizer_host_per_tensor_us   the one-GPU runs' cost per kernel (per parameter
//                       tensor), median over runs
//   checkpoint_host_us  the host time a checkpointed layer adds beyond its recomputed kernels' launches, in the
//                       profile's units
//   grad_accumulate_host_us  AccumulateGrad's add per parameter tensor: the median ratio to the runs' backward cost
//                       per kernel, times the profile's
//   forward_host_ddp    forward_host times the median ratio of a DDP forward to the one-GPU forward timed beside it
//   nccl_host           the DDP runs' async all-reduce issue time
//   host_cost_spread    the 10th and 90th percentile of each run's cost over its kind's median
//   ddp_hook_host_us    what DDP adds to the backward per parameter tensor, less what the model prices apart
#include <set>
#include <string>

#include "sim/fit/FitState.hpp"

namespace stepsim {

// Sets the fields above that the records measure, adds each to the report's launch entry `lj` and its name to `got`.
void fitHostCosts(FitState& s, nlohmann::json& lj, std::set<std::string>& got);

}  // namespace stepsim
