// Oracle of FP8 training's casts (Fp8Linear.hpp, docs/fp8.md: torchao's Float8Linear in eager mode) under the
// round-number profile (OracleProfile.hpp: memory-bound kernels bytes/H, FP8 GEMMs 2mnk/2P). The case:
// oracleScenario(1) (one GPU, T = 2048 tokens, fp32 parameters under bf16 autocast: activations and gradients
// e_a = 2 bytes, weights e_w = 4), fp8.enabled, each recipe; its Linears (out o × in i): a block's qkv (3h × h),
// attn.proj (h × h), mlp.fc (4h × h), mlp.proj (h × 4h), and the LM head (V × h).
//
// torchao's hp_tensor_to_float8_dynamic of an R×C tensor of e-byte elements, n = R·C: abs (reads e·n, writes e·n), the
// amax reduction (reads e·n: tensorwise a max over the tensor, which for the weight's transposed view w.t() first
// copies it contiguous (2n bytes); rowwise the max of each row or column, writing e per row or column), amax_to_scale
// (to(float64), clamp, reciprocal, multiply, to(float32); rowwise rounds the scale down to a power of two with log2,
// floor, exp2: 5 or 8 kernels of 12 bytes per scale), x.to(float32) when e ≠ 4 ((e + 4)·n), ·scale (8n), the clamp
// (8n), .to(float8) (5n). _scaled_mm: a transposed operand copied into layout first (2 bytes per element), the two
// scales inverted (2 kernels of 12 bytes per scale value; rowwise max(m, n) values); rowwise without fast
// accumulation runs the tensorwise kernel on unit scales (2 fills of 12 bytes), then an M×N post-scale (4MN) and its
// multiply (8MN). Forward: input and weight cast, the output GEMM (T, o, i). Backward: grad_output and weight cast,
// the weight's fp8 copy transposed, grad_input (T, i, o); grad_output and input cast along the other dimension, both
// transposed, grad_weight (o, i, T).
//
// Expectations per Linear (kernels of torchao's casts and scaled_mm besides the GEMMs; bytes of those kernels):
//   tensorwise  an activation cast 11 kernels, 33n + 60 bytes; a weight cast 11 kernels, 35n + 60 bytes;
//               forward 24 kernels, 33·Ti + 35·oi + 144 bytes; backward 51 kernels, 68·To + 35·Ti + 37·oi + 288 bytes;
//               amax reductions 2 forward (2Ti + 4oi bytes) and 4 backward (4To + 2Ti + 4oi)
//   rowwise     an activation cast 14 kernels, 33n + 98·R (its R scales); a weight cast 13 kernels, 33n + 100·R;
//               forward 29 kernels, 33·Ti + 98T + 33·oi + 100o + 24·max(T, o) bytes; backward 70 kernels,
//               66·To + 98T + 98o + 33·oi + 100i + 2oi + 24·max(T, i) + 12·Ti + 24 + 33·Ti + 98i + 2oT + 2Ti
//               + 24·max(o, i) + 12·oi + 24 bytes; amax reductions 2 forward (2Ti + 2T + 4oi + 4o) and 4 backward
//               (2To + 2T + 4oi + 4i + 2To + 2o + 2Ti + 2i)
//   time        every such kernel bytes/H; each of the 3 GEMMs 2·T·o·i / 2P; one GPU's step is its kernels.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "tests/oracles/OracleProfile.hpp"

namespace stepsim::oracles {
namespace {

constexpr double h = 1024, V = 8192, T = 2048;

bool fp8Kind(MemKind k) { return k >= MemKind::fp8_abs && k <= MemKind::fp8_post_scale_mul; }
bool amaxKind(MemKind k) {
    return k == MemKind::fp8_amax || k == MemKind::fp8_amax_rows || k == MemKind::fp8_amax_cols;
}

struct Pass {
    int kernels = 0, amaxes = 0, gemms = 0;
    double bytes = 0, amax_bytes = 0, cast_s = 0, gemm_s = 0, gemm_flops = 0;
};

// Step 1's kernels of Linear `name` in `phase`: torchao's casts and scaled_mm kernels, and the GEMMs.
Pass linearPass(const Program& p, const std::string& name, Phase phase) {
    Pass out;
    for (const Op& op : p.ops) {
        if (op.kind != OpKind::kernel || op.step != 1 || op.phase != phase) continue;
        const std::string& n = p.names[op.name];
        if (n != name && n.rfind(name + " ", 0) != 0) continue;
        if (op.cls == KernelClass::gemm) {
            ++out.gemms;
            out.gemm_s += op.work_s;
            out.gemm_flops += 2.0 * op.gemm.m * op.gemm.n * op.gemm.k;
        } else if (op.cls == KernelClass::memory && fp8Kind(op.mem)) {
            ++out.kernels;
            out.bytes += op.bytes;
            out.cast_s += op.work_s;
            if (amaxKind(op.mem)) ++out.amaxes, out.amax_bytes += op.bytes;
        }
    }
    return out;
}

Simulation run(Fp8Recipe recipe) {
    static const HardwareProfile profile = [] {
        HardwareProfile p = roundProfile();
        for (const char* v : {"fp8_tensorwise_fast_accum", "fp8_rowwise_fast_accum"}) p.gemm[v] = p.gemm["fp8"];
        return p;
    }();
    Scenario sc = oracleScenario(1);
    sc.fp8.enabled = true;
    sc.fp8.recipe = recipe;
    return simulateOn(sc, profile);
}

struct Linear {
    const char* name;
    double o, i;
};
constexpr Linear kBlockLinears[] = {
    {"h.0.attn.qkv", 3 * h, h}, {"h.0.attn.proj", h, h}, {"h.0.mlp.fc", 4 * h, h}, {"h.3.mlp.proj", h, 4 * h}};
constexpr Linear kLmHead = {"lm_head", V, h};

void expectTimes(const Pass& pass, double o, double i) {
    EXPECT_EQ(pass.gemms, pass.kernels > 30 ? 2 : 1);
    EXPECT_NEAR(pass.cast_s, pass.bytes / kHbm, 1e-9 * pass.cast_s);
    EXPECT_NEAR(pass.gemm_flops, pass.gemms * 2 * T * o * i, 1e-9 * pass.gemm_flops);
    EXPECT_NEAR(pass.gemm_s, pass.gemm_flops / (2 * kPeak), 1e-9 * pass.gemm_s);
}

void expectTensorwise(const Program& p, const Linear& l) {
    {
        SCOPED_TRACE(l.name);
        const double o = l.o, i = l.i;
        const Pass f = linearPass(p, l.name, Phase::forward), b = linearPass(p, l.name, Phase::backward);
        EXPECT_EQ(f.kernels, 24);
        EXPECT_DOUBLE_EQ(f.bytes, 33 * T * i + 35 * o * i + 144);
        EXPECT_EQ(f.amaxes, 2);
        EXPECT_DOUBLE_EQ(f.amax_bytes, 2 * T * i + 4 * o * i);
        EXPECT_EQ(b.kernels, 51);
        EXPECT_DOUBLE_EQ(b.bytes, 68 * T * o + 35 * T * i + 37 * o * i + 288);
        EXPECT_EQ(b.amaxes, 4);
        EXPECT_DOUBLE_EQ(b.amax_bytes, 4 * T * o + 2 * T * i + 4 * o * i);
        expectTimes(f, o, i);
        expectTimes(b, o, i);
    }
}

void expectRowwise(const Program& p, const Linear& l) {
    {
        SCOPED_TRACE(l.name);
        const double o = l.o, i = l.i;
        const Pass f = linearPass(p, l.name, Phase::forward), b = linearPass(p, l.name, Phase::backward);
        EXPECT_EQ(f.kernels, 29);
        EXPECT_DOUBLE_EQ(f.bytes, 33 * T * i + 98 * T + 33 * o * i + 100 * o + 24 * std::max(T, o));
        EXPECT_EQ(f.amaxes, 2);
        EXPECT_DOUBLE_EQ(f.amax_bytes, 2 * T * i + 2 * T + 4 * o * i + 4 * o);
        EXPECT_EQ(b.kernels, 70);
        const double grad_input = 33 * T * o + 98 * T + 33 * o * i + 100 * i + 2 * o * i + 24 * std::max(T, i) +
                                  12 * T * i + 24;
        const double grad_weight = 33 * T * o + 98 * o + 33 * T * i + 98 * i + 2 * o * T + 2 * T * i +
                                   24 * std::max(o, i) + 12 * o * i + 24;
        EXPECT_DOUBLE_EQ(b.bytes, grad_input + grad_weight);
        EXPECT_EQ(b.amaxes, 4);
        EXPECT_DOUBLE_EQ(b.amax_bytes,
                         (2 * T * o + 2 * T) + (4 * o * i + 4 * i) + (2 * T * o + 2 * o) + (2 * T * i + 2 * i));
        expectTimes(f, o, i);
        expectTimes(b, o, i);
    }
}

TEST(Fp8Oracle, TensorwiseCastsAndAmaxesPerBlockLinear) {
    const Simulation sim = run(Fp8Recipe::tensorwise);
    for (const Linear& l : kBlockLinears) expectTensorwise(sim.expansion.workload.programs[0], l);
}

TEST(Fp8Oracle, RowwiseCastsAndAmaxesPerBlockLinear) {
    const Simulation sim = run(Fp8Recipe::rowwise);
    for (const Linear& l : kBlockLinears) expectRowwise(sim.expansion.workload.programs[0], l);
}

// convert_to_float8_training swaps the LM head (V × h, multiples of 16) for a Float8Linear (Fp8Linear.hpp): its
// forward as well as its backward carries the casts and runs its GEMM at the FP8 rate. (Written while the forward
// was still autocast's weight cast and a BF16 GEMM; it failed then.)
TEST(Fp8Oracle, TheLmHeadIsAFloat8LinearForwardAsWellAsBackward) {
    expectTensorwise(run(Fp8Recipe::tensorwise).expansion.workload.programs[0], kLmHead);
    expectRowwise(run(Fp8Recipe::rowwise).expansion.workload.programs[0], kLmHead);
}

TEST(Fp8Oracle, OneGpuStepIsItsKernels) {
    for (Fp8Recipe r : {Fp8Recipe::tensorwise, Fp8Recipe::rowwise}) {
        const Simulation sim = run(r);
        const Program& p = sim.expansion.workload.programs[0];
        const double ops = double(std::count_if(p.ops.begin(), p.ops.end(), [](const Op& op) { return op.step == 1; }));
        EXPECT_NEAR(sim.results.step_time_ms, kernelSeconds(p, 1) * 1e3, ops * 1e-9);
    }
}

}  // namespace
}  // namespace stepsim::oracles
