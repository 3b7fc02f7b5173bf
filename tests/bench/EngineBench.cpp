// Google Benchmark: engine throughput and the wall time of simulating one 8-GPU training step.
// Targets (docs/architecture.md, "Performance of the simulator"): ≥ 10 million events/s on one core; one 8-GPU step
// of the 1.3B example in < 20 ms; the example's 5 steps with a sync checkpoint every 2 in < 2 s (issue 46).
#include <benchmark/benchmark.h>

#include "sim/engine/Engine.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/run/Simulate.hpp"

namespace stepsim {
namespace {

// 8 ranks, each issuing `kernels` back-to-back kernels with a host launch cost, then one all-reduce.
Workload syntheticWorkload(int kernels) {
    Workload w;
    w.groups.push_back({"dp", {0, 1, 2, 3, 4, 5, 6, 7}});
    Program p;
    p.streams = {{StreamKind::compute, "compute"}, {StreamKind::comm, "nccl"}};
    for (int i = 0; i < kernels; ++i) {
        Op op;
        op.kind = OpKind::kernel;
        op.cls = KernelClass::memory;
        op.work_s = 12e-6;
        op.host_s = 9e-6;
        p.ops.push_back(op);
    }
    Op ar;
    ar.kind = OpKind::collective;
    ar.cls = KernelClass::comm;
    p.collectives.push_back({CollectiveKind::all_reduce, 0, 1e8, "bf16"});
    p.ops.push_back(ar);
    Op end;
    end.kind = OpKind::step_end;
    p.ops.push_back(end);
    w.programs.assign(8, p);
    return w;
}

void BM_EngineEvents(benchmark::State& state) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Fabric fabric = switchNode(8, 450, 0.7, true);
    const Workload w = syntheticWorkload(static_cast<int>(state.range(0)));
    const bool jitter = state.range(1) != 0;
    std::uint64_t events = 0;
    for (auto _ : state) {
        Timeline tl = Engine(w, cost, fabric, engineConfig(cost, jitter, 1)).run();
        events += tl.events;
        benchmark::DoNotOptimize(tl.spans.data());
    }
    state.counters["events_per_s"] = benchmark::Counter(double(events), benchmark::Counter::kIsRate);
}
// Arg 1: jitter on (draws a host and a kernel variate per op) or off (the engine alone).
BENCHMARK(BM_EngineEvents)->Args({100000, 0})->Args({100000, 1})->Unit(benchmark::kMillisecond);

void BM_Simulate8GpuStep(benchmark::State& state) {
    Scenario sc = loadScenario(STEPSIM_SOURCE_DIR "/scenarios/gpt-1p3b-ddp-8xh200.yaml", {"sim.steps=1"});
    const HardwareProfile prof = resolveProfile(sc.cluster, STEPSIM_SOURCE_DIR "/scenarios/gpt-1p3b-ddp-8xh200.yaml");
    for (auto _ : state) {
        Simulation s = simulate(sc, prof);
        benchmark::DoNotOptimize(s.results.step_time_ms);
    }
}
BENCHMARK(BM_Simulate8GpuStep)->Unit(benchmark::kMillisecond);

// The 8-GPU example saving a sync checkpoint every 2 of its 5 steps: each rank's save is one staging copy and one
// storage write (a flow each), the steps simulated once (no re-run for a head start the saves would seem to shrink).
void BM_Simulate8GpuSyncCheckpoint(benchmark::State& state) {
    const char* file = STEPSIM_SOURCE_DIR "/scenarios/gpt-1p3b-ddp-8xh200.yaml";
    Scenario sc = loadScenario(file, {"checkpoint.interval_steps=2", "checkpoint.mode=sync", "sim.steps=5"});
    const HardwareProfile prof = resolveProfile(sc.cluster, file);
    for (auto _ : state) {
        Simulation s = simulate(sc, prof);
        benchmark::DoNotOptimize(s.results.step_time_ms);
    }
}
BENCHMARK(BM_Simulate8GpuSyncCheckpoint)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace stepsim

BENCHMARK_MAIN();
