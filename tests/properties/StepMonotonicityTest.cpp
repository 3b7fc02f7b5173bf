// Properties a step time holds whatever the calibration: more work never makes a step faster, more bandwidth or a
// faster GPU never makes it slower, and MFU stays a fraction. Each test states one property over a sweep of one
// setting (jitter off, so the setting is all that differs).
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/metrics/Metrics.hpp"
#include "tests/properties/PropertyScenario.hpp"

namespace stepsim::properties {
namespace {

// Step times over `values` of `key`, in order.
std::vector<double> sweep(const std::string& key, const std::vector<std::string>& values,
                          const std::vector<std::string>& base = {}) {
    std::vector<double> steps;
    for (const std::string& v : values) {
        std::vector<std::string> o = base;
        o.push_back(key + "=" + v);
        steps.push_back(stepMs(o));
    }
    return steps;
}

// Expects `steps` never to decrease (by more than a rounding), naming the values where one does.
void expectNonDecreasing(const std::vector<double>& steps, const std::vector<std::string>& values) {
    ASSERT_EQ(steps.size(), values.size());
    ASSERT_GE(steps.size(), 2u);
    for (std::size_t i = 1; i < steps.size(); ++i)
        EXPECT_GE(steps[i], steps[i - 1] * (1 - 1e-9)) << values[i - 1] << " -> " << values[i];
}

void expectNonIncreasing(const std::vector<double>& steps, const std::vector<std::string>& values) {
    ASSERT_EQ(steps.size(), values.size());
    ASSERT_GE(steps.size(), 2u);
    for (std::size_t i = 1; i < steps.size(); ++i)
        EXPECT_LE(steps[i], steps[i - 1] * (1 + 1e-9)) << values[i - 1] << " -> " << values[i];
}

TEST(StepMonotonicity, MoreLayersNeverSpeedAStep) {
    const std::vector<std::string> v{"1", "2", "4", "8"};
    expectNonDecreasing(sweep("model.layers", v), v);
}

TEST(StepMonotonicity, LongerSequencesNeverSpeedAStep) {
    const std::vector<std::string> v{"1024", "1536", "2048", "3072", "4096"};
    expectNonDecreasing(sweep("model.seq_len", v), v);
}

TEST(StepMonotonicity, LargerMicroBatchesNeverSpeedAStep) {
    const std::vector<std::string> v{"2", "3", "4", "6", "8"};
    expectNonDecreasing(sweep("training.micro_batch", v), v);
}

TEST(StepMonotonicity, MoreMicroBatchesPerStepNeverSpeedAStep) {
    const std::vector<std::string> v{"1", "2", "3", "4"};
    expectNonDecreasing(sweep("training.grad_accum", v), v);
}

TEST(StepMonotonicity, WiderModelsNeverSpeedAStep) {
    const std::vector<std::string> v{"1536", "2048", "3072", "4096"};
    expectNonDecreasing(sweep("model.hidden", v), v);
}

// A host-bound step (hidden 256, 512, 1024 on 2 GPUs with 4 layers, seq_len 1024, micro_batch 2, 4 heads: the host
// issues it in 10.6-10.9 ms). The host's head start from step 0 shrinks over the first steps, which then read shorter
// than the host's issue time; the metrics measure the steps after it has decayed (Metrics.hpp's steadyWindow), and
// simulate more steps when the default 3 end before that.
TEST(StepMonotonicity, WiderModelsNeverSpeedAHostBoundStep) {
    const std::vector<std::string> v{"256", "512", "1024"};
    expectNonDecreasing(
        sweep("model.hidden", v, {"model.layers=4", "model.seq_len=1024", "training.micro_batch=2", "model.heads=4"}), v);
}

// No steady step is shorter than the time its host spends issuing it (within the measured window's tolerance): the
// same host-bound models, and the GPU-bound default.
TEST(StepMonotonicity, NoStepIsShorterThanItsHostsIssueTime) {
    for (const std::string hidden : {"256", "512", "1024", "2048"}) {
        SCOPED_TRACE(hidden);
        const Simulation sim = simulateSmall({"model.hidden=" + hidden, "model.layers=4", "model.seq_len=1024",
                                              "training.micro_batch=2", "model.heads=4"});
        const std::vector<double> host =
            hostIssueMs(sim.expansion.workload, sim.timeline.host_speed, sim.results.measured_from_step);
        ASSERT_FALSE(host.empty());
        EXPECT_GE(sim.results.step_time_ms, *std::max_element(host.begin(), host.end()) * (1 - kSteadyTolerance));
    }
}

// Across nodes the gradients' all-reduce crosses the NICs: a faster NIC never slows the step.
TEST(StepMonotonicity, MoreNicBandwidthNeverSlowsAStep) {
    const std::vector<std::string> v{"25", "50", "100", "200", "400", "800"};
    expectNonIncreasing(sweep("cluster.network.nic_gbps", v, {"cluster.nodes=2"}), v);
}

// A less oversubscribed fabric (more leaf-to-spine bandwidth) never slows the step.
TEST(StepMonotonicity, LessOversubscriptionNeverSlowsAStep) {
    const std::vector<std::string> v{"8", "4", "2", "1"};
    expectNonIncreasing(sweep("cluster.network.oversubscription", v, {"cluster.nodes=4", "cluster.gpus_per_node=8"}),
                        v);
}

// The same scenario on a profile whose every rate is faster: the datasheet H200 has the H100's compute and faster
// HBM (4.8 against 3.35 TB/s) and more memory, so it never takes longer.
TEST(StepMonotonicity, FasterMemoryProfileNeverSlowsAStep) {
    const Scenario sc = smallScenario();
    ClusterSpec h100 = sc.cluster, h200 = sc.cluster;
    h100.profile = "h100-sxm";
    h200.profile = "h200-sxm";
    const HardwareProfile slow = resolveProfile(h100, sc.source), fast = resolveProfile(h200, sc.source);
    ASSERT_GT(fast.gpu.hbm_gbps, slow.gpu.hbm_gbps);
    ASSERT_GE(fast.gpu.peak_tflops_bf16, slow.gpu.peak_tflops_bf16);
    EXPECT_LE(simulate(sc, fast).results.step_time_ms, simulate(sc, slow).results.step_time_ms * (1 + 1e-9));
}

// MFU is model FLOPs over the profile's dense peak: a fraction, whatever the model and batch.
TEST(StepMonotonicity, MfuIsAFractionOfThePeak) {
    const std::vector<std::vector<std::string>> cases{{},
                                                      {"model.layers=16", "model.hidden=4096", "model.heads=32"},
                                                      {"training.micro_batch=16"},
                                                      {"model.seq_len=4096", "training.activation_checkpointing=full"},
                                                      {"training.compute_dtype=fp16"}};
    for (const auto& o : cases) {
        const Results r = simulateSmall(o).results;
        SCOPED_TRACE(fmt::format("{}", fmt::join(o, " ")));
        EXPECT_GT(r.mfu, 0.0);
        EXPECT_LE(r.mfu, 1.0);
    }
}

}  // namespace
}  // namespace stepsim::properties
