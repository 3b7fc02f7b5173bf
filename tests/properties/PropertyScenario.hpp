#pragma once
// Property tests' small scenarios: a model small enough that a simulation takes milliseconds, read as `run` reads a
// file (the loader, the built-in profile), with `--set` overrides for the one setting a test varies.
#include <string>
#include <vector>

#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim::properties {

// 2 GPUs of one H200 node, 4 layers of width 2048 at 4 x 2048 tokens per micro-batch: GPU-bound (a step of ~46 ms
// whose host issues its kernels in well under 75% of it), jitter off so that a setting's effect is all that differs.
inline constexpr const char* kSmall = "stepsim: 1\n"
                                      "cluster: {node: hgx-h200, gpus_per_node: 2}\n"
                                      "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 2048}\n"
                                      "training: {micro_batch: 4}\n"
                                      "jitter: {enabled: false}\n"
                                      "sim: {steps: 3}\n";

inline Scenario smallScenario(const std::vector<std::string>& overrides = {}) {
    return parseScenario(kSmall, "property.yaml", overrides);
}

inline Simulation simulateSmall(const std::vector<std::string>& overrides = {}) {
    const Scenario sc = smallScenario(overrides);
    return simulate(sc, resolveProfile(sc.cluster, sc.source));
}

inline double stepMs(const std::vector<std::string>& overrides = {}) {
    return simulateSmall(overrides).results.step_time_ms;
}

}  // namespace stepsim::properties
