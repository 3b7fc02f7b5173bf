#include "sim/workload/Transformer.hpp"

#include <fmt/format.h>


namespace stepsim {

TransformerShape transformerShape(const ModelSpec& m, int micro_batch, int tp, bool sequence_parallel) {
    TransformerShape t;
    t.b = micro_batch;
    t.s = m.seq_len;
    t.T = t.b * t.s;
    t.h = m.hidden;
    t.tp = tp;
    t.Ts = sequence_parallel ? t.T / tp : t.T;
    t.heads = m.heads / tp;
    t.kv = kvHeads(m) >= tp ? kvHeads(m) / tp : 1;
    t.d = headDim(m);
    t.f = ffnHidden(m) / tp;
    t.V = (m.vocab + tp - 1) / tp;
    t.L = m.layers;
    t.mlp = m.mlp;
    t.norm = m.norm;
    t.tied = m.tied_embeddings;
    t.pos_embedding = m.position_embedding == PositionEmbedding::learned;
    t.rope = m.position_embedding == PositionEmbedding::rope;
    t.bias = m.linear_bias;
    t.qkv_bias = m.qkv_bias || m.linear_bias;
    t.fused_gate_up = m.fused_gate_up;
    t.embedding_scale = m.embedding_scale;
    t.hf = m.implementation == ModelImplementation::hf;
    t.qkv = m.qkv;
    t.fp32_loss = m.loss_dtype == LossDtype::fp32;
    t.dropout = m.dropout > 0.0;
    return t;
}

std::vector<ParamInfo> transformerParams(const TransformerShape& t) {
    std::vector<ParamInfo> p;
    const double h = double(t.h);
    auto norm = [&](const std::string& n, int layer) {
        p.push_back({n + ".weight", h, layer, false});
        if (t.norm == NormKind::layernorm) p.push_back({n + ".bias", h, layer, false});
    };
    // A Linear's weight, then its bias (an fp32 vector autocast casts like the weight; not a matmul operand).
    auto linear = [&](const std::string& n, double out, double in, int layer, bool qkv = false) {
        p.push_back({n + ".weight", out * in, layer, true, out});
        if (t.bias || (qkv && t.qkv_bias)) p.push_back({n + ".bias", out, layer, false});
    };
    p.push_back({"wte.weight", double(t.V) * h, -1, false, double(t.V)});
    if (t.pos_embedding) p.push_back({"wpe.weight", double(t.s) * h, -1, false, double(t.s)});
    for (int l = 0; l < t.L; ++l) {
        const std::string b = fmt::format("h.{}.", l);
        norm(b + "norm1", l);
        if (t.qkv == QkvLayout::separate) {
            linear(b + "attn.q", double(t.heads * t.d), h, l, true);
            linear(b + "attn.k", double(t.kv * t.d), h, l, true);
            linear(b + "attn.v", double(t.kv * t.d), h, l, true);
        } else {
            linear(b + "attn.qkv", double(t.qkvOut()), h, l, true);
        }
        linear(b + "attn.proj", h, double(t.attnOut()), l);
        norm(b + "norm2", l);
        if (t.mlp == MlpKind::gelu) {
            linear(b + "mlp.fc", double(t.f), h, l);
            linear(b + "mlp.proj", h, double(t.f), l);
        } else if (t.fused_gate_up) {
            linear(b + "mlp.gate_up", 2.0 * double(t.f), h, l);
            linear(b + "mlp.down", h, double(t.f), l);
        } else {
            linear(b + "mlp.gate", double(t.f), h, l);
            linear(b + "mlp.up", double(t.f), h, l);
            linear(b + "mlp.down", h, double(t.f), l);
        }
    }
    norm("norm_f", -1);
    if (!t.tied) p.push_back({"lm_head.weight", double(t.V) * h, -1, true, double(t.V)});
    return p;
}

std::vector<ParamInfo> sliceParams(const std::vector<ParamInfo>& all, const std::vector<ModelSlice>& slices) {
    std::vector<ParamInfo> out;
    for (const ParamInfo& p : all) {
        bool keep = false;
        for (const ModelSlice& s : slices) {
            if (p.layer >= 0) keep = keep || (p.layer >= s.begin && (s.end < 0 || p.layer < s.end));
            else if (p.name.rfind("wte", 0) == 0 || p.name.rfind("wpe", 0) == 0) keep = keep || s.embedding;
            else keep = keep || s.head;
        }
        if (keep) out.push_back(p);
    }
    return out;
}

double attentionForwardFlops(const TransformerShape& t) {
    return 2.0 * double(t.b) * double(t.s) * double(t.s) * double(t.heads * t.d);
}

}  // namespace stepsim
