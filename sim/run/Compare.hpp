#pragma once
// Two scenarios, or one scenario with two sets of overrides, run side by side (stepsim compare).
//
// Each side runs at A's seed (sim.seed), then at `seeds` − 1 more (sampleSeed(seed, i), i = 1 …), both sides at the
// same seeds (B's own sim.seed is not used), so every seed gives a paired difference d_i = B_i − A_i of each result.
// The values reported are the first seed's (for A the run `stepsim run` prints); the noise band of a difference is
// max_i |d_i − d_0|, how far the difference moves at another seed (0 when jitter is off and nothing else draws). With
// sim.samples > 1 each run is already a Monte-Carlo mean.
#include <string>

#include "sim/cost/HardwareProfile.hpp"
#include "sim/metrics/Comparison.hpp"
#include "sim/base/Scenario.hpp"

namespace stepsim {

// `seeds` ≥ 1. `threads`: the runs spread over that many threads (0: one per core); the result does not depend on it.
Comparison compareScenarios(const Scenario& a, const HardwareProfile& profile_a, const std::string& name_a,
                            const Scenario& b, const HardwareProfile& profile_b, const std::string& name_b, int seeds,
                            int threads = 0);

}  // namespace stepsim
