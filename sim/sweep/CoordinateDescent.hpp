#pragma once
// Coordinate descent over a sweep's grid: from the scenario's own values (or each axis's first value where the
// scenario's is not on the axis), try every value of one axis with the others held, move to the best, go on to the
// next axis; stop after a pass over all axes that moved nothing. Each axis's values run as one batch (in parallel,
// across MPI ranks); a point already run is not run again. It runs about passes × Σ(axis sizes) points instead of
// Π(axis sizes), and finds the grid's best when the objective's best value of each knob does not depend on the
// others (it can stop at a point no single-knob change improves when they interact).
#include <cstddef>
#include <functional>
#include <vector>

#include "sim/sweep/Objective.hpp"
#include "sim/sweep/PointRecord.hpp"
#include "sim/sweep/SweepSpace.hpp"

namespace stepsim {

// `evaluate` runs a batch of points and returns their records in order. Returns the point it settled on.
std::vector<std::size_t> coordinateDescent(
    const SweepSpace& space, std::vector<std::size_t> start, const Objective& objective,
    const std::function<std::vector<PointRecord>(const std::vector<SweepPoint>&)>& evaluate);

}  // namespace stepsim
