// The advice (Advice.hpp): on three example scenarios, its first knob is the one a small sweep of that scenario finds
// most influential (the recommendation's sensitivity, sim/sweep/Recommendation.hpp), each sweep a 2×2×2 or 2×2 grid
// of the knobs the breakdown could point at and others.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/run/Advice.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/sweep/Sweep.hpp"

namespace stepsim {
namespace {

struct Case {
    std::string file;
    std::vector<std::string> sets;
    std::string grid;  // the sweep's grid: YAML lines under `grid:`
};

// The scenario file with a sweep section appended, in the temporary folder (the three name their profiles by built-in
// names, so no relative path moves), removed after.
class SweepOf {
public:
    SweepOf(const std::string& file, const std::string& grid) {
        std::ifstream in(file);
        std::stringstream text;
        text << in.rdbuf();
        path_ = std::filesystem::temp_directory_path() / ("advice-test-" + std::filesystem::path(file).filename().string());
        std::ofstream(path_) << text.str() << "\nsweep:\n  grid:\n" << grid << "  objective: tokens_per_s\n";
        out_ = std::filesystem::temp_directory_path() / ("advice-test-out-" + path_.stem().string());
        std::filesystem::remove_all(out_);
    }
    ~SweepOf() {
        std::filesystem::remove(path_);
        std::filesystem::remove_all(out_);
    }
    std::string bestKnob(const std::vector<std::string>& sets) const {
        SweepOptions o;
        o.file = path_;
        o.overrides = sets;
        o.out_dir = out_;
        o.quiet = true;
        o.progress = false;
        std::ostringstream ignored;
        const SweepOutcome r = runSweep(o, ignored);
        return r.recommendation.sensitivity.empty() ? std::string() : r.recommendation.sensitivity.front().key;
    }

private:
    std::filesystem::path path_, out_;
};

void expectAdviceNamesTheSweepsBestKnob(const Case& c) {
    const std::string file = std::string(STEPSIM_SOURCE_DIR) + "/" + c.file;
    const Scenario sc = loadScenario(file, c.sets);
    const HardwareProfile profile = resolveProfile(sc.cluster, file);
    const Simulation sim = simulate(sc, profile, false, 0);
    const std::vector<AdviceItem> advice = advise(file, c.sets, sim.results, profile, 0);
    ASSERT_FALSE(advice.empty()) << c.file;
    const std::string best = SweepOf(file, c.grid).bestKnob(c.sets);
    EXPECT_EQ(advice.front().key, best) << c.file << ": the advice's first knob against the sweep's most influential";
    for (std::size_t i = 1; i < advice.size(); ++i) EXPECT_GE(advice[i - 1].gain_pct, advice[i].gain_pct);
}

TEST(Advice, OnTheDemoItNamesTheSweepsBestKnob) {
    expectAdviceNamesTheSweepsBestKnob({"scenarios/gpt-1p3b-ddp-8xh200.yaml", {},
                                        "    training.optimizer_impl: [foreach, fused]\n"
                                        "    compile.enabled: [false, true]\n"
                                        "    ddp.bucket_cap_mb: [25, 100]\n"});
}

TEST(Advice, OnAMainThreadLoaderItNamesTheSweepsBestKnob) {
    expectAdviceNamesTheSweepsBestKnob({"scenarios/io/gpt2-small-loader-1xh200.yaml", {},
                                        "    data_loader.num_workers: [0, 4]\n"
                                        "    compile.enabled: [false, true]\n"
                                        "    training.optimizer_impl: [foreach, fused]\n"});
}

TEST(Advice, OnAPipelineWithABubbleItNamesTheSweepsBestKnob) {
    expectAdviceNamesTheSweepsBestKnob({"scenarios/large/llama-70b-3d-64xh200.yaml",
                                        {"cluster.nodes=4", "model.layers=8", "training.grad_accum=4"},
                                        "    training.grad_accum: [4, 8]\n"
                                        "    parallel.pp_schedule: [1f1b, zero_bubble]\n"});
}

TEST(Advice, CandidatesFollowTheBreakdownsLargestParts) {
    Scenario sc;
    Results r;
    r.step_time_ms = 100;
    r.breakdown_ms = {{"compute.gemm", 50}, {"host_bound", 30}, {"compute.optimizer", 20}};
    const auto c = adviceCandidates(sc, r, 141.0);
    ASSERT_FALSE(c.empty());
    EXPECT_EQ(c.front().reason, "host_bound");
    EXPECT_EQ(c.front().sets.front(), "compile.enabled=true");
    EXPECT_EQ(c.back().sets.front(), "training.optimizer_impl=fused");
}

}  // namespace
}  // namespace stepsim
