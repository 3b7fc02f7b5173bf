#pragma once
// One simulation: scenario + profile → expansion → engine → metrics; the unit a sweep repeats.
//
// With sim.samples = k > 1 the run is repeated with seeds seed, seed+1, … seed+k−1 and the results are
// aggregated (Monte Carlo over jitter: step_time_ms_p50/p99). The first sample's timeline is kept for traces.
#include <string>
#include <vector>

#include "sim/cost/HardwareProfile.hpp"
#include "sim/metrics/Results.hpp"
#include "sim/metrics/Timeline.hpp"
#include "sim/scenario/Scenario.hpp"
#include "sim/workload/Expand.hpp"

namespace stepsim {

struct Simulation {
    Expansion expansion;
    Timeline timeline;  // of the first sample
    Results results;
};

Simulation simulate(const Scenario& sc, const HardwareProfile& profile);

}  // namespace stepsim
