#include "sim/fit/CompileFit.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

bool isMaxAutotune(const std::string& mode) { return mode == "max-autotune" || mode == "max-autotune-no-cudagraphs"; }

// The median over the blocks of `mode_test` of f(block); nullopt-like 0 when there are none.
double medianOver(const std::vector<RawCompileBlock>& blocks, const std::function<bool(const std::string&)>& mode_test,
                  const std::function<double(const RawCompileBlock&)>& f) {
    std::vector<double> v;
    for (const auto& b : blocks)
        if (mode_test(b.mode)) v.push_back(f(b));
    return v.empty() ? 0.0 : median(v);
}

void fitKernels(FitState& s, json& cj) {
    CompileRates& c = s.profile.compile;
    const auto& blocks = s.raw.compile_blocks;
    auto isDefault = [](const std::string& m) { return m == "default"; };
    std::size_t n_default = 0;
    for (const auto& b : blocks) n_default += isDefault(b.mode) ? 1 : 0;
    if (n_default == 0) throw inputError("the raw measurements", 0, "compile_block",
                                        "records without a default-mode block (the fit needs one)");
    c.forward.kernels_per_region = medianOver(blocks, isDefault, [](const RawCompileBlock& b) {
        return b.compiled_forward.other / b.eager_forward.regions;
    });
    c.backward.kernels_per_region = medianOver(blocks, isDefault, [](const RawCompileBlock& b) {
        return b.compiled_backward.other / b.eager_backward.regions;
    });
    c.forward.time_ratio = medianOver(blocks, isDefault, [](const RawCompileBlock& b) {
        return b.compiled_forward.other_ms / b.eager_forward.other_ms;
    });
    c.backward.time_ratio = medianOver(blocks, isDefault, [](const RawCompileBlock& b) {
        return b.compiled_backward.other_ms / b.eager_backward.other_ms;
    });
    auto gemmRatio = [](const RawCompileBlock& b) {
        return (b.compiled_forward.gemm_ms + b.compiled_backward.gemm_ms) / (b.eager_forward.gemm_ms + b.eager_backward.gemm_ms);
    };
    c.gemm_time_ratio = medianOver(blocks, isDefault, gemmRatio);
    c.compile_s_per_block = medianOver(blocks, isDefault, [](const RawCompileBlock& b) { return b.compile_s; });
    const double mat = medianOver(blocks, isMaxAutotune, gemmRatio);
    if (mat > 0) {
        c.gemm_time_ratio_max_autotune = mat;
        c.compile_s_per_block_max_autotune =
            medianOver(blocks, isMaxAutotune, [](const RawCompileBlock& b) { return b.compile_s; });
    } else {
        s.kept.push_back("compile.gemm_time_ratio_max_autotune");
        s.kept.push_back("compile.compile_s_per_block_max_autotune");
    }
    json per = json::array();
    for (const auto& b : blocks)
        per.push_back({{"mode", b.mode}, {"mlp", b.mlp}, {"norm", b.norm}, {"dtype", b.dtype}, {"hidden", b.hidden},
                       {"forward_kernels_per_region", b.compiled_forward.other / b.eager_forward.regions},
                       {"backward_kernels_per_region", b.compiled_backward.other / b.eager_backward.regions},
                       {"forward_time_ratio", b.compiled_forward.other_ms / b.eager_forward.other_ms},
                       {"backward_time_ratio", b.compiled_backward.other_ms / b.eager_backward.other_ms},
                       {"gemm_time_ratio", gemmRatio(b)}, {"compile_s", b.compile_s}});
    cj["blocks"] = per;
}

// reduce-overhead's line host = graphs·g + k·kernels by least squares over its records (two unknowns: g, k).
void fitHost(FitState& s, json& cj) {
    CompileRates& c = s.profile.compile;
    double sxx = 0, sxy = 0, sx = 0, sy = 0, n = 0, graphs = 0;
    for (const auto& h : s.raw.compile_host)
        if (h.mode == "reduce-overhead") {
            sx += h.kernels, sy += h.host_us, sxx += h.kernels * h.kernels, sxy += h.kernels * h.host_us, n += 1;
            graphs = h.graphs;
        }
    if (n < 2 || !(graphs > 0) || sxx * n - sx * sx <= 0) {
        s.kept.push_back("compile host costs (no reduce-overhead records at two sizes)");
        return;
    }
    const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    const double intercept = (sy - slope * sx) / n;
    c.graph_host_us = std::max(0.0, intercept / graphs);
    c.cudagraph_kernel_host_us = std::max(0.0, slope);
    std::vector<double> ratios;
    for (const auto& d : s.raw.compile_host) {
        if (d.mode != "default") continue;
        for (const auto& e : s.raw.compile_host)
            if (e.mode == "eager" && e.blocks == d.blocks) {
                const double compiled = (d.host_us - d.graphs * c.graph_host_us) / d.kernels;
                ratios.push_back(compiled / (e.host_us / e.kernels));
            }
    }
    if (ratios.empty()) {
        s.kept.push_back("compile.kernel_host_ratio");
    } else {
        c.kernel_host_ratio = median(ratios);
        if (!(c.kernel_host_ratio > 0))
            throw inputError("the raw measurements", 0, "compile_host",
                             "records give a non-positive compiled launch cost per kernel");
    }
    cj["host"] = {{"graph_host_us", c.graph_host_us}, {"cudagraph_kernel_host_us", c.cudagraph_kernel_host_us},
                  {"kernel_host_ratio", c.kernel_host_ratio}, {"kernel_host_ratios", ratios}};
}

// compile.optimizer from compile_optimizer records: per GPT (tensor and parameter count) the compiled step against the
// eager foreach one. kernels_per_tensor and time_ratio: medians over the sizes; the host line host_us + per_tensor · tensors
// by least squares over the compiled records (one size: no slope).
void fitOptimizer(FitState& s, json& cj) {
    CompiledOptimizerRates& o = s.profile.compile.optimizer;
    std::vector<double> per_tensor, ratio, compile_per_tensor;
    double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
    for (const auto& c : s.raw.compile_optimizer) {
        if (c.impl != "compiled") continue;
        for (const auto& e : s.raw.compile_optimizer)
            if (e.impl == "foreach" && e.tensors == c.tensors && e.params == c.params)
                ratio.push_back(c.kernel_ms / e.kernel_ms);
        per_tensor.push_back(c.kernels / c.tensors);
        compile_per_tensor.push_back(c.compile_s / c.tensors);
        sx += c.tensors, sy += c.host_us, sxx += c.tensors * c.tensors, sxy += c.tensors * c.host_us, n += 1;
    }
    if (ratio.empty()) {
        s.kept.push_back("compile.optimizer (no compiled and foreach compile_optimizer records of one size)");
        return;
    }
    o.kernels_per_tensor = median(per_tensor);
    o.time_ratio = median(ratio);
    o.compile_s_per_tensor = median(compile_per_tensor);
    const double det = n * sxx - sx * sx;
    o.host_us_per_tensor = det > 0 ? std::max(0.0, (n * sxy - sx * sy) / det) : 0.0;
    o.host_us = std::max(0.0, (sy - o.host_us_per_tensor * sx) / n);
    o.measured = true;
    cj["optimizer"] = {{"kernels_per_tensor", per_tensor}, {"time_ratio", ratio}, {"host_us", o.host_us},
                       {"host_us_per_tensor", o.host_us_per_tensor}, {"compile_s_per_tensor", compile_per_tensor}};
}

// compile.loss from compile_loss records: per token count the compiled loss against the eager one; medians.
void fitLoss(FitState& s, json& cj) {
    CompiledLossRates& l = s.profile.compile.loss;
    std::vector<double> fk, bk, fr, br;
    for (const auto& c : s.raw.compile_loss) {
        if (!c.compiled) continue;
        for (const auto& e : s.raw.compile_loss)
            if (!e.compiled && e.tokens == c.tokens) {
                fk.push_back(c.forward_kernels), bk.push_back(c.backward_kernels);
                fr.push_back(c.forward_ms / e.forward_ms), br.push_back(c.backward_ms / e.backward_ms);
            }
    }
    if (fk.empty()) {
        s.kept.push_back("compile.loss (no compiled and eager compile_loss records of one size)");
        return;
    }
    l = {true, median(fk), median(bk), median(fr), median(br)};
    cj["loss"] = {{"forward_kernels", fk}, {"backward_kernels", bk}, {"forward_time_ratio", fr},
                  {"backward_time_ratio", br}};
}

// compile.dynamic from compile_block records with dynamic true and false of one configuration: ratios, dynamic over
// static, of the fused ("other") kernels' count and time per phase, the GEMMs' time and the compile time (medians).
void fitDynamic(FitState& s, json& cj) {
    CompiledDynamicRates& d = s.profile.compile.dynamic;
    std::vector<double> fk, bk, ft, bt, g, c;
    const auto same = [](const RawCompileBlock& a, const RawCompileBlock& b) {
        return a.mode == b.mode && a.mlp == b.mlp && a.norm == b.norm && a.dtype == b.dtype && a.hidden == b.hidden;
    };
    for (const auto& [dyn, b] : s.raw.compile_dynamic_blocks) {
        if (!dyn) continue;
        for (const auto& [dyn2, st] : s.raw.compile_dynamic_blocks)
            if (!dyn2 && same(b, st)) {
                fk.push_back(b.compiled_forward.other / st.compiled_forward.other);
                bk.push_back(b.compiled_backward.other / st.compiled_backward.other);
                ft.push_back(b.compiled_forward.other_ms / st.compiled_forward.other_ms);
                bt.push_back(b.compiled_backward.other_ms / st.compiled_backward.other_ms);
                g.push_back((b.compiled_forward.gemm_ms + b.compiled_backward.gemm_ms) /
                            (st.compiled_forward.gemm_ms + st.compiled_backward.gemm_ms));
                c.push_back(b.compile_s / st.compile_s);
            }
    }
    if (fk.empty()) {
        s.kept.push_back("compile.dynamic (no compile_block records with dynamic true and false of one block)");
        return;
    }
    d = {true, median(fk), median(bk), median(ft), median(bt), median(g), median(c)};
    cj["dynamic"] = {{"forward_kernels_ratio", fk}, {"backward_kernels_ratio", bk}, {"forward_time_ratio", ft},
                     {"backward_time_ratio", bt}, {"gemm_time_ratio", g}, {"compile_time_ratio", c}};
}

// compile.fp8 from fp8_compiled_linear records: per recipe, the bias-free linears measured eager and compiled at one
// shape; per phase the compiled cast kernels over the casts (2 forward, 4 backward) and the compiled cast kernels' time
// over the eager ones' (medians over the shapes).
void fitFp8(FitState& s, json& cj) {
    CompiledFp8Rates& f = s.profile.compile.fp8;
    json fj;
    for (const char* recipe : {"tensorwise", "rowwise"}) {
        std::vector<double> fk, bk, fr, br;
        for (const auto& c : s.raw.fp8_compiled_linear) {
            if (!c.compiled || c.bias || c.recipe != recipe) continue;
            for (const auto& e : s.raw.fp8_compiled_linear)
                if (!e.compiled && !e.bias && e.recipe == recipe && e.tokens == c.tokens && e.in == c.in &&
                    e.out == c.out) {
                    fk.push_back(c.forward_kernels / 2.0), bk.push_back(c.backward_kernels / 4.0);
                    fr.push_back(c.forward_us / e.forward_us), br.push_back(c.backward_us / e.backward_us);
                }
        }
        if (fk.empty()) {
            s.kept.push_back(fmt::format("compile.fp8 (no eager and compiled bias-free {} fp8_compiled_linear records "
                                         "of one shape)", recipe));
            return;
        }
        const bool tw = std::string(recipe) == "tensorwise";
        const CompiledFp8Phase forward{median(fk), median(fr)}, backward{median(bk), median(br)};
        (tw ? f.tensorwise_forward : f.rowwise_forward) = forward;
        (tw ? f.tensorwise_backward : f.rowwise_backward) = backward;
        fj[recipe] = {{"forward_kernels_per_cast", fk}, {"backward_kernels_per_cast", bk}, {"forward_time_ratio", fr},
                      {"backward_time_ratio", br}};
    }
    f.measured = true;
    cj["fp8"] = fj;
}

}  // namespace

void fitCompile(FitState& s) {
    if (s.raw.compile_blocks.empty()) {
        s.kept.push_back("compile (no compile_block records)");
        return;
    }
    json cj;
    fitKernels(s, cj);
    fitHost(s, cj);
    fitOptimizer(s, cj);
    fitLoss(s, cj);
    fitDynamic(s, cj);
    fitFp8(s, cj);
    s.profile.compile.measured = true;
    s.report["compile"] = cj;
}

}  // namespace stepsim
