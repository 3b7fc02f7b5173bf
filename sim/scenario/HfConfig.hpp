#pragma once
// Internal to sim/scenario/: model.hf_config, a Hugging Face config.json read into the model keys (docs/variants.md,
// "Hugging Face configs"). The `architectures` entry picks the mapping; each sets every model key its modeling code
// fixes, and model.implementation: hf:
//
//   LlamaForCausalLM, MistralForCausalLM: swiglu (hidden_act silu), rmsnorm, rope, qkv separate, loss_dtype fp32
//     (transformers' ForCausalLMLoss upcasts the logits), biases from attention_bias and mlp_bias (both or neither);
//   Qwen2ForCausalLM: the same with qkv_bias (q, k and v have biases, o_proj none: Qwen2Attention);
//   GPT2LMHeadModel: gelu (gelu_new and gelu_pytorch_tanh are the tanh form), layernorm, learned positions, qkv
//     fused (c_attn split in three), linear_bias (Conv1D: addmm with a bias), tied head, dropout from
//     resid_pdrop = embd_pdrop = attn_pdrop, ffn_hidden n_inner or 4·n_embd, the vocabulary unpadded;
//   GemmaForCausalLM: geglu (gelu_pytorch_tanh), rmsnorm, rope, qkv separate, head_dim, tied, embedding_scale;
//   Phi3ForCausalLM: swiglu with fused_gate_up, rmsnorm, rope, qkv fused (qkv_proj sliced), dropout from
//     resid_pdrop = embd_pdrop = attention_dropout.
// Common: num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads (default the heads),
// intermediate_size, vocab_size, tie_word_embeddings (each class's default when absent), head_dim where it differs
// from hidden / heads, and seq_len from max_position_embeddings (n_positions) only where the scenario sets none.
//
// Refused, naming the file and the entry: any other architecture (mixture-of-experts ones named as such: Mixtral's
// experts and the like are not modelled), a sliding window no longer than the sequence (SDPA would take a mask: transformers skips it only
// where the sequence is shorter than the window), partial
// rotary embeddings, dropout at some sites only, an activation other than the class's own.
//
// A key the scenario sets as well keeps the scenario's value; where it differs from the file's, a warning names both
// (ModelSpec::hf_overrides, printed with the result's warnings).
#include "sim/base/Scenario.hpp"
#include "sim/scenario/YamlReader.hpp"

namespace stepsim {

// Applies s.model.hf_config (relative to the scenario's folder) to s.model; `r` says which keys the scenario set.
void applyHfConfig(const YamlReader& r, Scenario& s);

}  // namespace stepsim
