// A GEMM's own slowdown beside NCCL, looked up by shape when the kernel is priced.
#include "sim/cost/CostModel.hpp"
#include "sim/cost/GemmModel.hpp"

#include <gtest/gtest.h>

namespace stepsim {
namespace {

Op gemmOp(long m, long n, long k) {
    Op op;
    op.cls = KernelClass::gemm;
    op.gemm = {m, n, k};
    return op;
}

HardwareProfile withShapes() {
    HardwareProfile p;
    p.interference.gemm_by_shape = {{8192, 2048, 2048, 1.42}, {2048, 2048, 8192, 1.86}, {8192, 8192, 2048, 1.2}};
    return p;
}

// The measured shape itself, then the nearest in log-shape within a factor 2 on every dimension.
TEST(GemmSlowdown, PricingTakesTheNearestMeasuredShape) {
    const HardwareProfile p = withShapes();
    const CostModel cost(p, NcclSpec{}, false);
    for (auto [m, n, k, want] : {std::tuple{8192L, 2048L, 2048L, 1.42}, std::tuple{2048L, 2048L, 8192L, 1.86},
                                 std::tuple{6144L, 2048L, 2560L, 1.42}, std::tuple{8192L, 6144L, 2048L, 1.2},
                                 std::tuple{4096L, 2048L, 6144L, 1.86}}) {
        Op op = gemmOp(m, n, k);
        cost.price(op, DType::bf16);
        EXPECT_FLOAT_EQ(op.beside_nccl, float(want)) << m << "x" << n << "x" << k;
        EXPECT_GT(op.work_s, 0.0);
    }
}

// More than a factor 2 from every measured shape on some dimension: the class's factor applies (0).
TEST(GemmSlowdown, NoShapeNearLeavesTheClassFactor) {
    const HardwareProfile p = withShapes();
    const CostModel cost(p, NcclSpec{}, false);
    Op op = gemmOp(8192, 768, 768);
    cost.price(op, DType::bf16);
    EXPECT_EQ(op.beside_nccl, 0.0f);
    const HardwareProfile empty;
    const CostModel bare(empty, NcclSpec{}, false);
    Op plain = gemmOp(8192, 2048, 2048);
    bare.price(plain, DType::bf16);
    EXPECT_EQ(plain.beside_nccl, 0.0f);
}

// The gap before a GEMM, by shape, in seconds; none near: the class's (0).
TEST(GemmSlowdown, PricingTakesTheGemmsOwnGap) {
    HardwareProfile p = withShapes();
    p.launch.gemm_gap_by_shape = {{8192, 2048, 2048, 3.27}, {8192, 768, 768, 1.63}};
    const CostModel cost(p, NcclSpec{}, false);
    Op a = gemmOp(8192, 2048, 2560), b = gemmOp(8192, 1024, 768), c = gemmOp(512, 512, 512);
    for (Op* op : {&a, &b, &c}) cost.price(*op, DType::bf16);
    EXPECT_FLOAT_EQ(a.gap_s, 3.27e-6f);
    EXPECT_FLOAT_EQ(b.gap_s, 1.63e-6f);
    EXPECT_EQ(c.gap_s, 0.0f);
}

TEST(GemmSlowdown, NearestShapeIsTheClosestInLogShape) {
    const std::vector<GemmPoint> pts = {{1024, 1024, 1024, 1}, {2048, 2048, 2048, 2}, {4096, 4096, 4096, 3}};
    EXPECT_EQ(nearestShape(pts, {1400, 1400, 1400})->tflops, 1);
    EXPECT_EQ(nearestShape(pts, {1500, 1500, 1500})->tflops, 2);
    EXPECT_EQ(nearestShape(pts, {9000, 4096, 4096}), nullptr);
    EXPECT_EQ(nearestShape(std::vector<GemmPoint>{}, {1024, 1024, 1024}), nullptr);
}

}  // namespace
}  // namespace stepsim
