// busbw = algbw · factor(kind, n), nccl-tests' convention (nccl-tests doc/PERFORMANCE.md).
#include "sim/base/BusBandwidth.hpp"

#include <gtest/gtest.h>

#include "sim/metrics/Metrics.hpp"
#include "tests/metrics/TestTimeline.hpp"

namespace stepsim {
namespace {

// Expect for n = 8: all_reduce 2·7/8, all_gather / reduce_scatter / alltoall 7/8, broadcast / sendrecv 1.
TEST(BusBandwidth, FactorOfEachCollectiveKind) {
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::all_reduce, 8), 1.75);
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::all_gather, 8), 0.875);
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::reduce_scatter, 8), 0.875);
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::alltoall, 8), 0.875);
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::broadcast, 8), 1.0);
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::sendrecv, 8), 1.0);
}

// A group of one rank moves nothing: the reducing and gathering kinds get factor 0.
TEST(BusBandwidth, SingleRankGroupHasNoBusTraffic) {
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::all_reduce, 1), 0.0);
    EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::all_gather, 1), 0.0);
}

// computeMetrics applies the factor of each kind: one instance of 4e8 bytes taking 1000 µs on 4 ranks has
// algbw 400 GB/s, and busbw 400·f(kind, 4).
TEST(BusBandwidth, MetricsUseTheKindsFactor) {
    for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                                CollectiveKind::alltoall, CollectiveKind::broadcast, CollectiveKind::sendrecv}) {
        test::TestRun t(4);
        t.collective(kind, 0, 4e8, 0, {0, 0, 0, 0}, 1000);
        for (int r = 0; r < 4; ++r) t.steps(r, {2000});
        const Results res = computeMetrics(t.tl, t.wl, 1e15);
        EXPECT_NEAR(res.collectives.algbw_GBps, 400.0, 1e-9);
        EXPECT_NEAR(res.collectives.busbw_GBps, 400.0 * busBandwidthFactor(kind, 4), 1e-9)
            << static_cast<int>(kind);
    }
}

}  // namespace
}  // namespace stepsim
