// Bisection bandwidth: max-flow from the first half of the GPUs to the second (ClusterGraph.hpp).
#include <gtest/gtest.h>

#include "sim/topology/Builders.hpp"

namespace stepsim {
namespace {

// Expectations: one HGX H100 node, GPUs 0–3 → 4–7: 4 × 450 GB/s of NVLink plus the host path, limited by
// the 128 GB/s inter-socket link (GPUs 0–3 hang off CPU 0, 4–7 off CPU 1) = 1928 GB/s.
TEST(Bisection, OneHgxNode) {
    EXPECT_NEAR(*hgxH100().bisectionBandwidth(), 1928e9, 1e3);
}

// Expectations: the PCIe node's halves meet only through switch 0's x16 uplink: 55 GB/s.
TEST(Bisection, PcieNodeIsItsSwitchUplink) {
    EXPECT_NEAR(*pcieNode(8).bisectionBandwidth(), 55e9, 1e3);
}

// Expectations: 2 HGX nodes on a rail-optimized fabric: the halves are the nodes and each rail's traffic
// stays on its leaf, so the bisection is the 8 NICs (8 × 50 GB/s) at oversubscription 1 and 2 alike.
TEST(Bisection, TwoNodesAreBoundByNicsNotOversubscription) {
    NetworkSpec one, two;
    two.oversubscription = 2.0;
    EXPECT_NEAR(*cluster(hgxH100Node(), 2, one).bisectionBandwidth(), 400e9, 1e3);
    EXPECT_NEAR(*cluster(hgxH100Node(), 2, two).bisectionBandwidth(), 400e9, 1e3);
}

// Expectations: 64 nodes = 2 scalable units, the halves are the units, every byte crosses the spines:
// 256 NICs × 50 GB/s = 12.8 TB/s at oversubscription 1, half of it at 2.
TEST(Bisection, OversubscriptionHalvesCrossUnitBisection) {
    NetworkSpec one, two;
    two.oversubscription = 2.0;
    const double full = *cluster(hgxH100Node(), 64, one).bisectionBandwidth();
    const double half = *cluster(hgxH100Node(), 64, two).bisectionBandwidth();
    EXPECT_NEAR(full, 12800e9, 1e4);
    EXPECT_NEAR(half, 6400e9, 1e4);
}

// Expectations: a single GPU has no bisection.
TEST(Bisection, NoneForOneGpu) {
    EXPECT_FALSE(cluster(hgxH100Node(), 1, NetworkSpec{}, 1).bisectionBandwidth());
}

}  // namespace
}  // namespace stepsim
