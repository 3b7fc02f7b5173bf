// What the fit takes for GEMMs and the fused optimizer (calibration/fit/ProfileFit.hpp): PyTorch's own GEMM calls
// over the transformer grid before the harness's cuBLASLt points, and the optimizer's rate from the sizes a
// training step runs it at.
#include <algorithm>
#include <functional>

#include <gtest/gtest.h>

#include "calibration/fit/ProfileFit.hpp"
#include "calibration/fit/RawData.hpp"
#include "sim/cost/GemmModel.hpp"

namespace stepsim {
namespace {

RawGemm gemm(const std::string& source, long m, long n, long k, double tflops, const std::string& dtype = "bf16") {
    RawGemm g;
    g.source = source;
    g.dtype = dtype;
    g.m = m, g.n = n, g.k = k;
    g.tflops = tflops;
    g.time.median = 2.0 * double(m) * double(n) * double(k) / (tflops * 1e6);
    return g;
}

// A small transformer grid (tokens × hidden, three forms each) and a rate per shape that grows with the width.
void forGrid(const std::function<void(long, long, long, double)>& add) {
    for (long t : {2048L, 4096L, 8192L})
        for (long h : {1024L, 2048L, 4096L})
            for (auto [m, n, k] : {std::tuple{t, 3 * h, h}, std::tuple{t, h, 4 * h}, std::tuple{h, 4 * h, t}})
                add(m, n, k, 600.0 + 20.0 * double(h / 1024));
}

// The same grid measured twice, the harness 15% slower than PyTorch's calls: the profile prices the grid's
// shapes at PyTorch's rate, and the report names the source.
TEST(KernelRateFit, PyTorchGridGemmsBeforeTheHarness) {
    RawData raw;
    forGrid([&](long m, long n, long k, double r) {
        raw.gemms.push_back(gemm("stepsim-bench", m, n, k, r / 1.15));
        raw.gemms.push_back(gemm("pytorch-step", m, n, k, r));
    });
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    EXPECT_EQ(r.report.at("gemm").at("bf16").at("source"), "pytorch-step");
    const HardwareProfile& p = r.profile;
    const GemmEstimate e = gemmSeconds({8192, 6144, 2048}, p.gemm.at("bf16"), p.gpu.peak_tflops_bf16 * 1e12, p.gpu.sms);
    EXPECT_NEAR(2.0 * 8192.0 * 6144 * 2048 / e.seconds / 1e12, 640.0, 0.5);  // the measured point, PyTorch's rate
}

// FP16 GEMMs measured over the grid make the profile's gemm.fp16 (6% slower here, as run 83 measured them against
// BF16 on H200), which fp16 autocast's GEMMs are priced at; without them fp16 falls back to gemm.bf16.
TEST(KernelRateFit, Fp16GemmsGetTheirOwnRates) {
    RawData raw;
    forGrid([&](long m, long n, long k, double r) {
        raw.gemms.push_back(gemm("pytorch-step", m, n, k, r));
        raw.gemms.push_back(gemm("pytorch-step", m, n, k, r / 1.06, "fp16"));
    });
    const HardwareProfile p = fitProfile(raw, HardwareProfile{}, "t", "test").profile;
    ASSERT_EQ(p.gemm.count("fp16"), 1u);
    const double flop = 2.0 * 8192.0 * 6144 * 2048;
    const double bf = gemmSeconds({8192, 6144, 2048}, p.gemm.at("bf16"), p.gpu.peak_tflops_bf16 * 1e12, p.gpu.sms).seconds;
    const double fp = gemmSeconds({8192, 6144, 2048}, p.gemm.at("fp16"), p.gpu.peak_tflops_fp16 * 1e12, p.gpu.sms).seconds;
    EXPECT_NEAR(flop / bf / 1e12, 640.0, 0.5);
    EXPECT_NEAR(flop / fp / 1e12, 640.0 / 1.06, 0.5);
    raw.gemms.erase(std::remove_if(raw.gemms.begin(), raw.gemms.end(), [](const RawGemm& g) { return g.dtype == "fp16"; }),
                    raw.gemms.end());
    EXPECT_EQ(fitProfile(raw, HardwareProfile{}, "t", "test").profile.gemm.count("fp16"), 0u);
}

RawKernel adamw(double params, double us) {
    RawKernel k;
    k.op = "adamw_fused_step";
    k.dtype = "fp32";
    k.bytes = 28.0 * params;
    k.time.median = us;
    return k;
}

// A step's fused AdamW covers every parameter at once; the 1M-parameter point, dominated by a fixed cost, stays
// out of the line (with it the rate came out 3.85 TB/s against the 3.48 the large steps ran at).
TEST(KernelRateFit, OptimizerRateFromTrainingSizedSteps) {
    RawData raw;
    raw.kernels = {adamw(1e6, 32.1), adamw(1e7, 81.1), adamw(1e8, 801.0), adamw(1e9, 8057.5)};
    const HardwareProfile p = fitProfile(raw, HardwareProfile{}, "t", "test").profile;
    const auto& o = p.memory.kernels.at("optimizer");
    const double us = o.fixed_us + 28e9 / (p.gpu.hbm_gbps * o.efficiency * 1e3);
    EXPECT_NEAR(us, 8057.5, 0.02 * 8057.5);
    EXPECT_LT(o.fixed_us, 5.0);
}

}  // namespace
}  // namespace stepsim
