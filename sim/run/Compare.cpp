#include "sim/run/Compare.hpp"

#include <stdexcept>

#include "sim/base/ParallelFor.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {

Comparison compareScenarios(const Scenario& a, const HardwareProfile& pa, const std::string& name_a, const Scenario& b,
                            const HardwareProfile& pb, const std::string& name_b, int seeds, int threads) {
    if (seeds < 1) throw std::invalid_argument("compareScenarios: seeds must be at least 1");
    Comparison c;
    for (int i = 0; i < seeds; ++i) c.seeds.push_back(sampleSeed(a.sim.seed, i));
    c.a = {name_a, std::vector<Results>(std::size_t(seeds)), pa.gpu.memory_gib, scenarioSettings(a)};
    c.b = {name_b, std::vector<Results>(std::size_t(seeds)), pb.gpu.memory_gib, scenarioSettings(b)};
    // Run k: side k % 2 at seed k / 2.
    parallelFor(std::size_t(2 * seeds), threads, [&](std::size_t k) {
        Scenario sc = k % 2 == 0 ? a : b;
        sc.sim.seed = c.seeds[k / 2];
        const Simulation sim = simulate(sc, k % 2 == 0 ? pa : pb, false, 1);
        (k % 2 == 0 ? c.a : c.b).runs[k / 2] = sim.results;
    });
    for (const auto& [key, value] : c.a.settings) {
        const auto it = c.b.settings.find(key);
        const std::string other = it == c.b.settings.end() ? "(unset)" : it->second;
        if (other != value) c.settings_diff[key] = {value, other};
    }
    for (const auto& [key, value] : c.b.settings)
        if (!c.a.settings.count(key)) c.settings_diff[key] = {"(unset)", value};
    return c;
}

}  // namespace stepsim
