#include "calibration/fit/CompileFit.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

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

}  // namespace

void fitCompile(FitState& s) {
    if (s.raw.compile_blocks.empty()) {
        s.kept.push_back("compile (no compile_block records)");
        return;
    }
    json cj;
    fitKernels(s, cj);
    fitHost(s, cj);
    s.profile.compile.measured = true;
    s.report["compile"] = cj;
}

}  // namespace stepsim
