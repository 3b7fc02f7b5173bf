// Google Benchmark: building the cluster graph of 128 HGX H200 nodes (1,024 GPUs, 4 scalable units of a rail fat
// tree). The build should stay linear in the node count; a quadratic step shows here as a jump between sizes.
#include <string>

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

// The routes of a collective over every GPU (ClusterGraph.hpp, "Shifted routes"): a fresh cluster of `nodes` HGX H200
// nodes, then each GPU's route to its ring successor and to the same local GPU of the next node (a rail hop), as a
// rail-aligned ring lays them out; at most 3·8² of them are searched (each search over the whole cluster), the rest
// shifted.
void BM_RingRoutes(benchmark::State& state) {
    const int nodes = static_cast<int>(state.range(0));
    for (auto _ : state) {
        state.PauseTiming();
        const ClusterGraph g = cluster(mergedNvSwitches(hgxH200Node()), nodes);
        state.ResumeTiming();
        const int n = g.gpuCount();
        std::size_t links = 0;
        for (int r = 0; r < n; ++r) links += g.route(r, (r + 1) % n).size() + g.route(r, (r + 8) % n).size();
        benchmark::DoNotOptimize(links);
    }
    state.SetLabel(std::to_string(nodes * 8) + " GPUs");
}
BENCHMARK(BM_RingRoutes)->Arg(64)->Arg(512)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace stepsim
