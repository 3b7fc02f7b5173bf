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

#include "sim/cost/CostModel.hpp"
#include "sim/cost/HardwareProfile.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/metrics/Results.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/workload/Expand.hpp"
#include "sim/run/RunWarnings.hpp"

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

// `link_usage`: record every link's load over time (Results::link_utilization, the trace's counters, the heat map);
// off, the engine pays nothing for it. `threads`: the samples of sim.samples run on that many threads (0: one per
// core); the results do not depend on it.
Simulation simulate(const Scenario& sc, const HardwareProfile& profile, bool link_usage = false, int threads = 0);

// The same with the cost model and fabric given: they depend only on the profile and the scenario's `cluster:` and
// `nccl:` sections, so a sweep builds them once for the points that share those (a CostModel memoizes GEMM queries
// and is not shared between threads). simulate(sc, profile) is simulate(sc, profile, scenarioCostModel(sc, profile),
// scenarioFabric(sc)).
Simulation simulate(const Scenario& sc, const HardwareProfile& profile, const CostModel& cost, const Fabric& fabric,
                    bool link_usage = false, int threads = 0);
CostModel scenarioCostModel(const Scenario& sc, const HardwareProfile& profile);
Fabric scenarioFabric(const Scenario& sc);

// Sample i's seed: the scenario's seed for sample 0 (so sim.samples: 1 is the single run of that seed), and for i > 0
// a hash of (seed, i) by std::seed_seq, so the samples of neighbouring seeds do not share runs.
std::uint64_t sampleSeed(std::uint64_t seed, int sample);


// The memory model's estimate in the result's terms (Results.hpp's MemoryBreakdown: params, grads, optimizer,
// activations, buffers), GiB; they sum to MemoryEstimate::peak().
MemoryBreakdown memoryBreakdown(const MemoryEstimate& m);



}  // namespace stepsim
