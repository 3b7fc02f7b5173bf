#pragma once
// The raw measurements of one calibration: JSON Lines written by stepsim-bench (calibration/bench) and by
// the PyTorch script (calibration/pytorch), read into typed records for the fit.
//
// Each line is one object with a "kind": metadata, collective, gemm, memory, transfer, launch,
// interference, interference_training, device_speed, host_spread, kernel, dispatch, host_overhead, ddp_host,
// ddp_find_unused,
// checkpoint_host, accumulate_host, power_duty, power_loaded; bookkeeping kinds (group_done, run_done, skipped,
// error) are kept only as counts/messages. Times are the per-record percentiles in microseconds ("time_us":
// {median, p10, p90, p99, mean, ...}). A line that is not JSON, has no "kind", or lacks a field its kind needs is an
// InputError naming file, line and key.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>
#include <utility>

namespace stepsim {

struct RawTimes {
    double median = 0, mean = 0, p10 = 0, p90 = 0, p99 = 0;
    int n = 0;
};

struct RawCollective {
    std::string op, dtype, algo = "auto", proto = "auto";
    double bytes = 0;
    int ranks = 0, nodes = 1;
    RawTimes time;
    double busbw_gbps = 0;
};

struct RawGemm {
    std::string dtype;               // "bf16" or "fp8_e4m3"
    std::optional<bool> fast_accum;  // FP8 only
    long m = 0, n = 0, k = 0;
    RawTimes time;
    double tflops = 0;
    double cv = 0;                   // coefficient of variation of the per-iteration times
    std::string source = "stepsim-bench";
    std::string scaling;             // torch._scaled_mm (source pytorch-scaled-mm): "tensorwise" or "rowwise"
};

struct RawMemory {  // HBM streaming kernels: op ∈ read, write, copy_kernel, memcpy_d2d
    std::string op;
    double size_bytes = 0, bytes_moved = 0;
    RawTimes time;
};

struct RawTransfer {  // op ∈ peer_ce, peer_sm, peer_ce_both, h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable
    std::string op;
    double size_bytes = 0, bytes_moved = 0;
    RawTimes time;
};

// calibration/pytorch/io_transfer.py: host↔device copies through PyTorch (copy), a local-disk write (disk) and
// torch.distributed.checkpoint saves (dcp: mode sync, async_default or async_pinned).
struct RawIoCopy {
    std::string direction;  // h2d or d2h
    bool pinned = false;
    double bytes = 0, device_us = 0, host_us = 0;
};
struct RawIoSave {
    std::string mode;  // dcp: sync, async_default, async_pinned; disk: "disk"
    double bytes = 0, blocking_ms = 0, total_ms = 0;
    int rep = 0;
    double launch_us_during = 0, launch_us_after = 0;  // async: the host's cost per launch beside the write, after it
};

struct RawLaunch {  // op ∈ host_enqueue, device_gap, device_period, graph_per_kernel, graph_host_launch, ...
    std::string op;
    RawTimes time;
    long m = 0, n = 0, k = 0;  // step_gap_gemm_shape[_beside_nccl] (gemm_gaps.py): the GEMM after the gap
    std::string form;          // and its form (forward, dgrad, wgrad)
    double comm_bytes = 0;     // kernel_gaps.py on two GPUs: the all-reduces beside the step (0: not recorded)
    // gemm_gaps.py: alone, or beside an NCCL kernel moving data (transfer) or waiting (waiting); the rank, and the
    // file it came from (ratios pair the records of one run and rank)
    std::string mode;
    int rank = 0;
    std::string file;
};

struct RawInterference {
    double comm_bytes = 0;
    int device = 0;
    double gemm_alone_us = 0, gemm_with_comm_us = 0, comm_alone_us = 0, comm_with_gemm_us = 0;
};

struct RawKernel {  // PyTorch-side kernels (flash attention, norms, activations, casts, optimizer)
    std::string op, dtype;
    std::optional<double> flops, bytes;
    RawTimes time;
    long seq = 0;       // attention: sequence length (0 otherwise)
    long head_dim = 0, batch = 0, heads = 0;
    bool causal = false;
    long tokens = 0, hidden = 0;  // norms and pointwise kernels: rows and width (0 otherwise)
};

struct RawDispatch {  // PyTorch eager dispatch: op ∈ eager_host, eager_per_op_device
    std::string op;
    RawTimes time;
};

// Host time eager PyTorch spends per kernel (calibration/pytorch/host_overhead.py): one record per run, one GPU
// or DDP; per layer, from the difference of a 10- and a 2-layer host-bound model.
struct RawHostOverhead {
    std::string file;  // runs of one file come from one machine start: a DDP run pairs with the one-GPU run before it
    bool ddp = false;
    double forward_us_per_kernel = 0, backward_us_per_kernel = 0, optimizer_us_per_param_tensor = 0;
    double backward_us_per_layer = 0, param_tensors_per_layer = 0;
    std::optional<double> allreduce_issue_us;  // DDP runs: host time of one async dist.all_reduce
    // DDP runs: backward per layer with gradient sync and under no_sync, timed alternately in one loop.
    std::optional<double> backward_sync_us_per_layer, backward_nosync_us_per_layer;
};

// DDP's host cost on a validation model itself (ddp_host.py): the model plain and under a one-rank DDP, a training
// step of each in turn, each phase's host time as it issues (median µs over the rounds) and its launches.
struct RawDdpHost {
    struct Phases {
        double forward_us = 0, backward_us = 0, forward_launches = 0, backward_launches = 0;
    };
    std::string id;
    double param_tensors = 0, buckets = 0;
    bool gradient_as_bucket_view = false;  // no copy back into the gradients after the all-reduce
    Phases plain, ddp;
};

// DDP's find_unused_parameters on a GPT (memory_check.py): the wrapped forward's host time per step (median µs over
// rounds in turn) of two one-rank DDP models, without and with find_unused_parameters, and the parameter tensors.
struct RawDdpFindUnused {
    double layers = 0, param_tensors = 0, ddp_us = 0, find_unused_us = 0;
};

// Activation checkpointing's extra host time per checkpointed layer against the plain model timed in the same
// rounds, and the kernels its recompute launches per layer (host_overhead.py's `checkpoint_host` records).
struct RawCheckpointHost {
    struct Mode {
        double forward_extra_us = 0, backward_extra_us = 0, recomputed_kernels = 0;
    };
    Mode selective, full;
    double plain_forward_us_per_kernel = 0;  // the plain model's forward cost per kernel in those rounds
};

// Gradient accumulation's host cost (host_overhead.py's `accumulate_host` records): the backward that finds .grad
// present against the one after zero_grad, alternated, per parameter tensor and over that loop's backward cost per
// kernel.
// Host time of one FP8 linear's forward and backward and the kernels each launched (fp8_bench.py's fp8_linear_host;
// recipe "bf16" is a plain Linear under autocast, for comparison).
struct RawFp8LinearHost {
    std::string recipe;
    double forward_us = 0, backward_us = 0;
    int forward_kernels = 0, backward_kernels = 0;
};

struct RawAccumulateHost {
    double us_per_param_tensor = 0, over_backward_kernel = 0;
};

// A training step's kernel timed alone and beside a resident NCCL kernel (interference_training.py): mode
// "transfer" (NCCL moving data), "waiting" (NCCL spinning for its peer) or "bucketed" (one bucket's all-reduce
// issued after each call, as DDP does); class gemm, attention or memory. comm_slowdown: the all-reduce's time
// beside the calls over its time alone.
struct RawStepInterference {
    std::string mode, cls, op;
    double alone_us = 0, with_comm_us = 0;
    double comm_slowdown = 0;
    double comm_bytes = 0;  // the all-reduces' size (0: not recorded)
    long m = 0, n = 0, k = 0;  // a GEMM's shape, when the record gives it (--gemm-shapes); 0: not given
};

// An all-reduce's own rate beside a stream of compute kernels, its kernel resident before they start, so it waits
// for no SMs (interference_training.py --modes resident): its time moving data beside the calls over the same
// time alone. cls: the class of the calls (gemm, attention, memory).
struct RawCommBeside {
    std::string cls, op;
    double comm_bytes = 0, comm_alone_us = 0, slowdown = 0;
};

// One GPU's speed with every GPU of the machine loaded at once, at the power limit (device_speed.py): a set is one
// such measurement across the ranks.
struct RawDeviceSpeed {
    std::string set;
    int rank = 0;
    double gemm_tflops = 0, memory_gbps = 0;
};

// Training processes running at once, host-bound, on one machine (host_spread.py): per window of `window_s`, each
// process's median step time (ms), every window with one per process.
struct RawHostSpread {
    std::string file;
    double window_s = 0;
    std::vector<std::vector<double>> windows;
};

// A load held at the power limit and the clock and power it held there (power_duty.py): a mix's sustained windows
// (power_duty) or a kernel's later cycles under a background load (power_loaded). load_tflops: tensor-core FLOP per
// second of cycle time; memory_fraction: the share of the cycle in memory-bound kernels; busy_fraction: the share
// with a kernel running (below 1 for mixes where the host sleeps part of each cycle, counts.idle_ms > 0). Records
// of power_duty.py's first form (raw/power_duty-1.jsonl) carry neither: a mix without idle time is busy
// throughout, its memory share 1 − compute_fraction; an idle mix of compute-bound kernels alone is busy for its
// compute_fraction.
struct RawPowerPoint {
    double load_tflops = 0, memory_fraction = 0, clock_mhz = 0, power_w = 0;
    double busy_fraction = 1;
    double rested_clock_mhz = 0;    // the highest clock read beside its rested times (reference_clock, burst_clock)
};

// An attention kernel timed under a held load (time_us, at clock_mhz) and alone in spin-and-burst loops (burst_us,
// at burst_clock_mhz): power_duty.py's power_loaded records of class attention. A forward_backward record pairs
// with the forward one of the same file, rank, load and shape.
struct RawAttentionClock {
    std::string file, load;
    int rank = 0;
    long batch = 0, heads = 0, kv_heads = 0, seq = 0, head_dim = 0;
    bool forward_backward = false;  // pass "forward_backward"; false: "forward"
    double time_us = 0, burst_us = 0, clock_mhz = 0, burst_clock_mhz = 0;
};

// torch.compile's kernels against eager on one transformer block (calibration/pytorch/compile_kernels.py's
// `compile_block` records): per phase, the kernels other than GEMM and attention ("other": what Inductor fuses), their
// summed time, the eager maximal runs of them between GEMM/attention kernels (regions) and the GEMMs' time.
struct RawCompileBlock {
    struct Phase {
        double other = 0, other_ms = 0, regions = 0, gemm_ms = 0;
    };
    std::string mode, mlp, norm, dtype;
    long hidden = 0;
    Phase eager_forward, eager_backward, compiled_forward, compiled_backward;
    double compile_s = 0;  // the first compiled forward + backward's wall time
};

// Host time of a host-bound forward + backward of a stack of tiny blocks (compile_kernels.py's `compile_host`), eager
// or compiled in a mode: µs per call, the kernels it launches and the compiled graphs it calls.
struct RawCompileHost {
    std::string mode;
    int blocks = 0;
    double kernels = 0, graphs = 0, host_us = 0;
};

// One AdamW step over a GPT's parameter tensors (compile_parts.py's `compile_optimizer`): impl foreach, fused or
// compiled (torch.compile of the foreach step), its kernels, their summed time, the host time to issue it and, compiled,
// the first call's wall time.
struct RawCompileOptimizer {
    std::string impl;
    double tensors = 0, params = 0, kernels = 0, kernel_ms = 0, host_us = 0, compile_s = 0;
};

// The loss (cross-entropy under autocast on bf16 logits) and its backward, eager or compiled (compile_parts.py's
// `compile_loss`): kernels and summed time per phase.
struct RawCompileLoss {
    bool compiled = false;
    double tokens = 0, forward_kernels = 0, forward_ms = 0, backward_kernels = 0, backward_ms = 0;
};

// One Linear under bf16 autocast, forward and backward, eager or compiled (fp8_compiled.py's `fp8_compiled_linear`):
// recipe bf16, tensorwise or rowwise, with or without a bias; per phase the cast kernels (neither GEMM nor memset):
// their count and summed time.
struct RawFp8CompiledLinear {
    std::string recipe;
    bool bias = false, compiled = false;
    double tokens = 0, in = 0, out = 0;
    double forward_kernels = 0, forward_us = 0, backward_kernels = 0, backward_us = 0;
};

struct RawData {
    std::vector<std::string> files;
    std::string gpu_model;
    std::optional<int> sms;
    std::optional<double> memory_gib;
    int gpu_count = 0;
    std::vector<RawCollective> collectives;
    std::vector<RawGemm> gemms;
    std::vector<RawMemory> memory;
    std::vector<RawTransfer> transfers;
    std::vector<RawIoCopy> io_copies;
    std::vector<RawIoSave> io_saves;
    std::vector<RawLaunch> launches;
    std::vector<RawCheckpointHost> checkpoint_host;
    std::vector<RawAccumulateHost> accumulate_host;
    std::vector<RawInterference> interference;
    std::vector<RawStepInterference> step_interference;
    std::vector<RawCommBeside> comm_beside;
    std::vector<RawDeviceSpeed> device_speed;
    std::vector<RawHostSpread> host_spread;
    std::vector<RawPowerPoint> power;
    std::vector<RawAttentionClock> attention_clock;
    std::vector<RawKernel> kernels;
    std::vector<RawDispatch> dispatch;
    std::vector<RawHostOverhead> host;
    std::vector<RawDdpHost> ddp_host;
    std::vector<RawDdpFindUnused> ddp_find_unused;
    std::vector<RawCompileBlock> compile_blocks;
    std::vector<RawCompileHost> compile_host;
    // compile_block records that say `dynamic` (compile_parts.py: the same block with dynamic true and false), kept
    // apart from compile_kernels.py's blocks
    std::vector<std::pair<bool, RawCompileBlock>> compile_dynamic_blocks;
    std::vector<RawCompileOptimizer> compile_optimizer;
    std::vector<RawCompileLoss> compile_loss;
    std::vector<RawFp8CompiledLinear> fp8_compiled_linear;
    std::vector<RawFp8LinearHost> fp8_linear_host;
    std::vector<std::string> errors;  // "error" records: groups that failed during the run
    int skipped = 0;                  // "skipped" records: measurements left out by the time limit
};

// Reads and appends one JSON Lines file.
void readRaw(const std::filesystem::path& file, RawData& into);
RawData readRaw(const std::vector<std::filesystem::path>& files);

}  // namespace stepsim
