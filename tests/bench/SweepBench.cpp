// Google Benchmark: a sweep of the 8-GPU demo, tests/bench/data/gpt-1p3b-8xh200-1000-points.yaml (1,000 points, every
// one simulated), on every core. Target (issue 29; docs/sweep.md, "Speed"): the 1,000 points in under 10 s on a
// 2-core machine. The argument is how many of the points run (--max-points): SLOW_Sweep8GpuDemo/1000 is the target's
// run (a minute or more: ctest leaves it out, running only the BM_ benchmarks), BM_Sweep8GpuDemo/20 the short one.
#include <filesystem>
#include <sstream>

#include <benchmark/benchmark.h>

#include "sim/sweep/Sweep.hpp"

namespace stepsim {
namespace {

void sweep8GpuDemo(benchmark::State& state) {
    const auto dir = std::filesystem::temp_directory_path() / "stepsim-sweep-bench";
    SweepOptions o;
    o.file = std::filesystem::path(STEPSIM_SOURCE_DIR) / "tests/bench/data/gpt-1p3b-8xh200-1000-points.yaml";
    o.out_dir = dir;
    o.threads = 0;
    o.quiet = true;
    o.max_points = static_cast<std::size_t>(state.range(0));
    std::size_t points = 0;
    for (auto _ : state) {
        state.PauseTiming();
        std::filesystem::remove_all(dir);  // no journal: every point simulated
        state.ResumeTiming();
        std::ostringstream out;
        points += runSweep(o, out).summary.points_run;
    }
    state.counters["points"] = benchmark::Counter(static_cast<double>(points), benchmark::Counter::kAvgIterations);
    state.counters["points_per_s"] = benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
}
BENCHMARK(sweep8GpuDemo)->Name("BM_Sweep8GpuDemo")->Arg(20)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);
BENCHMARK(sweep8GpuDemo)->Name("SLOW_Sweep8GpuDemo")->Arg(1000)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace stepsim
