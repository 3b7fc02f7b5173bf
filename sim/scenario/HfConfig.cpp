#include "sim/scenario/HfConfig.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/base/InputError.hpp"
#include "sim/scenario/YamlWriter.hpp"

namespace stepsim {

namespace {

using nlohmann::json;

// The config.json as read, with errors that name the file and the entry.
class HfFile {
public:
    HfFile(std::string path, json j) : path_(std::move(path)), j_(std::move(j)) {}

    [[noreturn]] void fail(const std::string& entry, const std::string& what) const {
        throw inputError(path_, 0, entry, what);
    }
    bool has(const char* k) const { return j_.contains(k) && !j_[k].is_null(); }
    int integer(const char* k) const {
        if (!has(k)) fail(k, "missing: the model's shapes need it");
        return integerOr(k, 0);
    }
    int integerOr(const char* k, int fallback) const {
        if (!has(k)) return fallback;
        if (!j_[k].is_number_integer() || j_[k].get<long long>() < 1 || j_[k].get<long long>() > 1 << 30)
            fail(k, fmt::format("expected a positive integer, got {}", j_[k].dump()));
        return j_[k].get<int>();
    }
    double numberOr(const char* k, double fallback) const {
        if (!has(k)) return fallback;
        if (!j_[k].is_number()) fail(k, fmt::format("expected a number, got {}", j_[k].dump()));
        return j_[k].get<double>();
    }
    bool flagOr(const char* k, bool fallback) const {
        if (!has(k)) return fallback;
        if (!j_[k].is_boolean()) fail(k, fmt::format("expected true or false, got {}", j_[k].dump()));
        return j_[k].get<bool>();
    }
    std::string textOr(const char* k, const std::string& fallback) const {
        if (!has(k)) return fallback;
        if (!j_[k].is_string()) fail(k, fmt::format("expected a string, got {}", j_[k].dump()));
        return j_[k].get<std::string>();
    }
    const json& raw() const { return j_; }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    json j_;
};

HfFile readFile(const YamlReader& r, const Scenario& s) {
    std::filesystem::path file(s.model.hf_config);
    if (file.is_relative() && !s.source.empty()) file = std::filesystem::path(s.source).parent_path() / file;
    std::ifstream in(file, std::ios::binary);
    if (!in) r.fail("model.hf_config", fmt::format("cannot open {} (a Hugging Face config.json)", file.string()));
    json j;
    try {
        j = json::parse(in);
    } catch (const json::exception& e) {
        throw inputError(file.string(), 0, "", fmt::format("not a JSON config: {}", e.what()));
    }
    if (!j.is_object()) throw inputError(file.string(), 0, "", "expected a JSON object (a config.json)");
    return HfFile(file.string(), std::move(j));
}

// The architecture the `architectures` entry names (one), refused where stepsim has no mapping for it.
std::string architecture(const HfFile& f) {
    const json& a = f.raw().contains("architectures") ? f.raw()["architectures"] : json();
    if (!a.is_array() || a.size() != 1 || !a[0].is_string())
        f.fail("architectures", fmt::format("expected a list of one class name (as transformers writes it), got {}",
                                            a.is_null() ? std::string("nothing") : a.dump()));
    const std::string name = a[0].get<std::string>();
    static const char* const modelled[] = {"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM",
                                           "GPT2LMHeadModel",  "GemmaForCausalLM",   "Phi3ForCausalLM"};
    for (const char* m : modelled)
        if (name == m) return name;
    const bool moe = name.find("Mixtral") != std::string::npos || name.find("Moe") != std::string::npos ||
                     name.find("MoE") != std::string::npos || f.has("num_local_experts") || f.has("num_experts") ||
                     f.has("n_routed_experts");
    f.fail("architectures",
           fmt::format("{} is not modelled yet by this stepsim version{} (modelled: LlamaForCausalLM, "
                       "MistralForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel, GemmaForCausalLM, Phi3ForCausalLM)",
                       name, moe ? " (a mixture of experts: the experts' routing and GEMMs are not modelled)" : ""));
}

// One dropout probability for every site (an absent entry: its config class's default), or a refusal naming the
// entries that differ.
double commonDropout(const HfFile& f, std::initializer_list<const char*> entries, double fallback = 0.0) {
    std::optional<double> p;
    std::string first;
    for (const char* e : entries) {
        const double v = f.numberOr(e, fallback);
        if (!(v >= 0.0 && v < 1.0)) f.fail(e, fmt::format("expected a probability in [0, 1), got {}", v));
        if (!p) {
            p = v, first = e;
        } else if (v != *p) {
            f.fail(e, fmt::format("{} {} beside {} {}: dropout at some sites only (or at different p) is not modelled "
                                  "yet by this stepsim version (model.dropout is one p for the embeddings, attention "
                                  "and the residual branches; its price is the same for any p > 0)",
                                  e, v, first, *p));
        }
    }
    return p.value_or(0.0);
}

void requireActivation(const HfFile& f, const char* entry, std::initializer_list<const char*> allowed,
                       const std::string& fallback) {
    const std::string act = f.textOr(entry, fallback);
    for (const char* a : allowed)
        if (act == a) return;
    f.fail(entry, fmt::format("activation '{}' is not modelled for this architecture (modelled: {})", act,
                              fmt::join(allowed, ", ")));
}

// The file's model keys: `m` holds their values, `keys` their names.
struct HfModel {
    ModelSpec m;
    std::vector<std::string> keys;
    std::optional<int> seq_len;      // max_position_embeddings: the scenario's seq_len where it sets none
    std::optional<int> window;       // a sliding window (checked against the sequence)
    const char* window_entry = "sliding_window";
};

void common(const HfFile& f, HfModel& out, bool tied_default) {
    ModelSpec& m = out.m;
    m.layers = f.integer("num_hidden_layers");
    m.hidden = f.integer("hidden_size");
    m.heads = f.integer("num_attention_heads");
    m.kv_heads = f.integerOr("num_key_value_heads", m.heads);
    m.ffn_hidden = f.integer("intermediate_size");
    m.vocab = f.integer("vocab_size");
    m.tied_embeddings = f.flagOr("tie_word_embeddings", tied_default);
    if (f.has("head_dim") && f.integer("head_dim") * m.heads != m.hidden) m.head_dim = f.integer("head_dim");
    if (f.has("max_position_embeddings")) out.seq_len = f.integer("max_position_embeddings");
    m.norm = NormKind::rmsnorm;
    m.position_embedding = PositionEmbedding::rope;
    m.qkv = QkvLayout::separate;
    m.mlp = MlpKind::swiglu;
    if (f.numberOr("partial_rotary_factor", 1.0) != 1.0)
        f.fail("partial_rotary_factor", "rotary embeddings on part of each head are not modelled yet by this stepsim "
                                        "version");
    out.keys = {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "mlp", "norm", "tied_embeddings",
                "linear_bias", "qkv_bias", "position_embedding", "qkv", "loss_dtype", "dropout", "head_dim",
                "fused_gate_up", "embedding_scale", "implementation"};
}

// Llama and Mistral: bias on every Linear of the blocks or none (attention_bias, mlp_bias).
void llama(const HfFile& f, HfModel& out) {
    common(f, out, false);
    requireActivation(f, "hidden_act", {"silu"}, "silu");
    const bool attn = f.flagOr("attention_bias", false), mlp = f.flagOr("mlp_bias", false);
    if (attn != mlp)
        f.fail(attn ? "attention_bias" : "mlp_bias",
               "biases on the attention's or the MLP's linears alone are not modelled yet by this stepsim version "
               "(model.linear_bias puts one on every Linear of the blocks, model.qkv_bias on q, k and v)");
    out.m.linear_bias = attn;
    out.m.dropout = commonDropout(f, {"attention_dropout"});
}

HfModel mapArchitecture(const HfFile& f, const std::string& arch) {
    HfModel out;
    ModelSpec& m = out.m;
    if (arch == "LlamaForCausalLM") {
        llama(f, out);
    } else if (arch == "MistralForCausalLM") {
        llama(f, out);
        if (f.has("sliding_window")) out.window = f.integer("sliding_window");
    } else if (arch == "Qwen2ForCausalLM") {
        common(f, out, false);
        requireActivation(f, "hidden_act", {"silu"}, "silu");
        m.qkv_bias = true;
        m.dropout = commonDropout(f, {"attention_dropout"});
        if (f.flagOr("use_sliding_window", false) && f.has("sliding_window")) out.window = f.integer("sliding_window");
    } else if (arch == "GemmaForCausalLM") {
        common(f, out, true);
        // GemmaMLP takes hidden_activation (gelu_pytorch_tanh when unset, whatever hidden_act says).
        requireActivation(f, "hidden_activation", {"gelu_pytorch_tanh"}, "gelu_pytorch_tanh");
        if (!f.has("head_dim")) m.head_dim = 256;  // GemmaConfig's default
        if (headDim(m) * m.heads == m.hidden) m.head_dim.reset();
        m.mlp = MlpKind::geglu;
        m.embedding_scale = true;
        m.dropout = commonDropout(f, {"attention_dropout"});
    } else if (arch == "Phi3ForCausalLM") {
        common(f, out, false);
        requireActivation(f, "hidden_act", {"silu"}, "silu");
        m.qkv = QkvLayout::fused;
        m.fused_gate_up = true;
        m.dropout = commonDropout(f, {"resid_pdrop", "embd_pdrop", "attention_dropout"});
        if (f.has("sliding_window")) out.window = f.integer("sliding_window");
    } else {  // GPT2LMHeadModel
        m.layers = f.integer("n_layer");
        m.hidden = f.integer("n_embd");
        m.heads = f.integer("n_head");
        m.kv_heads = m.heads;
        m.ffn_hidden = f.integerOr("n_inner", 4 * m.hidden);
        m.vocab = f.integer("vocab_size");
        m.tied_embeddings = f.flagOr("tie_word_embeddings", true);
        if (f.has("n_positions")) out.seq_len = f.integer("n_positions");
        requireActivation(f, "activation_function", {"gelu_new", "gelu_pytorch_tanh"}, "gelu_new");
        for (const char* e : {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"})
            if (f.flagOr(e, false))
                f.fail(e, "GPT-2's eager attention path (taken with this option) is not modelled yet by this stepsim "
                          "version");
        m.mlp = MlpKind::gelu;
        m.norm = NormKind::layernorm;
        m.position_embedding = PositionEmbedding::learned;
        m.qkv = QkvLayout::fused;
        m.linear_bias = true;
        m.dropout = commonDropout(f, {"resid_pdrop", "embd_pdrop", "attn_pdrop"}, 0.1);  // GPT2Config's defaults
        out.keys = {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "mlp", "norm", "tied_embeddings",
                    "linear_bias", "qkv_bias", "position_embedding", "qkv", "loss_dtype", "dropout", "head_dim",
                    "fused_gate_up", "embedding_scale", "implementation"};
    }
    m.loss_dtype = LossDtype::fp32;  // ForCausalLMLoss: logits.float()
    m.implementation = ModelImplementation::hf;
    if (m.heads % *m.kv_heads != 0)
        f.fail("num_key_value_heads", fmt::format("expected a divisor of the heads ({}), got {}", m.heads, *m.kv_heads));
    return out;
}

// Each key's copy from the file's model into the scenario's, and its value as the scenario would write it.
struct KeyAccess {
    const char* key;
    std::function<void(ModelSpec&, const ModelSpec&)> copy;
    std::function<std::string(const ModelSpec&)> show;
};

#define STEPSIM_HF_KEY(k) \
    KeyAccess { #k, [](ModelSpec& to, const ModelSpec& from) { to.k = from.k; }, \
                [](const ModelSpec& m) { return formatValue(m.k); } }

const std::vector<KeyAccess>& keyAccess() {
    static const std::vector<KeyAccess> keys = {
        STEPSIM_HF_KEY(layers),          STEPSIM_HF_KEY(hidden),          STEPSIM_HF_KEY(heads),
        STEPSIM_HF_KEY(kv_heads),        STEPSIM_HF_KEY(ffn_hidden),      STEPSIM_HF_KEY(vocab),
        STEPSIM_HF_KEY(mlp),             STEPSIM_HF_KEY(norm),            STEPSIM_HF_KEY(tied_embeddings),
        STEPSIM_HF_KEY(linear_bias),     STEPSIM_HF_KEY(qkv_bias),        STEPSIM_HF_KEY(position_embedding),
        STEPSIM_HF_KEY(qkv),             STEPSIM_HF_KEY(loss_dtype),      STEPSIM_HF_KEY(dropout),
        STEPSIM_HF_KEY(head_dim),        STEPSIM_HF_KEY(fused_gate_up),   STEPSIM_HF_KEY(embedding_scale),
        STEPSIM_HF_KEY(implementation),  STEPSIM_HF_KEY(seq_len)};
    return keys;
}

#undef STEPSIM_HF_KEY

}  // namespace

void applyHfConfig(const YamlReader& r, Scenario& s) {
    if (s.model.type != "transformer")
        r.fail("model.hf_config", fmt::format("model.hf_config is read only with model.type: transformer (type is {})",
                                              s.model.type));
    const HfFile f = readFile(r, s);
    const std::string arch = architecture(f);
    if (arch == "GPT2LMHeadModel" && fp8Training(s))
        r.fail(s.fp8.enabled ? "fp8.enabled" : "training.compute_dtype",
               "FP8 linears on GPT2LMHeadModel are not modelled yet by this stepsim version (its Conv1D layers are not "
               "nn.Linear: Float8Linear converts none of them, and stepsim would convert every one)");
    HfModel hf = mapArchitecture(f, arch);
    std::vector<std::string> keys = hf.keys;
    if (hf.seq_len) {
        hf.m.seq_len = *hf.seq_len;
        if (!r.present("model.seq_len")) keys.push_back("seq_len");
    }
    for (const KeyAccess& k : keyAccess()) {
        if (std::find(keys.begin(), keys.end(), k.key) == keys.end()) continue;
        const std::string path = std::string("model.") + k.key;
        if (!r.present(path)) {
            k.copy(s.model, hf.m);
        } else if (k.show(s.model) != k.show(hf.m)) {
            s.model.hf_overrides.push_back(fmt::format("{}: {} from the scenario replaces {} from model.hf_config {}",
                                                       path, k.show(s.model), k.show(hf.m), f.path()));
        }
    }
    if (hf.window && *hf.window <= s.model.seq_len)
        throw inputError(f.path(), 0, hf.window_entry,
                         fmt::format("a sliding window of {} tokens over a sequence of {} (model.seq_len): attention "
                                     "with a sliding-window mask is not modelled yet by this stepsim version (SDPA "
                                     "takes the mask and leaves the flash kernels); a sequence shorter than the window "
                                     "is (transformers then passes no mask)",
                                     *hf.window, s.model.seq_len));
}

}  // namespace stepsim
