#pragma once
// A GPT/Llama-style decoder described by its shapes: its parameters in registration order, and the
// kernels one training micro-step runs, forward and backward, as eager PyTorch with autocast runs them.
//
// Parameters (model.parameters() order): token embedding V×h, learned position embedding s×h (model.position_embedding
// learned; none with rope or none), per layer: norm1 (weight, + bias for LayerNorm), fused QKV
// ((heads + 2·kv_heads)·d × h; with model.qkv: separate q heads·d × h, k and v kv_heads·d × h), attention output
// heads·d × h (d = model.head_dim, else hidden / heads), norm2, MLP (gelu: fc f×h, proj h×f; swiglu and geglu: gate f×h,
// up f×h, down h×f; with model.fused_gate_up one gate_up 2f×h), final norm, LM head V×h (absent when tied). With
// model.linear_bias every Linear of the blocks has a bias of its output width, registered after its weight (with
// model.qkv_bias the q, k and v projections alone); the LM head never has one.
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
    double rows = 0.0;     // its first dimension (a Linear's out_features, an embedding's rows); 0: a 1-D tensor
};

// Under tensor parallelism (TensorParallel.hpp) the shape is a rank's: heads/tp query heads, kv_heads/tp KV heads (one
// when tp exceeds kv_heads: each is replicated), ffn_hidden/tp, vocab/tp (rounded up); Ts the tokens of the regions
// sequence parallelism shards (norms, residual adds), T/tp with it, T without.
struct TransformerShape {
    long b = 0, s = 0, T = 0;  // micro batch, sequence, tokens per micro-batch
    long Ts = 0;
    long h = 0, heads = 0, kv = 0, d = 0, f = 0, V = 0;
    int L = 0;
    MlpKind mlp = MlpKind::gelu;
    NormKind norm = NormKind::layernorm;
    bool tied = false;
    bool pos_embedding = true;  // a learned position table (model.position_embedding: learned)
    bool rope = false;          // rotary embeddings on q and k in every layer
    bool bias = false;          // model.linear_bias
    bool qkv_bias = false;      // model.qkv_bias: biases on q, k and v only
    bool fused_gate_up = false; // model.fused_gate_up: a gated MLP's gate and up as one Linear
    bool embedding_scale = false;  // model.embedding_scale: the token embedding times sqrt(hidden)
    bool hf = false;            // model.implementation: hf (TransformerStep.hpp: Hugging Face's kernels)
    QkvLayout qkv = QkvLayout::fused;      // model.qkv
    bool fp32_loss = false;                // model.loss_dtype: fp32
    bool dropout = false;                  // model.dropout > 0
    int tp = 1;
    long qkvOut() const { return (heads + 2 * kv) * d; }
    long attnOut() const { return heads * d; }  // the attention output projection's input features
};

// The part of the model one pipeline stage (or one virtual chunk of it) runs: blocks [begin, end), the embeddings before
// them when `embedding`, the final norm, LM head and loss after them when `head`. The whole model by default.
struct ModelSlice {
    int begin = 0, end = -1;  // end −1: every block
    bool embedding = true, head = true;
};

TransformerShape transformerShape(const ModelSpec& m, int micro_batch, int tp = 1, bool sequence_parallel = false);
std::vector<ParamInfo> transformerParams(const TransformerShape& t);
// The parameters the slices hold (blocks in their ranges; the embeddings with the first, final norm and head with the
// last), in registration order.
std::vector<ParamInfo> sliceParams(const std::vector<ParamInfo>& all, const std::vector<ModelSlice>& slices);
double attentionForwardFlops(const TransformerShape& t);  // per layer, per micro-batch

}  // namespace stepsim
