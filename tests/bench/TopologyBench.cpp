// Google Benchmark: building the cluster graph of 128 HGX H200 nodes (1,024 GPUs, 4 scalable units of a rail fat
// tree). The build should stay linear in the node count; a quadratic step shows here as a jump between sizes.
#include <benchmark/benchmark.h>

#include "sim/topology/Builders.hpp"

namespace stepsim {
namespace {

void BM_BuildCluster(benchmark::State& state) {
    const int nodes = static_cast<int>(state.range(0));
    for (auto _ : state) {
        const ClusterGraph g = cluster(hgxH200Node(), nodes);
        benchmark::DoNotOptimize(g.gpuCount());
    }
    state.SetLabel(std::to_string(nodes * 8) + " GPUs");
}
BENCHMARK(BM_BuildCluster)->Arg(16)->Arg(128)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace stepsim
