#include "sim/scenario/ScenarioLoader.hpp"

#include <fstream>
#include <sstream>

#include "sim/base/InputError.hpp"
#include "sim/scenario/YamlReader.hpp"
#include "sim/scenario/YamlWriter.hpp"

namespace stepsim {

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
    v.section("network", c.network);
}

template <class V>
void describe(V& v, ModelSpec& m) {
    v.field("type", m.type);
    v.field("trace", m.trace);
    v.field("layers", m.layers);
    v.field("hidden", m.hidden);
    v.field("heads", m.heads);
    v.derived("kv_heads", m.kv_heads, m.heads, "default: heads");
    v.derived("ffn_hidden", m.ffn_hidden, defaultFfnHidden(m),
              m.mlp == MlpKind::gelu ? "default: 4*hidden (gelu)" : "default: 256*ceil(8/3*hidden/256) (swiglu)");
    v.field("vocab", m.vocab);
    v.field("seq_len", m.seq_len);
    v.field("mlp", m.mlp);
    v.field("norm", m.norm);
    v.field("tied_embeddings", m.tied_embeddings);
}

template <class V>
void describe(V& v, TrainingSpec& t) {
    v.field("micro_batch", t.micro_batch);
    v.field("grad_accum", t.grad_accum);
    v.field("param_dtype", t.param_dtype);
    v.field("compute_dtype", t.compute_dtype);
    v.field("optimizer", t.optimizer);
    v.field("optimizer_impl", t.optimizer_impl);
    v.field("grad_clip_norm", t.grad_clip_norm);
    v.field("activation_checkpointing", t.activation_checkpointing);
}

template <class V>
void describe(V& v, ParallelSpec& p) {
    v.field("data", p.data);
    v.field("tp", p.tp);
    v.field("pp", p.pp);
    v.field("pp_schedule", p.pp_schedule);
}

template <class V>
void describe(V& v, DdpSpec& d) {
    v.field("bucket_cap_mb", d.bucket_cap_mb);
    v.field("first_bucket_mb", d.first_bucket_mb);
    v.field("gradient_as_bucket_view", d.gradient_as_bucket_view);
    v.field("find_unused_parameters", d.find_unused_parameters);
    v.field("static_graph", d.static_graph);
    v.field("comm_hook", d.comm_hook);
}

template <class V>
void describe(V& v, FsdpSpec& f) {
    v.field("reshard_after_forward", f.reshard_after_forward);
    v.field("backward_prefetch", f.backward_prefetch);
    v.field("forward_prefetch", f.forward_prefetch);
    v.field("limit_all_gathers", f.limit_all_gathers);
    v.field("param_dtype", f.param_dtype);
    v.field("reduce_dtype", f.reduce_dtype);
}

template <class V>
void describe(V& v, CompileSpec& c) {
    v.field("enabled", c.enabled);
    v.field("fullgraph", c.fullgraph);
    v.field("dynamic", c.dynamic);
    v.field("mode", c.mode);
    v.field("optimize_ddp", c.optimize_ddp);
}

template <class V>
void describe(V& v, Fp8Spec& f) {
    v.field("enabled", f.enabled);
    v.field("recipe", f.recipe);
    v.field("fp8_all_gather", f.fp8_all_gather);
}

template <class V>
void describe(V& v, DataLoaderSpec& d) {
    v.field("pin_memory", d.pin_memory);
    v.field("num_workers", d.num_workers);
}

template <class V>
void describe(V& v, CheckpointSpec& c) {
    v.field("interval_steps", c.interval_steps);
    v.field("mode", c.mode);
}

template <class V>
void describe(V& v, NcclSpec& n) {
    v.field("algo", n.algo);
    v.field("proto", n.proto);
    v.field("nvls", n.nvls);
}

template <class V>
void describe(V& v, JitterSpec& j) {
    v.field("enabled", j.enabled);
}

template <class V>
void describe(V& v, SimSpec& s) {
    v.field("steps", s.steps);
    v.field("seed", s.seed);
    v.field("samples", s.samples);
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

void validate(const YamlReader& r, const Scenario& s) {
    auto atLeast = [&](const std::string& path, long long v, long long lo) {
        if (v < lo)
            r.fail(path, lo == 1 ? fmt::format("expected a positive integer, got {}", v)
                                 : fmt::format("expected an integer >= {}, got {}", lo, v));
    };
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
    nonEmpty("cluster.network.fabric", c.network.fabric, "a fabric name");
    positive("cluster.network.nic_gbps", c.network.nic_gbps);
    atLeast("cluster.network.nics_per_node", c.network.nics_per_node, 1);
    if (!(c.network.oversubscription >= 1.0))
        r.fail("cluster.network.oversubscription",
               fmt::format("expected a number >= 1 (1 = non-blocking), got {}", c.network.oversubscription));

    const ModelSpec& m = s.model;
    if (m.type != "transformer" && m.type != "trace")
        r.fail("model.type", fmt::format("expected one of transformer, trace, got '{}'", m.type));
    if (m.type == "trace" && m.trace.empty())
        r.fail("model.type", "model.type: trace needs model.trace: FILE (a PyTorch profiler trace)");
    if (m.type != "trace" && !m.trace.empty())
        r.fail("model.trace", fmt::format("model.trace is read only with model.type: trace (type is {})", m.type));
    atLeast("model.layers", m.layers, 1);
    atLeast("model.hidden", m.hidden, 1);
    atLeast("model.heads", m.heads, 1);
    if (m.hidden % m.heads != 0)
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

    const TrainingSpec& t = s.training;
    atLeast("training.micro_batch", t.micro_batch, 1);
    atLeast("training.grad_accum", t.grad_accum, 1);
    if (t.param_dtype == DType::fp8)
        r.fail("training.param_dtype", "expected one of fp32, bf16, fp16, got fp8 (use fp8.enabled for FP8 GEMMs)");
    if (t.compute_dtype == DType::fp32)
        r.fail("training.compute_dtype", "expected one of bf16, fp16, fp8, got fp32");

    const ParallelSpec& p = s.parallel;
    atLeast("parallel.tp", p.tp, 1);
    atLeast("parallel.pp", p.pp, 1);
    const int world = c.worldSize();
    if (world % (p.tp * p.pp) != 0)
        r.fail(p.tp > 1 ? "parallel.tp" : "parallel.pp",
               fmt::format("tp*pp = {}*{} = {} must divide the world size {} (cluster.nodes*cluster.gpus_per_node)",
                           p.tp, p.pp, p.tp * p.pp, world));
    if (m.heads % p.tp != 0)
        r.fail("parallel.tp", fmt::format("expected a divisor of model.heads ({}), got {}", m.heads, p.tp));
    if (p.pp > m.layers)
        r.fail("parallel.pp", fmt::format("expected at most model.layers ({}) stages, got {}", m.layers, p.pp));

    if (!(s.training.grad_clip_norm >= 0.0))
        r.fail("training.grad_clip_norm",
               fmt::format("expected 0 (no clipping) or a positive max norm, got {}", s.training.grad_clip_norm));
    positive("ddp.bucket_cap_mb", s.ddp.bucket_cap_mb);
    positive("ddp.first_bucket_mb", s.ddp.first_bucket_mb);
    atLeast("data_loader.num_workers", s.data_loader.num_workers, 0);
    atLeast("checkpoint.interval_steps", s.checkpoint.interval_steps, 0);
    atLeast("sim.steps", s.sim.steps, 1);
    atLeast("sim.samples", s.sim.samples, 1);
}

}  // namespace

Scenario parseScenario(std::string_view yaml, const std::string& source, const std::vector<std::string>& overrides) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml));
    } catch (const YAML::ParserException& e) {
        throw inputError(source, e.mark.is_null() ? 0 : e.mark.line + 1, "", "YAML syntax error: " + e.msg);
    }
    if (root.IsNull() && !overrides.empty()) root = YAML::Node(YAML::NodeType::Map);
    if (!root.IsMap())
        throw inputError(source, root.Mark().is_null() ? 0 : root.Mark().line + 1, "",
                         "expected a scenario: a mapping that starts with `stepsim: 1`, got " + describeNode(root));
    std::vector<std::string> override_paths;
    for (const auto& o : overrides) override_paths.push_back(applyOverride(root, source, o));

    YamlReader reader(source, YamlReader::Missing::keep_default, override_paths);
    if (!static_cast<const YAML::Node&>(root)["stepsim"].IsDefined())
        reader.failAt(root, "stepsim", "missing: the schema version is required (expected `stepsim: 1`)");
    Scenario s;
    YamlMapReader top(reader, root, "");
    top.readStruct(root, "", s);
    s.source = source;
    if (s.name.empty() && !reader.present("name")) {
        s.name = std::filesystem::path(source).stem().string();
        if (s.name.empty()) s.name = "scenario";
    }
    if (s.name.empty()) reader.fail("name", "expected a non-empty name (or leave it out: the file's stem)");
    validate(reader, s);
    return s;
}

Scenario loadScenario(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw inputError(file.string(), 0, "", "cannot open the scenario file (does it exist?)");
    std::ostringstream text;
    text << in.rdbuf();
    return parseScenario(text.str(), file.string(), overrides);
}

std::string explainScenario(const Scenario& s) {
    Scenario copy = s;
    YamlWriter w;
    w.comment(fmt::format("stepsim explain {}: every default and derived value filled in",
                          s.source.empty() ? s.name : s.source));
    describe(w, copy);
    return w.text();
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
    walk(walk, YAML::Load(explainScenario(s)), "");
    out.erase("name");
    return out;
}

}  // namespace stepsim
