#pragma once
// A Program: the one thing the engine executes, per rank (DESIGN.md, "Data flow").
//
// A rank's host thread issues the ops in order. Each launch costs host time (`host_s`, drawn with jitter
// by the engine); the op then joins the FIFO of its stream. Stream ops start when they reach the head of
// their stream, the previous op there has finished and, for a collective, every member rank's copy has
// reached the head of its stream too (NCCL's barrier). Events link streams as CUDA events do.
//
// Whether the ops were expanded from a model description (Expand.hpp) or imported from a profiler trace,
// the engine sees only this.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace stepsim {

enum class OpKind : std::uint8_t {
    kernel,        // GPU work on a stream: `work_s` seconds at full speed
    collective,    // NCCL collective on a stream; `collective` indexes Program::collectives
    record_event,  // record `event` on `stream` (completes when the stream reaches it)
    wait_event,    // `stream` waits until `event` has completed (cudaStreamWaitEvent)
    host_sync,     // host blocks until `event` has completed (cudaEventSynchronize / .item())
    host_work,     // host thread busy for `host_s` (Python, data loading, hooks); no GPU work
    step_end,      // marker on `stream`: records the time the step `step` finished on this rank
    transfer,      // data moved between the GPU, host memory and storage, or a loader worker's CPU time, on
                   // `stream`; `collective` indexes Program::transfers (Transfers.hpp)
};

// What a transfer op moves (InputPipeline.hpp, CheckpointIo.hpp): a host-to-device or device-to-host copy over the
// GPU's PCIe link, a write of host memory to the node's storage, or a DataLoader worker's CPU time for one batch
// (no data moved: `seconds` of a worker process).
enum class TransferKind : std::uint8_t { h2d, d2h, storage_write, loader_work };
constexpr std::string_view transferKindName(TransferKind k) {
    switch (k) {
        case TransferKind::h2d: return "h2d";
        case TransferKind::d2h: return "d2h";
        case TransferKind::storage_write: return "storage_write";
        case TransferKind::loader_work: return "loader_work";
    }
    return "h2d";
}

struct TransferCall {
    TransferKind kind = TransferKind::h2d;
    bool pinned = false;    // copies: from or into page-locked host memory
    double bytes = 0.0;
    double cap_Bps = 0.0;   // the rate one such transfer reaches alone (the profile's), 0 for loader work
    double alpha_s = 0.0;   // its fixed cost before the data moves
    double seconds = 0.0;   // loader_work: the worker's CPU time; a checkpoint's staging: the host's planning before it
    int checkpoint = -1;    // the checkpoint it belongs to (CheckpointIo.hpp), -1: input pipeline
    bool blocking = false;  // the host waits for it (a pageable copy, a checkpoint's blocking part)
    bool operator==(const TransferCall&) const = default;
};

// What a kernel is, for pricing and for reports.
enum class KernelClass : std::uint8_t { gemm, attention, memory, optimizer, copy, comm, other };
inline constexpr std::size_t kKernelClasses = 7;
static_assert(std::size_t(KernelClass::other) + 1 == kKernelClasses, "kKernelClasses counts KernelClass");

// How a memory-bound kernel streams through HBM, for pricing (HardwareProfile's memory.kernels).
// residual_add: an fp32 tensor plus a bf16 one into fp32 (autocast's residual stream), which PyTorch runs on its
// slower unrolled path with a cast per element, not the vectorized one of same-dtype elementwise kernels.
// optimizer_bf16: fused AdamW on 16-bit parameters and states (its fp32 arithmetic, not the bytes, sets its pace);
// optimizer_foreach: the passes of AdamW's default foreach step (simple multi-tensor kernels, faster per byte).
// log_softmax_*: the loss's log-softmax over the vocabulary, a row reduction slower than streaming, on 16-bit logits
// (as autocast runs it) or fp32 ones.
// fp8_*: the eager ops of a cast to FP8 as torchao's Float8Linear runs them (sim/workload/Fp8Linear.hpp): abs, the
// max over the tensor or its rows or columns, the scale's scalar (or per-row) math, the upcast to fp32, the multiply
// by the scale, the clamp, the conversion to fp8, an fp8 transpose into _scaled_mm's layout, and rowwise's output
// rescale (the reciprocal scales' outer product, then the in-place multiply); each fitted on its own
// (calibration/pytorch/fp8_bench.py), else priced as elementwise.
enum class MemKind : std::uint8_t {
    elementwise, cast_up, cast_down, norm_forward, norm_backward, optimizer, residual_add, optimizer_bf16,
    log_softmax_forward, log_softmax_backward, log_softmax_forward_fp32, log_softmax_backward_fp32, optimizer_foreach,
    optimizer_foreach_bf16, norm_weight_grad, rms_forward, rms_backward, rms_weight_grad, gelu_forward,
    fp8_abs, fp8_amax, fp8_amax_rows, fp8_amax_cols, fp8_scale_math, fp8_upcast, fp8_scale_mul, fp8_clamp,
    fp8_quantize, fp8_transpose, fp8_post_scale, fp8_post_scale_mul, bias_grad, rope,
    qkv_permute_cat, qkv_permute_copy, dropout, dropout_backward
};
inline const char* memKindName(MemKind k) {
    constexpr const char* names[] = {"elementwise",         "cast_up",                  "cast_down",
                                     "norm_forward",        "norm_backward",            "optimizer",
                                     "residual_add",        "optimizer_bf16",           "log_softmax_forward",
                                     "log_softmax_backward", "log_softmax_forward_fp32", "log_softmax_backward_fp32",
                                     "optimizer_foreach",   "optimizer_foreach_bf16",   "norm_weight_grad",
                                     "rms_forward",         "rms_backward",             "rms_weight_grad",
                                     "gelu_forward",        "fp8_abs",                  "fp8_amax",
                                     "fp8_amax_rows",       "fp8_amax_cols",            "fp8_scale_math",
                                     "fp8_upcast",          "fp8_scale_mul",            "fp8_clamp",
                                     "fp8_quantize",        "fp8_transpose",            "fp8_post_scale",
                                     "fp8_post_scale_mul",  "bias_grad",                "rope",
                                     "qkv_permute_cat",     "qkv_permute_copy",         "dropout",
                                     "dropout_backward"};
    return names[static_cast<int>(k)];
}
// The kernels of a norm (LayerNorm: norm_*, RMSNorm: rms_*): forward, the backward's input gradient and its weight
// gradient. Their ops carry {m = rows, n = hidden, k = element bytes} in `gemm` and are priced from the profile's
// measured grid (MemoryRates::norms).
inline bool isNormKind(MemKind k) {
    return k == MemKind::norm_forward || k == MemKind::norm_backward || k == MemKind::norm_weight_grad ||
           k == MemKind::rms_forward || k == MemKind::rms_backward || k == MemKind::rms_weight_grad;
}

// Where in the training step an op sits (for pricing attention backward, and for reports).
enum class Phase : std::uint8_t { forward, backward, optimizer, other };

enum class CollectiveKind : std::uint8_t { all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv };

// nccl-tests' and PyTorch's spelling of each collective (also the profile's `op`).
constexpr std::string_view collectiveKindName(CollectiveKind k) {
    switch (k) {
        case CollectiveKind::all_reduce: return "all_reduce";
        case CollectiveKind::all_gather: return "all_gather";
        case CollectiveKind::reduce_scatter: return "reduce_scatter";
        case CollectiveKind::alltoall: return "alltoall";
        case CollectiveKind::broadcast: return "broadcast";
        case CollectiveKind::sendrecv: return "sendrecv";
    }
    return "all_reduce";
}

struct GemmShape {
    long m = 0, n = 0, k = 0;
    bool operator==(const GemmShape&) const = default;
};

struct CollectiveCall {
    CollectiveKind kind = CollectiveKind::all_reduce;
    int group = 0;            // process group index (Workload::groups)
    double bytes = 0.0;       // nccl-tests' size S: the buffer of one rank (all_reduce: in = out)
    std::string dtype = "bf16";
    bool operator==(const CollectiveCall&) const = default;
};

struct Op {
    OpKind kind = OpKind::kernel;
    KernelClass cls = KernelClass::other;
    Phase phase = Phase::other;
    MemKind mem = MemKind::elementwise;  // for memory-bound kernels
    std::uint8_t stream = 0;  // index into Program::streams
    std::uint32_t name = 0;   // index into Program::names
    std::uint32_t event = 0;  // record_event / wait_event / host_sync
    std::uint32_t collective = 0;  // index into Program::collectives
    std::int32_t step = 0;    // training step this op belongs to
    GemmShape gemm;           // for cls == gemm; attention and norm kernels: their shape (see each)
    double flops = 0.0;       // model FLOPs of a kernel (for MFU and reports)
    double bytes = 0.0;       // HBM bytes moved by a kernel, or collective size
    double work_s = 0.0;      // kernel duration at full speed, set by pricing
    double host_s = 0.0;      // host time to issue this op (median; the engine adds jitter)
    // A GEMM's own slowdown beside a resident NCCL kernel and launch gaps in a step (s), alone and beside an NCCL
    // kernel moving data, set by pricing; 0: its class's. Floats keep the op at 96 bytes (the engine streams through
    // millions of them).
    float beside_nccl = 0.0f;
    float gap_s = 0.0f;
    float gap_transfer_s = 0.0f;
    // A memory-bound kernel in a chain of eager ops that torch.compile fuses into one (Hugging Face's decomposed
    // norms, activations and rotary products): the bytes its tensors add to the fused kernel, the chain's external
    // inputs and outputs only, 0 for an intermediate (CompileTransform.hpp); < 0: not in such a chain.
    float fused_bytes = -1.0f;
    bool operator==(const Op&) const = default;
};
static_assert(sizeof(Op) == 96, "the engine streams through millions of ops: keep Op at 96 bytes");

enum class StreamKind : std::uint8_t { compute, comm, copy };

struct StreamInfo {
    StreamKind kind = StreamKind::compute;
    std::string name;
    bool operator==(const StreamInfo&) const = default;
};

struct Program {
    std::vector<StreamInfo> streams;
    std::vector<std::string> names;
    std::vector<CollectiveCall> collectives;
    std::vector<TransferCall> transfers;
    std::vector<Op> ops;
    std::uint32_t events = 0;  // number of distinct event ids used

    std::uint32_t intern(const std::string& n) {
        auto [it, added] = name_index.try_emplace(n, static_cast<std::uint32_t>(names.size()));
        if (added) names.push_back(n);
        return it->second;
    }
    bool operator==(const Program&) const = default;

private:
    std::map<std::string, std::uint32_t> name_index;
};

struct ProcessGroup {
    std::string name;
    std::vector<int> ranks;
};

// Everything the engine runs: one Program per rank, and the process groups their collectives use.
struct Workload {
    std::vector<Program> programs;
    std::vector<ProcessGroup> groups;
    int steps = 1;
    double model_flops_per_step = 0.0;  // per GPU, for MFU (6·N·tokens + attention)
    double tokens_per_step = 0.0;       // per GPU
    double samples_per_step = 0.0;      // per GPU
    int checkpoint_interval = 0;        // steps between checkpoints (CheckpointIo.hpp), 0: none
    int pipeline_stages = 1;            // parallel.pp: the metrics report the pipeline's bubble when > 1
    // The symmetry reduction (sim/engine/Symmetry.hpp): the job has representative.size() ranks, of which the first
    // programs.size() are simulated, and rank r runs as the simulated rank representative[r] does. Empty: every rank
    // is simulated.
    std::vector<int> representative;
    int ranks() const { return static_cast<int>(representative.empty() ? programs.size() : representative.size()); }
};

}  // namespace stepsim
