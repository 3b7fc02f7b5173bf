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

// The share of a step the host spends issuing kernels (metrics' hostIssueMs over the rank's step time, the largest
// over ranks) from which a step counts as host-bound: read off the validation's table, where configurations under it
// ran within a few percent of themselves from one machine start to another and most over it moved 10-67% with the
// host's speed (docs/validation.md; a held-out round predicted before it ran split the same way).
inline constexpr double kHostBoundShare = 0.75;

// What would shorten a host-bound step of `sc`: torch.compile and CUDA graphs for an eager step, CUDA graphs
// (reduce-overhead) for a compiled one without them, larger micro-batches for one under CUDA graphs.
std::string launchAdvice(const Scenario& sc);
// The memory model's estimate in the result's terms (Results.hpp's MemoryBreakdown: params, grads, optimizer,
// activations, buffers), GiB; they sum to MemoryEstimate::peak().
MemoryBreakdown memoryBreakdown(const MemoryEstimate& m);

// The out-of-memory warning: the peak over the GPU's memory, the largest term and what shrinks it.
std::string outOfMemoryWarning(double peak_gib, const MemoryBreakdown& breakdown, double gpu_gib);

// The warning for a host-bound step (kHostBoundShare), or empty; with the step's range at a faster and a slower
// host when there is one. `host_speed`: each rank's factor on its host costs (hostIssueMs). The host time the data
// loader spends on the main thread (num_workers: 0) is named apart from the kernels' launches; `advice` ends the
// warning (launchAdvice).
std::string hostBoundWarning(const Workload& workload, const Results& results,
                             const std::optional<std::pair<double, double>>& range = std::nullopt,
                             const HostCostSpread& spread = {}, const std::vector<double>& host_speed = {},
                             const std::string& advice = launchAdvice(Scenario{}));


}  // namespace stepsim
