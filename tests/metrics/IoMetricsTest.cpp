// The input pipeline's and checkpoints' results (sim/metrics/IoMetrics.hpp) and the link-utilization heat map
// (sim/metrics/LinkUtilization.hpp, sim/report/HeatMap.hpp), on small one-GPU scenarios run through the loader,
// the built-in profile and the engine.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/metrics/LinkUtilization.hpp"
#include "sim/report/HeatMap.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {
namespace {

// One H200, GPT-2 small's shape at a quarter of its depth: a step of a few ms.
constexpr const char* kOneGpu = "stepsim: 1\n"
                                "cluster: {node: hgx-h200, gpus_per_node: 1}\n"
                                "model: {layers: 3, hidden: 768, heads: 12, seq_len: 1024}\n"
                                "training: {micro_batch: 8, optimizer_impl: fused}\n"
                                "jitter: {enabled: false}\n"
                                "sim: {steps: 5}\n";

Simulation run(const std::vector<std::string>& overrides, bool usage = false) {
    const Scenario sc = parseScenario(kOneGpu, "io.yaml", overrides);
    return simulate(sc, resolveProfile(sc.cluster, sc.source), usage);
}

// An async save blocks the loop for its staging alone (the profile's α and staging rate over the rank's state
// dict); a sync save for the copy and the write as well, so longer.
TEST(IoMetrics, AsyncCheckpointBlocksOnlyForItsStaging) {
    const Simulation async = run({"checkpoint.interval_steps=2", "checkpoint.mode=async"});
    const Simulation sync = run({"checkpoint.interval_steps=2", "checkpoint.mode=sync"});
    ASSERT_TRUE(async.results.checkpoint && sync.results.checkpoint);
    const HardwareProfile p = resolveProfile(parseScenario(kOneGpu, "io.yaml").cluster, "io.yaml");
    const double bytes = async.results.checkpoint->staged_bytes;
    const double staging_ms = p.io.dcp_stage_overhead_ms + bytes / (p.io.dcp_stage_gbps * 1e9) * 1e3;
    // Staging waits for the step's last kernels on the compute stream (a few ms at most here).
    EXPECT_GE(async.results.checkpoint->blocking_ms, staging_ms);
    EXPECT_LT(async.results.checkpoint->blocking_ms, staging_ms * 1.02);
    const double sync_ms = p.io.dcp_sync_overhead_ms + bytes / (p.io.d2h_pageable_gbps * 1e9) * 1e3 +
                           bytes / (p.io.dcp_sync_write_gbps * 1e9) * 1e3;
    EXPECT_GE(sync.results.checkpoint->blocking_ms, sync_ms);
    EXPECT_LT(async.results.checkpoint->blocking_ms, sync.results.checkpoint->blocking_ms);
    EXPECT_NEAR(sync.results.checkpoint->ms_per_step, sync.results.checkpoint->blocking_ms / 2, 1e-9);
}

// The step time holds the checkpoint amortized over its interval: the validation scenario (host-bound, one H200)
// saving every 10 of 21 steps takes its step without a checkpoint plus about a tenth of the save's blocking time, and
// tokens/s follow that step.
Simulation runFile(const std::string& file, std::vector<std::string> overrides) {
    const Scenario sc = loadScenario(std::string(STEPSIM_SOURCE_DIR) + "/" + file, overrides);
    return simulate(sc, resolveProfile(sc.cluster, sc.source));
}

TEST(IoMetrics, TheStepTimeHoldsTheCheckpointOverItsInterval) {
    const std::string file = "scenarios/validation/s1-l12-h768-s1024-mb8.yaml";
    const Simulation plain = runFile(file, {"sim.steps=21"});
    const Simulation saved =
        runFile(file, {"sim.steps=21", "checkpoint.interval_steps=10", "checkpoint.mode=sync"});
    ASSERT_TRUE(saved.results.checkpoint);
    const double per_step = saved.results.checkpoint->ms_per_step;
    EXPECT_GT(per_step, plain.results.step_time_ms);  // the save is not a detail here
    EXPECT_NEAR(saved.results.step_time_ms, plain.results.step_time_ms + per_step,
                0.05 * (plain.results.step_time_ms + per_step));
    EXPECT_NEAR(saved.results.tokens_per_s * saved.results.step_time_ms,
                plain.results.tokens_per_s * plain.results.step_time_ms, 1e-6 * plain.results.tokens_per_s);
    EXPECT_EQ(saved.results.per_step.size(), 21u);  // no longer run: a save is no head start left to decay
}

// A sync save every 2 steps of the 8-GPU demo ends in the 5 steps asked (each save no head start to outwait), with
// every save in the measured steps.
TEST(IoMetrics, TheDemoWithSyncCheckpointsRunsTheStepsAsked) {
    const Simulation sim = runFile("scenarios/gpt-1p3b-ddp-8xh200.yaml",
                                   {"checkpoint.interval_steps=2", "checkpoint.mode=sync", "sim.steps=5"});
    ASSERT_TRUE(sim.results.checkpoint);
    EXPECT_EQ(sim.results.per_step.size(), 5u);
    EXPECT_EQ(sim.results.measured_from_step, 1);
    EXPECT_GT(sim.results.step_time_ms, sim.results.checkpoint->ms_per_step);
}

// A checkpoint interval the simulated steps cannot hold is refused, naming the key and what it needs.
TEST(IoMetrics, CheckpointIntervalNeedsTheSteps) {
    try {
        run({"checkpoint.interval_steps=5"});
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("checkpoint.interval_steps"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("sim.steps of at least 6"), std::string::npos) << e.what();
    }
}

// The main thread loading 30 ms batches itself leaves the GPU idle between steps (compute-idle); two workers
// prefetching them keep it fed.
TEST(IoMetrics, LoaderWorkersRemoveComputeIdleSteps) {
    const Simulation main_thread = run({"data_loader.batch_cpu_ms=30", "data_loader.num_workers=0"});
    const Simulation workers = run({"data_loader.batch_cpu_ms=30", "data_loader.num_workers=4",
                                    "data_loader.pin_memory=true"});
    ASSERT_TRUE(main_thread.results.input && workers.results.input);
    for (std::size_t k = 1; k < main_thread.results.input->steps.size(); ++k)
        EXPECT_TRUE(main_thread.results.input->steps[k].compute_idle) << k;
    const auto& last = workers.results.input->steps.back();
    EXPECT_FALSE(last.compute_idle);
    EXPECT_LT(workers.results.step_time_ms, main_thread.results.step_time_ms - 20.0);
}

TEST(LinkUtilization, ClassesAtTheSeedsThresholds) {
    EXPECT_EQ(utilizationClass(0.0), UtilClass::cold);
    EXPECT_EQ(utilizationClass(0.2999), UtilClass::cold);
    EXPECT_EQ(utilizationClass(0.30), UtilClass::warm);
    EXPECT_EQ(utilizationClass(0.60), UtilClass::hot);
    EXPECT_EQ(utilizationClass(0.8499), UtilClass::hot);
    EXPECT_EQ(utilizationClass(0.85), UtilClass::saturated);
}

// The heat map's data file holds every link's series, bin by bin, with the class of each value.
TEST(LinkUtilization, HeatMapClassesFollowTheSeries) {
    const Simulation sim = run({"checkpoint.interval_steps=2", "checkpoint.mode=async"}, true);
    ASSERT_TRUE(sim.results.link_utilization);
    const LinkUtilization& u = *sim.results.link_utilization;
    ASSERT_FALSE(u.links.empty());
    bool storage = false;
    for (const LinkSeries& s : u.links) storage = storage || s.kind == "storage";
    EXPECT_TRUE(storage);
    const auto dir = std::filesystem::temp_directory_path() / "stepsim-heatmap-test";
    writeHeatMap(u, "test", dir);
    std::ifstream in(dir / "link_utilization.dat");
    std::string line;
    int rows = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        std::size_t link = 0;
        double start_ms = 0, util = 0;
        std::string cls;
        ls >> link >> start_ms >> util >> cls;
        ASSERT_LT(link, u.links.size());
        const std::size_t bin = static_cast<std::size_t>(std::llround(start_ms / u.bin_ms));
        ASSERT_LT(bin, u.links[link].util.size());
        EXPECT_NEAR(util, u.links[link].util[bin], 1e-4);
        EXPECT_EQ(cls, utilizationClassName(utilizationClass(util)));
        ++rows;
    }
    EXPECT_EQ(rows, static_cast<int>(u.links.size()) * u.bins);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stepsim
