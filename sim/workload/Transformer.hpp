#pragma once
// A GPT/Llama-style decoder described by its shapes: its parameters in registration order, and the
// kernels one training micro-step runs, forward and backward, as eager PyTorch with autocast runs them.
//
// Parameters (model.parameters() order): token embedding V×h, learned position embedding s×h (GPT; none for
// rmsnorm/swiglu Llama-style models), per layer: norm1 (weight, + bias for LayerNorm), fused QKV
// ((heads + 2·kv_heads)·d × h), attention output h×h, norm2, MLP (gelu: fc f×h, proj h×f; swiglu: gate f×h,
// up f×h, down h×f), final norm, LM head V×h (absent when tied). No Linear has a bias.
//
// Per Linear with tokens T = micro_batch · seq_len (fwd, dgrad, wgrad; Narayanan et al. 2021, §3):
//   forward  M=T, N=out, K=in;   dgrad M=T, N=in, K=out;   wgrad M=out, N=in, K=T.
// Causal flash attention: forward 2·b·s²·h FLOPs per layer (half of 4·b·s²·h), backward 2.5× forward
// (FlashAttention-2: five matmuls against two).
// Model FLOPs per step = Σ of GEMM and attention FLOPs above over forward and backward (no recompute):
// 6·N_linear·T + 7·b·s²·h·L.
#include <string>
#include <vector>

#include "sim/base/Scenario.hpp"

namespace stepsim {

struct ParamInfo {
    std::string name;
    double numel = 0.0;
    int layer = -1;        // -1: outside the blocks
    bool matmul = false;   // a Linear weight (cast to the compute dtype by autocast)
};

struct TransformerShape {
    long b = 0, s = 0, T = 0;  // micro batch, sequence, tokens per micro-batch
    long h = 0, heads = 0, kv = 0, d = 0, f = 0, V = 0;
    int L = 0;
    MlpKind mlp = MlpKind::gelu;
    NormKind norm = NormKind::layernorm;
    bool tied = false;
    bool pos_embedding = true;
    long qkvOut() const { return (heads + 2 * kv) * d; }
};

TransformerShape transformerShape(const ModelSpec& m, int micro_batch);
std::vector<ParamInfo> transformerParams(const TransformerShape& t);
double attentionForwardFlops(const TransformerShape& t);  // per layer, per micro-batch

}  // namespace stepsim
