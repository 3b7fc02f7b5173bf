// How close a step is to host-bound: the host's issue time per measured step, and the warning from 75% of the step.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/metrics/Metrics.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/run/Simulate.hpp"

namespace stepsim {
namespace {

const std::filesystem::path kSrc = STEPSIM_SOURCE_DIR;

Op hostOp(int step, double host_us) {
    Op op;
    op.step = step;
    op.host_s = host_us * 1e-6;
    return op;
}

// Three steps: step 0 (warm-up) is left out, the others averaged, per rank.
TEST(HostBound, IssueTimeIsTheMeanOverMeasuredSteps) {
    Workload w;
    w.steps = 3;
    w.programs.resize(2);
    w.programs[0].ops = {hostOp(0, 900), hostOp(1, 100), hostOp(1, 200), hostOp(2, 500)};
    w.programs[1].ops = {hostOp(1, 1000), hostOp(2, 1000)};
    const std::vector<double> ms = hostIssueMs(w);
    ASSERT_EQ(ms.size(), 2u);
    EXPECT_DOUBLE_EQ(ms[0], 0.4);  // (100 + 200 + 500) µs over two steps
    EXPECT_DOUBLE_EQ(ms[1], 1.0);
}

// Two ranks, one measured step each (step 1 of two) of the given host costs, and their results: 1 ms steps.
Workload twoRanks(double rank0_us, double rank1_us) {
    Workload w;
    w.steps = 2;
    w.programs.resize(2);
    w.programs[0].ops = {hostOp(1, rank0_us)};
    w.programs[1].ops = {hostOp(1, rank1_us)};
    return w;
}
Results oneMsSteps() {
    Results r;
    r.per_rank = {RankResults{0, 1.0}, RankResults{1, 1.0}};
    return r;
}

// The rank with the largest share decides; under 75% no warning.
TEST(HostBound, WarnsFromThreeQuartersOfTheStep) {
    Workload w = twoRanks(700, 800);
    const Results r = oneMsSteps();
    const std::string warn = hostBoundWarning(w, r);
    const std::string want = "host-bound: the host spends 0.8 ms of each 1.0 ms step issuing kernels (80%)";
    EXPECT_NE(warn.find(want), std::string::npos) << warn;
    w.programs[1].ops = {hostOp(1, 740)};
    EXPECT_EQ(hostBoundWarning(w, r), "");
}

// Each rank's host at its own speed: 0.7 ms of host costs is 70% of the step at the calibrated speed, 77% on a
// host 1.1 times as slow, which decides.
TEST(HostBound, TheSlowestHostDecides) {
    const Workload w = twoRanks(700, 700);
    const std::vector<double> ms = hostIssueMs(w, {0.9, 1.1});
    ASSERT_EQ(ms.size(), 2u);
    EXPECT_NEAR(ms[0], 0.63, 1e-12);
    EXPECT_NEAR(ms[1], 0.77, 1e-12);
    const Results r = oneMsSteps();
    EXPECT_EQ(hostBoundWarning(w, r), "");
    const std::string warn = hostBoundWarning(w, r, std::nullopt, {}, {0.9, 1.1});
    EXPECT_NE(warn.find("the host spends 0.8 ms of each 1.0 ms step issuing kernels (77%)"), std::string::npos) << warn;
}

// The validation's tiny one-GPU model is host-bound (its measured step moved 7.4-14.9 ms between machine starts),
// the 1.4B model is not (within 3.6%).
TEST(HostBound, ValidationRowsOnEitherSide) {
    const auto warned = [](const char* id) {
        const Scenario sc = loadScenario(kSrc / "scenarios/validation" / (std::string(id) + ".yaml"));
        const Simulation sim = simulate(sc, resolveProfile(sc.cluster, sc.source));
        for (const std::string& w : sim.results.warnings)
            if (w.rfind("host-bound:", 0) == 0) return true;
        return false;
    };
    EXPECT_TRUE(warned("s1-l6-h768-s1024-mb1"));
    EXPECT_FALSE(warned("s1-l24-h2048-s2048-mb4"));
}

// A host-bound step is simulated again with every host cost at the profile's spread: a faster host shortens the
// tiny model's step, a slower one lengthens it, and the warning gives the range. A GPU-bound step gets none, nor does
// a profile without a spread.
TEST(HostBound, HostBoundStepsGetTheRangeOfAFasterAndASlowerHost) {
    const auto run = [](const char* id, HostCostSpread spread) {
        const Scenario sc = loadScenario(kSrc / "scenarios/validation" / (std::string(id) + ".yaml"));
        HardwareProfile profile = resolveProfile(sc.cluster, sc.source);
        profile.launch.host_cost_spread = spread;
        return simulate(sc, profile);
    };
    const Simulation tiny = run("s1-l6-h768-s1024-mb1", {0.5, 2.0});
    ASSERT_TRUE(tiny.host_range_ms);
    const double step = tiny.results.step_time_ms;
    EXPECT_LT(tiny.host_range_ms->first, 0.7 * step);   // half the host cost: the GPU's time floors it
    EXPECT_GT(tiny.host_range_ms->second, 1.8 * step);  // twice the host cost: about twice the step
    const std::string want = fmt::format("the step takes {:.1f} to {:.1f} ms", tiny.host_range_ms->first,
                                         tiny.host_range_ms->second);
    bool found = false;
    for (const std::string& w : tiny.results.warnings) found = found || w.find(want) != std::string::npos;
    EXPECT_TRUE(found) << want;
    EXPECT_FALSE(run("s1-l24-h2048-s2048-mb4", {0.5, 2.0}).host_range_ms);
    EXPECT_FALSE(run("s1-l6-h768-s1024-mb1", {1.0, 1.0}).host_range_ms);
}

// The data loader's batches on the main thread (num_workers: 0) are host time but not launches: the warning names
// them apart and advises workers; with the launches alone under the threshold it gives no launch advice.
TEST(HostBound, LoaderTimeOnTheMainThreadIsNamedApart) {
    Workload w = twoRanks(100, 100);
    Op loader = hostOp(1, 700);
    loader.kind = OpKind::host_work;
    loader.name = w.programs[1].intern("loader: batch (main thread)");
    w.programs[1].ops.push_back(loader);
    const std::string warn = hostBoundWarning(w, oneMsSteps());
    EXPECT_NE(warn.find("the host spends 0.8 ms of each 1.0 ms step (80%), 0.1 ms of it issuing kernels and 0.7 ms "
                        "preparing batches on the main thread"),
              std::string::npos)
        << warn;
    EXPECT_NE(warn.find("loader workers (data_loader.num_workers > 0)"), std::string::npos) << warn;
    EXPECT_EQ(warn.find("torch.compile"), std::string::npos) << warn;
}

// The advice follows what the scenario already does: an eager step is told of torch.compile, a compiled one of CUDA
// graphs, one under CUDA graphs of neither.
TEST(HostBound, AdviceDoesNotSuggestWhatTheStepAlreadyDoes) {
    Scenario sc;
    EXPECT_NE(launchAdvice(sc).find("torch.compile"), std::string::npos);
    sc.compile.enabled = true;
    EXPECT_EQ(launchAdvice(sc).find("torch.compile"), std::string::npos);
    EXPECT_NE(launchAdvice(sc).find("reduce-overhead"), std::string::npos);
    sc.compile.mode = CompileMode::reduce_overhead;
    EXPECT_EQ(launchAdvice(sc).find("reduce-overhead"), std::string::npos);
    EXPECT_NE(launchAdvice(sc).find("larger micro-batches"), std::string::npos);
    const std::string warn = hostBoundWarning(twoRanks(800, 800), oneMsSteps(), std::nullopt, {}, {}, launchAdvice(sc));
    EXPECT_NE(warn.find("under CUDA graphs already"), std::string::npos) << warn;
}

}  // namespace
}  // namespace stepsim
