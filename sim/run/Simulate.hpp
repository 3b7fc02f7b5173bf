#pragma once
// One simulation: scenario + profile → expansion → engine → metrics; the unit a sweep repeats.
//
// With sim.samples = k > 1 the run is repeated k times, sample i with sampleSeed(sim.seed, i), on `threads` threads of
// parallelFor (0: one per core), and the results are aggregated (Monte Carlo over jitter and stragglers:
// aggregateSamples' percentiles, spreads and histogram): the same at any thread count and the same as running the
// samples one by one. The first sample's timeline is kept for traces. The overlap windows and the idle at the sync
// (OverlapWindows.hpp) come from every sample, against one more run without noise or stragglers.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/cost/HardwareProfile.hpp"
#include "sim/metrics/Results.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/workload/Expand.hpp"

namespace stepsim {

struct Simulation {
    Expansion expansion;
    Timeline timeline;  // of the first sample
    Results results;
    bool host_bound = false;  // the host spends kHostBoundShare of the step or more issuing kernels (below)
    // A host-bound step's time (ms) with every host cost at the profile's launch.host_cost_spread p10 and p90 (a
    // faster and a slower host, as calibration saw between runs); empty for a GPU-bound step or without a spread.
    std::optional<std::pair<double, double>> host_range_ms;
    double gpu_memory_gib = 0.0;  // the profile's GPU memory, against which the peak fits or not
    bool fitsMemory() const { return !results.peak_memory_gib || *results.peak_memory_gib <= gpu_memory_gib; }
};

Simulation simulate(const Scenario& sc, const HardwareProfile& profile, int threads = 0);

// Sample i's seed: the scenario's seed for sample 0 (so sim.samples: 1 is the single run of that seed), and for i > 0
// a hash of (seed, i) by std::seed_seq, so the samples of neighbouring seeds do not share runs.
std::uint64_t sampleSeed(std::uint64_t seed, int sample);

// The share of a step the host spends issuing kernels (metrics' hostIssueMs over the rank's step time, the largest
// over ranks) from which a step counts as host-bound: read off the validation's table, where configurations under it
// ran within a few percent of themselves from one machine start to another and most over it moved 10-67% with the
// host's speed (docs/validation.md; a held-out round predicted before it ran split the same way).
inline constexpr double kHostBoundShare = 0.75;

// The warning for a host-bound step (kHostBoundShare), or empty; with the step's range at a faster and a slower
// host when there is one. `host_speed`: each rank's factor on its host costs (hostIssueMs).
std::string hostBoundWarning(const Workload& workload, const Results& results,
                             const std::optional<std::pair<double, double>>& range = std::nullopt,
                             const HostCostSpread& spread = {}, const std::vector<double>& host_speed = {});

}  // namespace stepsim
