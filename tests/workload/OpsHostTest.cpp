// The host's costs an op-times table leaves out (sim/workload/OpsHost.hpp): each module's calls spread over the ops
// run under it, autograd's nodes counted in the forward and the backward, and the committed capture's step longer
// by no more than what they add.
#include <filesystem>
#include <numeric>
#include <string>

#include <gtest/gtest.h>

#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/workload/OpsHost.hpp"

namespace stepsim {
namespace {

OpNode op(Phase phase, int module, bool view = false) {
    OpNode n;
    n.op = "aten::mul";
    n.phase = phase;
    n.module = module;
    n.view = view;
    return n;
}

// root (1 call) > a (2 calls, two ops and a view) and b (1 call, no op: its call goes to root); one op under root
// alone; a backward of two ops linked to op 0 and one to op 1; one parameter ready after the last.
OpGraph handBuilt() {
    OpGraph g;
    g.modules = {{"", "M", -1, 1}, {"a", "A", 0, 2}, {"b", "B", 0, 1}};
    g.ops = {op(Phase::forward, 1), op(Phase::forward, 1), op(Phase::forward, 1, true), op(Phase::forward, 0),
             op(Phase::backward, 1), op(Phase::backward, 1), op(Phase::backward, 1)};
    g.ops[0].seq_nr = 10, g.ops[1].seq_nr = 11, g.ops[2].seq_nr = 12;
    g.ops[4].fwd_op = 0, g.ops[5].fwd_op = 0, g.ops[6].fwd_op = 1;
    OpParam p;
    p.grad_ready_op = 6;
    g.params = {p};
    return g;
}

TEST(OpsHost, ModuleCallsSpreadOverTheOpsUnderEachModule) {
    const OpGraph g = handBuilt();
    const std::vector<double> x = opsExtraHost(g, OpsHostRates{10.0, 0.0, 0.0, 0.0});
    // a: 2 calls over its 2 ops; root: its call and b's over its 3 ops (a's two and its own); the view none.
    EXPECT_NEAR(x[0], (10.0 * 2 / 2 + 10.0 * 2 / 3) * 1e-6, 1e-12);
    EXPECT_NEAR(x[1], x[0], 1e-12);
    EXPECT_EQ(x[2], 0.0);
    EXPECT_NEAR(x[3], 10.0 * 2 / 3 * 1e-6, 1e-12);
    const OpsHostCounts n = opsHostCounts(g);
    EXPECT_EQ(n.module_calls, 4);
    EXPECT_NEAR(std::accumulate(x.begin(), x.end(), 0.0), 10.0 * 4 * 1e-6, 1e-12);  // every call counted once
}

TEST(OpsHost, AutogradNodesInTheForwardAndTheBackward) {
    const OpGraph g = handBuilt();
    const std::vector<double> x = opsExtraHost(g, OpsHostRates{0.0, 3.0, 5.0, 0.0});
    const OpsHostCounts n = opsHostCounts(g);
    EXPECT_EQ(n.forward_nodes, 3);   // the view records one too
    EXPECT_EQ(n.backward_nodes, 3);  // op 0's node once, op 1's, the parameter's AccumulateGrad
    EXPECT_NEAR(x[2], 3e-6, 1e-12);
    EXPECT_NEAR(x[4], 5e-6, 1e-12);
    EXPECT_EQ(x[5], 0.0);
    EXPECT_NEAR(x[6], 10e-6, 1e-12);
    EXPECT_NEAR(std::accumulate(x.begin(), x.end(), 0.0), (3 * 3.0 + 3 * 5.0) * 1e-6, 1e-12);
    for (double v : opsExtraHost(g, OpsHostRates{})) EXPECT_EQ(v, 0.0);  // not measured: nothing added
}

TEST(OpsHost, TheProfileSectionReadsAndWritesBack) {
    HardwareProfile p = builtinProfile("h200x2");
    p.ops_host = OpsHostRates{12.5, 1.25, 3.5, 150.0};
    const std::string text = writeProfile(p);
    EXPECT_NE(text.find("ops_host:\n  module_call_us: 12.5\n"), std::string::npos) << text.substr(text.find("ops_host"), 200);
    const HardwareProfile q = parseProfile(text, "x.yaml");
    EXPECT_EQ(q.ops_host.module_call_us, 12.5);
    EXPECT_EQ(q.ops_host.autograd_node_forward_us, 1.25);
    EXPECT_EQ(q.ops_host.autograd_node_backward_us, 3.5);
    EXPECT_EQ(q.ops_host.fsdp2_hook_us, 150.0);
    p.ops_host = OpsHostRates{};
    EXPECT_EQ(writeProfile(p).find("ops_host"), std::string::npos);  // not measured: left out
}

TEST(OpsHost, TheCommittedCapturesStepGrowsByNoMoreThanTheHostAdded) {
    const Scenario sc = parseScenario(
        "stepsim: 1\ncluster: {gpus_per_node: 1}\nmodel:\n  type: ops\n  ops: hf-llama-4l.ops.json.gz\n"
        "  op_times: hf-llama-4l.op_times.json\njitter: {enabled: false}\nsim: {steps: 3}\n",
        (std::filesystem::path(STEPSIM_SOURCE_DIR) / "tests" / "data" / "ops" / "x.yaml").string());
    HardwareProfile prof = builtinProfile("h200x2");
    prof.ops_host = OpsHostRates{};
    const double without = simulate(sc, prof).results.step_time_ms;
    prof.ops_host = OpsHostRates{20.0, 2.0, 4.0, 0.0};
    const OpsHostCounts n = opsHostCounts(*sc.model.graph);
    EXPECT_GT(n.module_calls, 50);
    EXPECT_GT(n.forward_nodes, 300);
    EXPECT_GT(n.backward_nodes, 300);
    const double added_ms = (20.0 * double(n.module_calls) + 2.0 * double(n.forward_nodes) +
                             4.0 * double(n.backward_nodes)) * 1e-3;
    const double with = simulate(sc, prof).results.step_time_ms;
    EXPECT_GT(with, without);
    EXPECT_LE(with, without + added_ms + 1e-6);
}

}  // namespace
}  // namespace stepsim
