#include "sim/sweep/Simulate.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "sim/core/Engine.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/metrics/Metrics.hpp"
#include "sim/net/Fabric.hpp"
#include "topology/ClusterFabric.hpp"

namespace stepsim {

std::string hostBoundWarning(const Workload& workload, const Results& results) {
    const std::vector<double> host = hostIssueMs(workload);
    double share = 0.0, host_ms = 0.0, step_ms = 0.0;
    for (const RankResults& r : results.per_rank) {
        const std::size_t i = static_cast<std::size_t>(r.rank);
        if (i < host.size() && r.step_time_ms > 0 && host[i] / r.step_time_ms > share)
            share = host[i] / r.step_time_ms, host_ms = host[i], step_ms = r.step_time_ms;
    }
    if (share < kHostBoundShare) return {};
    return fmt::format("host-bound: the host spends {:.1f} ms of each {:.1f} ms step issuing kernels ({:.0f}%), so the "
                       "step follows the host's speed, which varies between machines and runs (on the validation's "
                       "H200s most such configurations moved 10-67% between machine starts); fewer launches "
                       "(torch.compile, CUDA graphs, larger micro-batches) would shorten it",
                       host_ms, step_ms, 100.0 * share);
}

Simulation simulate(const Scenario& sc, const HardwareProfile& profile) {
    const bool nvswitch = nvSwitchNode(sc.cluster.node);
    CostModel cost(profile, sc.nccl, nvswitch, sc.cluster.network);
    Simulation sim;
    sim.expansion = expand(sc, cost);
    const Fabric fabric = clusterFabric(sc.cluster, std::filesystem::path(sc.source).parent_path().string());
    const double peak = cost.peakFlops(sc.training.compute_dtype);
    std::vector<Results> samples;
    for (int i = 0; i < sc.sim.samples; ++i) {
        Engine engine(sim.expansion.workload, cost, fabric,
                      engineConfig(profile, sc.jitter.enabled, sc.sim.seed + std::uint64_t(i)));
        Timeline tl = engine.run();
        samples.push_back(computeMetrics(tl, sim.expansion.workload, peak));
        for (const std::string& w : tl.warnings) samples.back().warnings.push_back(w);
        if (i == 0) sim.timeline = std::move(tl);
    }
    sim.results = samples.size() == 1 ? samples.front() : aggregateSamples(samples);
    const MemoryEstimate& m = sim.expansion.memory;
    sim.results.peak_memory_gib = m.peak() / (1024.0 * 1024.0 * 1024.0);
    std::vector<std::string> warnings = sim.expansion.warnings;
    for (const std::string& w : sim.results.warnings)
        if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    if (*sim.results.peak_memory_gib > profile.gpu.memory_gib)
        warnings.push_back("out of memory: the estimated peak exceeds the GPU's memory");
    if (const std::string w = hostBoundWarning(sim.expansion.workload, sim.results); !w.empty()) warnings.push_back(w);
    sim.results.warnings = warnings;
    return sim;
}

}  // namespace stepsim
