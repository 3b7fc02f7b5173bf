#include "sim/fit/AttentionFit.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

// SDPA's default backend, one point per (head_dim, seq, batch × heads); false when no shape has both passes.
bool fitSdpaDefault(FitState& s) {
    HardwareProfile& p = s.profile;
    std::map<std::tuple<long, long, long>, AttentionPoint> pts;
    std::vector<double> fwd, bwd;
    for (const auto& k : s.raw.kernels) {
        if (!k.flops || !k.causal || (k.op != "sdpa_default_fwd" && k.op != "sdpa_default_bwd")) continue;
        AttentionPoint& a = pts[{k.head_dim, k.seq, k.batch * k.heads}];
        a.head_dim = k.head_dim;
        a.seq = k.seq;
        a.batch_heads = k.batch * k.heads;
        const double tflops = *k.flops / (k.time.median * 1e6);
        (k.op == "sdpa_default_fwd" ? a.fwd_tflops : a.bwd_tflops) = tflops;
        (k.op == "sdpa_default_fwd" ? fwd : bwd).push_back(tflops / p.gpu.peak_tflops_bf16);
    }
    p.attention.points.clear();
    for (const auto& [key, a] : pts)
        if (a.fwd_tflops > 0 && a.bwd_tflops > 0) p.attention.points.push_back(a);
    if (p.attention.points.empty()) return false;
    p.attention.fwd_efficiency = std::min(1.0, median(fwd));
    p.attention.bwd_efficiency = std::min(1.0, median(bwd));
    s.report["attention"] = {{"fwd_efficiency", p.attention.fwd_efficiency},
                             {"bwd_efficiency", p.attention.bwd_efficiency},
                             {"points", p.attention.points.size()},
                             {"from", "SDPA default backend, q/k/v viewed from a fused QKV projection, causal"}};
    return true;
}

// PyTorch's flash attention (causal), when the default backend was not measured.
void fitFlash(FitState& s) {
    HardwareProfile& p = s.profile;
    std::vector<double> fwd, bwd;
    json aj = json::array();
    for (const auto& k : s.raw.kernels) {
        if (!k.flops || (k.op != "flash_attn_fwd" && k.op != "flash_attn_bwd")) continue;
        const double eff = *k.flops / (k.time.median * 1e6) / p.gpu.peak_tflops_bf16;
        aj.push_back({{"op", k.op}, {"seq", k.seq}, {"causal", k.causal}, {"efficiency", eff}});
        if (!k.causal) continue;
        (k.op == "flash_attn_fwd" ? fwd : bwd).push_back(eff);
    }
    if (!fwd.empty()) p.attention.fwd_efficiency = std::min(1.0, median(fwd));
    else s.kept.push_back("attention.fwd_efficiency");
    if (!bwd.empty()) p.attention.bwd_efficiency = std::min(1.0, median(bwd));
    else s.kept.push_back("attention.bwd_efficiency");
    s.report["attention"] = {{"fwd_efficiency", p.attention.fwd_efficiency}, {"bwd_efficiency", p.attention.bwd_efficiency},
                             {"from", "median over causal shapes of achieved/peak_tflops_bf16 (PyTorch SDPA flash)"},
                             {"shapes", aj}};
}

// SDPA with dropout_p > 0 against the same call without, per pass: the median over shapes of the ratio of the
// per-launch device times (sdpa_dropout_fwd/bwd over sdpa_plain_fwd/bwd at one shape: model_variants.py's dropout
// step over its base step, through variant_raw.py).
void fitAttentionDropout(FitState& s) {
    HardwareProfile& p = s.profile;
    json dj = json::object();
    for (const auto& [pass, ratio] : {std::pair{std::string("fwd"), &p.attention.dropout_forward_ratio},
                                      std::pair{std::string("bwd"), &p.attention.dropout_backward_ratio}}) {
        std::map<std::tuple<long, long, long, long>, std::pair<double, double>> at;  // shape: (dropout, plain) µs
        for (const auto& k : s.raw.kernels) {
            const auto key = std::tuple{k.seq, k.head_dim, k.batch, k.heads};
            if (k.op == "sdpa_dropout_" + pass) at[key].first = k.time.median;
            if (k.op == "sdpa_plain_" + pass) at[key].second = k.time.median;
        }
        std::vector<double> r;
        for (const auto& [key, t] : at)
            if (t.first > 0 && t.second > 0) r.push_back(t.first / t.second);
        if (r.empty()) {
            s.kept.push_back(pass == "fwd" ? "attention.dropout_forward_ratio" : "attention.dropout_backward_ratio");
            continue;
        }
        *ratio = median(r);
        dj[pass] = {{"ratio", *ratio}, {"shapes", r.size()}, {"ratios", r}};
    }
    if (!dj.empty()) {
        dj["from"] = "sdpa_dropout_* over sdpa_plain_* per shape (model_variants.py dropout over base, variant_raw.py)";
        s.report["attention_dropout"] = dj;
    }
}

}  // namespace

void fitAttention(FitState& s) {
    if (!fitSdpaDefault(s)) fitFlash(s);
    fitAttentionDropout(s);
}

}  // namespace stepsim
