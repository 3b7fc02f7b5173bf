// A ring all-reduce moves 2(n−1)/n of its size S over every hop of the ring (reduce-scatter then all-gather, n−1
// chunks of S/n each; nccl-tests' bus factor), end to end: the cost model's estimate for NCCL's ring (its factor)
// laid out as the flows the engine starts (CollectiveAlgorithms' ring). On one node each rank sends its hop; across
// nodes a node-crossing hop is split over the rails (each GPU of the node sends 1/gpus of it), so the flows' total
// and the bytes leaving each node are what hold.
#include <map>
#include <numeric>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/cost/CostModel.hpp"
#include "sim/net/CollectiveAlgorithms.hpp"
#include "sim/scenario/ClusterBuild.hpp"
#include "sim/scenario/ProfileYaml.hpp"

namespace stepsim {
namespace {

// The flows of the ring all-reduce of `bytes` on `nodes` x `gpus` GPUs.
std::vector<FlowSpec> ringAllReduce(int nodes, int gpus, double bytes) {
    ClusterSpec c;
    c.nodes = nodes;
    c.gpus_per_node = gpus;
    NcclSpec nccl;
    nccl.algo = NcclAlgo::ring;
    const HardwareProfile profile = resolveProfile(c, "");
    const CostModel cost(profile, nccl, /*nvswitch=*/true, c.network);
    const Fabric fabric = clusterFabric(c, "");
    const int n = nodes * gpus;
    const CollectiveEstimate est = cost.collective(CollectiveKind::all_reduce, n, nodes, bytes);
    std::vector<int> ranks(static_cast<std::size_t>(n));
    std::iota(ranks.begin(), ranks.end(), 0);
    return collectiveFlows(CollectiveKind::all_reduce, "Ring", ranks, fabric, bytes, est.busbw_Bps, est.factor);
}

constexpr double kS = 256.0 * 1024 * 1024;

void expectEachRankSendsTwoNMinusOneOverN(int gpus) {
    const int n = gpus;
    std::map<int, double> sent;
    for (const FlowSpec& f : ringAllReduce(1, gpus, kS)) sent[f.src] += f.bytes;
    ASSERT_EQ(sent.size(), static_cast<std::size_t>(n));  // every rank sends
    for (const auto& [rank, b] : sent) EXPECT_NEAR(b, 2.0 * (n - 1) / n * kS, 1e-6 * kS) << "rank " << rank;
}

TEST(RingAllReduceBytes, TwoGpusEachSendTwoNMinusOneOverN) { expectEachRankSendsTwoNMinusOneOverN(2); }
TEST(RingAllReduceBytes, FourGpusEachSendTwoNMinusOneOverN) { expectEachRankSendsTwoNMinusOneOverN(4); }
TEST(RingAllReduceBytes, EightGpusEachSendTwoNMinusOneOverN) { expectEachRankSendsTwoNMinusOneOverN(8); }

TEST(RingAllReduceBytes, AcrossNodesTheFlowsCarryTwoNMinusOneOverNPerHop) {
    const int nodes = 2, gpus = 8, n = nodes * gpus;
    const auto flows = ringAllReduce(nodes, gpus, kS);
    ASSERT_FALSE(flows.empty());
    double total = 0.0;
    std::map<int, double> leaving;  // node -> bytes sent to the other node
    for (const FlowSpec& f : flows) {
        total += f.bytes;
        if (f.src / gpus != f.dst / gpus) leaving[f.src / gpus] += f.bytes;
    }
    EXPECT_NEAR(total, n * 2.0 * (n - 1) / n * kS, 1e-6 * kS);
    ASSERT_EQ(leaving.size(), 2u);  // one hop leaves each node
    for (const auto& [node, b] : leaving) EXPECT_NEAR(b, 2.0 * (n - 1) / n * kS, 1e-6 * kS) << "node " << node;
}

}  // namespace
}  // namespace stepsim
