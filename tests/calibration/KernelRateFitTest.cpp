// What the fit takes for GEMMs, the optimizer and the norms (sim/fit/ProfileFit.hpp): PyTorch's own GEMM
// calls over the transformer grid before the harness's cuBLASLt points, the optimizer's rate from GPT models' tensors
// in the state a step runs it in, and the norms' kernels as a grid of sizes.
#include <algorithm>
#include <functional>

#include <gtest/gtest.h>

#include "sim/fit/ProfileFit.hpp"
#include "sim/fit/RawData.hpp"
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

// FP16 GEMMs measured over the grid make the profile's gemm.fp16 (6% slower here, as
// raw/gemm_training_shapes_fp16.jsonl measured them against BF16 on H200), which fp16 autocast's GEMMs are
// priced at; without them fp16 falls back to gemm.bf16.
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

RawKernel kernel(const std::string& op, double bytes, double us) {
    RawKernel k;
    k.op = op;
    k.bytes = bytes;
    k.time.median = us;
    return k;
}

// The fused AdamW's rate comes from its step over GPT models' tensors after GEMMs at the power limit
// (adamw_fused_step_gpt_heated); the bench's older rested 16 Mi-chunk records (adamw_fused_step) run faster and stay
// out. Parameters: raw/torch_adamw_gpt.jsonl's 0.16-2.0B models at 3.23-3.38 TB/s; the old points 3.48.
TEST(KernelRateFit, OptimizerRateFromTheStepsState) {
    RawData raw;
    for (auto [params, us] : {std::pair{163895808.0, 1421.5}, {407431168.0, 3459.3}, {814542848.0, 6855.4},
                              {1418842112.0, 11804.7}, {2031525888.0, 16851.5}})
        raw.kernels.push_back(kernel("adamw_fused_step_gpt_heated", 28.0 * params, us));
    for (auto [params, us] : {std::pair{1e7, 81.1}, {1e8, 801.0}, {1e9, 8057.5}})
        raw.kernels.push_back(kernel("adamw_fused_step", 28.0 * params, us));
    const HardwareProfile p = fitProfile(raw, HardwareProfile{}, "t", "test").profile;
    const auto& o = p.memory.kernels.at("optimizer");
    const double us = o.fixed_us + 28.0 * 1418842112.0 / (p.gpu.hbm_gbps * o.efficiency * 1e3);
    EXPECT_NEAR(us, 11804.7, 0.01 * 11804.7);
}

// The foreach step is fitted whole and launched as eight passes: each pass's fixed cost is an eighth of the step's,
// so the eight passes over a model's parameters add up to the measured step.
TEST(KernelRateFit, ForeachFixedCostIsSharedByItsPasses) {
    RawData raw;
    for (auto [params, us] : {std::pair{163895808.0, 2297.7}, {407431168.0, 5528.3}, {814542848.0, 10746.3},
                              {1418842112.0, 18633.5}, {2031525888.0, 26512.8}})
        raw.kernels.push_back(kernel("adamw_foreach_step_bf16_gpt", 40.0 * params, us));
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const auto& k = r.profile.memory.kernels.at("optimizer_foreach_bf16");
    const double whole = r.report.at("memory_kernels").at("optimizer_foreach_bf16").at("alpha_us").get<double>();
    EXPECT_NEAR(k.fixed_us, whole / 8, 1e-9);
    const double eight = 8 * k.fixed_us + 40.0 * 1418842112.0 / (r.profile.gpu.hbm_gbps * k.efficiency * 1e3);
    EXPECT_NEAR(eight, 18633.5, 0.02 * 18633.5);
}

RawKernel norm(const std::string& op, long tokens, long hidden, double us) {
    RawKernel k = kernel(op, 0.0, us);
    k.tokens = tokens;
    k.hidden = hidden;
    return k;
}

// The norms' grid: at each size the median over the records (two machine starts here), a size kept only where all
// three kernels were timed; a norm and dtype never measured keeps the base profile's grid.
TEST(KernelRateFit, NormGridFromTheBenchsKernels) {
    RawData raw;
    for (double f : {1.0, 1.02}) {
        raw.kernels.push_back(norm("layer_norm_fwd_fp32", 8192, 768, 28.5 * f));
        raw.kernels.push_back(norm("layer_norm_bwd_fp32", 8192, 768, 23.8 * f));
        raw.kernels.push_back(norm("layer_norm_bwd_weight_fp32", 8192, 768, 39.0 * f));
    }
    raw.kernels.push_back(norm("layer_norm_fwd_fp32", 8192, 2048, 52.8));  // no backward timed at this size
    HardwareProfile base;
    base.memory.norms.rms_bf16 = {{2048, 768, 6.9, 7.2, 9.6}};
    const ProfileFitResult r = fitProfile(raw, base, "t", "test");
    const NormGrid& g = r.profile.memory.norms;
    ASSERT_EQ(g.layer_fp32.size(), 1u);
    EXPECT_EQ(g.layer_fp32[0].tokens, 8192);
    EXPECT_EQ(g.layer_fp32[0].hidden, 768);
    EXPECT_NEAR(g.layer_fp32[0].forward_us, 28.5 * 1.01, 1e-9);
    EXPECT_NEAR(g.layer_fp32[0].weight_grad_us, 39.0 * 1.01, 1e-9);
    EXPECT_TRUE(g.layer_bf16.empty());
    ASSERT_EQ(g.rms_bf16.size(), 1u);
    const auto& kept = r.report.at("kept_from_base");
    EXPECT_NE(std::find(kept.begin(), kept.end(), "memory.norms.rms_bf16"), kept.end());
}

}  // namespace
}  // namespace stepsim
