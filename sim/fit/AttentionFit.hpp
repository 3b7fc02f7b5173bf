#pragma once
// The profile's attention section (AttentionRates).
#include "sim/fit/FitState.hpp"

namespace stepsim {

// Attention as training runs it: SDPA's default backend on q, k, v viewed from a fused QKV projection
// (calibration/pytorch/attention_default.py, ops sdpa_default_{fwd,bwd}, causal), one point per shape measured both
// ways; fwd/bwd_efficiency are the medians of achieved / peak_tflops_bf16. Without those records, PyTorch's flash
// backend (stepsim_torch_bench.py, flash_attn_{fwd,bwd}) gives the efficiencies alone: the medians over causal shapes.
void fitAttention(FitState& s);

}  // namespace stepsim
