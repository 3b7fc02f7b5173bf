#pragma once
// `stepsim explain`'s derived values: what the scenario implies once expanded, as YAML comment lines after the
// scenario (so the output still reads back as the same scenario):
//   the parameter count (Expansion::params), model FLOPs per token (Workload::model_flops_per_step /
//   tokens_per_step: 6·N plus attention's, per token), the world and its degrees (dp: ParallelDims::dataParallel), tokens per
//   step (per GPU and globally), the collectives and kernels rank 0 launches in a step, DDP's buckets (their count and
//   sizes, from the rebuilt buckets of the steps after the first), and the memory per GPU by term, at its peak phase
//   and at each phase (MemoryEstimate.hpp).
#include <string>

#include "sim/cost/HardwareProfile.hpp"
#include "sim/base/Scenario.hpp"

namespace stepsim {

std::string explainDerived(const Scenario& sc, const HardwareProfile& profile);

}  // namespace stepsim
