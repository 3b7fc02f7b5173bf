#include "sim/sweep/Simulate.hpp"

#include <algorithm>
#include <filesystem>

#include "sim/core/Engine.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/metrics/Metrics.hpp"
#include "sim/net/Fabric.hpp"
#include "topology/ClusterFabric.hpp"

namespace stepsim {

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
    sim.results.warnings = warnings;
    return sim;
}

}  // namespace stepsim
