#pragma once
// The profile's memory section (MemoryRates), fitted from the harness's streaming kernels and PyTorch's
// memory-bound kernels.
#include "sim/fit/FitState.hpp"

namespace stepsim {

// read_write_efficiency = β of an α-β line (RateLine.hpp) through the copy kernel's sizes of at least 128 MiB moved
// (beyond the L2; bytes read + written) over the datasheet HBM rate; min_kernel_us = the launch records' device_period
// (start to start of back-to-back empty kernels). The report also holds a line per streaming op.
void fitMemoryRates(FitState& s);

// memory.kernels[kind]: t = fixed_us + bytes / (hbm_gbps · efficiency), one relative-error α-β line through every
// size of the PyTorch ops of that kind (at least 3 points): elementwise (residual_add, gelu_tanh, silu), cast_up,
// cast_down, norm_forward/backward (layer_norm), optimizer (fused AdamW), residual_add (fp32 + bf16 into fp32),
// optimizer_bf16 (fused AdamW on bf16 parameters), log_softmax_{forward,backward}[_fp32] (the loss's log-softmax on
// bf16 or fp32 logits), optimizer_foreach[_bf16] (AdamW's foreach step, its eight passes together), gelu_forward.
void fitMemoryKernels(FitState& s);

// memory.norms: the norms' kernels over a grid of sizes (stepsim_torch_bench.py group norms, ops
// {layer,rms}_norm_{fwd,bwd,bwd_weight}_{fp32,bf16}): at each size the median over the records (machine starts), a
// size kept where all three kernels were timed.
void fitNormGrids(FitState& s);

// The report's "pytorch_kernels": every memory-bound PyTorch kernel's achieved bandwidth (reported only: such kernels
// are priced from the rates above).
void reportPyTorchKernels(FitState& s);

}  // namespace stepsim
