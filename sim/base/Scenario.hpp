#pragma once
// A what-if scenario: the plain data read from a scenario YAML file (schema in docs/scenario.md, version 1).
//
// Every member's default is what PyTorch/NCCL do by default, so an empty section means "stock PyTorch".
// The loader (sim/scenario/ScenarioLoader.hpp) is the only code that fills it from YAML; everything downstream reads
// these structs and never sees YAML.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/TraceStep.hpp"

namespace stepsim {

struct OpGraph;  // sim/base/OpGraph.hpp (model.type: ops)

// gelu: two matrices (GPT); swiglu: silu(gate(x)) * up(x), three (Llama); geglu: the same gated MLP with the
// tanh-approximate GELU on the gate (Gemma).
enum class MlpKind { gelu, swiglu, geglu };
// Whose code the built-in model's kernel sequence follows: this project's training script (calibration/pytorch's
// model, the default), Hugging Face transformers' modeling code, nanoGPT's model.py, torchtitan's Llama.
enum class ModelImplementation { stepsim, hf, nanogpt, torchtitan };
enum class NormKind { layernorm, rmsnorm };
// How positions enter the model: a learned table added to the token embedding (GPT-2), rotary embeddings applied to
// q and k in every layer (Llama), or nothing.
enum class PositionEmbedding { learned, rope, none };
// How q, k and v come out of the attention's projection: one fused Linear split along its last dimension (the
// validation harness, nanoGPT), the same Linear viewed (B, T, 3, heads, head_dim) and permuted, or three Linears.
enum class QkvLayout { fused, fused_permute, separate };
// The dtype the loss's log-softmax runs in: the logits' as the step computes them (bf16 under autocast), or fp32
// (logits.float() before the loss).
enum class LossDtype { compute, fp32 };
enum class DType { fp32, bf16, fp16, fp8 };
enum class Optimizer { adamw, adam, sgd };
// How the optimizer step runs: PyTorch's default on CUDA is foreach (one multi-tensor kernel per arithmetic step of
// the update over every parameter); fused=True runs the whole update in one.
enum class OptimizerImpl { foreach, fused };
// selective: the attention's recompute (Megatron's selective); selective_op: torchtitan's op-level policy
// (torch.utils.checkpoint's selective checkpoint context saving SDPA's outputs and every other matmul's output of a
// block, the rest recomputed in backward); full: the whole block.
enum class Checkpointing { none, selective, full, selective_op };
enum class DataParallel { ddp, fsdp1, fsdp2, hsdp, zero1, zero2, zero3 };
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved, zero_bubble };
// How the ranks are laid out, innermost dimension first (Megatron's order string): tp-dp-pp puts a TP group on
// consecutive ranks (one NVSwitch node), then data parallelism, then pipeline stages (torchtitan's and Megatron's).
enum class RankOrder { tp_dp_pp, tp_pp_dp, dp_tp_pp, dp_pp_tp, pp_tp_dp, pp_dp_tp };
// quantize_8bit: PyTorch's quantization_pertensor_hook (ddp_comm_hooks/quantization_hooks.py: uint8, all-gather);
// quantize_4bit: the same hook with two 4-bit values packed per byte (not shipped by PyTorch).
enum class CommHook { none, fp16_compress, bf16_compress, powersgd, quantize_8bit, quantize_4bit };

enum class BackwardPrefetch { pre, post, none };
enum class CompileMode { default_, reduce_overhead, max_autotune, max_autotune_no_cudagraphs };
enum class DdpCompileStrategy { ddp_optimizer, python_reducer, no_optimization };
enum class Fp8Recipe { tensorwise, rowwise };
enum class CheckpointMode { sync, async };
enum class NcclAlgo { auto_, ring, tree, nvls, collnet };
enum class NcclProto { auto_, ll, ll128, simple };
enum class Switch { auto_, on, off };

struct NetworkSpec {
    std::string fabric = "rail-fat-tree";
    double nic_gbps = 400.0;       // Gb/s per NIC
    int nics_per_node = 8;
    double oversubscription = 1.0;
};

struct ClusterSpec {
    std::string node = "hgx-h200";  // built-in node type, or a topology YAML file
    int nodes = 1;
    int gpus_per_node = 8;
    std::string profile = "builtin";  // "builtin" (the node's default), a built-in name, or a profile YAML
    // What differs between hosts of one GPU (null: the profile's): the power cap (W), the HBM capacity (GiB) and its
    // bandwidth (TB/s); the profile is carried to them by sim/cost/ProfileDerive.hpp.
    std::optional<double> power_limit_w, hbm_gib, hbm_tbps;
    NetworkSpec network;
    int worldSize() const { return nodes * gpus_per_node; }
};

struct ModelSpec {
    std::string type = "transformer";  // transformer | trace | ops
    std::string trace;                 // with type: trace
    // With type: trace, the parameters the model trains (gradients DDP reduces) when the trace's backward GEMMs do
    // not account for them all (embeddings, norms): the rest is one more gradient, ready last; 0: the GEMMs' alone.
    double trace_params = 0.0;
    // With type: trace, each launch's host cost: "traced" (as the trace ran, the profiler's overhead included) or
    // "profile" (the profile's host cost for the launch's phase: sim/cost/TraceHostCost.hpp).
    std::string trace_host = "traced";
    std::shared_ptr<const TraceStep> imported;  // the trace's step, read by the loader (sim/scenario/TraceImport.hpp)
    // With type: ops (docs/ops.md): the captured op graph (.ops.json.gz), and optionally the table of its ops measured
    // on a GPU (stepsim calibrate --ops); the graph as the loader read it, its dimensions at training.micro_batch and
    // seq_len (sim/scenario/OpsImport.hpp).
    std::string ops;
    std::string op_times;
    std::shared_ptr<const OpGraph> graph;
    // A Hugging Face config.json (relative to the scenario's folder): sets the model keys and implementation: hf
    // (sim/scenario/HfConfig.hpp); a key the scenario sets as well keeps the scenario's value, with a warning.
    std::string hf_config;
    std::vector<std::string> hf_overrides;  // those warnings, filled by the loader
    ModelImplementation implementation = ModelImplementation::stepsim;
    int layers = 24;
    int hidden = 2048;
    int heads = 16;
    std::optional<int> kv_heads;       // default: heads
    std::optional<int> head_dim;       // default: hidden / heads (Gemma's 256 is not)
    std::optional<int> ffn_hidden;     // default: 4·hidden (gelu), 8/3·hidden rounded to 256 (swiglu)
    int vocab = 50304;
    int seq_len = 2048;
    MlpKind mlp = MlpKind::gelu;
    NormKind norm = NormKind::layernorm;
    bool tied_embeddings = false;
    bool linear_bias = false;  // a bias in every Linear of the blocks (GPT-2 / nanoGPT); the LM head has none
    bool qkv_bias = false;     // a bias on the q, k and v projections only (Qwen2)
    bool fused_gate_up = false;  // a gated MLP's gate and up as one Linear, chunked in two (Phi-3)
    bool embedding_scale = false;  // the token embedding multiplied by sqrt(hidden) (Gemma)
    PositionEmbedding position_embedding = PositionEmbedding::learned;
    QkvLayout qkv = QkvLayout::fused;
    LossDtype loss_dtype = LossDtype::compute;
    double dropout = 0.0;  // nn.Dropout's p on the embeddings, in SDPA and on the residual branches (nanoGPT); 0: none
};

struct TrainingSpec {
    int micro_batch = 4;
    int grad_accum = 1;
    DType param_dtype = DType::fp32;
    DType compute_dtype = DType::bf16;
    Optimizer optimizer = Optimizer::adamw;
    OptimizerImpl optimizer_impl = OptimizerImpl::foreach;
    // torch.optim.SGD's momentum (PyTorch's default 0: no momentum buffer); only with optimizer: sgd.
    double sgd_momentum = 0.0;
    // torch.nn.utils.clip_grad_norm_(max_norm) before the optimizer step; 0: no clipping (PyTorch's default).
    double grad_clip_norm = 0.0;
    Checkpointing activation_checkpointing = Checkpointing::none;
};

struct ParallelSpec {
    DataParallel data = DataParallel::ddp;
    int tp = 1;
    int pp = 1;
    PipelineSchedule pp_schedule = PipelineSchedule::one_f_one_b;
    int pp_virtual_stages = 1;        // model chunks per pipeline rank (interleaved 1F1B)
    bool sequence_parallel = false;   // Megatron's SP: norms and dropout on seq/tp tokens, AG/RS instead of AR
    bool async_tp = false;            // torch's micro-pipelined TP: SP's collectives in chunks overlapped with GEMMs
    RankOrder order = RankOrder::tp_dp_pp;
};

struct DdpSpec {
    double bucket_cap_mb = 25.0;   // MiB, as torch's bucket_cap_mb
    double first_bucket_mb = 1.0;  // MiB, torch's _DEFAULT_FIRST_BUCKET_BYTES
    bool gradient_as_bucket_view = false;
    bool find_unused_parameters = false;
    bool static_graph = false;
    CommHook comm_hook = CommHook::none;
    // The gradients of this many parameter tensors (the first to become ready in backward) are
    // all-reduced a second time, each by its own synchronous dist.all_reduce from a gradient hook beside DDP's bucket
    // (a parameter registered twice for synchronization). 0: none (what a correct script does).
    int duplicate_gradients = 0;
    // PowerSGDState's parameters (torch/distributed/algorithms/ddp_comm_hooks/powerSGD_hook.py), with comm_hook: powersgd.
    int powersgd_rank = 1;                       // matrix_approximation_rank
    int powersgd_start_iter = 1000;              // start_powerSGD_iter: vanilla all-reduce before this step
    double powersgd_min_compression_rate = 2.0;  // min_compression_rate
    bool powersgd_error_feedback = true;         // use_error_feedback
    bool powersgd_warm_start = true;             // warm_start
};

// fully_shard(reshard_after_forward=): true (free each block's gathered parameters after its forward, gather them again
// before its backward), false (keep them), or an integer N (keep a 1/N shard, gathered again over a group of N ranks).
// The loader turns N = 1 into false and N = the shard group's size into true, as fully_shard does.
struct ReshardAfterForward {
    bool on = true;
    int ranks = 0;  // > 0: the post-forward group's size N (with on)
    ReshardAfterForward(bool b = true) : on(b) {}  // NOLINT: true/false read as they always did
    static ReshardAfterForward toRanks(int n) {
        ReshardAfterForward r(true);
        r.ranks = n;
        return r;
    }
    explicit operator bool() const { return on; }
    bool operator==(const ReshardAfterForward&) const = default;
};

struct FsdpSpec {
    ReshardAfterForward reshard_after_forward;
    BackwardPrefetch backward_prefetch = BackwardPrefetch::pre;
    bool forward_prefetch = false;
    bool limit_all_gathers = true;
    // MixedPrecisionPolicy (FSDP2) / MixedPrecision (FSDP1): the dtype parameters are gathered and computed in, and
    // the dtype gradients are reduced in. Null: no policy (gathered in training.param_dtype; reduced in the
    // gradients' dtype).
    std::optional<DType> param_dtype;
    std::optional<DType> reduce_dtype;
    // Gradient accumulation: reduce-scatter every micro-batch (PyTorch's default); false: set_requires_gradient_sync
    // (False) (FSDP1: no_sync()) on every micro-batch but the last, unsharded gradients kept until one reduction.
    bool sync_every_micro_batch = true;
    // With model.type: ops, FSDP2's units: the modules of this class (or whose dotted path matches this pattern, `*`
    // for one path component), each fully_shard'ed; empty: the class the graph repeats most (OpsUnits.hpp).
    std::string units;
};

// DeepSpeed's ZeRO (parallel.data zero1 | zero2 | zero3), its zero_optimization keys and defaults (DeepSpeedZeroConfig;
// sizes in elements, as DeepSpeed counts them).
struct ZeroSpec {
    double reduce_bucket_size = 5e8;            // gradient elements reduced at a time
    std::optional<bool> overlap_comm;           // null: DeepSpeed's default, true for stage 3 and false below
    double stage3_prefetch_bucket_size = 5e7;   // parameter elements fetched ahead of use
    double stage3_max_reuse_distance = 1e9;     // a module used again within this many elements stays gathered
    double stage3_param_persistence_threshold = 1e5;  // parameters smaller than this are never partitioned
};

// torch.compile of the model (docs/compile.md; the transformation is sim/workload/CompileTransform.hpp).
struct CompileSpec {
    bool enabled = false;
    bool fullgraph = false;
    std::optional<bool> dynamic;  // null: torch's default (automatic dynamic shapes)
    CompileMode mode = CompileMode::default_;
    // torch._dynamo.config.optimize_ddp: ddp_optimizer (the graph split at bucket boundaries), python_reducer
    // (compiled autograd traces the reducer), none (False: one graph, DDP's all-reduces after the whole backward).
    DdpCompileStrategy optimize_ddp = DdpCompileStrategy::ddp_optimizer;
    bool loss = false;              // the loss compiled with the model (false: torch.compile(model) alone)
    bool optimizer = false;         // the optimizer step compiled too (torch.compile(opt.step))
    int graph_breaks = 0;           // graph breaks per forward (and per backward): graph_breaks + 1 graphs each
    int comm_fusion_depth = 1;      // consecutive collectives of one kind the compiler merges into one (1: none)
    bool async_collectives = true;  // functional collectives, their wait deferred to first use (false: wait at once)
};

struct Fp8Spec {
    bool enabled = false;
    Fp8Recipe recipe = Fp8Recipe::tensorwise;
    bool fp8_all_gather = false;
    // After each FSDP all-gather the gathered FP8 weights are converted to BF16 by an op that
    // synchronizes the host with the all-gather (sim/workload/Fp8Linear.hpp); needs parallel.data fsdp2.
    bool sync_after_all_gather = false;
};

struct DataLoaderSpec {
    bool pin_memory = false;
    int num_workers = 0;
    int prefetch_factor = 2;          // batches each worker keeps in flight (torch.utils.data.DataLoader's)
    double batch_cpu_ms = 0.0;        // CPU time to load and collate one batch (in a worker, or the main thread)
    std::optional<double> sample_bytes;  // host bytes per sample copied to the GPU; default: seq_len + 1 int64 tokens
    bool modelled = false;               // the scenario has a data_loader section (set by the loader)
};

struct CheckpointSpec {
    int interval_steps = 0;  // 0: never
    CheckpointMode mode = CheckpointMode::sync;
    bool pinned_staging = false;            // async staging into page-locked host memory
    std::optional<double> storage_GBps;     // write rate per node; default: the profile's (io.dcp_*_write_gbps)
};

struct NcclSpec {
    NcclAlgo algo = NcclAlgo::auto_;
    NcclProto proto = NcclProto::auto_;
    Switch nvls = Switch::auto_;
};

// A straggler (docs/scenario.md, "jitter.stragglers"; the model in docs/jitter.md): what is slow, where, by how much.
//   target gpu:  the rank's kernels take `factor` times as long        host: its host launches cost `factor` times as much
//   target rank: both (a slow process: GPU and host)                    link: the NCCL flows it sends move at 1/factor
// Where: `ranks` (fixed for the run), or `random: n` (n ranks drawn per step, uniformly, seeded from (sim.seed, sample,
// straggler, step)). How much: `factor` (fixed), or with `cv` > 0 drawn per step and rank from a lognormal of mean
// `factor` and that coefficient of variation.
enum class StragglerTarget { gpu, host, rank, link };

struct StragglerSpec {
    StragglerTarget target = StragglerTarget::gpu;
    std::vector<int> ranks;
    int random = 0;
    double factor = 1.0;
    double cv = 0.0;
};

struct JitterSpec {
    bool enabled = true;
    std::vector<StragglerSpec> stragglers;
};

struct SimSpec {
    int steps = 3;
    std::uint64_t seed = 1;
    int samples = 1;
    // auto: ranks of one class (the same Program on the same kind of links) are simulated once where that is exact
    // (docs/performance.md, "Symmetry"); off: every rank is simulated.
    std::string symmetry = "auto";
};

struct Scenario {
    int stepsim = 1;
    std::string name;
    std::string source;  // the file it was read from ("" when built in code)
    // Settings read but without effect in the case asked (a strategy's keys under another strategy, a checkpoint's
    // options with no checkpoint, ...): the loader keeps them at their defaults and says so here, for the result's
    // warnings (docs/scenario.md, "Keys with no effect").
    std::vector<std::string> warnings;
    ClusterSpec cluster;
    ModelSpec model;
    TrainingSpec training;
    ParallelSpec parallel;
    DdpSpec ddp;
    FsdpSpec fsdp;
    ZeroSpec zero;
    CompileSpec compile;
    Fp8Spec fp8;
    DataLoaderSpec data_loader;
    CheckpointSpec checkpoint;
    NcclSpec nccl;
    JitterSpec jitter;
    SimSpec sim;
};

// Derived values (kept unset in the Scenario so they follow the values they derive from; use these):
//   kv_heads   = heads                                   (multi-head attention)
//   ffn_hidden = 4·hidden                                (gelu: GPT-2/3, two matrices)
//              = 256·ceil((8/3·hidden) / 256)            (swiglu: LLaMA's 2/3·4·hidden rounded up to a multiple
//                                                        of 256; Touvron et al. 2023, llama/model.py multiple_of)

inline int kvHeads(const ModelSpec& m) { return m.kv_heads.value_or(m.heads); }

// The ffn_hidden that `m.mlp` implies for `m.hidden` (what an absent ffn_hidden means).
inline int defaultFfnHidden(const ModelSpec& m) {
    if (m.mlp == MlpKind::gelu) return 4 * m.hidden;  // swiglu and geglu: the gated rule
    const long long h = m.hidden;
    return static_cast<int>(256 * ((8 * h + 3 * 256 - 1) / (3 * 256)));  // 256·ceil(8h / (3·256))
}

inline int ffnHidden(const ModelSpec& m) { return m.ffn_hidden.value_or(defaultFfnHidden(m)); }

// An attention head's width: model.head_dim, else hidden / heads.
inline int headDim(const ModelSpec& m) { return m.head_dim.value_or(m.heads > 0 ? m.hidden / m.heads : 0); }

// Whether the MLP is gated (gate, up and down matrices: swiglu, geglu).
inline bool gatedMlp(MlpKind k) { return k != MlpKind::gelu; }

// FP8 linears on (fp8.enabled, or training.compute_dtype: fp8, which asks for the same: torchao's Float8Linear
// with every other op in bf16).
inline bool fp8Training(const Scenario& s) { return s.fp8.enabled || s.training.compute_dtype == DType::fp8; }

}  // namespace stepsim
