// Google Benchmark: the simulator's wall time against the cluster's size (issue 30; docs/performance.md).
// Every case runs as `stepsim run` does, sim.symmetry: auto (one simulated rank per class of identical ranks from
// 1,024 GPUs with jitter, at any size without). Targets: one data-parallel step of a 24-layer GPT (hidden 1024, micro-batch 8, seq 1024) on 4,096 GPUs in < 1 s
// and on 16,384 GPUs (2,048 HGX nodes, rail-optimized fat tree) in < 5 s with < 4 GB; the 1.3B example on 512 nodes
// in < 1 s. Counters: events, events per second per core, the process's peak resident set (run one size alone,
// --benchmark_filter, to read its own peak).
#include <sys/resource.h>

#include <ctime>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "sim/engine/Engine.hpp"
#include "sim/metrics/Metrics.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ClusterBuild.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/workload/Expand.hpp"

namespace stepsim {
namespace {

const char* const kExample = STEPSIM_SOURCE_DIR "/scenarios/gpt-1p3b-ddp-8xh200.yaml";

// The data-parallel step: the 1.3B example's file with a 24-layer, hidden-1024 GPT at micro-batch 8 and
// 1,024 tokens, one step, on `nodes` HGX nodes.
Scenario dpStep(int nodes) {
    return loadScenario(kExample, {"model.hidden=1024", "model.ffn_hidden=4096", "training.micro_batch=8",
                                   "model.seq_len=1024", "sim.steps=1", "cluster.nodes=" + std::to_string(nodes)});
}
// The 1.3B example as it is (3 steps), on `nodes` nodes.
Scenario example(int nodes) { return loadScenario(kExample, {"cluster.nodes=" + std::to_string(nodes)}); }

double peakRssMb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) / 1024.0;
}

void simulateScenario(benchmark::State& state, const Scenario& sc) {
    const HardwareProfile prof = resolveProfile(sc.cluster, kExample);
    std::uint64_t events = 0;
    std::size_t simulated = 0;
    for (auto _ : state) {
        Simulation s = simulate(sc, prof);
        events += s.timeline.events;
        simulated = s.expansion.workload.programs.size();
        benchmark::DoNotOptimize(s.results.step_time_ms);
    }
    state.counters["gpus"] = double(sc.cluster.nodes * sc.cluster.gpus_per_node);
    // The ranks simulated (sim.symmetry: auto, docs/performance.md "Symmetry"): fewer than the GPUs where reduced.
    state.counters["simulated_ranks"] = double(simulated);
    state.counters["events"] = double(events) / double(state.iterations());
    // CPU time, one thread: events per second per core.
    state.counters["events_per_s_per_core"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
    state.counters["peak_rss_MB"] = peakRssMb();
}

void BM_DpStep(benchmark::State& state) { simulateScenario(state, dpStep(int(state.range(0)))); }
// Nodes of 8 GPUs: 8 to 16,384 GPUs.
BENCHMARK(BM_DpStep)->RangeMultiplier(8)->Range(1, 512)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_Example1p3b(benchmark::State& state) { simulateScenario(state, example(int(state.range(0)))); }
BENCHMARK(BM_Example1p3b)->Arg(1)->Arg(8)->Arg(64)->Arg(512)->Unit(benchmark::kMillisecond);

// Issue 46's case, with the default jitter: the same 24-layer GPT (hidden 1024, micro-batch 8 of 1,024 tokens, stock
// DDP) on `nodes` HGX H100 nodes, the 1.3B H100 example's file, three steps. Targets: 512 GPUs (64 nodes) < 0.2 s,
// 4,096 (512) < 1 s, 16,384 (2,048) < 5 s and 1 GB.
Scenario dpStepH100(int nodes) {
    return loadScenario(STEPSIM_SOURCE_DIR "/scenarios/gpt-1p3b-ddp-8xh100.yaml",
                        {"model.hidden=1024", "model.ffn_hidden=4096", "training.micro_batch=8", "model.seq_len=1024",
                         "cluster.nodes=" + std::to_string(nodes)});
}
void BM_DpStepH100Jitter(benchmark::State& state) { simulateScenario(state, dpStepH100(int(state.range(0)))); }
BENCHMARK(BM_DpStepH100Jitter)->Arg(64)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond)->Iterations(1);

// The 2,048-GPU Llama 405B 3D scenario as committed (jitter on). Target: < 10 s.
void BM_Llama405b3d2048(benchmark::State& state) {
    simulateScenario(state, loadScenario(STEPSIM_SOURCE_DIR "/scenarios/large/llama-405b-3d-2048xh200.yaml"));
}
BENCHMARK(BM_Llama405b3d2048)->Unit(benchmark::kMillisecond)->Iterations(1);

// Where one DP step's time goes: expansion into Programs, the engine, the metrics (each part's CPU time).
void BM_DpStepSplit(benchmark::State& state) {
    const Scenario sc = dpStep(int(state.range(0)));
    const HardwareProfile prof = resolveProfile(sc.cluster, kExample);
    const CostModel cost = scenarioCostModel(sc, prof);
    double t_expand = 0, t_engine = 0, t_metrics = 0;
    // CPU time of this thread: the machine is shared, its wall time is not the simulator's.
    struct Clock {
        static double now() {
            timespec t{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
            return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
        }
    };
    const auto secs = [](double a, double b) { return b - a; };
    for (auto _ : state) {
        const auto t0 = Clock::now();
        const Expansion ex = expand(sc, cost);
        const Fabric fabric = clusterFabric(sc.cluster, STEPSIM_SOURCE_DIR "/scenarios");
        const auto t1 = Clock::now();
        Timeline tl = Engine(ex.workload, cost, fabric, engineConfig(cost, sc.jitter.enabled, sc.sim.seed)).run();
        const auto t2 = Clock::now();
        const Results r = computeMetrics(tl, ex.workload, cost.peakFlops(sc.training.compute_dtype));
        const auto t3 = Clock::now();
        benchmark::DoNotOptimize(r.step_time_ms);
        t_expand += secs(t0, t1), t_engine += secs(t1, t2), t_metrics += secs(t2, t3);
    }
    const double n = double(state.iterations());
    state.counters["expand_ms"] = 1e3 * t_expand / n;
    state.counters["engine_ms"] = 1e3 * t_engine / n;
    state.counters["metrics_ms"] = 1e3 * t_metrics / n;
}
BENCHMARK(BM_DpStepSplit)->Arg(64)->Arg(512)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace stepsim
