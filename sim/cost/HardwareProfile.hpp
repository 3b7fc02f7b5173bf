#pragma once
// A hardware profile: every number the cost models use, as data (DESIGN.md, "Cost models").
//
// Calibration produces parameters, never new classes: a new GPU or machine is a new profile YAML file
// (schema `stepsim_profile: 1`, read and written by scenario/ProfileYaml.hpp). Built-in profiles live in
// calibration/profiles/ and are compiled into the binary.
//
// Every fitted quantity may carry its error and the domain it was measured on; a query outside the domain
// is answered by the model and flagged in the results' `warnings`.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/cost/PowerModel.hpp"

namespace stepsim {

struct GpuRates {
    std::string model;            // e.g. "NVIDIA H200"
    int sms = 132;
    double memory_gib = 141.0;    // usable HBM
    double hbm_gbps = 4800.0;     // datasheet HBM bandwidth, GB/s (1e9 B/s)
    // Dense peak TFLOP/s per compute dtype (datasheet); MFU is reported against these.
    double peak_tflops_bf16 = 989.0;
    double peak_tflops_fp16 = 989.0;
    double peak_tflops_fp8 = 1979.0;
    double peak_tflops_fp32 = 67.0;
    // Datasheet link rates per direction, GB/s, that `profile show` sets the measured ones against (0: not stated;
    // optional keys gpu.nvlink_gbps, gpu.pcie_gbps).
    double nvlink_gbps = 0.0;
    double pcie_gbps = 0.0;
};

// A value measured for one GEMM shape (m, n, k as stepsim names a step's GEMMs): a slowdown, a gap. A GEMM within a
// factor 2 of a listed shape on every dimension takes the nearest one's (GemmModel.hpp, nearestShape).
struct GemmShapeValue {
    long m = 0, n = 0, k = 0;
    double value = 0.0;
};

// One measured GEMM: TFLOP/s achieved at shape (m, n, k).
struct GemmPoint {
    long m = 0, n = 0, k = 0;
    double tflops = 0.0;
};

// GEMMs with a dimension that is not a multiple of `alignment` elements (an operand's leading dimension cuBLAS's
// aligned tensor-core kernels cannot take: GPT-2's unpadded vocabulary 50257) run slower kernels, at a rate that
// depends on the largest power of two dividing that dimension and on which of m, n, k it is (GemmModel.hpp).
// One row per measured multiple: [multiple, m_tflops, n_tflops, k_tflops] (0: that dimension not measured at it).
struct UnalignedRate {
    long multiple = 1;
    double m_tflops = 0.0, n_tflops = 0.0, k_tflops = 0.0;
};
struct GemmAlignment {
    long alignment = 0;               // elements; 0: not measured, every GEMM priced as aligned
    std::vector<UnalignedRate> rates; // by multiple, ascending
};

// GEMM efficiency for one dtype. Time = 2mnk / (peak · efficiency(m, n, k)); the efficiency comes from the
// tile/wave-quantization model of GemmModel.hpp with these parameters, corrected towards the nearest
// measured points when `points` is not empty.
struct GemmEfficiency {
    double max_efficiency = 0.80;  // fraction of dense peak reached by large, well-shaped GEMMs
    double k_half = 256.0;         // K at which the main loop reaches half its asymptotic efficiency
    int tile_m = 128, tile_n = 256;  // output tile of the dominant kernel
    double overhead_us = 4.0;      // fixed per-GEMM cost (launch on device, prologue/epilogue)
    std::vector<GemmPoint> points; // measured grid (empty for datasheet-only profiles)
    double rel_error = 0.0;        // median relative error of the model on `points`
    GemmAlignment unaligned;       // calibration/pytorch/gemm_alignment.py (empty: not measured)
};

// One kind of memory-bound kernel: t = fixed_us + bytes / (hbm_gbps · efficiency).
struct MemoryKernelRate {
    double efficiency = 0.9;
    double fixed_us = 0.0;
};

// A norm's three kernels measured at one size (rows × hidden): the forward, the backward's input-gradient kernel and
// its weight(-and-bias)-gradient kernel, µs each.
struct NormPoint {
    long tokens = 0, hidden = 0;
    double forward_us = 0.0, backward_us = 0.0, weight_grad_us = 0.0;
};

// PyTorch's norm kernels over a grid of sizes, by norm and dtype (fp32: under autocast, on the fp32 residual
// stream; bf16: a model trained in bf16). Their times do not follow the bytes: the weight-gradient kernel is a column
// reduction with one block per 32 columns, so at hidden ≤ 2048 its time follows the rows (H200, fp32: 39.0 µs at
// 8192 × 768, 46.3 at 8192 × 2048; bf16 about as long as fp32). A grid left empty prices that norm's kernels by the
// memory kinds norm_forward, norm_backward, norm_weight_grad (rms_* for RMSNorm).
struct NormGrid {
    std::vector<NormPoint> layer_fp32, layer_bf16, rms_fp32, rms_bf16;
};

struct MemoryRates {
    double read_write_efficiency = 0.90;  // achieved fraction of hbm_gbps for streaming kernels
    double min_kernel_us = 2.0;           // shortest kernel: launch on device and tail
    // Per kind of kernel (names of MemKind: elementwise, cast_up, cast_down, norm_forward, norm_backward,
    // optimizer, residual_add, optimizer_bf16, log_softmax_forward, log_softmax_backward and their _fp32,
    // optimizer_foreach, optimizer_foreach_bf16, norm_weight_grad, rms_forward, rms_backward, rms_weight_grad,
    // gelu_forward, bias_grad, rope, qkv_permute_cat, qkv_permute_copy, dropout, dropout_backward). A kind not
    // listed takes its base kind's rate (rms_* the norm_* one, norm_weight_grad norm_backward's,
    // optimizer_foreach_bf16 optimizer_foreach's, gelu_forward and the variants' kinds elementwise's), and a base
    // kind not listed streams at read_write_efficiency with no fixed cost.
    std::map<std::string, MemoryKernelRate> kernels;
    NormGrid norms;
};

// Measured causal attention as SDPA runs it in training, for one (head_dim, seq, batch·heads).
struct AttentionPoint {
    long head_dim = 0, seq = 0, batch_heads = 0;
    double fwd_tflops = 0.0, bwd_tflops = 0.0;  // causal FLOPs (half of 4·b·s²·h; backward 2.5x) per second
};

// Attention time = FLOPs / rate. The rate is the measured one at the nearest point (same head_dim if measured,
// then nearest in log seq and log batch·heads); without points, peak × efficiency.
struct AttentionRates {
    double fwd_efficiency = 0.55;  // flash attention forward, fraction of dense peak (compute dtype)
    double bwd_efficiency = 0.45;  // backward (2.5x the forward FLOPs)
    std::vector<AttentionPoint> points;
    // SDPA with dropout_p > 0 (cuDNN's flash kernels with their Philox dropout): its forward and backward time over
    // the same call without dropout, measured in a training step (model_variants.py through variant_raw.py). 0: not
    // measured (model.dropout is refused).
    double dropout_forward_ratio = 0.0;
    double dropout_backward_ratio = 0.0;
};

// A distribution summarised by its median and spread; drawn as a lognormal matching median and p99.
struct Distribution {
    double median_us = 0.0;
    double p99_us = 0.0;
};

// Mean idle time on a stream before an operation of each kernel class, inside an eager training step's mix with
// the host far ahead (calibration/pytorch/kernel_gaps.py): the launch gap a dense compute stream leaves open, which
// an NCCL kernel beside it is exposed through. cuBLAS's semaphore memsets before some GEMMs count as busy.
struct StepGaps {
    double gemm_us = 0.0;
    double attention_us = 0.0;
    double memory_us = 0.0;
    double optimizer_us = 0.0;
    double copy_us = 0.0;
};

// Host cost of activation checkpointing per checkpointed layer (torch.utils.checkpoint, non-reentrant), beyond
// the launches of the kernels it recomputes: in the forward its saved-tensor hooks and state capture, in the
// backward the recompute's own machinery (calibration/pytorch/host_overhead.py, one-GPU runs).
struct CheckpointHost {
    double selective_forward_us = 0.0;
    double selective_backward_us = 0.0;
    double full_forward_us = 0.0;
    double full_backward_us = 0.0;
};

// Host cost per kernel of an FP8 linear's forward and backward as the validation harness runs torchao's Float8Linear
// (calibration/pytorch/fp8_linear.py, timed by fp8_bench.py: what a Float8Linear adds over a plain Linear, per extra
// kernel), by recipe. 0: not measured; the step's forward_host and backward_host apply.
struct Fp8LinearHost {
    double tensorwise_forward_us = 0.0;
    double tensorwise_backward_us = 0.0;
    double rowwise_forward_us = 0.0;
    double rowwise_backward_us = 0.0;
};

struct HostCostSpread {
    double p10 = 1.0, p90 = 1.0;  // factors on every host cost
};

struct LaunchRates {
    Distribution eager_host;        // host cost of one tiny eager PyTorch op (dispatch + cudaLaunchKernel)
    // Host cost per GPU kernel of an eager training step, framework included (Python modules, autocast,
    // autograd engine): measured on a host-bound tiny model (calibration/pytorch/host_overhead.py).
    Distribution forward_host;      // per kernel launched by the forward pass
    Distribution forward_host_ddp;  // the same under DistributedDataParallel (one process per GPU)
    Distribution backward_host;     // per kernel launched by the autograd engine in backward
    double optimizer_host_per_tensor_us = 0.0;  // fused AdamW step + zero_grad, per parameter tensor
    double ddp_hook_host_us = 0.0;  // DDP's autograd hook per parameter tensor (mark ready, bucket copy launch)
    // DDP's find_unused_parameters: prepare_for_backward's autograd graph walk, per parameter tensor and step
    double ddp_find_unused_host_us = 0.0;
    // AccumulateGrad's in-place add when .grad already holds a gradient (gradient accumulation's micro-steps after
    // the first), host cost per parameter tensor (host_overhead.py's accumulate_host: H200, 0.31 of a
    // backward kernel's).
    double grad_accumulate_host_us = 0.0;
    Distribution compiled_host;     // host cost per kernel of an Inductor-compiled graph
    Distribution graph_host;        // host cost per kernel inside a CUDA graph replay
    Distribution device_gap;        // gap between back-to-back kernels on one stream
    StepGaps step_gap_us;           // gap before each class of operation in a training step's stream
    // The same while an NCCL kernel is resident on the GPU, by what it does (calibration/pytorch/gemm_gaps.py
    // --beside: units of an add, a GEMM and DDP's two gradient copies beside a 25 MiB all-reduce; the gap alone times
    // the ratio measured within the run). Beside one moving data the holes grow (H200: GEMMs 1.33x, copies 1.13x,
    // memory-bound 1.21x), beside one waiting for its peer they do not (1.00x, 1.00x, 0.98x). 0: not measured, the
    // gap alone applies.
    StepGaps step_gap_beside_transfer_us;
    StepGaps step_gap_beside_waiting_us;
    // The gap before a GEMM by its shape (µs; calibration/pytorch/gemm_gaps.py), in place of step_gap_us.gemm: cuBLAS
    // launches some GEMMs after a semaphore memset, and the GPU idles longer before them (H200: 3.27 µs against 1.63
    // over the validation's 198 GEMMs). Empty or no shape near: step_gap_us.gemm.
    std::vector<GemmShapeValue> gemm_gap_by_shape;
    // The same beside an NCCL kernel moving data (µs: the shape's gap alone times its ratio measured within a run,
    // gemm_gaps.py --beside transfer): x1.46 after a memset, x1.15 without (H200, medians over 198 GEMMs). Empty or no
    // shape near: the gap alone times step_gap_beside_transfer_us' GEMM ratio.
    std::vector<GemmShapeValue> gemm_gap_beside_transfer_by_shape;
    CheckpointHost checkpoint_host_us;  // activation checkpointing, per checkpointed layer
    Fp8LinearHost fp8_linear_host_per_kernel;  // FP8 linears' casts and GEMMs, per kernel
    Distribution nccl_host;         // host cost of issuing one NCCL collective through torch.distributed
    // How far the host's cost per kernel strays from the costs above between machine starts and runs: the 10th and
    // 90th percentile of each calibration run's cost per kernel over the median of its kind (host_overhead.py's
    // forward, backward and DDP forward; H200: 0.55 and 2.0). A host-bound step is also simulated at both, for
    // the range its time may take. 1 and 1: not measured.
    HostCostSpread host_cost_spread;
};

// t(bytes) = alpha_us + bytes / (busbw_gbps·1e3 / busbw_factor) on [lo_bytes, hi_bytes).
struct CollectiveSegment {
    double lo_bytes = 0.0, hi_bytes = 0.0;
    double alpha_us = 0.0;
    double busbw_gbps = 0.0;
    double rel_error = 0.0;
};

// A measured collective: op ∈ {all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv},
// for `ranks` GPUs, algorithm/protocol as NCCL chose them ("auto") or forced.
struct CollectiveFit {
    std::string op;
    int ranks = 0;
    int nodes = 1;
    std::string algo = "auto";
    std::string proto = "auto";
    std::string dtype = "bf16";
    std::vector<CollectiveSegment> segments;  // ordered, contiguous
    double rel_error = 0.0;                   // median relative error over the measured sizes
};

// NCCL's own tuning model (src/graph/tuning.cc) for what was not measured: per protocol LL, LL128, Simple.
struct NcclModel {
    double ring_base_latency_us[3] = {6.6, 14.0, 8.4};   // LL, LL128, Simple
    double tree_base_latency_us[3] = {6.8, 14.0, 8.4};
    double nvlink_hop_latency_us[3] = {0.6, 1.9, 3.4};
    double net_hop_latency_us[3] = {5.0, 8.0, 14.0};      // per inter-node step (IB)
    double proto_bw_fraction[3] = {0.5, 0.92, 1.0};
    double ring_busbw_gbps = 370.8;  // intra-node Simple ring bus bandwidth (20.6 GB/s x 18 links)
    double nvls_busbw_gbps = 480.0;  // all-reduce with NVSwitch reduction, large messages
};

struct LinkRates {
    double nvlink_gbps = 450.0;     // per GPU, per direction, GB/s
    double nvlink_latency_us = 0.7;
    double pcie_h2d_gbps = 55.0;    // pinned host-to-device
    double pcie_pageable_gbps = 20.0;
    double nic_gbps = 48.0;         // achieved per 400G NIC, GB/s
    double storage_gbps = 5.0;      // checkpoint writes, per node
};

// Host↔device copies through PyTorch and torch.distributed.checkpoint's saves (calibration/pytorch/io_transfer.py,
// fitted by sim/fit/IoFit.cpp; 0 everywhere: not measured, and checkpointing is refused). Copies: a tensor's
// `.to()` from pinned memory (non-blocking) or pageable memory (synchronous), device time = α + bytes / rate.
// dcp.save (sync) blocks for α_sync + bytes / d2h_pageable + bytes / sync_write; async_save blocks for its staging,
// α_stage + bytes / stage (pinned_staging: stage_pinned), then writes beside the training loop at async_write after
// α_async_write. storage_write_gbps: a plain fsync'd write of the same disk.
struct IoRates {
    double copy_alpha_us = 0;
    double h2d_pinned_gbps = 0, h2d_pageable_gbps = 0, d2h_pinned_gbps = 0, d2h_pageable_gbps = 0;
    double storage_write_gbps = 0;
    double dcp_sync_overhead_ms = 0, dcp_sync_write_gbps = 0;
    double dcp_stage_overhead_ms = 0, dcp_stage_gbps = 0, dcp_stage_pinned_gbps = 0;
    double dcp_async_write_overhead_ms = 0, dcp_async_write_gbps = 0;
    bool measured() const { return dcp_sync_write_gbps > 0 && d2h_pageable_gbps > 0; }
};

// Slowdown of a training step's compute kernels beside a resident NCCL kernel, by kernel class (PyTorch's
// kernels beside bucket-sized all-reduces: calibration/pytorch/interference_training.py). 0: not measured, the
// class takes Interference::compute_slowdown. memory covers every memory-bound class (elementwise, optimizer,
// copies).
struct ClassSlowdown {
    double gemm = 0.0;
    double attention = 0.0;
    double memory = 0.0;
};

// The slowdown beside an NCCL kernel moving the given bytes (all-reduces of that size, back to back).
struct SizedSlowdown : ClassSlowdown {
    double bytes = 0.0;
};

// Slowdown of each side while a compute kernel and an NCCL kernel run at once on one GPU
// (rate multiplier = 1 / slowdown). A resident NCCL kernel either moves data (every member has arrived) or spins
// waiting for its peers; compute beside a waiting one loses more (H200: GEMMs x1.42 against x1.23).
struct Interference {
    double compute_slowdown = 1.10;
    double comm_slowdown = 1.75;
    ClassSlowdown beside_transfer;  // the NCCL kernel moving data
    ClassSlowdown beside_waiting;   // the NCCL kernel waiting for its peers
    // beside_transfer by the collective's size, ascending (H200, GEMMs: x1.02 beside 4 MiB all-reduces, x1.19-1.23
    // beside 25 MiB, x1.32 beside 64, x1.40 beside 128); empty: beside_transfer at every size.
    std::vector<SizedSlowdown> beside_transfer_by_size;
    // A GEMM's own slowdown beside an NCCL kernel resident all along, moving data or waiting (the two differ little
    // for one shape), by shape (interference_training.py --gemm-shapes, waiting mode), in place of its class's;
    // empty or no shape near: the class's. NCCL holds an SM per channel, and what a GEMM loses to that depends on
    // how cuBLAS tiles it: H200 beside a 2-GPU fp32 all-reduce (24 blocks), x1.2-1.3 for wide outputs of many
    // tiles, x1.4 for 512-tile outputs, x1.8-1.9 for small outputs of a long K (split across every SM, the grid
    // goes to two waves).
    std::vector<GemmShapeValue> gemm_by_shape;
    // A GEMM launched beside a resident NCCL kernel lost its SMs from the start: when the NCCL kernel leaves, the
    // CTAs it kept out start, and the GEMM ends no sooner than its own time plus the time the SMs were held, up to
    // one wave of its output tiles of this size (⌈m/tile_m⌉·⌈n/tile_n⌉ tiles over the SMs), no later than beside the
    // NCCL kernel throughout. The tile of the GEMM kernels calibration/investigations/gemm_linger_probe.py traced
    // (H200, bf16 training GEMMs: cuBLAS's nvjet kernels of 128x256 or 256x128 tiles). 0: the GEMM speeds up as soon
    // as the NCCL kernel leaves.
    int linger_tile_m = 0, linger_tile_n = 0;
};

struct JitterRates {
    double kernel_cv = 0.01;          // coefficient of variation of kernel durations
    double straggler_cv = 0.003;      // per-rank, per-step speed variation
    // GPU-to-GPU speed spread at the power limit, fixed for a run (coefficient of variation across devices):
    // compute-bound kernels (GEMM, attention) and memory-bound ones. In data parallel training the slowest GPU
    // sets the pace (H200 pair: GEMMs 1.3-1.8% apart, HBM bandwidth 0.1%).
    double device_compute_cv = 0.0;
    double device_memory_cv = 0.0;
    // Host-to-host spread of the cost per kernel launch between training processes running at once on one machine
    // (coefficient of variation of a process's speed against the others', over half-second windows;
    // calibration/pytorch/host_spread.py). Each rank's host keeps its own for a run: a host-bound data-parallel step
    // goes at its slowest host, the others' GPUs waiting for it in NCCL (H200 VMs, two processes: 0.127).
    double host_rank_cv = 0.0;
};

// What torch.compile (Inductor) makes of a training step, measured on transformer blocks eager and compiled
// (calibration/pytorch/compile_kernels.py, fitted by sim/fit/CompileFit.hpp; the transformation that uses it is
// sim/workload/CompileTransform.hpp). A region is a maximal run of memory-bound kernels between GEMM/attention kernels
// in eager order: Inductor fuses each into kernels_per_region kernels (mean) taking time_ratio of the eager time.
struct CompilePhaseRates {
    double kernels_per_region = 1.0;
    double time_ratio = 1.0;
};

// A compiled optimizer step (compile.optimizer: torch.compile of the foreach AdamW step) against the eager foreach
// one, from compile_parts.py's compile_optimizer records (CompileFit.hpp).
struct CompiledOptimizerRates {
    bool measured = false;             // false: compile.optimizer is refused
    double kernels_per_tensor = 0.0;   // the compiled step's kernels per parameter tensor
    double time_ratio = 1.0;           // its kernel time over the eager foreach step's kernel time
    double host_us = 0.0;              // host time to issue one compiled step: host_us + host_us_per_tensor · tensors
    double host_us_per_tensor = 0.0;
    double compile_s_per_tensor = 0.0; // the first compiled step's wall time per parameter tensor
};

// The loss (F.cross_entropy under autocast on the LM head's logits and its backward) compiled with the model
// (compile.loss), from compile_parts.py's compile_loss records: the compiled kernels per phase and their time over
// the eager loss kernels' time.
struct CompiledLossRates {
    bool measured = false;  // false: compile.loss is refused
    double forward_kernels = 0.0, backward_kernels = 0.0;
    double forward_time_ratio = 1.0, backward_time_ratio = 1.0;
};

// Dynamic shapes (compile.dynamic: true) against static ones on the same block (compile_parts.py's compile_block
// records with dynamic true and false): the fused kernels' count and time, the GEMMs' time and the compile time, each
// dynamic over static.
struct CompiledDynamicRates {
    bool measured = false;  // false: compile.dynamic: true is refused
    double forward_kernels_ratio = 1.0, backward_kernels_ratio = 1.0;
    double forward_time_ratio = 1.0, backward_time_ratio = 1.0;
    double gemm_time_ratio = 1.0;
    double compile_time_ratio = 1.0;
};

// FP8 linears (torchao's Float8Linear as calibration/pytorch/fp8_linear.py writes it) under torch.compile, from
// fp8_compiled.py's fp8_compiled_linear records: per recipe and phase, the compiled linear's cast kernels (neither GEMM
// nor memset) per cast to FP8 (2 a forward, 4 a backward) and their time over the eager linear's cast kernels' time
// (bias-free linears; medians over the shapes measured).
struct CompiledFp8Phase {
    double kernels_per_cast = 0.0;
    double time_ratio = 1.0;
};
struct CompiledFp8Rates {
    bool measured = false;  // false: fp8.enabled under compile.enabled is refused
    CompiledFp8Phase tensorwise_forward, tensorwise_backward, rowwise_forward, rowwise_backward;
};

struct CompileRates {
    bool measured = false;  // false: the profile has no compile measurements, and compile.enabled is refused
    CompilePhaseRates forward, backward;
    double gemm_time_ratio = 1.0;               // GEMM time compiled / eager (default mode: library GEMMs)
    double gemm_time_ratio_max_autotune = 1.0;  // under max-autotune (autotuned Triton templates or library GEMMs)
    double graph_host_us = 0.0;      // host cost of calling one compiled graph, or replaying it under CUDA graphs
    double kernel_host_ratio = 1.0;  // a compiled kernel's launch cost over the eager kernel's it replaces
    double cudagraph_kernel_host_us = 0.0;  // host cost per kernel left under CUDA graphs (reduce-overhead)
    double compile_s_per_block = 0.0;       // first call's compile time per transformer block (default mode)
    double compile_s_per_block_max_autotune = 0.0;
    CompiledOptimizerRates optimizer;
    CompiledLossRates loss;
    CompiledDynamicRates dynamic;
    CompiledFp8Rates fp8;
};

// How a profile was derived from a measured one (`stepsim profile derive`, sim/cost/ProfileDerive.hpp), or how a
// scenario's cluster.power_limit_w / hbm_gib / hbm_tbps moved it: each step the quantity it changed, by what factor
// (the central value and the low and high ends of its uncertainty), and the model that sets the factor. Empty for a
// profile measured or read off a datasheet (the optional key `derivation` is absent).
struct DerivationStep {
    std::string what;       // e.g. "gemm points (power limit 700 -> 500 W)"
    double factor = 1.0;    // on the quantity's rate (time goes by 1 / factor)
    double low = 1.0, high = 1.0;
    std::string why;
};
struct ProfileDerivation {
    std::string from;            // the measured profile's name
    bool extrapolated = false;   // another die: rates carried by a model no measurement on this GPU checked
    std::string notes;           // where the derivation is explained (a NOTES.md in the source tree)
    std::vector<DerivationStep> steps;
    bool empty() const { return from.empty() && steps.empty(); }
};

// The host's costs of an eager step over a captured op graph (model.type: ops) that its op-times table does not hold:
// time_ops.py times each aten op alone, so the Python of each nn.Module call (its __call__, hooks and forward's own
// code between ops) and autograd's per-node work (recording a node in the forward, running it in the engine in the
// backward) are missing. h200x2's: fitted on captured models' measured steps (calibration/profiles/h200x2/NOTES.md,
// "Ops host"); calibration/capture/fit_host.py fits them from host-split measurements with the GPU drained. 0: not
// measured, nothing added.
struct OpsHostRates {
    double module_call_us = 0.0;             // per nn.Module forward call (a recomputed one again)
    double autograd_node_forward_us = 0.0;   // per autograd node a forward op records
    double autograd_node_backward_us = 0.0;  // per node the autograd engine runs in the backward
    // FSDP2's Python per hook (fully_shard's pre-forward, post-forward, pre-backward and post-backward of each unit
    // and the root: its state machine, the unsharded parameters' swap, the reduce-scatter's bookkeeping)
    double fsdp2_hook_us = 0.0;
};

struct HardwareProfile {
    std::string name;
    std::string source;               // how it was made: "datasheet" or the calibration command
    std::string file;                 // where it was read from (not in the YAML): a path, or a built-in's path in the
    bool builtin = false;             // source tree with builtin set; empty for a profile made in code
    GpuRates gpu;
    MemoryRates memory;
    // by dtype name: "bf16", "fp16", "fp8" (the harness's cuBLASLt grid), "fp32"; and torch._scaled_mm as Float8Linear
    // calls it: "fp8_tensorwise", "fp8_rowwise", each with "_fast_accum" (calibration/pytorch/fp8_bench.py)
    std::map<std::string, GemmEfficiency> gemm;
    AttentionRates attention;
    LaunchRates launch;
    NcclModel nccl;
    std::vector<CollectiveFit> collectives;
    LinkRates links;
    IoRates io;
    Interference interference;
    JitterRates jitter;
    PowerModel power;                 // PowerModel.hpp
    CompileRates compile;
    OpsHostRates ops_host;
    ProfileDerivation derivation;
};

}  // namespace stepsim
