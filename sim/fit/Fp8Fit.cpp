#include "sim/fit/Fp8Fit.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <string>
#include <vector>

#include "sim/fit/GemmFit.hpp"
#include "sim/fit/RateLine.hpp"
#include "sim/base/Statistics.hpp"

namespace stepsim {

namespace {

using json = nlohmann::json;

struct Fp8Kind {
    std::string kind;
    std::vector<std::string> ops;
};

// Each memory.kernels kind and the fp8_bench.py ops it is fitted on.
const std::vector<Fp8Kind> kFp8Kinds = {
    {"fp8_abs", {"fp8_abs"}},
    {"fp8_amax", {"fp8_amax_tensor"}},
    {"fp8_amax_rows", {"fp8_amax_rows"}},
    {"fp8_amax_cols", {"fp8_amax_cols"}},
    {"fp8_upcast", {"fp8_to_fp32"}},
    {"fp8_scale_mul", {"fp8_scale_mul_tensor", "fp8_scale_mul_rows"}},
    {"fp8_clamp", {"fp8_clamp"}},
    {"fp8_quantize", {"fp8_quantize"}},
    {"fp8_transpose", {"fp8_transpose"}},
    {"fp8_post_scale", {"fp8_post_scale_outer"}},
    {"fp8_post_scale_mul", {"fp8_post_scale_mul"}},
};

// Kernels in each scale-math chain fp8_bench.py times (fp8_linear.to_scale): to(float64), clamp, reciprocal,
// multiply, to(float32); with the power-of-two rounding also log2, floor, exp2.
int scaleChainKernels(const std::string& op) { return op.ends_with("_pow2") ? 8 : 5; }

void fitGemmVariants(FitState& s, json& rj) {
    HardwareProfile& p = s.profile;
    const double peak = p.gpu.peak_tflops_fp8;
    for (const char* scaling : {"tensorwise", "rowwise"})
        for (bool fast : {false, true}) {
            const std::string key = std::string("fp8_") + scaling + (fast ? "_fast_accum" : "");
            std::vector<GemmPoint> pts;
            for (const RawGemm& g : s.raw.gemms)
                if (g.source == "pytorch-scaled-mm" && g.scaling == scaling && g.fast_accum.value_or(false) == fast)
                    pts.push_back({g.m, g.n, g.k, g.tflops});
            if (pts.size() < 4) {
                s.kept.push_back("gemm." + key);
                continue;
            }
            std::vector<GemmPoint> train, test;
            for (std::size_t i = 0; i < pts.size(); ++i) (heldOut(i) ? test : train).push_back(pts[i]);
            const GemmEfficiency trial = fitGemm(train, peak, p.gpu.sms);
            GemmEfficiency e = fitGemm(pts, peak, p.gpu.sms);
            e.points = pts;
            double best = 0;
            for (const GemmPoint& g : pts) best = std::max(best, g.tflops);
            rj["gemm"][key] = {{"points", pts.size()},
                               {"max_efficiency", e.max_efficiency},
                               {"k_half", e.k_half},
                               {"tile", {e.tile_m, e.tile_n}},
                               {"overhead_us", e.overhead_us},
                               {"rel_error", e.rel_error},
                               {"heldout_model_rel_error", gemmModelError(test, trial, peak, p.gpu.sms)},
                               {"heldout_corrected_rel_error", gemmCorrectedError(test, trial, peak, p.gpu.sms)},
                               {"best_tflops", best}};
            p.gemm[key] = e;
        }
    // The same shapes in BF16 (source pytorch-scaled-mm-ref), for the report's FP8-over-BF16 speedups.
    std::vector<double> speedup;
    for (const RawGemm& r : s.raw.gemms) {
        if (r.source != "pytorch-scaled-mm-ref") continue;
        for (const RawGemm& g : s.raw.gemms)
            if (g.source == "pytorch-scaled-mm" && g.scaling == "tensorwise" && g.fast_accum.value_or(false) &&
                g.m == r.m && g.n == r.n && g.k == r.k)
                speedup.push_back(r.time.median / g.time.median);
    }
    if (!speedup.empty())
        rj["gemm"]["tensorwise_fast_accum_over_bf16"] = {
            {"median", median(speedup)},
            {"min", *std::min_element(speedup.begin(), speedup.end())},
            {"max", *std::max_element(speedup.begin(), speedup.end())}};
}

void fitCastKernels(FitState& s, json& rj) {
    HardwareProfile& p = s.profile;
    for (const Fp8Kind& k : kFp8Kinds) {
        std::vector<SizeTime> pts;
        for (const RawKernel& r : s.raw.kernels)
            if (r.bytes && std::find(k.ops.begin(), k.ops.end(), r.op) != k.ops.end())
                pts.push_back({*r.bytes, r.time.median});
        if (pts.size() < 3) {
            s.kept.push_back("memory.kernels." + k.kind);
            continue;
        }
        const RateLine l = fitRate(pts);
        p.memory.kernels[k.kind] = {std::min(1.0, l.gbps / p.gpu.hbm_gbps), std::max(0.0, l.alpha_us)};
        json j = lineJson(l);
        j["efficiency"] = p.memory.kernels[k.kind].efficiency;
        j["ops"] = k.ops;
        rj["kernels"][k.kind] = j;
    }
    std::vector<double> per_kernel;
    for (const RawKernel& r : s.raw.kernels)
        if (r.op.starts_with("fp8_scale_math_scalar")) per_kernel.push_back(r.time.median / scaleChainKernels(r.op));
    if (per_kernel.empty()) {
        s.kept.push_back("memory.kernels.fp8_scale_math");
        return;
    }
    p.memory.kernels["fp8_scale_math"] = {p.memory.read_write_efficiency, median(per_kernel)};
    rj["kernels"]["fp8_scale_math"] = {{"fixed_us", median(per_kernel)}, {"chains", per_kernel.size()}};
}

// The host cost a Float8Linear adds per kernel over a plain Linear timed beside it in the same file (recipe "bf16"):
// (t_fp8 − t_bf16) / (kernels_fp8 − kernels_bf16), forward and backward, so the harness's per-call costs that a
// training step pays once (a backward() call's engine start, the module call) drop out.
void fitHost(FitState& s, json& rj) {
    std::map<std::string, std::vector<double>> fwd, bwd;
    const RawFp8LinearHost* plain = nullptr;
    for (const RawFp8LinearHost& h : s.raw.fp8_linear_host) {
        if (h.recipe == "bf16") {
            plain = &h;
            continue;
        }
        if (!plain || h.forward_kernels <= plain->forward_kernels || h.backward_kernels <= plain->backward_kernels)
            continue;
        fwd[h.recipe].push_back((h.forward_us - plain->forward_us) / (h.forward_kernels - plain->forward_kernels));
        bwd[h.recipe].push_back((h.backward_us - plain->backward_us) / (h.backward_kernels - plain->backward_kernels));
        rj["host"][h.recipe] = {{"forward_us", h.forward_us},
                                {"forward_kernels", h.forward_kernels},
                                {"backward_us", h.backward_us},
                                {"backward_kernels", h.backward_kernels}};
    }
    Fp8LinearHost& out = s.profile.launch.fp8_linear_host_per_kernel;
    for (const auto& [recipe, f, b] : {std::tuple{"tensorwise", &out.tensorwise_forward_us, &out.tensorwise_backward_us},
                                       std::tuple{"rowwise", &out.rowwise_forward_us, &out.rowwise_backward_us}}) {
        if (fwd[recipe].empty()) {
            s.kept.push_back(std::string("launch.fp8_linear_host_per_kernel.") + recipe);
            continue;
        }
        *f = median(fwd[recipe]);
        *b = median(bwd[recipe]);
    }
}

}  // namespace

void fitFp8(FitState& s) {
    json rj = json::object();
    fitGemmVariants(s, rj);
    fitCastKernels(s, rj);
    fitHost(s, rj);
    s.report["fp8"] = rj;
}

}  // namespace stepsim
