// writeTrace: Chrome trace-event JSON for ui.perfetto.dev.
#include "sim/report/TraceReport.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "tests/metrics/TestTimeline.hpp"

namespace stepsim {
namespace {

// 3 ranks: kernels on each, two all_reduces over all ranks, one comm span without a record.
test::TestRun someRun() {
    test::TestRun t(3);
    for (int r = 0; r < 3; ++r) {
        t.kernel(r, KernelClass::gemm, 0, 10, 0, "aten::mm \"fwd\"");
        t.kernel(r, KernelClass::copy, 10, 12, 0, "Memcpy HtoD");
        t.steps(r, {40, 80});
    }
    t.collective(CollectiveKind::all_reduce, 0, 2e6, 0, {12, 13, 15}, 30);
    t.collective(CollectiveKind::all_gather, 0, 4e6, 1, {41, 41, 42}, 60);
    t.comm(1, 70, 75, 1);
    return t;
}

nlohmann::json parse(const test::TestRun& t) {
    std::ostringstream os;
    writeTrace(os, t.tl, t.wl);
    return nlohmann::json::parse(os.str());  // throws on invalid JSON
}

// Valid JSON with displayTimeUnit ns, and exactly one complete event per span with its name and times (besides the
// breakdown's annotations; a hand-built timeline has no host track).
TEST(TraceReport, OneCompleteEventPerSpan) {
    const test::TestRun t = someRun();
    const auto j = parse(t);
    EXPECT_EQ(j["displayTimeUnit"], "ns");
    std::size_t x = 0;
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "X" && e["cat"] != "breakdown") ++x;
    EXPECT_EQ(x, t.tl.spans.size());
    const auto& first = *std::find_if(j["traceEvents"].begin(), j["traceEvents"].end(),
                                      [](const auto& e) { return e["ph"] == "X"; });
    EXPECT_EQ(first["name"], "aten::mm \"fwd\"");
    EXPECT_EQ(first["cat"], "gemm");
    EXPECT_DOUBLE_EQ(first["dur"].get<double>(), 10.0);
    EXPECT_EQ(first["args"]["step"], 0);
}

// A GEMM carries its shape (what calibration/validation/gemm_shapes.py reads); other kernels do not.
TEST(TraceReport, GemmsCarryTheirShape) {
    test::TestRun t = someRun();
    t.wl.programs[0].ops[0].gemm = {8192, 2048, 2048};
    const auto j = parse(t);
    int gemms = 0;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] != "X") continue;
        if (e["cat"] == "gemm") {
            ++gemms;
            EXPECT_TRUE(e["args"].contains("k"));
            if (e["pid"] == 0) EXPECT_EQ(std::tuple(e["args"]["m"], e["args"]["n"], e["args"]["k"]), std::tuple(8192, 2048, 2048));
        } else {
            EXPECT_FALSE(e["args"].contains("m")) << e;
        }
    }
    EXPECT_EQ(gemms, 3);
}

// Each collective instance is one flow: one "s", one "f", members − 2 "t", each inside a comm span of
// its rank and stream, over all member ranks.
TEST(TraceReport, FlowIdsAreMatched) {
    const test::TestRun t = someRun();
    const auto j = parse(t);
    std::map<int, std::map<std::string, int>> phases;
    std::map<int, std::set<int>> pids;
    for (const auto& e : j["traceEvents"]) {
        const std::string ph = e["ph"];
        if (ph != "s" && ph != "t" && ph != "f") continue;
        phases[e["id"].get<int>()][ph]++;
        pids[e["id"].get<int>()].insert(e["pid"].get<int>());
        EXPECT_EQ(e["bp"], "e");
        // bound to an enclosing collective slice of the same rank and stream
        const double ts = e["ts"];
        const bool enclosed = std::any_of(j["traceEvents"].begin(), j["traceEvents"].end(), [&](const auto& x) {
            return x["ph"] == "X" && x["cat"] == "comm" && x["pid"] == e["pid"] && x["tid"] == e["tid"] &&
                   x["ts"].template get<double>() <= ts &&
                   ts <= x["ts"].template get<double>() + x["dur"].template get<double>();
        });
        EXPECT_TRUE(enclosed) << e.dump();
    }
    ASSERT_EQ(phases.size(), t.tl.collectives.size());
    for (const auto& [id, count] : phases) {
        EXPECT_EQ(count.at("s"), 1) << id;
        EXPECT_EQ(count.at("f"), 1) << id;
        EXPECT_EQ(count.at("t"), 1) << id;
        EXPECT_EQ(pids[id], (std::set<int>{0, 1, 2})) << id;
    }
}

// The collective's span carries its kind, group and seq; the second all_gather of group 0 has seq 1.
TEST(TraceReport, CollectiveArgs) {
    const auto j = parse(someRun());
    int gathers = 0;
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "X" && e["args"].contains("collective") && e["args"]["collective"] == "all_gather") {
            EXPECT_EQ(e["args"]["seq"], 1);
            EXPECT_EQ(e["args"]["group_name"], "world");
            EXPECT_DOUBLE_EQ(e["args"]["bytes"].get<double>(), 4e6);
            ++gathers;
        }
    EXPECT_EQ(gathers, 3);
}

// Metadata names processes "rank N" and threads by Program::streams.
TEST(TraceReport, ProcessAndThreadNames) {
    const auto j = parse(someRun());
    std::set<std::string> processes, threads;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] != "M") continue;
        if (e["name"] == "process_name") processes.insert(e["args"]["name"]);
        if (e["name"] == "thread_name") threads.insert(e["args"]["name"]);
    }
    EXPECT_EQ(processes, (std::set<std::string>{"rank 0", "rank 1", "rank 2"}));
    EXPECT_EQ(threads, (std::set<std::string>{"compute", "nccl world", "breakdown (not compute)"}));
}

// Timestamps are exact to the picosecond: a span at 1.234567 µs prints as such.
TEST(TraceReport, SubMicrosecondTimestamps) {
    test::TestRun t(1);
    t.kernel(0, KernelClass::gemm, 0, 1);
    t.tl.spans.back().start = Time::ps(1'234'567);
    t.tl.spans.back().end = Time::ps(2'000'001);
    t.steps(0, {5});
    std::ostringstream os;
    writeTrace(os, t.tl, t.wl);
    EXPECT_NE(os.str().find(R"("ts":1.234567,"dur":0.765434)"), std::string::npos);
}

// A simulated run's trace: a host track per rank with its launches (each linked to its kernel), its waits at syncs,
// the memory counter at the step's phases, and the breakdown's parts as slices.
TEST(TraceReport, HostTrackMemoryCounterAndBreakdownOfARun) {
    const std::string file = std::string(STEPSIM_SOURCE_DIR) + "/scenarios/io/gpt2-small-loader-1xh200.yaml";
    const Scenario sc = loadScenario(file, {"sim.steps=2", "model.layers=2"});
    const Simulation sim = simulate(sc, resolveProfile(sc.cluster, file));
    std::ostringstream os;
    writeTrace(os, sim.timeline, sim.expansion.workload, sim.results.memory_phases_gib);
    const auto j = nlohmann::json::parse(os.str());
    const int host_tid = static_cast<int>(sim.expansion.workload.programs[0].streams.size());
    std::map<std::string, int> host_names;
    int launches = 0, flows_s = 0, flows_f = 0, memory = 0;
    std::set<std::string> parts;
    // (value(), not operator[]: a const event without the key, a metadata event has no "cat", is no lookup to make.)
    for (const auto& e : j["traceEvents"]) {
        const std::string ph = e.value("ph", ""), cat = e.value("cat", ""), name = e.value("name", "");
        if (ph == "X" && e.value("tid", -1) == host_tid) host_names[name]++;
        if (ph == "X" && cat == "launch") ++launches;
        if (cat == "ac2g") (ph == "s" ? flows_s : flows_f)++;
        if (ph == "C" && name == "memory (GiB)") {
            ++memory;
            EXPECT_TRUE(e.contains("args") && e.at("args").contains("activations"));
        }
        if (ph == "X" && cat == "breakdown") parts.insert(name);
    }
    EXPECT_GT(host_names["cudaLaunchKernel"], 100);
    EXPECT_GT(launches, 100);
    EXPECT_EQ(flows_s, flows_f);
    EXPECT_GT(flows_s, 100);
    EXPECT_GT(host_names.size(), 1u);          // launches and the loader's work on the main thread
    EXPECT_EQ(memory, 4 * sc.sim.steps);       // four phases a step
    EXPECT_TRUE(parts.count("host_bound"));    // the main thread's batches keep the GPU waiting
}

}  // namespace
}  // namespace stepsim
