#pragma once
// What a run tells its reader beside the numbers: a host-bound step and what would shorten it, memory that does not
// fit, a profile of other GPUs or extrapolated (simulate's runWarnings puts them in order, Simulate.cpp).
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/cost/HardwareProfile.hpp"
#include "sim/metrics/Results.hpp"

namespace stepsim {

// The share of a step the host spends issuing kernels (metrics' hostIssueMs over the rank's step time, the largest
// over ranks) from which a step counts as host-bound: read off the validation's table, where configurations under it
// ran within a few percent of themselves from one machine start to another and most over it moved 10-67% with the
// host's speed (docs/validation.md; a held-out round predicted before it ran split the same way).
inline constexpr double kHostBoundShare = 0.75;

// The largest share of a step its rank's host spends issuing kernels, with that host time and step time (ms) and the
// rank. `host_speed`: each rank's factor on its host costs (hostIssueMs).
struct HostShare {
    double share = 0.0, host_ms = 0.0, step_ms = 0.0;
    std::size_t rank = 0;
};
HostShare hostShare(const Workload& workload, const Results& results, const std::vector<double>& host_speed);

// What would shorten a host-bound step of `sc`: torch.compile and CUDA graphs for an eager step, CUDA graphs
// (reduce-overhead) for a compiled one without them, larger micro-batches for one under CUDA graphs.
std::string launchAdvice(const Scenario& sc);

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

// The profile's warnings for `sc`: rates of another GPU than the node's, or an extrapolated profile.
std::vector<std::string> profileWarnings(const Scenario& sc, const HardwareProfile& profile);

}  // namespace stepsim
