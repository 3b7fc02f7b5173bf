#pragma once
// The workload of one collective alone: every rank of one group ("world", ranks 0…ranks−1) issues a single
// collective of `bytes` (nccl-tests' size S; dtype bf16) on its NCCL stream, then ends its step. What
// `stepsim collective` runs through the engine to predict a collective on a cluster's topology.
#include "sim/base/Program.hpp"

namespace stepsim {

Workload loneCollective(CollectiveKind kind, int ranks, double bytes);

}  // namespace stepsim
