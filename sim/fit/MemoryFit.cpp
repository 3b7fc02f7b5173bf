#include "sim/fit/MemoryFit.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "sim/fit/RateLine.hpp"
#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

// The points of at least 128 MiB moved: beyond the L2.
std::vector<SizeTime> beyondL2(const std::vector<SizeTime>& pts) {
    std::vector<SizeTime> big;
    for (const auto& q : pts)
        if (q.bytes >= 128.0 * (1 << 20)) big.push_back(q);
    return big;
}

// A memory-bound kernel kind and the PyTorch ops it is fitted on. The optimizer kinds come from AdamW's step over
// GPT models' own tensors (0.16 to 2.0 billion parameters), fused after 1 s of GEMMs at the power limit as it runs
// after a step's backward, foreach at rest (stepsim_torch_bench.py's adamw groups, raw/torch_adamw_gpt.jsonl).
// The foreach step's time is fitted whole, and the model launches it as eight passes: each pass carries an eighth of
// the fitted fixed cost (`passes`).
struct Kind {
    std::string name;
    std::vector<std::string> ops;
    int passes = 1;
};
const std::vector<Kind> kKinds = {
    {"elementwise", {"residual_add", "gelu_tanh", "silu"}},
    {"cast_up", {"cast_bf16_to_fp32"}},
    {"cast_down", {"cast_fp32_to_bf16"}},
    {"norm_forward", {"layer_norm_fwd"}},
    {"norm_backward", {"layer_norm_bwd"}},
    {"optimizer", {"adamw_fused_step_gpt_heated"}},
    {"residual_add", {"residual_add_fp32_bf16"}},
    {"optimizer_bf16", {"adamw_fused_step_bf16_gpt_heated"}},
    {"log_softmax_forward", {"log_softmax_fwd_bf16"}},
    {"log_softmax_backward", {"log_softmax_bwd_bf16"}},
    {"log_softmax_forward_fp32", {"log_softmax_fwd_fp32"}},
    {"log_softmax_backward_fp32", {"log_softmax_bwd_fp32"}},
    {"optimizer_foreach", {"adamw_foreach_step_gpt"}, 8},
    {"optimizer_foreach_bf16", {"adamw_foreach_step_bf16_gpt"}, 8},
    {"gelu_forward", {"gelu_tanh"}},
    // A Linear bias's gradient, the output gradient summed over the tokens: the reduce kernels a biased GPT step adds
    // over the same step without biases, per launch (model_variants.py through variant_raw.py).
    {"bias_grad", {"bias_grad_reduce"}},
    // Rotary embeddings' kernels (TransformerStep's bytes per kernel), from the step time a Llama-style rope step
    // adds over the same step without positions (model_variants.py through variant_raw.py).
    {"rope", {"rope_kernel"}},
    // q/k/v as a view and permute of one projection: the backward's non-vectorized stack of the three gradients and
    // its copy to the projection's layout, per launch (model_variants.py through variant_raw.py).
    {"qkv_permute_cat", {"qkv_permute_cat"}},
    {"qkv_permute_copy", {"qkv_permute_copy"}},
    // nn.Dropout's forward (values and a bool mask) and backward (masked scale), bf16 residual branches and fp32
    // embeddings, per launch (model_variants.py through variant_raw.py).
    {"dropout", {"dropout_fwd"}},
    {"dropout_backward", {"dropout_bwd"}},
};

// One norm's grid of (tokens, hidden) sizes: its three kernels' median times where all three were timed.
std::vector<NormPoint> normGrid(const RawData& raw, const std::array<std::string, 3>& ops) {
    std::map<std::pair<long, long>, std::array<std::vector<double>, 3>> at;
    for (const auto& k : raw.kernels)
        for (std::size_t i = 0; i < ops.size(); ++i)
            if (k.tokens > 0 && k.hidden > 0 && k.op == ops[i]) at[{k.tokens, k.hidden}][i].push_back(k.time.median);
    std::vector<NormPoint> pts;
    for (const auto& [size, v] : at)
        if (!v[0].empty() && !v[1].empty() && !v[2].empty())
            pts.push_back({size.first, size.second, median(v[0]), median(v[1]), median(v[2])});
    return pts;
}

}  // namespace

void fitMemoryRates(FitState& s) {
    HardwareProfile& p = s.profile;
    json mj = json::object();
    std::map<std::string, std::vector<SizeTime>> byOp;
    for (const auto& m : s.raw.memory) byOp[m.op].push_back({m.bytes_moved, m.time.median});
    for (auto& [op, pts] : byOp)
        if (const std::vector<SizeTime> big = beyondL2(pts); big.size() >= 2) mj[op] = lineJson(fitRate(big));
    if (byOp.count("copy_kernel")) {
        if (const std::vector<SizeTime> big = beyondL2(byOp["copy_kernel"]); big.size() >= 2) {
            const RateLine l = fitRate(big);
            p.memory.read_write_efficiency = std::min(1.0, l.gbps / p.gpu.hbm_gbps);
            mj["read_write_efficiency"] = p.memory.read_write_efficiency;
            mj["from"] = "copy_kernel, bytes read + written, sizes >= 128 MiB moved (beyond the L2)";
        }
    } else {
        s.kept.push_back("memory.read_write_efficiency");
    }
    bool minSet = false;
    for (const auto& l : s.raw.launches)
        if (l.op == "device_period") {
            p.memory.min_kernel_us = l.time.median;
            mj["min_kernel_us"] = l.time.median;
            mj["min_kernel_from"] = "launch device_period: start-to-start of back-to-back empty kernels";
            minSet = true;
        }
    if (!minSet) s.kept.push_back("memory.min_kernel_us");
    s.report["memory"] = mj;
}

void fitMemoryKernels(FitState& s) {
    HardwareProfile& p = s.profile;
    json kj = json::object();
    for (const auto& [kind, ops, passes] : kKinds) {
        std::vector<SizeTime> pts;
        for (const auto& k : s.raw.kernels)
            if (k.bytes && !k.flops && std::find(ops.begin(), ops.end(), k.op) != ops.end())
                pts.push_back({*k.bytes, k.time.median});
        if (pts.size() < 3) {
            s.kept.push_back("memory.kernels." + kind);
            continue;
        }
        const RateLine l = fitRate(pts);
        p.memory.kernels[kind] = {std::min(1.0, l.gbps / p.gpu.hbm_gbps), l.alpha_us / passes};
        json j = lineJson(l);
        j["passes"] = passes;
        j["efficiency"] = p.memory.kernels[kind].efficiency;
        j["ops"] = ops;
        kj[kind] = j;
    }
    s.report["memory_kernels"] = kj;
}

void fitNormGrids(FitState& s) {
    json nj = json::object();
    NormGrid& g = s.profile.memory.norms;
    const std::array<std::tuple<const char*, const char*, const char*, std::vector<NormPoint>*>, 4> grids = {{
        {"layer_fp32", "layer", "fp32", &g.layer_fp32},
        {"layer_bf16", "layer", "bf16", &g.layer_bf16},
        {"rms_fp32", "rms", "fp32", &g.rms_fp32},
        {"rms_bf16", "rms", "bf16", &g.rms_bf16},
    }};
    for (const auto& [name, norm, dtype, grid] : grids) {
        const std::array<std::string, 3> ops = {std::string(norm) + "_norm_fwd_" + dtype,
                                                std::string(norm) + "_norm_bwd_" + dtype,
                                                std::string(norm) + "_norm_bwd_weight_" + dtype};
        std::vector<NormPoint> pts = normGrid(s.raw, ops);
        if (pts.empty()) {
            s.kept.push_back(std::string("memory.norms.") + name);
            continue;
        }
        *grid = std::move(pts);
        nj[name] = {{"sizes", grid->size()}, {"ops", ops}};
    }
    s.report["norms"] = nj;
}

void reportPyTorchKernels(FitState& s) {
    json kj = json::array();
    for (const auto& k : s.raw.kernels)
        if (k.bytes && !k.flops)
            kj.push_back({{"op", k.op}, {"time_us", k.time.median}, {"GBps", *k.bytes / (k.time.median * 1e3)},
                          {"fraction_of_hbm", *k.bytes / (k.time.median * 1e3) / s.profile.gpu.hbm_gbps}});
    s.report["pytorch_kernels"] = kj;
}

}  // namespace stepsim
