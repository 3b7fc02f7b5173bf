// Common random numbers (sim/engine/Jitter.hpp): every draw is a function of (seed, rank, the op's identity, what is
// drawn), so a one-key what-if on the demo differs by what the key changed, not by a reshuffled random stream.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/engine/Jitter.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {
namespace {

const char* const kDemo = STEPSIM_SOURCE_DIR "/scenarios/gpt-1p3b-ddp-8xh200.yaml";

double stepMs(std::vector<std::string> sets, bool jitter) {
    sets.push_back(std::string("jitter.enabled=") + (jitter ? "true" : "false"));
    const Scenario sc = loadScenario(kDemo, sets);
    return simulate(sc, resolveProfile(sc.cluster, kDemo)).results.step_time_ms;
}

// An op keeps its identity when ops of other names come or go before it; two ops of one name in a step are told
// apart by their order.
TEST(CommonRandomNumbers, AnOpKeepsItsIdentityWhenOthersAreAdded) {
    Program p;
    const auto add = [&](const std::string& name, int step) {
        Op op;
        op.name = p.intern(name);
        op.step = step;
        p.ops.push_back(op);
    };
    add("h.0.qkv", 0), add("h.0.qkv", 0), add("h.0.proj", 0), add("h.0.qkv", 1);
    const std::vector<std::uint64_t> before = opIdentities(p);
    Program q;
    std::swap(p, q);
    add("ddp find_unused_parameters: autograd graph walk", 0);
    add("h.0.qkv", 0), add("h.0.qkv", 0), add("used map", 0), add("h.0.proj", 0), add("h.0.qkv", 1);
    const std::vector<std::uint64_t> after = opIdentities(p);
    EXPECT_EQ(after[1], before[0]);
    EXPECT_EQ(after[2], before[1]);
    EXPECT_EQ(after[4], before[2]);
    EXPECT_EQ(after[5], before[3]);
    EXPECT_NE(before[0], before[1]);
    EXPECT_NE(before[0], before[3]);
}

// Keys that add work (gradient clipping's kernels, a 25th layer) never make the demo faster with jitter on, and each
// what-if's change with jitter is its change without jitter within 0.1% of the step (the key's own effect, not noise;
// ddp.find_unused_parameters keeps the first step's bucket order, which the demo's all-reduces overlap better: a
// change of the model, the same with jitter and without).
TEST(CommonRandomNumbers, AOneKeyWhatIfOnTheDemoIsFreeOfNoise) {
    const double base = stepMs({}, true), flat = stepMs({}, false);
    for (const std::string& key : {std::string("training.grad_clip_norm=1.0"), std::string("model.layers=25"),
                                   std::string("ddp.find_unused_parameters=true")}) {
        SCOPED_TRACE(key);
        const double with = stepMs({key}, true), without = stepMs({key}, false);
        if (key != "ddp.find_unused_parameters=true") EXPECT_GT(with, base);
        EXPECT_NEAR(with - base, without - flat, 1e-3 * base);
    }
}

// The same seed gives the same step to the bit; the demo's result does not depend on anything but its inputs.
TEST(CommonRandomNumbers, TheSameSeedGivesTheSameStep) {
    EXPECT_EQ(stepMs({"sim.samples=3"}, true), stepMs({"sim.samples=3"}, true));
    EXPECT_NE(stepMs({"sim.seed=2"}, true), stepMs({}, true));
}

}  // namespace
}  // namespace stepsim
