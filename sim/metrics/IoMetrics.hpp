#pragma once
// The input pipeline's and the checkpoints' results from the timeline's transfer records (IoResults.hpp).
//
// Input: per step (its window on each rank, from the previous step's end to its own) the host-to-device copies that
// ended in it and the gaps between consecutive kernels of the compute stream (stream 0); a step is H2D-bound or
// compute-idle by the thresholds (IoResults.hpp).
// Checkpoints: blocking = end of its last blocking transfer − issue of its first + the host's planning time before
// it (the staging transfer's `seconds`); write = the storage write's start to end.
#include <optional>

#include "sim/base/Program.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/metrics/IoResults.hpp"

namespace stepsim {

// Empty when the programs have no host-to-device copies.
std::optional<InputResults> inputResults(const Timeline& tl, const Workload& wl);
// Empty when the programs have no checkpoint transfers.
std::optional<CheckpointResults> checkpointResults(const Timeline& tl, const Workload& wl, int interval_steps);

}  // namespace stepsim
