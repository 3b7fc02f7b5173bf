// The GEMM model's alignment term (GemmModel.hpp): a dimension not a multiple of the alignment runs at its row's rate
// for the largest power of two dividing it, the slowest unaligned dimension decides, never faster than aligned.
#include "sim/cost/GemmModel.hpp"

#include <gtest/gtest.h>

namespace stepsim {
namespace {

constexpr double kPeak = 989e12;
constexpr int kSms = 132;

double flops(long m, long n, long k) { return 2.0 * double(m) * double(n) * double(k); }

GemmEfficiency withAlignment() {
    GemmEfficiency e;
    e.max_efficiency = 0.9;
    e.k_half = 256;
    e.overhead_us = 0.0;
    e.unaligned.alignment = 8;
    e.unaligned.rates = {{1, 150.0, 100.0, 140.0}, {2, 270.0, 250.0, 0.0}};
    return e;
}

TEST(GemmAlignment, AlignedShapesKeepTheAlignedTime) {
    const GemmEfficiency e = withAlignment();
    EXPECT_EQ(unalignedGemmSeconds({16384, 50304, 768}, e.unaligned), 0.0);
    EXPECT_DOUBLE_EQ(gemmSeconds({16384, 50304, 768}, e, kPeak, kSms).seconds,
                     alignedGemmSeconds({16384, 50304, 768}, e, kPeak, kSms).seconds);
}

// Odd n (the LM head's forward at vocabulary 50257) takes row 1's n rate; odd k its k rate; odd m its m rate.
TEST(GemmAlignment, EachUnalignedDimensionTakesItsRate) {
    const GemmEfficiency e = withAlignment();
    EXPECT_DOUBLE_EQ(gemmSeconds({16384, 50257, 768}, e, kPeak, kSms).seconds, flops(16384, 50257, 768) / 100e12);
    EXPECT_DOUBLE_EQ(gemmSeconds({16384, 768, 50257}, e, kPeak, kSms).seconds, flops(16384, 768, 50257) / 140e12);
    EXPECT_DOUBLE_EQ(gemmSeconds({50257, 768, 16384}, e, kPeak, kSms).seconds, flops(50257, 768, 16384) / 150e12);
    // Two unaligned dimensions: the slower rate.
    EXPECT_DOUBLE_EQ(unalignedGemmSeconds({50257, 50257, 768}, e.unaligned), flops(50257, 50257, 768) / 100e12);
}

// A multiple of 2 or of 4 (50258, 50260) takes row 2; its unmeasured k takes that row's slowest rate.
TEST(GemmAlignment, MultiplesBelowTheAlignmentTakeTheirRow) {
    const GemmEfficiency e = withAlignment();
    EXPECT_DOUBLE_EQ(unalignedGemmSeconds({16384, 50258, 768}, e.unaligned), flops(16384, 50258, 768) / 250e12);
    EXPECT_DOUBLE_EQ(unalignedGemmSeconds({16384, 50260, 768}, e.unaligned), flops(16384, 50260, 768) / 250e12);
    EXPECT_DOUBLE_EQ(unalignedGemmSeconds({16384, 768, 50260}, e.unaligned), flops(16384, 768, 50260) / 250e12);
    EXPECT_EQ(unalignedGemmSeconds({16384, 768, 50264}, e.unaligned), 0.0);
}

// Never faster than the aligned model: a small unaligned GEMM keeps its aligned (launch-bound) time.
TEST(GemmAlignment, NeverFasterThanAligned) {
    GemmEfficiency e = withAlignment();
    e.overhead_us = 10.0;
    const double aligned = alignedGemmSeconds({64, 63, 64}, e, kPeak, kSms).seconds;
    EXPECT_DOUBLE_EQ(gemmSeconds({64, 63, 64}, e, kPeak, kSms).seconds, aligned);
}

// No measurement (a datasheet profile): every GEMM aligned.
TEST(GemmAlignment, NotMeasuredPricesAsAligned) {
    GemmEfficiency e = withAlignment();
    e.unaligned = {};
    EXPECT_DOUBLE_EQ(gemmSeconds({16384, 50257, 768}, e, kPeak, kSms).seconds,
                     alignedGemmSeconds({16384, 50257, 768}, e, kPeak, kSms).seconds);
}

}  // namespace
}  // namespace stepsim
