// DDP's options beyond the buckets, through expand: find_unused_parameters (the used-parameter map's all-reduce, the
// buckets never rebuilt, the graph walk), static_graph (the map only in the first step), and
// duplicate gradients (one more all-reduce per duplicated gradient).
#include "sim/workload/Expand.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/workload/Transformer.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

const std::string kMap = "ddp used-parameter map all_reduce";

// Collectives of `step` on rank 0, by name.
std::vector<std::string> collectives(const Expansion& e, int step) {
    const Program& p = e.workload.programs[0];
    std::vector<std::string> out;
    for (const Op& op : p.ops)
        if (op.kind == OpKind::collective && op.step == step) out.push_back(p.names[op.name]);
    return out;
}

int countNamed(const std::vector<std::string>& names, const std::string& name) {
    int n = 0;
    for (const std::string& s : names) n += s == name;
    return n;
}

std::size_t paramTensors(const Scenario& sc) {
    return transformerParams(transformerShape(sc.model, sc.training.micro_batch)).size();
}

// find_unused_parameters: every step all-reduces the used-parameter map (one int32 per parameter tensor) after its
// last bucket; plain DDP never does.
TEST(DdpOptions, FindUnusedAllReducesTheUsedMapEveryStep) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(2);
    sc.sim.steps = 3;
    for (int s = 0; s < 3; ++s) EXPECT_EQ(countNamed(collectives(expand(sc, cost), s), kMap), 0);
    sc.ddp.find_unused_parameters = true;
    const Expansion e = expand(sc, cost);
    for (int s = 0; s < 3; ++s) {
        const std::vector<std::string> c = collectives(e, s);
        EXPECT_EQ(countNamed(c, kMap), 1) << "step " << s;
        EXPECT_EQ(c.back(), kMap) << "after the last bucket, step " << s;
    }
    for (const Op& op : e.workload.programs[0].ops)
        if (op.kind == OpKind::collective && e.workload.programs[0].names[op.name] == kMap)
            EXPECT_DOUBLE_EQ(op.bytes, 4.0 * double(paramTensors(sc)));
}

// static_graph: the map is all-reduced in the first step only (delay_all_reduce); after it none, with or without
// find_unused_parameters, and the buckets are the rebuilt ones, as without either option.
TEST(DdpOptions, StaticGraphAllReducesTheMapOnlyInTheFirstStep) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(2);
    sc.sim.steps = 3;
    const Expansion plain = expand(sc, cost);
    for (bool find_unused : {false, true}) {
        sc.ddp.static_graph = true;
        sc.ddp.find_unused_parameters = find_unused;
        const Expansion e = expand(sc, cost);
        EXPECT_EQ(countNamed(collectives(e, 0), kMap), 1);
        for (int s = 1; s < 3; ++s) {
            EXPECT_EQ(countNamed(collectives(e, s), kMap), 0) << "step " << s;
            EXPECT_EQ(collectives(e, s), collectives(plain, s)) << "step " << s;
        }
    }
}

// Without static_graph, find_unused_parameters keeps the buckets made at construction (registration order, reversed)
// for good: they differ from the rebuilt ones of plain DDP, and the host walks the autograd graph once per step
// (launch.ddp_find_unused_host_us per parameter tensor).
TEST(DdpOptions, FindUnusedKeepsTheConstructionBucketsAndWalksTheGraph) {
    HardwareProfile prof = builtinProfile("h200-sxm");
    prof.launch.ddp_find_unused_host_us = 3.0;
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(2);
    sc.ddp.bucket_cap_mb = 1;
    sc.ddp.first_bucket_mb = 0.25;
    const Expansion plain = expand(sc, cost);
    sc.ddp.find_unused_parameters = true;
    const Expansion e = expand(sc, cost);
    std::vector<std::size_t> first_plain, first_unused;
    for (std::size_t i : plain.buckets.front().params) first_plain.push_back(i);
    for (std::size_t i : e.buckets.front().params) first_unused.push_back(i);
    EXPECT_NE(first_plain, first_unused);
    int walks = 0;
    const Program& p = e.workload.programs[0];
    for (const Op& op : p.ops)
        if (op.kind == OpKind::host_work && p.names[op.name] == "ddp find_unused_parameters: autograd graph walk") {
            ++walks;
            EXPECT_DOUBLE_EQ(op.host_s, 3e-6 * double(paramTensors(sc)));
        }
    EXPECT_EQ(walks, sc.sim.steps);
}

// Duplicating N gradients adds N all-reduces a step, of exactly those gradients' bytes; duplicating all
// of them doubles the all-reduces over the gradients.
TEST(DdpOptions, DuplicateGradientsAddOneAllReduceEach) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(2);
    const Expansion plain = expand(sc, cost);
    const auto bytesAndCount = [](const Expansion& e) {
        std::pair<double, int> out{0.0, 0};
        for (const Op& op : e.workload.programs[0].ops)
            if (op.kind == OpKind::collective && op.step == 1) out.first += op.bytes, ++out.second;
        return out;
    };
    const auto [plain_bytes, plain_count] = bytesAndCount(plain);
    sc.ddp.duplicate_gradients = 3;
    const auto [three_bytes, three_count] = bytesAndCount(expand(sc, cost));
    EXPECT_EQ(three_count, plain_count + 3);
    EXPECT_GT(three_bytes, plain_bytes);
    sc.ddp.duplicate_gradients = int(paramTensors(sc));
    const auto [all_bytes, all_count] = bytesAndCount(expand(sc, cost));
    EXPECT_EQ(all_count, plain_count + sc.ddp.duplicate_gradients);
    EXPECT_DOUBLE_EQ(all_bytes, 2 * plain_bytes);
    sc.ddp.duplicate_gradients += 1;
    EXPECT_THROW(expand(sc, cost), InputError);
}

// The duplicated all-reduce is synchronous: the compute stream waits for it, so the step gets longer.
TEST(DdpOptions, DuplicateAllReduceMakesTheComputeStreamWait) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(2);
    sc.ddp.duplicate_gradients = 1;
    const Program p = expand(sc, cost).workload.programs[0];
    for (std::size_t k = 0; k + 2 < p.ops.size(); ++k) {
        const Op& op = p.ops[k];
        if (op.kind != OpKind::collective || p.names[op.name].find("duplicate all_reduce") == std::string::npos) continue;
        ASSERT_EQ(p.ops[k + 1].kind, OpKind::record_event);
        ASSERT_EQ(p.ops[k + 2].kind, OpKind::wait_event);
        EXPECT_EQ(p.ops[k + 2].stream, 0);
        EXPECT_EQ(p.ops[k + 2].event, p.ops[k + 1].event);
    }
}

// The duplicated-gradient scenario: 54 more all-reduces a step than with the duplicates removed, and more
// communication time.
TEST(DdpOptions, S3ScenarioCountsTheRedundantAllReduces) {
    const Scenario before = loadScenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/redundant-allreduce-8xh200.yaml");
    Scenario after = before;
    after.ddp.duplicate_gradients = 0;
    const HardwareProfile prof = builtinProfile("h200x2");
    const Results b = simulate(before, prof).results, a = simulate(after, prof).results;
    EXPECT_DOUBLE_EQ(b.collectives.count, a.collectives.count + 54);
    EXPECT_GT(b.comm_busy_ms, a.comm_busy_ms);
    EXPECT_GT(b.step_time_ms, a.step_time_ms);
}

}  // namespace
}  // namespace stepsim
