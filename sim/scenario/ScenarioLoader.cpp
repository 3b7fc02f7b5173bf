#include "sim/scenario/ScenarioLoader.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include "sim/base/Files.hpp"
#include "sim/base/InputError.hpp"
#include "sim/base/OpsSupport.hpp"
#include "sim/base/ParallelDims.hpp"
#include "sim/base/Support.hpp"
#include "sim/base/TraceSupport.hpp"
#include "sim/engine/Symmetry.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/scenario/ClusterBuild.hpp"
#include "sim/scenario/HfConfig.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/OpsImport.hpp"
#include "sim/scenario/TraceImport.hpp"
#include "sim/scenario/YamlReader.hpp"
#include "sim/topology/Builders.hpp"
#include "sim/scenario/YamlWriter.hpp"

namespace stepsim {

// fsdp.reshard_after_forward: true, false or an integer (found by the readers' and writer's templates by ADL).
void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, ReshardAfterForward& out) {
    const std::string text = n.IsScalar() ? n.Scalar() : std::string();
    if (text == "true" || text == "false" || text == "True" || text == "False" || text == "TRUE" || text == "FALSE") {
        bool b = true;
        readValue(r, n, path, b);
        out = ReshardAfterForward(b);
        return;
    }
    if (!n.IsScalar() || text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        r.failAt(n, path, "expected true, false or a positive integer (the ranks to reshard to), got " +
                              describeNode(n));
    int ranks = 0;
    readValue(r, n, path, ranks);
    out = ReshardAfterForward::toRanks(ranks);
}

std::string formatValue(const ReshardAfterForward& v) {
    return v.ranks > 0 ? formatValue(v.ranks) : formatValue(v.on);
}

// The schema: one describe() per section, in docs/scenario.md's order. The reader and `explain` both use these.
template <class V>
void describe(V& v, NetworkSpec& n) {
    v.field("fabric", n.fabric);
    v.field("nic_gbps", n.nic_gbps);
    v.field("nics_per_node", n.nics_per_node);
    v.field("oversubscription", n.oversubscription);
}

template <class V>
void describe(V& v, ClusterSpec& c) {
    v.field("node", c.node);
    v.field("nodes", c.nodes);
    v.field("gpus_per_node", c.gpus_per_node);
    v.field("profile", c.profile);
    v.field("power_limit_w", c.power_limit_w);
    v.field("hbm_gib", c.hbm_gib);
    v.field("hbm_tbps", c.hbm_tbps);
    v.section("network", c.network);
}

template <class V>
void describe(V& v, ModelSpec& m) {
    v.field("type", m.type);
    v.field("trace", m.trace);
    v.field("trace_params", m.trace_params);
    v.field("trace_host", m.trace_host);
    v.field("ops", m.ops);
    v.field("op_times", m.op_times);
    v.field("hf_config", m.hf_config);
    v.field("implementation", m.implementation);
    v.field("layers", m.layers);
    v.field("hidden", m.hidden);
    v.field("heads", m.heads);
    v.derived("kv_heads", m.kv_heads, m.heads, "default: heads");
    v.derived("head_dim", m.head_dim, headDim(m), "default: hidden/heads");
    v.derived("ffn_hidden", m.ffn_hidden, defaultFfnHidden(m),
              m.mlp == MlpKind::gelu ? "default: 4*hidden (gelu)" : "default: 256*ceil(8/3*hidden/256) (swiglu, geglu)");
    v.field("vocab", m.vocab);
    v.field("seq_len", m.seq_len);
    v.field("mlp", m.mlp);
    v.field("norm", m.norm);
    v.field("tied_embeddings", m.tied_embeddings);
    v.field("linear_bias", m.linear_bias);
    v.field("qkv_bias", m.qkv_bias);
    v.field("fused_gate_up", m.fused_gate_up);
    v.field("embedding_scale", m.embedding_scale);
    v.field("position_embedding", m.position_embedding);
    v.field("qkv", m.qkv);
    v.field("loss_dtype", m.loss_dtype);
    v.field("dropout", m.dropout);
}

template <class V>
void describe(V& v, TrainingSpec& t) {
    v.field("micro_batch", t.micro_batch);
    v.field("grad_accum", t.grad_accum);
    v.field("param_dtype", t.param_dtype);
    v.field("compute_dtype", t.compute_dtype);
    v.field("optimizer", t.optimizer);
    v.field("optimizer_impl", t.optimizer_impl);
    v.field("sgd_momentum", t.sgd_momentum);
    v.field("grad_clip_norm", t.grad_clip_norm);
    v.field("activation_checkpointing", t.activation_checkpointing);
}

template <class V>
void describe(V& v, ParallelSpec& p) {
    v.field("data", p.data);
    v.field("tp", p.tp);
    v.field("pp", p.pp);
    v.field("pp_schedule", p.pp_schedule);
    v.field("pp_virtual_stages", p.pp_virtual_stages);
    v.field("sequence_parallel", p.sequence_parallel);
    v.field("async_tp", p.async_tp);
    v.field("order", p.order);
}

template <class V>
void describe(V& v, DdpSpec& d) {
    v.field("bucket_cap_mb", d.bucket_cap_mb);
    v.field("first_bucket_mb", d.first_bucket_mb);
    v.field("gradient_as_bucket_view", d.gradient_as_bucket_view);
    v.field("find_unused_parameters", d.find_unused_parameters);
    v.field("static_graph", d.static_graph);
    v.field("comm_hook", d.comm_hook);
    v.field("duplicate_gradients", d.duplicate_gradients);
    v.field("powersgd_rank", d.powersgd_rank);
    v.field("powersgd_start_iter", d.powersgd_start_iter);
    v.field("powersgd_min_compression_rate", d.powersgd_min_compression_rate);
    v.field("powersgd_error_feedback", d.powersgd_error_feedback);
    v.field("powersgd_warm_start", d.powersgd_warm_start);
}

template <class V>
void describe(V& v, FsdpSpec& f) {
    v.field("reshard_after_forward", f.reshard_after_forward);
    v.field("backward_prefetch", f.backward_prefetch);
    v.field("forward_prefetch", f.forward_prefetch);
    v.field("limit_all_gathers", f.limit_all_gathers);
    v.field("param_dtype", f.param_dtype);
    v.field("reduce_dtype", f.reduce_dtype);
    v.field("sync_every_micro_batch", f.sync_every_micro_batch);
    v.field("units", f.units);
}

template <class V>
void describe(V& v, ZeroSpec& z) {
    v.field("reduce_bucket_size", z.reduce_bucket_size);
    v.field("overlap_comm", z.overlap_comm);
    v.field("stage3_prefetch_bucket_size", z.stage3_prefetch_bucket_size);
    v.field("stage3_max_reuse_distance", z.stage3_max_reuse_distance);
    v.field("stage3_param_persistence_threshold", z.stage3_param_persistence_threshold);
}

template <class V>
void describe(V& v, CompileSpec& c) {
    v.field("enabled", c.enabled);
    v.field("fullgraph", c.fullgraph);
    v.field("dynamic", c.dynamic);
    v.field("mode", c.mode);
    v.field("optimize_ddp", c.optimize_ddp);
    v.field("loss", c.loss);
    v.field("optimizer", c.optimizer);
    v.field("graph_breaks", c.graph_breaks);
    v.field("comm_fusion_depth", c.comm_fusion_depth);
    v.field("async_collectives", c.async_collectives);
}

template <class V>
void describe(V& v, Fp8Spec& f) {
    v.field("enabled", f.enabled);
    v.field("recipe", f.recipe);
    v.field("fp8_all_gather", f.fp8_all_gather);
    v.field("sync_after_all_gather", f.sync_after_all_gather);
}

template <class V>
void describe(V& v, DataLoaderSpec& d) {
    v.field("pin_memory", d.pin_memory);
    v.field("num_workers", d.num_workers);
    v.field("prefetch_factor", d.prefetch_factor);
    v.field("batch_cpu_ms", d.batch_cpu_ms);
    v.field("sample_bytes", d.sample_bytes);
}

template <class V>
void describe(V& v, CheckpointSpec& c) {
    v.field("interval_steps", c.interval_steps);
    v.field("mode", c.mode);
    v.field("pinned_staging", c.pinned_staging);
    v.field("storage_GBps", c.storage_GBps);
}

template <class V>
void describe(V& v, NcclSpec& n) {
    v.field("algo", n.algo);
    v.field("proto", n.proto);
    v.field("nvls", n.nvls);
}

template <class V>
void describe(V& v, StragglerSpec& g) {
    v.field("target", g.target);
    v.field("ranks", g.ranks);
    v.field("random", g.random);
    v.field("factor", g.factor);
    v.field("cv", g.cv);
}

template <class V>
void describe(V& v, JitterSpec& j) {
    v.field("enabled", j.enabled);
    v.sectionList("stragglers", j.stragglers);
}

template <class V>
void describe(V& v, SimSpec& s) {
    v.field("steps", s.steps);
    v.field("seed", s.seed);
    v.field("samples", s.samples);
    v.field("symmetry", s.symmetry);
}

template <class V>
void describe(V& v, Scenario& s) {
    v.field("stepsim", s.stepsim);
    v.field("name", s.name);
    v.section("cluster", s.cluster);
    v.section("model", s.model);
    v.section("training", s.training);
    v.section("parallel", s.parallel);
    v.section("ddp", s.ddp);
    v.section("fsdp", s.fsdp);
    v.section("zero", s.zero);
    v.section("compile", s.compile);
    v.section("fp8", s.fp8);
    v.section("data_loader", s.data_loader);
    v.section("checkpoint", s.checkpoint);
    v.section("nccl", s.nccl);
    v.section("jitter", s.jitter);
    v.section("sim", s.sim);
}

namespace {

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

// Applies one `key.path=value` override to the tree; returns the key path.
std::string applyOverride(YAML::Node& root, const std::string& source, const std::string& text) {
    const auto eq = text.find('=');
    const std::string key = trim(std::string_view(text).substr(0, eq));
    if (eq == std::string::npos || key.empty())
        throw inputError(source, 0, "--set " + text, "expected key.path=value (e.g. ddp.bucket_cap_mb=100)");
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
        const auto dot = key.find('.', start);
        parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (parts.back().empty())
            throw inputError(source, 0, "--set " + key, "expected a key path like section.key, with no empty part");
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    YAML::Node value;
    try {
        value = YAML::Load(text.substr(eq + 1));
    } catch (const YAML::Exception& e) {
        throw inputError(source, 0, "--set " + key, "the value is not valid YAML: " + e.msg);
    }
    YAML::Node cur = root;
    std::string prefix;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        prefix += (i ? "." : "") + parts[i];
        YAML::Node next = cur[parts[i]];
        if (!next.IsDefined() || next.IsNull()) {
            cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
            next.reset(cur[parts[i]]);
        } else if (!next.IsMap()) {
            throw inputError(source, 0, "--set " + key,
                             fmt::format("{} is {} (line {}), not a section with keys", prefix, describeNode(next),
                                         next.Mark().line + 1));
        }
        cur.reset(next);
    }
    cur[parts.back()] = value;
    return key;
}

// A setting with no effect where it is set (docs/scenario.md, "Keys with no effect"): named in the result's warnings
// and put back to its default, so that the run is the one without it.
template <class T>
void noEffect(const YamlReader& r, T& field, const T& def, const std::string& path, const std::string& with) {
    if (field == def) return;
    r.noEffect(path, with);
    field = def;
}

// DDP's options beyond the buckets and the optimizer's (docs/scenario.md): each value checked; one set where it
// changes nothing is a warning.
void checkDdpOptions(const YamlReader& r, Scenario& s) {
    DdpSpec& d = s.ddp;
    const DdpSpec def;
    if (d.duplicate_gradients < 0)
        r.fail("ddp.duplicate_gradients",
               fmt::format("expected 0 or the number of parameter tensors synchronized twice, got {}", d.duplicate_gradients));
    if (d.comm_hook == CommHook::powersgd) {
        const bool wide = s.training.param_dtype == DType::fp32;
        if (d.powersgd_rank < 1 || d.powersgd_rank > (wide ? 2 : 16))
            r.fail("ddp.powersgd_rank",
                   wide ? fmt::format("expected 1 or 2 with fp32 gradients (PowerSGD orthogonalizes a higher rank with "
                                      "torch.linalg.qr, not modelled), got {}", d.powersgd_rank)
                        : fmt::format("expected a rank from 1 to 16, got {}", d.powersgd_rank));
        if (d.powersgd_start_iter < 0)
            r.fail("ddp.powersgd_start_iter", fmt::format("expected a step >= 0, got {}", d.powersgd_start_iter));
        if ((d.powersgd_error_feedback || d.powersgd_warm_start) && d.powersgd_start_iter <= 1)
            r.fail("ddp.powersgd_start_iter",
                   fmt::format("expected > 1 with powersgd_error_feedback or powersgd_warm_start (PowerSGDState raises "
                               "otherwise: DDP rebuilds its buckets after the first step), got {}", d.powersgd_start_iter));
        if (!(d.powersgd_min_compression_rate > 0.0))
            r.fail("ddp.powersgd_min_compression_rate",
                   fmt::format("expected a positive rate, got {}", d.powersgd_min_compression_rate));
    } else {
        const std::string with = fmt::format("ddp.comm_hook: {} (PowerSGD's settings apply to comm_hook: powersgd)",
                                             toString(d.comm_hook));
        noEffect(r, d.powersgd_rank, def.powersgd_rank, "ddp.powersgd_rank", with);
        noEffect(r, d.powersgd_start_iter, def.powersgd_start_iter, "ddp.powersgd_start_iter", with);
        noEffect(r, d.powersgd_min_compression_rate, def.powersgd_min_compression_rate,
                 "ddp.powersgd_min_compression_rate", with);
        noEffect(r, d.powersgd_error_feedback, def.powersgd_error_feedback, "ddp.powersgd_error_feedback", with);
        noEffect(r, d.powersgd_warm_start, def.powersgd_warm_start, "ddp.powersgd_warm_start", with);
    }
    if (!(s.training.sgd_momentum >= 0.0 && s.training.sgd_momentum < 1.0))
        r.fail("training.sgd_momentum", fmt::format("expected 0 <= momentum < 1, got {}", s.training.sgd_momentum));
    if (s.training.optimizer != Optimizer::sgd)
        noEffect(r, s.training.sgd_momentum, 0.0, "training.sgd_momentum",
                 fmt::format("training.optimizer: {} (momentum is SGD's setting)", toString(s.training.optimizer)));
}

// jitter.stragglers: each names its ranks (fixed, inside the world) or how many to draw per step, never both, and a
// positive factor with a cv of 0 or more.
void validateStragglers(const YamlReader& r, const Scenario& s) {
    const int world = s.cluster.worldSize();
    for (std::size_t i = 0; i < s.jitter.stragglers.size(); ++i) {
        const StragglerSpec& g = s.jitter.stragglers[i];
        const std::string at = fmt::format("jitter.stragglers[{}]", i);
        if (g.ranks.empty() == (g.random == 0))
            r.fail(g.ranks.empty() ? at : at + ".random",
                   "expected either `ranks: [r, ...]` (fixed ranks) or `random: n` (n ranks drawn per step), not " +
                       std::string(g.ranks.empty() ? "neither" : "both"));
        for (std::size_t k = 0; k < g.ranks.size(); ++k)
            if (g.ranks[k] < 0 || g.ranks[k] >= world)
                r.fail(at + ".ranks", fmt::format("expected ranks from 0 to {} (the world size is {}), got {}",
                                                  world - 1, world, g.ranks[k]));
        // A rank named twice for the same target would be slowed twice over (the factors compound): once, in one entry.
        for (std::size_t k = 0; k < g.ranks.size(); ++k)
            for (std::size_t j = 0; j <= i; ++j) {
                if (s.jitter.stragglers[j].target != g.target) continue;
                const std::vector<int>& other = s.jitter.stragglers[j].ranks;
                const std::size_t upto = j == i ? k : other.size();
                if (std::find(other.begin(), other.begin() + long(upto), g.ranks[k]) != other.begin() + long(upto))
                    r.fail(at + ".ranks", fmt::format("rank {} is listed twice (in jitter.stragglers[{}]): name each "
                                                      "straggler rank once",
                                                      g.ranks[k], j));
            }
        if (g.random < 0 || g.random > world)
            r.fail(at + ".random", fmt::format("expected 1 to {} ranks drawn per step, got {}", world, g.random));
        // Bounded so that a slowed run stays within the time a simulation holds (Limits::run_s).
        if (!(g.factor > 0.0) || !(g.factor <= 1000.0))
            r.fail(at + ".factor",
                   fmt::format("expected a positive slowdown factor up to 1000 (1.5: 50% slower), got {}", g.factor));
        if (!(g.cv >= 0.0) || !(g.cv <= 1.0))
            r.fail(at + ".cv", fmt::format("expected 0 (a fixed factor) or a coefficient of variation up to 1, got {}",
                                           g.cv));
    }
}

// Magnitudes past any machine or job, refused rather than simulated into a meaningless step (or one the simulator's
// time cannot hold): rates and sizes beyond what hardware and PyTorch reach by orders of magnitude, counts of workers,
// duplicates and graph breaks beyond what a process holds. Each bound is far above any real setting.
void checkMagnitudes(const YamlReader& r, const Scenario& s) {
    auto within = [&](const std::string& path, double v, double lo, double hi, const char* unit) {
        if (!(v >= lo && v <= hi))
            r.fail(path, fmt::format("expected {} to {} {}, got {}", lo, hi, unit, v));
    };
    within("cluster.network.nic_gbps", s.cluster.network.nic_gbps, 1, 1e5, "Gb/s (a NIC's line rate)");
    if (!(s.cluster.network.oversubscription <= 1000))
        r.fail("cluster.network.oversubscription",
               fmt::format("expected at most 1000 (leaf downlinks per uplink), got {}", s.cluster.network.oversubscription));
    within("ddp.bucket_cap_mb", s.ddp.bucket_cap_mb, 1e-6, 1e6, "MiB");
    within("ddp.first_bucket_mb", s.ddp.first_bucket_mb, 1e-6, 1e6, "MiB");
    within("zero.reduce_bucket_size", s.zero.reduce_bucket_size, 1, 1e15, "elements");
    for (const auto& [key, v] : {std::pair{"zero.stage3_prefetch_bucket_size", s.zero.stage3_prefetch_bucket_size},
                                 std::pair{"zero.stage3_max_reuse_distance", s.zero.stage3_max_reuse_distance},
                                 std::pair{"zero.stage3_param_persistence_threshold",
                                           s.zero.stage3_param_persistence_threshold}})
        within(key, v, 0, 1e15, "elements");
    within("data_loader.batch_cpu_ms", s.data_loader.batch_cpu_ms, 0, 1e6, "ms per batch");
    if (s.data_loader.sample_bytes) within("data_loader.sample_bytes", *s.data_loader.sample_bytes, 1, 1e10, "bytes");
    if (s.checkpoint.storage_GBps) within("checkpoint.storage_GBps", *s.checkpoint.storage_GBps, 1e-3, 1e4, "GB/s");
    within("data_loader.num_workers", s.data_loader.num_workers, 0, 1024, "worker processes");
    within("data_loader.prefetch_factor", s.data_loader.prefetch_factor, 1, 1024, "batches per worker");
    within("ddp.duplicate_gradients", s.ddp.duplicate_gradients, 0, 1e6, "parameter tensors");
    within("compile.graph_breaks", s.compile.graph_breaks, 0, 1e4, "graph breaks");
    within("checkpoint.interval_steps", s.checkpoint.interval_steps, 0, kMaxSteps, "steps");
}

// model.type: ops: the graph file named, and its keys (model.ops, model.op_times, fsdp.units) read only there.
// Set with another model type, model.ops and model.op_times have no effect: named in the warnings, kept at their
// defaults.
void checkOpsKeys(const YamlReader& r, Scenario& s) {
    ModelSpec& m = s.model;
    if (m.type == "ops" && m.ops.empty())
        r.fail("model.type", "model.type: ops needs model.ops: FILE (an op graph, .ops.json.gz: docs/ops-format.md)");
    if (m.type != "ops") {
        const std::string with = fmt::format("model.type: {} (an op graph is read only with model.type: ops)", m.type);
        noEffect(r, m.ops, std::string(), "model.ops", with);
        noEffect(r, m.op_times, std::string(), "model.op_times", with);
    }
    if (!s.fsdp.units.empty() && (m.type != "ops" || s.parallel.data != DataParallel::fsdp2))
        r.fail("fsdp.units", "fsdp.units chooses FSDP2's units in a captured op graph: it is read only with model.type: "
                             "ops and parallel.data: fsdp2");
}

// An integer key at least `lo`, refused at its line otherwise.
void requireAtLeast(const YamlReader& r, const std::string& path, long long v, long long lo) {
    if (v < lo)
        r.fail(path, lo == 1 ? fmt::format("expected a positive integer, got {}", v)
                             : fmt::format("expected an integer >= {}, got {}", lo, v));
}

// The parallel section against the cluster and the model: degrees that divide the world, the heads, the layers;
// pipeline and sequence-parallel keys that have no effect without pp or tp.
void validateParallel(const YamlReader& r, Scenario& s) {
    auto atLeast = [&](const std::string& path, long long v, long long lo) { requireAtLeast(r, path, v, lo); };
    const ClusterSpec& c = s.cluster;
    const ModelSpec& m = s.model;
    const TrainingSpec& t = s.training;
    ParallelSpec& p = s.parallel;
    atLeast("parallel.tp", p.tp, 1);
    atLeast("parallel.pp", p.pp, 1);
    const int world = c.worldSize();
    if (world % parallelDims(p, world).modelParallel() != 0)
        r.fail(p.tp > 1 ? "parallel.tp" : "parallel.pp",
               fmt::format("tp*pp = {}*{} = {} must divide the world size {} (cluster.nodes*cluster.gpus_per_node)",
                           p.tp, p.pp, p.tp * p.pp, world));
    if (m.heads % p.tp != 0)
        r.fail("parallel.tp", fmt::format("expected a divisor of model.heads ({}), got {}", m.heads, p.tp));
    if (p.pp > m.layers)
        r.fail("parallel.pp", fmt::format("expected at most model.layers ({}) stages, got {}", m.layers, p.pp));
    atLeast("parallel.pp_virtual_stages", p.pp_virtual_stages, 1);
    if (p.pp == 1)
        noEffect(r, p.pp_schedule, PipelineSchedule::one_f_one_b, "parallel.pp_schedule",
                 "parallel.pp: 1 (a pipeline schedule needs pp > 1)");
    if (p.pp_schedule != PipelineSchedule::interleaved)
        noEffect(r, p.pp_virtual_stages, 1, "parallel.pp_virtual_stages",
                 fmt::format("parallel.pp_schedule: {} (virtual stages are the interleaved schedule's)",
                             toString(p.pp_schedule)));
    // Layers not divisible by the virtual stages are split as torchtitan splits them (PipelineStage.hpp).
    if (p.pp * p.pp_virtual_stages > m.layers)
        r.fail("parallel.pp_virtual_stages",
               fmt::format("expected at most model.layers ({}) virtual stages, got pp*pp_virtual_stages = {}", m.layers,
                           p.pp * p.pp_virtual_stages));
    if (p.pp_schedule == PipelineSchedule::interleaved && p.pp > 1 && t.grad_accum % p.pp != 0)
        r.fail("training.grad_accum",
               fmt::format("interleaved 1F1B runs micro-batches in groups of pp: grad_accum must be a multiple of "
                           "parallel.pp ({}), got {}", p.pp, t.grad_accum));
    if (p.tp > 1 && kvHeads(m) % p.tp != 0 && p.tp % kvHeads(m) != 0)
        r.fail("parallel.tp", fmt::format("expected a divisor or a multiple of model.kv_heads ({}), got {}", kvHeads(m),
                                          p.tp));
    // FSDP2 under pipeline parallelism reduces once a step already.
    if (p.pp > 1 && s.parallel.data == DataParallel::fsdp2)
        noEffect(r, s.fsdp.sync_every_micro_batch, true, "fsdp.sync_every_micro_batch",
                 fmt::format("parallel.pp: {} (FSDP2 under pipeline parallelism reduces once a step already)", p.pp));
    if (p.tp == 1)
        noEffect(r, p.sequence_parallel, false, "parallel.sequence_parallel",
                 "parallel.tp: 1 (sequence parallelism splits a tensor-parallel group's sequence)");
    if (!p.sequence_parallel)
        noEffect(r, p.async_tp, false, "parallel.async_tp",
                 "parallel.sequence_parallel: false (async TP micro-pipelines sequence parallelism's collectives)");
    if (p.sequence_parallel && m.seq_len % p.tp != 0)
        r.fail("parallel.sequence_parallel", fmt::format("model.seq_len ({}) must be a multiple of parallel.tp ({})",
                                                         m.seq_len, p.tp));
}

void validate(const YamlReader& r, Scenario& s) {
    auto atLeast = [&](const std::string& path, long long v, long long lo) { requireAtLeast(r, path, v, lo); };
    auto positive = [&](const std::string& path, double v) {
        if (!(v > 0.0)) r.fail(path, fmt::format("expected a positive number, got {}", v));
    };
    auto nonEmpty = [&](const std::string& path, const std::string& v, const char* what) {
        if (v.empty()) r.fail(path, fmt::format("expected {}, got an empty string", what));
    };

    if (s.stepsim != 1)
        r.fail("stepsim", fmt::format("unsupported schema version {}; this stepsim reads version 1", s.stepsim));

    const ClusterSpec& c = s.cluster;
    nonEmpty("cluster.node", c.node, "a built-in node type or a topology YAML file");
    atLeast("cluster.nodes", c.nodes, 1);
    atLeast("cluster.gpus_per_node", c.gpus_per_node, 1);
    nonEmpty("cluster.profile", c.profile, "builtin, a built-in profile name or a profile YAML file");
    for (const auto& [key, x] : {std::pair{"cluster.power_limit_w", c.power_limit_w}, std::pair{"cluster.hbm_gib", c.hbm_gib},
                                 std::pair{"cluster.hbm_tbps", c.hbm_tbps}})
        if (x) positive(key, *x);
    nonEmpty("cluster.network.fabric", c.network.fabric, "a fabric name");
    positive("cluster.network.nic_gbps", c.network.nic_gbps);
    atLeast("cluster.network.nics_per_node", c.network.nics_per_node, 1);
    if (!(c.network.oversubscription >= 1.0))
        r.fail("cluster.network.oversubscription",
               fmt::format("expected a number >= 1 (1 = non-blocking), got {}", c.network.oversubscription));

    ModelSpec& m = s.model;
    if (m.type != "transformer" && m.type != "trace" && m.type != "ops")
        r.fail("model.type", fmt::format("expected one of transformer, trace, ops, got '{}'", m.type));
    checkOpsKeys(r, s);
    if (m.type == "trace" && m.trace.empty())
        r.fail("model.type", "model.type: trace needs model.trace: FILE (a PyTorch profiler trace)");
    if (m.trace_host != "traced" && m.trace_host != "profile")
        r.fail("model.trace_host", fmt::format("expected traced or profile, got '{}'", m.trace_host));
    if (m.trace_params < 0)
        r.fail("model.trace_params", fmt::format("expected a parameter count >= 0, got {}", m.trace_params));
    if (m.type != "trace") {
        const std::string with = fmt::format("model.type: {} (read only with model.type: trace)", m.type);
        noEffect(r, m.trace, std::string(), "model.trace", with);
        noEffect(r, m.trace_params, 0.0, "model.trace_params", with);
        noEffect(r, m.trace_host, std::string("traced"), "model.trace_host", with);
    }
    atLeast("model.layers", m.layers, 1);
    atLeast("model.hidden", m.hidden, 1);
    atLeast("model.heads", m.heads, 1);
    if (m.head_dim) atLeast("model.head_dim", *m.head_dim, 1);
    if (!m.head_dim && m.hidden % m.heads != 0)
        r.fail("model.heads", fmt::format("expected a positive integer that divides model.hidden ({}), got {}",
                                          m.hidden, m.heads));
    if (m.kv_heads) {
        atLeast("model.kv_heads", *m.kv_heads, 1);
        if (m.heads % *m.kv_heads != 0)
            r.fail("model.kv_heads", fmt::format("expected a positive integer that divides model.heads ({}), got {}",
                                                 m.heads, *m.kv_heads));
    }
    if (m.ffn_hidden) atLeast("model.ffn_hidden", *m.ffn_hidden, 1);
    atLeast("model.vocab", m.vocab, 1);
    atLeast("model.seq_len", m.seq_len, 1);
    if (m.fused_gate_up && !gatedMlp(m.mlp))
        r.fail("model.fused_gate_up", fmt::format("expected a gated MLP (model.mlp: swiglu or geglu), got mlp: {}",
                                                  toString(m.mlp)));
    if (!(m.dropout >= 0.0 && m.dropout < 1.0))
        r.fail("model.dropout", fmt::format("expected a probability in [0, 1), got {}", m.dropout));

    const TrainingSpec& t = s.training;
    atLeast("training.micro_batch", t.micro_batch, 1);
    atLeast("training.grad_accum", t.grad_accum, 1);
    if (t.param_dtype == DType::fp8)
        r.fail("training.param_dtype", "expected one of fp32, bf16, fp16, got fp8 (use fp8.enabled for FP8 GEMMs)");
    if (t.compute_dtype == DType::fp32)
        r.fail("training.compute_dtype", "expected one of bf16, fp16, fp8, got fp32");

    validateParallel(r, s);

    if (!(s.training.grad_clip_norm >= 0.0))
        r.fail("training.grad_clip_norm",
               fmt::format("expected 0 (no clipping) or a positive max norm, got {}", s.training.grad_clip_norm));
    positive("ddp.bucket_cap_mb", s.ddp.bucket_cap_mb);
    positive("ddp.first_bucket_mb", s.ddp.first_bucket_mb);
    checkDdpOptions(r, s);
    atLeast("data_loader.num_workers", s.data_loader.num_workers, 0);
    atLeast("checkpoint.interval_steps", s.checkpoint.interval_steps, 0);
    atLeast("data_loader.prefetch_factor", s.data_loader.prefetch_factor, 1);
    if (!(s.data_loader.batch_cpu_ms >= 0.0))
        r.fail("data_loader.batch_cpu_ms", fmt::format("expected 0 or a positive time, got {}", s.data_loader.batch_cpu_ms));
    if (s.data_loader.sample_bytes && !(*s.data_loader.sample_bytes > 0.0))
        r.fail("data_loader.sample_bytes", fmt::format("expected a positive size, got {}", *s.data_loader.sample_bytes));
    if (s.checkpoint.storage_GBps && !(*s.checkpoint.storage_GBps > 0.0))
        r.fail("checkpoint.storage_GBps", fmt::format("expected a positive rate, got {}", *s.checkpoint.storage_GBps));

    atLeast("sim.steps", s.sim.steps, 1);
    atLeast("sim.samples", s.sim.samples, 1);
    if (s.sim.symmetry != "auto" && s.sim.symmetry != "off")
        r.fail("sim.symmetry", fmt::format("expected auto or off, got '{}'", s.sim.symmetry));
    validateStragglers(r, s);
    checkMagnitudes(r, s);
}

// What a runnable scenario needs beyond the schema: the model named (nothing defaults to a built-in model).
void requireModel(const YamlReader& r, const YAML::Node& root, const Scenario& s) {
    if (!r.present("model"))
        r.failAt(root, "model",
                 "missing: a scenario names its model (a `model:` section with at least layers and hidden; "
                 "docs/scenario.md); nothing defaults to a built-in model");
    if (s.model.type == "trace") {
        // The trace is the model: a transformer's keys would change nothing.
        for (const char* key : {"hf_config", "implementation", "layers", "hidden", "heads", "kv_heads", "head_dim",
                                "ffn_hidden", "vocab", "seq_len", "mlp", "norm", "tied_embeddings", "linear_bias",
                                "qkv_bias", "fused_gate_up", "embedding_scale", "position_embedding", "qkv",
                                "loss_dtype", "dropout"})
            if (r.present(std::string("model.") + key))
                r.noEffect(std::string("model.") + key, "model.type: trace (the trace is the model)");
        return;
    }
    if (s.model.type == "ops") {
        // The graph is the model: only its symbols' values (micro-batch, sequence length) are the scenario's. A
        // built-in transformer's key changes nothing here (a warning naming it); one that contradicts the graph
        // (training.param_dtype, ...) is refused where it is checked against it.
        for (const char* key : {"hf_config", "implementation", "layers", "hidden", "heads", "kv_heads", "head_dim",
                                "ffn_hidden", "vocab", "mlp", "norm", "tied_embeddings", "linear_bias", "qkv_bias",
                                "fused_gate_up", "embedding_scale", "position_embedding", "qkv", "loss_dtype",
                                "dropout"})
            if (r.present(std::string("model.") + key))
                r.noEffect(std::string("model.") + key, "model.type ops (the op graph is the model)");
        return;
    }
    if (s.model.type != "transformer" || !s.model.hf_config.empty()) return;
    for (const char* key : {"layers", "hidden"})
        if (!r.present(std::string("model.") + key))
            r.fail(std::string("model.") + key,
                   "missing: a transformer model needs its layers and hidden (nothing defaults to a built-in model)");
}

// torch.compile's keys: the values it models; one set while compile is off changes nothing (a warning).
void checkCompileKeys(const YamlReader& r, CompileSpec& c) {
    if (c.graph_breaks < 0) r.fail("compile.graph_breaks", fmt::format("expected an integer >= 0, got {}", c.graph_breaks));
    if (c.fullgraph && c.graph_breaks > 0)
        r.fail("compile.graph_breaks", "fullgraph: true allows no graph break (torch.compile raises at the first one)");
    if (c.comm_fusion_depth < 1 || c.comm_fusion_depth > 8)
        r.fail("compile.comm_fusion_depth",
               fmt::format("expected 1 (no fusion) to 8 collectives merged into one, got {}", c.comm_fusion_depth));
    if (c.enabled) return;
    const CompileSpec d;
    const std::string with = "compile.enabled: false";
    noEffect(r, c.fullgraph, d.fullgraph, "compile.fullgraph", with);
    noEffect(r, c.dynamic, d.dynamic, "compile.dynamic", with);
    noEffect(r, c.mode, d.mode, "compile.mode", with);
    noEffect(r, c.optimize_ddp, d.optimize_ddp, "compile.optimize_ddp", with);
    noEffect(r, c.graph_breaks, d.graph_breaks, "compile.graph_breaks", with);
    noEffect(r, c.comm_fusion_depth, d.comm_fusion_depth, "compile.comm_fusion_depth", with);
    noEffect(r, c.async_collectives, d.async_collectives, "compile.async_collectives", with);
    noEffect(r, c.loss, d.loss, "compile.loss", with);
    noEffect(r, c.optimizer, d.optimizer, "compile.optimizer", with);
}

// The fsdp and zero sections: each key read only by the strategies it configures (set elsewhere it changes nothing: a
// warning), and the values they model.
void checkShardingKeys(const YamlReader& r, Scenario& s) {
    const DataParallel data = s.parallel.data;
    const bool fsdp = data == DataParallel::fsdp1 || data == DataParallel::fsdp2 || data == DataParallel::hsdp;
    const bool zero = data == DataParallel::zero1 || data == DataParallel::zero2 || data == DataParallel::zero3;
    const FsdpSpec fd;
    FsdpSpec& f = s.fsdp;
    if (!fsdp) {
        const std::string with = fmt::format("parallel.data: {} ({}; the fsdp section applies to fsdp1, fsdp2 and hsdp)",
                                             toString(data),
                                             zero ? "DeepSpeed's ZeRO reads the zero section" : "DDP does not shard");
        noEffect(r, f.reshard_after_forward, fd.reshard_after_forward, "fsdp.reshard_after_forward", with);
        noEffect(r, f.backward_prefetch, fd.backward_prefetch, "fsdp.backward_prefetch", with);
        noEffect(r, f.forward_prefetch, fd.forward_prefetch, "fsdp.forward_prefetch", with);
        noEffect(r, f.limit_all_gathers, fd.limit_all_gathers, "fsdp.limit_all_gathers", with);
        noEffect(r, f.sync_every_micro_batch, fd.sync_every_micro_batch, "fsdp.sync_every_micro_batch", with);
        noEffect(r, f.param_dtype, fd.param_dtype, "fsdp.param_dtype", with);
        noEffect(r, f.reduce_dtype, fd.reduce_dtype, "fsdp.reduce_dtype", with);
    }
    // FSDP1's rate limiter: FSDP2 has none (its all-gathers are bounded by its one-ahead prefetch).
    if (data != DataParallel::fsdp1 && fsdp)
        noEffect(r, f.limit_all_gathers, fd.limit_all_gathers, "fsdp.limit_all_gathers",
                 fmt::format("parallel.data: {} (limit_all_gathers is FSDP1's rate limiter; FSDP2 and HSDP have none)",
                             toString(data)));
    if (f.reshard_after_forward.ranks > 0 && data != DataParallel::fsdp2)
        r.fail("fsdp.reshard_after_forward", "an integer (resharding to a smaller group) is fully_shard's: expected "
                                             "parallel.data: fsdp2, or true/false");
    if (const int n = f.reshard_after_forward.ranks; n > 0 && (s.cluster.worldSize() % n != 0))
        r.fail("fsdp.reshard_after_forward",
               fmt::format("expected a divisor of the {} ranks the parameters are sharded over, got {}",
                           s.cluster.worldSize(), n));
    if (data == DataParallel::hsdp && s.cluster.nodes < 2)
        r.fail("parallel.data", "hsdp shards inside a node and replicates across nodes: it needs cluster.nodes >= 2 "
                                "(on one node it is fsdp2)");
    const ZeroSpec zd;
    ZeroSpec& z = s.zero;
    const bool stage3 = data == DataParallel::zero3;
    const std::string with = fmt::format("parallel.data: {} (the zero section applies to zero1, zero2 and zero3, its "
                                         "stage3_* keys to zero3)",
                                         toString(data));
    if (!(z.reduce_bucket_size >= 1))
        r.fail("zero.reduce_bucket_size", fmt::format("expected a positive number of elements, got {}", z.reduce_bucket_size));
    for (const auto& [key, v] : {std::pair{"zero.stage3_prefetch_bucket_size", z.stage3_prefetch_bucket_size},
                                 std::pair{"zero.stage3_max_reuse_distance", z.stage3_max_reuse_distance},
                                 std::pair{"zero.stage3_param_persistence_threshold",
                                           z.stage3_param_persistence_threshold}})
        if (!(v >= 0)) r.fail(key, fmt::format("expected 0 or a positive number of elements, got {}", v));
    if (!zero) {
        noEffect(r, z.reduce_bucket_size, zd.reduce_bucket_size, "zero.reduce_bucket_size", with);
        noEffect(r, z.overlap_comm, zd.overlap_comm, "zero.overlap_comm", with);
    }
    if (!stage3) {
        noEffect(r, z.stage3_prefetch_bucket_size, zd.stage3_prefetch_bucket_size, "zero.stage3_prefetch_bucket_size", with);
        noEffect(r, z.stage3_max_reuse_distance, zd.stage3_max_reuse_distance, "zero.stage3_max_reuse_distance", with);
        noEffect(r, z.stage3_param_persistence_threshold, zd.stage3_param_persistence_threshold,
                 "zero.stage3_param_persistence_threshold", with);
    }
}

// The values of modelled keys that only some settings read or accept (a key without effect is a warning; what is not
// modelled is sim/base/Support.hpp's, refuseUnmodelled below).
void checkValuesAgainstSettings(const YamlReader& r, Scenario& s) {
    // NVLink SHARP runs in NVSwitch chips: a built-in node without them (pcie-8gpu) never runs it.
    if (const auto node = builtinNode(s.cluster.node); node && !node->hasNvSwitch()) {
        if (s.nccl.algo == NcclAlgo::nvls)
            r.fail("nccl.algo", fmt::format("expected auto, ring or tree: NVLS runs in NVSwitch chips, and a {} node has "
                                            "none",
                                            s.cluster.node));
        noEffect(r, s.nccl.nvls, NcclSpec{}.nvls, "nccl.nvls",
                 fmt::format("cluster.node: {} (NVLS runs in NVSwitch chips, which this node has none of)",
                             s.cluster.node));
    }
    checkShardingKeys(r, s);
    // FP8 linears (fp8.enabled, or training.compute_dtype: fp8 which implies it): torchao's eager Float8Linear.
    const bool fp8 = fp8Training(s);
    Fp8Spec& f8 = s.fp8;
    if (!fp8) {
        const std::string off = "fp8.enabled: false (FP8 training off)";
        noEffect(r, f8.recipe, Fp8Recipe::tensorwise, "fp8.recipe", off);
        noEffect(r, f8.fp8_all_gather, false, "fp8.fp8_all_gather", off);
        noEffect(r, f8.sync_after_all_gather, false, "fp8.sync_after_all_gather", off);
    }
    if (s.parallel.data != DataParallel::fsdp2) {
        const std::string with = fmt::format("parallel.data: {} (FP8 all-gather is FSDP2's)", toString(s.parallel.data));
        noEffect(r, f8.fp8_all_gather, false, "fp8.fp8_all_gather", with);
        noEffect(r, f8.sync_after_all_gather, false, "fp8.sync_after_all_gather", with);
    }
    if (f8.fp8_all_gather && f8.recipe != Fp8Recipe::tensorwise)
        r.fail("fp8.fp8_all_gather", "expected fp8.recipe: tensorwise (torchao gathers tensorwise-scaled weights only)");
    if ((s.ddp.comm_hook == CommHook::quantize_8bit || s.ddp.comm_hook == CommHook::quantize_4bit) &&
        s.parallel.data == DataParallel::ddp && s.training.param_dtype != DType::fp32)
        r.fail("ddp.comm_hook", "expected training.param_dtype: fp32 (PyTorch's quantization hook reads fp32 buckets)");
    checkCompileKeys(r, s.compile);
}

// What this version does not model in the combination asked (sim/base/Support.hpp's table, the same rows `expand`
// checks for a Scenario built in code): the first row the scenario asks, refused at its key's line.
void refuseUnmodelled(const YamlReader& r, const Scenario& s) {
    if (const std::optional<Unmodelled> no = firstUnmodelled(s)) r.fail(no->key, no->message);
}

// Settings that change nothing where they are set, each a warning of the result and kept at its default
// (docs/scenario.md, "Keys with no effect"): a checkpoint's options with no checkpoint taken, pinned staging for a
// synchronous save (it stages nothing), DDP's keys under another strategy (a sweep marks them n/a at such points,
// sim/sweep/SweepSpace.hpp). The loader's prefetch depth without workers is an error: PyTorch's DataLoader raises.
void warnSettingsThatChangeNothing(const YamlReader& r, Scenario& s) {
    CheckpointSpec& k = s.checkpoint;
    const CheckpointSpec kd;
    if (k.interval_steps == 0) {
        const std::string with = "checkpoint.interval_steps: 0 (no checkpoint is taken)";
        noEffect(r, k.mode, kd.mode, "checkpoint.mode", with);
        noEffect(r, k.pinned_staging, kd.pinned_staging, "checkpoint.pinned_staging", with);
        noEffect(r, k.storage_GBps, kd.storage_GBps, "checkpoint.storage_GBps", with);
    } else if (k.mode == CheckpointMode::sync) {
        noEffect(r, k.pinned_staging, kd.pinned_staging, "checkpoint.pinned_staging",
                 "checkpoint.mode: sync (a synchronous save stages nothing)");
    }
    if (s.data_loader.num_workers == 0 && s.data_loader.prefetch_factor != DataLoaderSpec{}.prefetch_factor)
        r.fail("data_loader.prefetch_factor", "expected data_loader.num_workers > 0: the batches are loaded by the main "
                                              "process, and DataLoader raises on a prefetch_factor without workers");
    if (DdpSpec& d = s.ddp; s.parallel.data != DataParallel::ddp) {
        const DdpSpec def;
        const std::string with = fmt::format("parallel.data: {} (DDP's settings apply to parallel.data: ddp)",
                                             toString(s.parallel.data));
        noEffect(r, d.bucket_cap_mb, def.bucket_cap_mb, "ddp.bucket_cap_mb", with);
        noEffect(r, d.first_bucket_mb, def.first_bucket_mb, "ddp.first_bucket_mb", with);
        noEffect(r, d.gradient_as_bucket_view, def.gradient_as_bucket_view, "ddp.gradient_as_bucket_view", with);
        noEffect(r, d.find_unused_parameters, def.find_unused_parameters, "ddp.find_unused_parameters", with);
        noEffect(r, d.static_graph, def.static_graph, "ddp.static_graph", with);
        noEffect(r, d.comm_hook, def.comm_hook, "ddp.comm_hook", with);
        noEffect(r, d.duplicate_gradients, def.duplicate_gradients, "ddp.duplicate_gradients", with);
        noEffect(r, d.powersgd_rank, def.powersgd_rank, "ddp.powersgd_rank", with);
        noEffect(r, d.powersgd_start_iter, def.powersgd_start_iter, "ddp.powersgd_start_iter", with);
        noEffect(r, d.powersgd_min_compression_rate, def.powersgd_min_compression_rate,
                 "ddp.powersgd_min_compression_rate", with);
        noEffect(r, d.powersgd_error_feedback, def.powersgd_error_feedback, "ddp.powersgd_error_feedback", with);
        noEffect(r, d.powersgd_warm_start, def.powersgd_warm_start, "ddp.powersgd_warm_start", with);
    }
}

// A built-in node with no built-in profile of its GPUs (NodeTemplate::default_profile empty) runs only on a profile
// the user names: the built-ins whose gpu.model names its GPUs are offered (an extrapolated one among them).
void requireMatchingProfile(const YamlReader& r, const ClusterSpec& c) {
    if (c.profile != "builtin") return;
    const std::optional<NodeTemplate> node = builtinNode(c.node);
    if (!node || !node->default_profile.empty()) return;
    std::string same;
    for (const std::string& name : builtinProfileNames()) {
        const HardwareProfile p = builtinProfile(name);
        if (!node->gpu.empty() && p.gpu.model.find(node->gpu) != std::string::npos)
            same += fmt::format("{}{}{}", same.empty() ? "" : ", ", name, p.derivation.extrapolated ? " (extrapolated)" : "");
    }
    r.fail("cluster.node",
           fmt::format("{} has {}-class GPUs, and no built-in profile was measured on them: set cluster.profile to a "
                       "profile of these GPUs (a profile YAML from `stepsim calibrate`{}), or name a built-in one "
                       "(h200x2, h200-sxm) to run this node at H200 rates knowingly",
                       c.node, node->gpu.empty() ? "other" : node->gpu,
                       same.empty() ? "" : ", or the built-in " + same));
}

// Sizes and counts a simulation holds, checked before anything is built. Time is picoseconds in 64 bits (106 days,
// sim/base/Time.hpp), and every rank's kernels of every step are held in memory (96 bytes each, sim/base/Program.hpp).
struct Limits {
    static constexpr int nodes = 1024;
    // Where the symmetry reduction holds one node's Programs (sim.symmetry, sim/engine/Symmetry.hpp): the fabric's.
    static constexpr int mirrored_nodes = 4096;
    static constexpr int micro_batch = 65536;
    static constexpr int seq_len = 1 << 20;
    static constexpr int grad_accum = 4096;
    static constexpr int layers = 4096;
    static constexpr int hidden = 1 << 18;
    static constexpr int ffn_hidden = 1 << 20;
    static constexpr long long tokens = 1LL << 26;  // per micro-batch: micro_batch · seq_len
    static constexpr int vocab = 1 << 24;
    static constexpr int steps = kMaxSteps;
    static constexpr int samples = 1000;
    // Kernels and collectives held for a run (ranks × steps × ops per step; ~2 GB at 96 bytes each).
    static constexpr double ops = kMaxHeldOps;
    // Ops a rank launches per layer and micro-batch (forward, backward, their casts and collectives; the demo has
    // 60-70), and per step outside the layers, counted generously.
    static constexpr double ops_per_layer = 100.0, ops_per_step = 500.0;
    // Simulated seconds of a run at floor rates no modelled GPU is slower than (10 TFLOP/s, 100 GB/s): 12 days, a
    // ninth of what the time type holds.
    static constexpr double run_s = kMaxRunSeconds, floor_flops = 1e13, floor_Bps = 1e11;
};

// Of the keys behind a product, the one the file (or an override) set furthest above its default: where the error
// points.
std::string largestFactor(const YamlReader& r, std::initializer_list<std::pair<const char*, double>> factors) {
    std::string best = factors.begin()->first;
    double most = 0.0;
    for (const auto& [path, ratio] : factors)
        if (r.present(path) && ratio > most) most = ratio, best = path;
    return best;
}

void checkLimits(const YamlReader& r, const Scenario& s) {
    auto atMost = [&](const std::string& path, long long v, long long hi, const char* why) {
        if (v > hi) r.fail(path, fmt::format("expected at most {} ({}), got {}", hi, why, v));
    };
    const ClusterSpec& c = s.cluster;
    const ModelSpec& m = s.model;
    const TrainingSpec& t = s.training;
    // A data-parallel job the symmetry reduction applies to holds one node's ranks (unless a process group or host
    // transfers keep it from mirroring them: then every rank). HSDP's and a partial reshard's process groups differ per
    // rank, so those jobs hold every rank.
    const bool per_rank_groups = s.parallel.data == DataParallel::hsdp || s.fsdp.reshard_after_forward.ranks > 0;
    const bool mirrored = symmetryApplies(s) && s.parallel.tp == 1 && s.parallel.pp == 1 && !per_rank_groups;
    if (mirrored)
        atMost("cluster.nodes", c.nodes, Limits::mirrored_nodes, "the fabric's limit");
    else
        atMost("cluster.nodes", c.nodes, Limits::nodes, "every rank is simulated");
    atMost("model.layers", m.layers, Limits::layers, "this simulator's limit");
    atMost("model.hidden", m.hidden, Limits::hidden, "this simulator's limit");
    atMost("model.vocab", m.vocab, Limits::vocab, "this simulator's limit");
    atMost("model.seq_len", m.seq_len, Limits::seq_len, "this simulator's limit");
    atMost("training.micro_batch", t.micro_batch, Limits::micro_batch, "this simulator's limit");
    if (m.ffn_hidden) atMost("model.ffn_hidden", *m.ffn_hidden, Limits::ffn_hidden, "this simulator's limit");
    if (const long long tokens = 1LL * t.micro_batch * m.seq_len; tokens > Limits::tokens)
        r.fail(r.present("training.micro_batch") ? "training.micro_batch" : "model.seq_len",
               fmt::format("expected at most {} tokens per micro-batch (micro_batch x seq_len, this simulator's "
                           "limit), got {} x {} = {}",
                           Limits::tokens, t.micro_batch, m.seq_len, tokens));
    atMost("training.grad_accum", t.grad_accum, Limits::grad_accum, "this simulator's limit");
    atMost("sim.steps", s.sim.steps, Limits::steps, "every step of every rank is simulated and held");
    atMost("sim.samples", s.sim.samples, Limits::samples, "each sample is a whole simulation");

    // The node's GPUs, read before anything is built (a topology file's own errors name that file).
    if (!builtinNode(c.node)) {
        const std::filesystem::path p(c.node);
        if (p.extension() != ".yaml" && p.extension() != ".yml") {
            std::string names;
            for (const auto& n : builtinNodeNames()) names += n + ", ";
            r.fail("cluster.node", fmt::format("expected one of {}or a topology YAML file (.yaml), got '{}'", names, c.node));
        }
        std::filesystem::path file = p;
        if (file.is_relative()) file = std::filesystem::path(s.source).parent_path() / file;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(file, ec))
            r.fail("cluster.node", fmt::format("expected a built-in node type or a topology YAML file; no file {}",
                                               file.string()));
    }
    const NodeTemplate node = nodeTemplate(c.node, std::filesystem::path(s.source).parent_path().string());
    atMost("cluster.gpus_per_node", c.gpus_per_node, node.gpuCount(), fmt::format("the GPUs of a {} node", node.name).c_str());
    // The profile: the node's built-in one, a built-in name, or a file (its own errors name that file).
    if (const auto names = builtinProfileNames();
        c.profile != "builtin" && std::find(names.begin(), names.end(), c.profile) == names.end()) {
        std::filesystem::path file(c.profile);
        if (file.is_relative()) file = std::filesystem::path(s.source).parent_path() / file;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(file, ec)) {
            std::string known;
            for (const auto& n : names) known += ", " + n;
            r.fail("cluster.profile",
                   fmt::format("expected builtin{}, or a profile YAML file; no file {}", known, file.string()));
        }
    }
    if (c.network.fabric != "rail-fat-tree")
        r.fail("cluster.network.fabric",
               fmt::format("expected rail-fat-tree (the one fabric built today), got '{}'", c.network.fabric));
    const int nics = c.network.nics_per_node;
    if (c.nodes > 1 && (nics > node.gpuCount() || node.gpuCount() % nics != 0))
        r.fail("cluster.network.nics_per_node",
               fmt::format("expected a divisor of {} (the GPUs of a {} node) across nodes, got {}", node.gpuCount(),
                           node.name, nics));

    const double ranks = double(mirrored ? 1 : c.nodes) * c.gpus_per_node, steps = s.sim.steps, accum = t.grad_accum;
    // A rank's program holds its pipeline stage's blocks only.
    const double stage_layers = std::ceil(double(m.layers) / s.parallel.pp);
    const double ops = ranks * steps * (accum * stage_layers * Limits::ops_per_layer + Limits::ops_per_step);
    if (ops > Limits::ops)
        r.fail(largestFactor(r, {{"sim.steps", steps / 3}, {"training.grad_accum", accum}, {"cluster.nodes", double(c.nodes)},
                                 {"cluster.gpus_per_node", c.gpus_per_node / 8.0}, {"model.layers", m.layers / 24.0}}),
               fmt::format("the run would hold about {:.3g} kernels and collectives (ranks {} x steps {} x {} per step), "
                           "more than this simulator's limit of {:.0e}: simulate fewer steps, micro-batches, layers or "
                           "ranks",
                           ops, ranks, steps, accum * stage_layers * Limits::ops_per_layer + Limits::ops_per_step,
                           Limits::ops));

    // A step's work per GPU: 6 FLOPs per parameter and token, attention's 12·seq·hidden per token and layer, and the
    // optimizer's pass over fp32 state.
    const double h = m.hidden, hd = headDim(m), kv = double(kvHeads(m)) * hd, f = ffnHidden(m);
    const double params = m.layers * (2 * h * m.heads * hd + 2 * h * kv + (gatedMlp(m.mlp) ? 3 : 2) * h * f) + double(m.vocab) * h;
    const double tokens = double(t.micro_batch) * m.seq_len * accum;
    const double flops = 6 * params * tokens + 12.0 * m.layers * tokens * m.seq_len * h;
    const double base_s = steps * (flops / Limits::floor_flops + 32 * params / Limits::floor_Bps);
    // The slowest straggler stretches it: its factor, with a drawn one's tail (ten cvs above its mean) on top.
    double slow = 1.0;
    for (const StragglerSpec& g : s.jitter.stragglers) slow = std::max(slow, g.factor * (1.0 + 10.0 * g.cv));
    if (base_s <= Limits::run_s && base_s * slow > Limits::run_s)
        r.fail("jitter.stragglers",
               fmt::format("a straggler up to {:.3g}x slower would stretch the run's {:.3g} s of simulated time (at 10 "
                           "TFLOP/s) past the {:.0e} s this simulator's time holds with margin: a smaller factor or cv, "
                           "or fewer steps",
                           slow, base_s, Limits::run_s));
    const double run_s = base_s;
    if (run_s > Limits::run_s)
        r.fail(largestFactor(r, {{"training.micro_batch", t.micro_batch / 4.0}, {"model.seq_len", m.seq_len / 2048.0},
                                 {"training.grad_accum", accum}, {"model.hidden", h / 2048}, {"model.layers", m.layers / 24.0},
                                 {"model.vocab", m.vocab / 50304.0}, {"sim.steps", steps / 3}}),
               fmt::format("the run's {} steps would take about {:.3g} s of simulated time at 10 TFLOP/s ({:.3g} FLOPs per GPU "
                           "and step), more than the {:.0e} s this simulator's time holds with margin: simulate a "
                           "smaller model, fewer tokens or fewer steps",
                           s.sim.steps, run_s, flops, Limits::run_s));
}

// model.type: trace: the step read from model.trace (relative to the scenario's folder), with the rates of the built-in
// profile of the trace's GPU for rescaling to another profile (TraceSchedule.hpp).
void importModelTrace(const YamlReader& r, Scenario& s) {
    std::filesystem::path file(s.model.trace);
    if (file.is_relative() && !s.source.empty()) file = std::filesystem::path(s.source).parent_path() / file;
    TraceStep t;
    try {
        t = importTrace(file.string());
    } catch (const InputError& e) {
        r.fail("model.trace", e.what());
    }
    for (const std::string& name : builtinProfileNames()) {
        const HardwareProfile p = builtinProfile(name);
        if (t.gpu.empty() || p.gpu.model != t.gpu) continue;
        t.source_peak_tflops_bf16 = p.gpu.peak_tflops_bf16;
        t.source_hbm_gbps = p.gpu.hbm_gbps;
        t.source_profile = "built-in profile " + name;
        break;
    }
    s.model.imported = std::make_shared<const TraceStep>(std::move(t));
    if (const auto no = traceUnsupported(s)) r.fail(no->first, no->second);
}

// model.type: ops: the graph read from model.ops (relative to the scenario's folder) at training.micro_batch and
// model.seq_len (absent: the capture's own), and model.op_times; the step's settings are the capture's, so the
// training keys that describe how it ran take the capture's values, and a scenario that sets them otherwise is refused.
void importModelOps(const YamlReader& r, Scenario& s) {
    const auto resolve = [&](const std::string& f) {
        std::filesystem::path file(f);
        if (file.is_relative() && !s.source.empty()) file = std::filesystem::path(s.source).parent_path() / file;
        return file.string();
    };
    const bool has_b = r.present("training.micro_batch"), has_s = r.present("model.seq_len");
    OpGraph g;
    try {
        g = readOpGraph(resolve(s.model.ops), has_b ? s.training.micro_batch : 0, has_s ? s.model.seq_len : 0);
    } catch (const InputError& e) {
        r.fail("model.ops", e.what());
    }
    if (!s.model.op_times.empty()) {
        try {
            readOpTimes(g, resolve(s.model.op_times));
        } catch (const InputError& e) {
            r.fail("model.op_times", e.what());
        }
    }
    s.training.micro_batch = int(g.b);
    if (g.s > 0) s.model.seq_len = int(g.s);
    // How the step ran, as the capture records it.
    DType param = DType::fp32, compute = DType::bf16;
    if (g.dtype_policy == "bf16") param = compute = DType::bf16;
    else if (g.dtype_policy == "fp32") param = compute = DType::fp32;
    else if (g.dtype_policy == "fp32_autocast_fp16") compute = DType::fp16;
    else if (g.dtype_policy != "fp32_autocast_bf16")
        r.fail("model.ops", fmt::format("{}: step.dtype_policy '{}' is not one this stepsim reads (fp32_autocast_bf16, "
                                        "fp32_autocast_fp16, bf16, fp32)", g.file, g.dtype_policy));
    const auto same = [&](const char* key, bool differs, const std::string& captured) {
        if (r.present(key) && differs)
            r.fail(key, fmt::format("the op graph {} was captured with {}: the step is the capture's (capture it again "
                                    "to change it)", g.file, captured));
    };
    same("training.param_dtype", s.training.param_dtype != param, "dtype_policy " + g.dtype_policy);
    same("training.compute_dtype", s.training.compute_dtype != compute, "dtype_policy " + g.dtype_policy);
    s.training.param_dtype = param;
    s.training.compute_dtype = compute;
    const Optimizer opt = g.optimizer == "sgd" ? Optimizer::sgd : g.optimizer == "adam" ? Optimizer::adam : Optimizer::adamw;
    same("training.optimizer", s.training.optimizer != opt, "optimizer " + g.optimizer);
    s.training.optimizer = opt;
    const OptimizerImpl impl = g.optimizer_impl == "fused" ? OptimizerImpl::fused : OptimizerImpl::foreach;
    same("training.optimizer_impl", s.training.optimizer_impl != impl, "optimizer_impl " + g.optimizer_impl);
    s.training.optimizer_impl = impl;
    const Checkpointing ac = g.activation_checkpointing == "full"        ? Checkpointing::full
                             : g.activation_checkpointing == "selective" ? Checkpointing::selective
                                                                          : Checkpointing::none;
    same("training.activation_checkpointing", s.training.activation_checkpointing != ac,
         "activation_checkpointing " + g.activation_checkpointing);
    s.training.activation_checkpointing = ac;
    g.data_parallel_named = r.present("parallel.data");
    s.model.graph = std::make_shared<const OpGraph>(std::move(g));
    if (const auto no = opsUnsupported(s)) r.fail(no->first, no->second);
}

}  // namespace

Scenario parseScenario(std::string_view yaml, const std::string& source, const std::vector<std::string>& overrides,
                       Reading reading) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml));
    } catch (const YAML::ParserException& e) {
        throw inputError(source, e.mark.is_null() ? 0 : e.mark.line + 1, "", "YAML syntax error: " + e.msg);
    }
    requireQuotesClosedOnTheirLine(YamlReader(source, YamlReader::Missing::keep_default), root, yaml);
    if (root.IsNull() && !overrides.empty()) root = YAML::Node(YAML::NodeType::Map);
    if (!root.IsMap())
        throw inputError(source, root.Mark().is_null() ? 0 : root.Mark().line + 1, "",
                         "expected a scenario: a mapping that starts with `stepsim: 1`, got " + describeNode(root));
    // A sweep file's `sweep:` section (SweepYaml.hpp reads it): the scenario is the rest of the file.
    if (static_cast<const YAML::Node&>(root)["sweep"].IsDefined()) root.remove("sweep");
    std::vector<std::string> override_paths;
    for (const auto& o : overrides) override_paths.push_back(applyOverride(root, source, o));

    YamlReader reader(source, YamlReader::Missing::keep_default, override_paths);
    if (!static_cast<const YAML::Node&>(root)["stepsim"].IsDefined())
        reader.failAt(root, "stepsim", "missing: the schema version is required (expected `stepsim: 1`)");
    Scenario s;
    YamlMapReader top(reader, root, "");
    top.readStruct(root, "", s);
    s.source = source;
    s.data_loader.modelled = reader.present("data_loader");
    for (const char* key : {"pin_memory", "num_workers", "prefetch_factor", "batch_cpu_ms", "sample_bytes"})
        s.data_loader.modelled = s.data_loader.modelled || reader.present(std::string("data_loader.") + key);
    if (s.name.empty() && !reader.present("name")) {
        s.name = std::filesystem::path(source).stem().string();
        if (s.name.empty()) s.name = "scenario";
    }
    if (s.name.empty()) reader.fail("name", "expected a non-empty name (or leave it out: the file's stem)");
    if (!s.model.hf_config.empty() && reading == Reading::runnable) applyHfConfig(reader, s);
    validate(reader, s);
    // fully_shard's _get_post_forward_mesh_info: resharding to 1 rank is not resharding, to every rank is true.
    if (const int n = s.fsdp.reshard_after_forward.ranks; n == 1 || n == s.cluster.worldSize())
        s.fsdp.reshard_after_forward = ReshardAfterForward(n != 1);
    if (reading == Reading::runnable) {
        requireModel(reader, root, s);
        if (s.model.type == "trace") importModelTrace(reader, s);
        warnSettingsThatChangeNothing(reader, s);
        if (s.model.type == "ops") importModelOps(reader, s);
        checkValuesAgainstSettings(reader, s);
        refuseUnmodelled(reader, s);
        requireMatchingProfile(reader, s.cluster);
        checkLimits(reader, s);
    }
    s.warnings = reader.warnings();
    return s;
}

Scenario loadScenario(const std::filesystem::path& file, const std::vector<std::string>& overrides, Reading reading) {
    const std::string text = readInputFile(file, "the scenario file", kMaxScenarioBytes);
    return parseScenario(text, file.string(), overrides, reading);
}

namespace {

// Every key of `s`, written as the loader reads it.
std::string everyKey(const Scenario& s) {
    Scenario copy = s;
    YamlWriter w;
    w.comment(fmt::format("stepsim explain {}: every default and derived value filled in",
                          s.source.empty() ? s.name : s.source));
    describe(w, copy);
    if (s.model.graph) {
        std::optional<HardwareProfile> prof;
        try {
            prof = resolveProfile(s.cluster, s.source);
        } catch (const InputError&) {
        }
        return w.text() + opsSummary(*s.model.graph, prof ? &*prof : nullptr, s.nccl);
    }
    if (!s.model.imported) return w.text();
    // The trace's host time against the scenario's profile's (TraceHostCost.hpp), where the profile resolves.
    std::optional<HardwareProfile> prof;
    try {
        prof = resolveProfile(s.cluster, s.source);
    } catch (const InputError&) {
    }
    return w.text() + traceSummary(*s.model.imported, prof ? &prof->launch : nullptr, s.cluster.worldSize() > 1);
}

}  // namespace

std::string explainScenario(const Scenario& s) {
    std::string text = everyKey(s);
    // The keys with no effect here, as the result's warnings name them, after the header line.
    if (!s.warnings.empty()) {
        std::string notes;
        for (const std::string& w : s.warnings) notes += "# warning: " + w + "\n";
        const std::size_t eol = text.find('\n');
        text.insert(eol == std::string::npos ? text.size() : eol + 1, notes);
    }
    if (s.data_loader.modelled) return text;
    // A data_loader section, even at its defaults, turns the input pipeline on: a scenario without one is explained
    // without one, so that the explanation reads back as the same scenario.
    const std::size_t at = text.find("\ndata_loader:\n");
    if (at == std::string::npos) return text;
    std::size_t end = at + 1 + std::string_view("data_loader:\n").size();
    while (end < text.size() && text[end] == ' ') {
        const std::size_t eol = text.find('\n', end);
        end = eol == std::string::npos ? text.size() : eol + 1;
    }
    text.replace(at + 1, end - at - 1,
                 "# data_loader: none (no input pipeline modelled; a data_loader section, even empty, adds one)\n");
    return text;
}

std::vector<std::string_view> strategiesReading(std::string_view key) {
    if (key.starts_with("ddp.")) return {"ddp"};
    if (key == "fsdp.limit_all_gathers") return {"fsdp1"};
    if (key.starts_with("fsdp.")) return {"fsdp1", "fsdp2", "hsdp"};
    if (key.starts_with("zero.stage3_")) return {"zero3"};
    if (key.starts_with("zero.")) return {"zero1", "zero2", "zero3"};
    return {};
}

std::map<std::string, std::string> scenarioSettings(const Scenario& s) {
    std::map<std::string, std::string> out;
    const auto walk = [&out](const auto& self, const YAML::Node& n, const std::string& path) -> void {
        if (n.IsMap()) {
            for (const auto& kv : n) {
                const auto key = kv.first.as<std::string>();
                self(self, kv.second, path.empty() ? key : path + "." + key);
            }
        } else if (n.IsSequence()) {
            for (std::size_t i = 0; i < n.size(); ++i) self(self, n[i], fmt::format("{}[{}]", path, i));
        } else {
            out[path] = n.IsNull() ? "null" : n.Scalar();
        }
    };
    walk(walk, YAML::Load(everyKey(s)), "");
    out.erase("name");
    return out;
}

}  // namespace stepsim
