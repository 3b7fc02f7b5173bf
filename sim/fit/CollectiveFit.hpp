#pragma once
// The profile's collectives section: one CollectiveFit (piecewise α-β, AlphaBetaFit.hpp) per series of records
// with the same (op, ranks, nodes, algo, proto, dtype), on the median per-iteration time of each size; a series
// needs 8 distinct sizes. Listed NCCL's default choice ("auto") first and bf16 before other dtypes, as CostModel
// takes the first fit that matches. Held-out check: each series is also fitted on 3 of every 4 sizes and the 4th
// predicted (heldOut, FitState.hpp).
#include "sim/fit/FitState.hpp"

namespace stepsim {

// Sets profile.collectives (kept from the base when no series has enough sizes); returns the median relative error
// over every held-out size.
double fitCollectives(FitState& s);

}  // namespace stepsim
