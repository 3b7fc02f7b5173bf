// The norms' kernels priced from the profile's measured grid (CostModel::normSeconds, normGridUs): the measured
// sizes exactly, log-log interpolation between them, the edge slope carried on beyond, and the memory kinds when a
// norm's grid is empty.
#include <cmath>

#include <gtest/gtest.h>

#include "sim/cost/CostModel.hpp"

namespace stepsim {
namespace {

// LayerNorm fp32's kernels on H200 (forward, input gradient, weight gradient, µs, rounded) at 4096 and 8192 rows,
// hidden 768 and 2048, as calibration/pytorch/stepsim_torch_bench.py --groups norms timed them (the h200x2 profile's
// raw/torch_norms_*.jsonl).
std::vector<NormPoint> grid() {
    return {{4096, 768, 15.5, 11.3, 15.5}, {4096, 2048, 31.3, 37.0, 26.1}, {8192, 768, 28.5, 23.8, 39.0},
            {8192, 2048, 52.8, 69.4, 46.3}};
}

TEST(NormGrid, MeasuredSizesPriceExactly) {
    bool in = false;
    EXPECT_DOUBLE_EQ(normGridUs(grid(), &NormPoint::weight_grad_us, 8192, 768, &in), 39.0);
    EXPECT_TRUE(in);
    EXPECT_DOUBLE_EQ(normGridUs(grid(), &NormPoint::forward_us, 4096, 2048), 31.3);
}

// Between sizes: linear in log time over log rows (and log hidden).
TEST(NormGrid, InterpolatesInLogLog) {
    const double mid = std::sqrt(4096.0 * 8192.0);
    EXPECT_NEAR(normGridUs(grid(), &NormPoint::weight_grad_us, mid, 768), std::sqrt(15.5 * 39.0), 1e-9);
    const double both = normGridUs(grid(), &NormPoint::backward_us, mid, std::sqrt(768.0 * 2048.0));
    EXPECT_NEAR(both, std::pow(11.3 * 37.0 * 23.8 * 69.4, 0.25), 1e-9);
}

// Beyond the grid the edge segment's slope carries on, held between 0 and 1: the weight-gradient kernel grows
// 2.5× from 4096 to 8192 rows at hidden 768 (slope 1.33), so past 8192 it grows in proportion; below 4096 rows
// the same held slope; out of domain past a factor 2.
TEST(NormGrid, ExtrapolatesWithTheEdgeSlopeHeld) {
    bool in = true;
    EXPECT_NEAR(normGridUs(grid(), &NormPoint::weight_grad_us, 32768, 768, &in), 39.0 * 4, 1e-9);
    EXPECT_FALSE(in);
    EXPECT_NEAR(normGridUs(grid(), &NormPoint::weight_grad_us, 2048, 768, &in), 15.5 / 2, 1e-9);
    EXPECT_TRUE(in);
    // At hidden 768 → 2048 the forward grows less than in proportion (slope 0.63): kept beyond 2048.
    const double s = std::log(52.8 / 28.5) / std::log(2048.0 / 768);
    EXPECT_NEAR(normGridUs(grid(), &NormPoint::forward_us, 8192, 4096), 52.8 * std::pow(2.0, s), 1e-9);
}

// A grid missing a corner of the cell around the query (not a full rows × hidden grid): the nearest measured size in
// log size, scaled by the elements; out of domain past a factor 2 from it.
TEST(NormGrid, IrregularGridTakesTheNearestSizeScaled) {
    std::vector<NormPoint> g = grid();
    g.pop_back();  // no 8192 × 2048
    bool in = false;
    EXPECT_NEAR(normGridUs(g, &NormPoint::forward_us, 8192, 1536, &in), 28.5 * 2, 1e-9);  // from 8192 × 768
    EXPECT_TRUE(in);
    normGridUs(g, &NormPoint::forward_us, 32768, 8192, &in);
    EXPECT_FALSE(in);
}

Op normOp(MemKind kind, long rows, long hidden, long elem) {
    Op op;
    op.cls = KernelClass::memory;
    op.mem = kind;
    op.gemm = {rows, hidden, elem};
    op.bytes = 2.0 * elem * rows * hidden;
    return op;
}

// The op's norm and dtype pick the grid (fp32: 4-byte elements; 16-bit ones the bf16 grid); a norm whose grid is
// empty is priced by its kind, an RMSNorm kind or the weight gradient taking the LayerNorm backward's rate when the
// profile lists no rate of its own.
TEST(NormGrid, OpsPickTheirGridOrFallBackToTheirKind) {
    HardwareProfile p;
    p.gpu.hbm_gbps = 4800;
    p.memory.min_kernel_us = 1.0;
    p.memory.norms.layer_fp32 = grid();
    p.memory.kernels["norm_backward"] = {0.5, 4.0};
    const CostModel cost(p, NcclSpec{}, true);
    Op op = normOp(MemKind::norm_weight_grad, 8192, 768, 4);
    ASSERT_TRUE(cost.price(op, DType::bf16));
    EXPECT_NEAR(op.work_s, 39.0e-6, 1e-12);
    for (MemKind k : {MemKind::rms_weight_grad, MemKind::norm_weight_grad}) {
        Op other = normOp(k, 8192, 768, k == MemKind::rms_weight_grad ? 4 : 2);  // rms_fp32, layer_bf16: empty
        cost.price(other, DType::bf16);
        EXPECT_NEAR(other.work_s, 4.0e-6 + other.bytes / (4800e9 * 0.5), 1e-12) << memKindName(k);
    }
}

}  // namespace
}  // namespace stepsim
