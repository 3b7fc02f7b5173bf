// DDP bucket assignment against PyTorch's rules, on parameter lists whose buckets are written out by hand.
#include "sim/workload/DdpBuckets.hpp"

#include <gtest/gtest.h>

namespace stepsim {
namespace {

constexpr double MiB = 1024.0 * 1024.0;

std::vector<GradParam> sizes(std::initializer_list<double> mib) {
    std::vector<GradParam> v;
    int i = 0;
    for (double m : mib) v.push_back({"p" + std::to_string(i++), m * MiB, "fp32"});
    return v;
}
std::vector<std::vector<std::size_t>> indices(const std::vector<Bucket>& b) {
    std::vector<std::vector<std::size_t>> out;
    for (const Bucket& x : b) out.push_back(x.params);
    return out;
}

// Ready order sizes (MiB): 0.5, 0.25, 0.5, 10, 10, 10, 3 with limits 1 MiB then 25 MiB.
// First bucket closes when it reaches ≥ 1 MiB: {0, 1, 2} (1.25 MiB). Then 10+10+10 = 30 ≥ 25 closes {3, 4, 5};
// the rest {6} is the last bucket.
TEST(DdpBuckets, FirstBucketCappedAtOneMiBThenBucketCap) {
    auto b = assignBuckets(sizes({0.5, 0.25, 0.5, 10, 10, 10, 3}), 1 * MiB, 25 * MiB);
    EXPECT_EQ(indices(b), (std::vector<std::vector<std::size_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
    EXPECT_DOUBLE_EQ(b[0].bytes, 1.25 * MiB);
}

// A parameter larger than the cap is never split: it fills a bucket alone.
TEST(DdpBuckets, LargeParameterIsNeverSplit) {
    auto b = assignBuckets(sizes({100, 2, 30}), 1 * MiB, 25 * MiB);
    EXPECT_EQ(indices(b), (std::vector<std::vector<std::size_t>>{{0}, {1, 2}}));
    EXPECT_DOUBLE_EQ(b[0].bytes, 100 * MiB);
}

// Exactly reaching the limit closes the bucket (size ≥ limit).
TEST(DdpBuckets, BucketClosesWhenItReachesTheLimit) {
    auto b = assignBuckets(sizes({1, 25, 1}), 1 * MiB, 25 * MiB);
    EXPECT_EQ(indices(b), (std::vector<std::vector<std::size_t>>{{0}, {1}, {2}}));
}

// Different dtypes never share a bucket.
TEST(DdpBuckets, DtypesAreBucketedSeparately) {
    std::vector<GradParam> p = {{"a", 0.5 * MiB, "fp32"}, {"b", 0.5 * MiB, "bf16"}, {"c", 0.6 * MiB, "fp32"}};
    auto b = assignBuckets(p, 1 * MiB, 25 * MiB);
    EXPECT_EQ(indices(b), (std::vector<std::vector<std::size_t>>{{0, 2}, {1}}));
}

// With infinite limits (DDP's first iteration) everything is one bucket.
TEST(DdpBuckets, InfiniteLimitMakesOneBucket) {
    const double inf = std::numeric_limits<double>::infinity();
    auto b = assignBuckets(sizes({1, 2, 3}), inf, inf);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].params.size(), 3u);
}

}  // namespace
}  // namespace stepsim
