#pragma once
// From raw measurements (RawData) to a HardwareProfile, plus a report of every fitted quantity's error,
// the domain it was measured on, and a held-out check.
//
// What each profile field comes from (fields with no measurement keep the base profile's value, and the
// report lists them under "kept_from_base"):
//   collectives    α-β segments (AlphaBetaFit.hpp) per (op, ranks, nodes, algo, proto, dtype), on the median
//                  per-iteration time of each size; NCCL's default choice listed first, bf16 before others
//   gemm.bf16      GemmFit.hpp on PyTorch's own GEMMs over the transformer grid (gemm_training_shapes.py --step)
//                  when given, else stepsim-bench's cuBLASLt BF16 points; gemm.fp16 likewise on FP16 ones (absent:
//                  priced as BF16); gemm.fp8 on FP8 E4M3 with fast accumulation (the report also fits FP8 without it)
//   memory         read_write_efficiency = β of an α-β line through the copy kernel's sizes above the L2
//                  (bytes read + written) / datasheet HBM; min_kernel_us = median back-to-back period of
//                  an empty kernel (launch device_period); kernels[kind] = α-β line (fixed_us, β / HBM)
//                  through the PyTorch ops of each kind (elementwise: residual_add, gelu_tanh, silu;
//                  cast_up; cast_down; norm_forward/backward: layer_norm; optimizer: fused AdamW;
//                  residual_add: fp32 + bf16 into fp32; optimizer_bf16: fused AdamW on bf16 parameters;
//                  log_softmax_{forward,backward}[_fp32]: the loss's log-softmax on bf16 or fp32 logits;
//                  optimizer_foreach: AdamW's foreach step, its eight passes together)
//   launch         device_gap ← device_gap; graph_host ← cudaGraphLaunch host time / kernels in the graph;
//                  eager_host ← PyTorch eager dispatch (when the PyTorch file is given); forward_host,
//                  backward_host, optimizer_host_per_tensor_us ← host_overhead.py's one-GPU runs,
//                  forward_host_ddp ← its DDP runs, ddp_hook_host_us ← the DDP backward's extra per parameter
//                  tensor (medians over runs), nccl_host ← its async all-reduce issue time;
//                  ddp_find_unused_host_us ← memory_check.py's DDP forward with find_unused_parameters less without,
//                  per parameter tensor (median over models);
//                  step_gap_us[class] ← kernel_gaps.py's mean gap before each class of operation in a
//                  training step (median over runs); checkpoint_host_us ← checkpoint_host records: the host
//                  time a checkpointed layer adds beyond its recomputed kernels' launches, in the profile's
//                  units (median over runs); the compiled host cost stays the base's
//   attention      median achieved/peak of flash-attention fwd and bwd (causal) from the PyTorch file
//   links          α-β lines: nvlink_gbps ← peer copy engine, pcie_h2d_gbps ← pinned H2D,
//                  pcie_pageable_gbps ← pageable H2D
//   interference   median slowdown of GEMM and of all_reduce over collective sizes ≥ 16 MiB
//   jitter         kernel_cv ← median coefficient of variation of BF16 GEMMs longer than 200 µs
//   gpu            model, SMs, memory from the metadata record; peaks stay datasheet
//   power          power_duty.py's power_duty and power_loaded records (none: power.modelled = false):
//                  clock_max_mhz ← the highest rested clock; the clock line (intercept, slope, memory_busy_tflops
//                  from a grid 0..400) by least squares over the non-idle loads at ≥ 97% of the highest power and
//                  > 20 MHz under the rested clock; attention's exponents by head_dim through the origin of
//                  ln(loaded / burst time) on ln(burst / loaded clock), records ≥ 30 MHz under their burst clock,
//                  the backward from forward_backward less forward; attention_reference_mhz ← median burst clock
//   compile        compile_kernels.py's compile_block and compile_host records (CompileFit.hpp)
// Held-out check: for every collective series and GEMM dtype, fit on all but every 4th point (index 3, 7,
// ...), predict those, and report the median relative error.
//
// Each section is fitted by its own function, in the file of its concern (FitState.hpp is what they share):
// CollectiveFit, GemmFit (fitGemms), MemoryFit, LaunchFit with HostFit, AttentionFit, PowerFit, LinkFit,
// InterferenceFit and JitterFit; fitProfile calls them in turn.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fit/RawData.hpp"
#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

struct ProfileFitResult {
    HardwareProfile profile;
    nlohmann::json report;              // errors, domains, held-out check, what was kept from the base
    double heldout_collectives = 0.0;   // median relative error on held-out collective sizes
    double heldout_gemm = 0.0;          // median relative error on held-out GEMM shapes (model + correction)
};

// `base` supplies the datasheet peaks and every field that was not measured.
ProfileFitResult fitProfile(const RawData& raw, const HardwareProfile& base, const std::string& name,
                            const std::string& source);

}  // namespace stepsim
