// The symmetry reduction (sim/engine/Symmetry.hpp): one simulated rank per class of identical ranks against every
// rank simulated, on a data-parallel step of a small GPT over nodes of a rail-optimized fat tree.
#include "sim/engine/Symmetry.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/engine/Engine.hpp"
#include "sim/metrics/Metrics.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ClusterBuild.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/workload/Expand.hpp"

namespace stepsim {
namespace {

// Stock DDP of a 4-layer GPT of width 1024 (25 MB gradient buckets: several all-reduces per step, each beside the
// backward's compute) on `nodes` nodes of `gpus` GPUs, two steps.
Scenario dp(int nodes, int gpus, bool jitter) {
    const std::string yaml = "stepsim: 1\n"
                             "cluster: {node: hgx-h200, profile: builtin}\n"
                             "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 1024}\n"
                             "training: {micro_batch: 4}\n"
                             "sim: {steps: 2}\n";
    return parseScenario(yaml, "symmetry.yaml",
                         {"cluster.nodes=" + std::to_string(nodes), "cluster.gpus_per_node=" + std::to_string(gpus),
                          std::string("jitter.enabled=") + (jitter ? "true" : "false")});
}

struct Outcome {
    double step_ms = 0.0;
    std::uint64_t events = 0;
    double collectives_per_gpu = 0.0;
};

// One engine run of the scenario's workload, reduced by `reduce` first (it returns whether it reduced).
// The expansion holds every rank's Program unless `as_expanded` (then it reduces where auto does).
template <class Reduce>
Outcome run(const Scenario& sc, Reduce reduce, bool as_expanded = false) {
    const HardwareProfile prof = resolveProfile(sc.cluster, sc.source);
    const CostModel cost = scenarioCostModel(sc, prof);
    const Fabric fabric = scenarioFabric(sc);
    Scenario every = sc;
    if (!as_expanded) every.sim.symmetry = "off";
    Workload w = expand(every, cost).workload;
    reduce(w, fabric);
    Timeline tl = Engine(w, cost, fabric, engineConfig(cost, sc.jitter.enabled, sc.sim.seed)).run();
    EXPECT_FALSE(tl.symmetry_broken);
    const Results r = computeMetrics(tl, w, cost.peakFlops(sc.training.compute_dtype));
    return {r.step_time_ms, tl.events, r.collectives.count};
}
Outcome full(const Scenario& sc) {
    return run(sc, [](Workload&, const Fabric&) {});
}
Outcome reduced(const Scenario& sc) {
    return run(sc, [](Workload& w, const Fabric& f) { ASSERT_EQ(reduceBySymmetry(w, f), ""); });
}

// Without jitter every rank of a class does what its representative does: the same step, to the bit, with far fewer
// events; and the collectives per GPU are the whole job's.
TEST(Symmetry, ReducedEqualsFullWithoutJitter) {
    for (const auto& [nodes, gpus] : std::vector<std::pair<int, int>>{{4, 2}, {8, 8}, {64, 8}}) {
        SCOPED_TRACE(nodes * gpus);
        const Scenario sc = dp(nodes, gpus, false);
        const Outcome f = full(sc), r = reduced(sc);
        EXPECT_EQ(r.step_ms, f.step_ms);
        EXPECT_EQ(r.collectives_per_gpu, f.collectives_per_gpu);
        EXPECT_LT(r.events * nodes, f.events * 2);
    }
}

// The data-parallel step: a 24-layer GPT of width 1024 (micro-batch 8 of 1,024 tokens, stock DDP) on H100
// nodes, two steps, jitter on.
Scenario gptMedium(int nodes, int gpus) {
    const std::string yaml = "stepsim: 1\n"
                             "cluster: {node: hgx-h100, profile: builtin}\n"
                             "model: {layers: 24, hidden: 1024, heads: 16, ffn_hidden: 4096, seq_len: 1024}\n"
                             "training: {micro_batch: 8}\n"
                             "sim: {steps: 2, samples: 4}\n";
    return parseScenario(yaml, "symmetry.yaml",
                         {"cluster.nodes=" + std::to_string(nodes), "cluster.gpus_per_node=" + std::to_string(gpus)});
}

// With jitter the reduced run simulates the first node as itself and the second for each class's other members, their
// slowest (Symmetry.hpp): its step and the p99 of its samples' steps lie within 0.5% of every rank simulated, on 8
// GPUs (4 nodes of 2) and 64 (8 nodes of 8); 512 is in docs/performance.md.
TEST(Symmetry, ReducedMatchesFullWithJitter) {
    for (const auto& [nodes, gpus] : std::vector<std::pair<int, int>>{{4, 2}, {8, 8}}) {
        SCOPED_TRACE(nodes * gpus);
        Scenario sc = gptMedium(nodes, gpus);
        const HardwareProfile prof = resolveProfile(sc.cluster, sc.source);
        const Simulation on = simulate(sc, prof);
        sc.sim.symmetry = "off";
        const Simulation off = simulate(sc, prof);
        ASSERT_EQ(on.expansion.workload.programs.size(), std::size_t((nodes >= 3 ? 2 : 1) * gpus));  // Symmetry.hpp
        ASSERT_EQ(off.expansion.workload.programs.size(), std::size_t(nodes * gpus));
        EXPECT_NEAR(on.results.step_time_ms / off.results.step_time_ms, 1.0, 0.005);
        ASSERT_TRUE(on.results.step_time_ms_p99 && off.results.step_time_ms_p99);
        EXPECT_NEAR(*on.results.step_time_ms_p99 / *off.results.step_time_ms_p99, 1.0, 0.005);
    }
}

// The same seed gives the same numbers; another seed other ones.
TEST(Symmetry, SameSeedSameNumbers) {
    const Scenario sc = dp(8, 8, true);
    const Outcome a = reduced(sc), b = reduced(sc);
    EXPECT_EQ(a.step_ms, b.step_ms);
    EXPECT_EQ(a.events, b.events);
    Scenario other = sc;
    other.sim.seed = 2;
    EXPECT_NE(reduced(other).step_ms, a.step_ms);
}

// 4,096 GPUs (512 nodes), no jitter: the expansion's own reduction (the node's 8 classes of 512 ranks) against
// another partition of the same job, 16 classes of 256 (two whole nodes simulated, each mirror flow merged with other
// members and routes), must agree to the bit; and the step is longer than on 512 GPUs only by its collectives' extra
// latency and bandwidth time, so it lies within 10% above it.
TEST(Symmetry, FourThousandGpusTwoPartitionsAgree) {
    const Scenario sc = dp(512, 8, false);
    const Outcome by8 = run(sc, [](Workload& w, const Fabric&) { ASSERT_EQ(w.programs.size(), 8u); }, true);
    const Outcome by16 = run(
        sc,
        [](Workload& w, const Fabric&) {
            ASSERT_EQ(w.programs.size(), 8u);
            for (std::size_t r = 8; r < 16; ++r) w.programs.push_back(w.programs[r % 8]);
            for (std::size_t r = 0; r < w.representative.size(); ++r) w.representative[r] = int(r % 16);
        },
        true);
    EXPECT_EQ(by8.step_ms, by16.step_ms);
    const Outcome at512 = reduced(dp(64, 8, false));
    EXPECT_GE(by8.step_ms, at512.step_ms);
    EXPECT_LT(by8.step_ms, 1.1 * at512.step_ms);
}

// sim.symmetry: the whole run (simulate) reduced or not gives the same step without jitter, and says which it did.
TEST(Symmetry, SwitchTurnsItOff) {
    Scenario sc = dp(8, 8, false);
    const HardwareProfile prof = resolveProfile(sc.cluster, sc.source);
    const Simulation on = simulate(sc, prof);
    sc.sim.symmetry = "off";
    const Simulation off = simulate(sc, prof);
    EXPECT_EQ(on.results.step_time_ms, off.results.step_time_ms);
    EXPECT_EQ(on.expansion.workload.programs.size(), 8u);
    EXPECT_EQ(off.expansion.workload.programs.size(), 64u);
    const auto said = [](const Simulation& s) {
        for (const std::string& w : s.results.warnings)
            if (w.rfind("symmetry:", 0) == 0) return true;
        return false;
    };
    EXPECT_TRUE(said(on));
    EXPECT_FALSE(said(off));
}

// A process group without its members' representatives (or host transfers, or different programs) is not reduced.
TEST(Symmetry, RefusesWhatItCannotMirror) {
    const Scenario sc = dp(2, 8, false);
    const HardwareProfile prof = resolveProfile(sc.cluster, sc.source);
    const CostModel cost = scenarioCostModel(sc, prof);
    const Fabric fabric = scenarioFabric(sc);
    Scenario every = sc;
    every.sim.symmetry = "off";
    Workload w = expand(every, cost).workload;
    Workload odd = w;
    odd.groups.push_back(ProcessGroup{"second node", {8, 9, 10, 11, 12, 13, 14, 15}});
    EXPECT_NE(reduceBySymmetry(odd, fabric), "");
    Workload other = w;
    other.programs[9].events += 1;
    EXPECT_NE(reduceBySymmetry(other, fabric), "");
    EXPECT_EQ(reduceBySymmetry(w, fabric), "");
    EXPECT_EQ(w.ranks(), 16);
}

}  // namespace
}  // namespace stepsim
