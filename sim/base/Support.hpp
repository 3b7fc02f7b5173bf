#pragma once
// What is modelled: one table of the settings this version reads but does not build in the combination asked, each
// a row (the key refused, the context in which it is refused, why, what would lift it). The loader refuses the first
// row a scenario asks at that key's line (sim/scenario/ScenarioLoader.cpp); `expand` refuses it again for a Scenario
// built in code (sim/workload/Expand.cpp). Nothing else refuses a combination of settings: a key without effect is a
// warning; what is refused elsewhere is bad input (a value out of range, a Hugging Face config's contents) or a
// profile without the measurement a setting needs (CompileTransform.cpp, Expand.cpp's dropout).
//
// The rows are checked in the table's order; the first that applies is the refusal. A model read from a trace or an
// op graph has its own rows of the same shape beside this table (TraceSupport.hpp, OpsSupport.hpp), checked before
// these.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/Scenario.hpp"

namespace stepsim {

struct SupportRow {
    std::string key;                    // the key refused (at whose line the loader names it)
    std::string context;                // in which settings (the row's applies, in words)
    std::function<bool(const Scenario&)> applies;  // whether a scenario asks what the row refuses
    std::string what;                   // what is not modelled: "<what> is not modelled yet by this stepsim version"
    std::string lift;                   // what would lift the refusal
    bool sentence = false;              // `what` is the whole message (the refusal states a rule)
};

// A refusal: the key and its message.
struct Unmodelled {
    std::string key;
    std::string message;
};

namespace support {

inline bool fsdpFamily(const Scenario& s) {
    const DataParallel d = s.parallel.data;
    return d == DataParallel::fsdp1 || d == DataParallel::fsdp2 || d == DataParallel::hsdp;
}
inline bool parallel3d(const Scenario& s) { return s.parallel.tp > 1 || s.parallel.pp > 1; }
inline bool ddp(const Scenario& s) { return s.parallel.data == DataParallel::ddp; }
// The dtype the step computes in beside FP8 linears: training.compute_dtype fp8 computes every op but the linears in
// bf16 (sim/workload/Expand.cpp).
inline DType stepDtype(const Scenario& s) {
    return s.training.compute_dtype == DType::fp8 ? DType::bf16 : s.training.compute_dtype;
}

// DDP's options and the model variants, each with whether the scenario sets it: built for the eager, unsplit step
// they were measured on.
struct KeyTest {
    const char* key;
    bool (*on)(const Scenario&);
};
inline const std::vector<KeyTest>& ddpOptions() {
    static const std::vector<KeyTest> keys = {
        {"ddp.find_unused_parameters", [](const Scenario& s) { return s.ddp.find_unused_parameters; }},
        {"ddp.static_graph", [](const Scenario& s) { return s.ddp.static_graph; }},
        {"ddp.duplicate_gradients", [](const Scenario& s) { return s.ddp.duplicate_gradients > 0; }},
        {"ddp.comm_hook", [](const Scenario& s) { return s.ddp.comm_hook == CommHook::powersgd; }}};
    return keys;
}
inline const std::vector<KeyTest>& modelVariants() {
    static const std::vector<KeyTest> keys = {
        {"model.linear_bias", [](const Scenario& s) { return s.model.linear_bias; }},
        {"model.qkv_bias", [](const Scenario& s) { return s.model.qkv_bias; }},
        {"model.qkv", [](const Scenario& s) { return s.model.qkv == QkvLayout::fused_permute; }},
        {"model.dropout", [](const Scenario& s) { return s.model.dropout > 0.0; }},
        {"model.mlp", [](const Scenario& s) { return s.model.mlp == MlpKind::geglu; }},
        {"model.head_dim", [](const Scenario& s) { return s.model.head_dim.has_value(); }},
        {"model.fused_gate_up", [](const Scenario& s) { return s.model.fused_gate_up; }},
        {"model.embedding_scale", [](const Scenario& s) { return s.model.embedding_scale; }},
        {"model.implementation",
         [](const Scenario& s) { return s.model.implementation != ModelImplementation::stepsim; }}};
    return keys;
}

using S = const Scenario&;

// What the model and single values ask: a kernel sequence not captured, a model type, a value not built.
inline std::vector<SupportRow> valueRows() {
    return {
        {"model.implementation", "model.implementation: nanogpt",
         [](S s) { return s.model.implementation == ModelImplementation::nanogpt; },
         "nanogpt's kernel sequence is not modelled yet by this stepsim version (it is derived from a capture or a "
         "profiler trace of that code, and none is committed: docs/variants.md)",
         "a committed capture or profiler trace of that code", true},
        {"model.implementation", "model.implementation: torchtitan",
         [](S s) { return s.model.implementation == ModelImplementation::torchtitan; },
         "torchtitan's kernel sequence is not modelled yet by this stepsim version (it is derived from a capture or a "
         "profiler trace of that code, and none is committed: docs/variants.md)",
         "a committed capture or profiler trace of that code", true},
        {"model.type", "a type other than transformer, trace, ops",
         [](S s) { return s.model.type != "transformer" && s.model.type != "trace" && s.model.type != "ops"; },
         "a model.type other than transformer, trace and ops", "a model of that kind"},
        {"nccl.algo", "nccl.algo: collnet", [](S s) { return s.nccl.algo == NcclAlgo::collnet; },
         "CollNet (NCCL's in-network reduction)", "a model of SHARP-capable switches' in-network reduction"},
        {"training.param_dtype", "parallel.data: zero1-3 with 16-bit parameters",
         [](S s) {
             const DataParallel d = s.parallel.data;
             const bool zero = d == DataParallel::zero1 || d == DataParallel::zero2 || d == DataParallel::zero3;
             return zero && s.training.param_dtype != DType::fp32;
         },
         "expected fp32 with parallel.data zero1-3 (DeepSpeed's bf16/fp16 modes, 16-bit parameters with fp32 master "
         "weights, are not modelled yet by this stepsim version; autocast computes in training.compute_dtype)",
         "DeepSpeed's bf16/fp16 optimizer: the fp32 master copy, its memory and its casts", true},
        {"fp8.enabled", "FP8 linears with training.compute_dtype: fp16",
         [](S s) { return fp8Training(s) && s.training.compute_dtype == DType::fp16; },
         "FP8 linears beside fp16 autocast (measured under bf16 only)", "a measurement of FP8 linears under fp16"},
    };
}

// The sharded strategies' options and dtypes, tied embeddings across stages.
inline std::vector<SupportRow> shardingRows() {
    return {
        {"fsdp.backward_prefetch", "parallel.data: fsdp2",
         [](S s) {
             return s.parallel.data == DataParallel::fsdp2 && s.fsdp.backward_prefetch == BackwardPrefetch::post;
         },
         "backward_prefetch: post (FSDP1's BACKWARD_POST) with fsdp2", "FSDP2 has no such option: none to build"},
        {"fsdp.backward_prefetch", "parallel.data: hsdp",
         [](S s) { return s.parallel.data == DataParallel::hsdp && s.fsdp.backward_prefetch == BackwardPrefetch::post; },
         "backward_prefetch: post (FSDP1's BACKWARD_POST) with fsdp2 or hsdp", "HSDP's schedule with a post-backward prefetch"},
        {"fsdp.param_dtype", "parallel.data: fsdp1, fsdp2, hsdp",
         [](S s) { return fsdpFamily(s) && s.fsdp.param_dtype == DType::fp8; },
         "an fp8 MixedPrecisionPolicy dtype (FP8 all-gather)", "fp8.fp8_all_gather models torchao's FP8 all-gather"},
        {"fsdp.reduce_dtype", "parallel.data: fsdp1, fsdp2, hsdp",
         [](S s) { return fsdpFamily(s) && s.fsdp.reduce_dtype == DType::fp8; },
         "an fp8 MixedPrecisionPolicy dtype (FP8 all-gather)", "an FP8 reduce-scatter's kernels and its scaling"},
        {"fsdp.param_dtype", "parallel.data: fsdp1, fsdp2, hsdp; a 16-bit param_dtype",
         [](S s) {
             const DType gather = s.fsdp.param_dtype.value_or(s.training.param_dtype);
             return fsdpFamily(s) && gather != DType::fp32 && gather != stepDtype(s);
         },
         "a 16-bit fsdp.param_dtype must equal training.compute_dtype (the step computes in the dtype its parameters "
         "are gathered in)",
         "the step's kernels in a dtype other than its gathered parameters' (casts after each all-gather)", true},
        {"model.tied_embeddings", "parallel.pp > 1", [](S s) { return s.parallel.pp > 1 && s.model.tied_embeddings; },
         "tied embeddings across pipeline stages (parallel.pp > 1)",
         "the first and last stages' all-reduce of the shared embedding's gradient"},
    };
}

// DDP's options and the model variants, each key under tensor or pipeline parallelism and under torch.compile. The
// variants' kernels are built for a linear whole on each rank, except Llama's (rotary embeddings, separate q/k/v, an
// fp32 loss), which are split over the TP ranks.
inline std::vector<SupportRow> optionRows() {
    std::vector<SupportRow> t;
    for (const KeyTest& k : ddpOptions()) {
        t.push_back({k.key, "parallel.data: ddp with parallel.tp or parallel.pp > 1",
                     [k](S s) { return ddp(s) && k.on(s) && parallel3d(s); },
                     std::string(k.key) + " with tensor or pipeline parallelism",
                     "the option's effect on a stage's or a TP rank's buckets"});
        t.push_back({k.key, "parallel.data: ddp under compile.enabled",
                     [k](S s) { return ddp(s) && k.on(s) && s.compile.enabled; },
                     std::string(k.key) + " under torch.compile", "the option's effect on compiled DDP's graphs"});
    }
    for (const KeyTest& k : modelVariants())
        t.push_back({k.key, "parallel.tp > 1", [k](S s) { return k.on(s) && s.parallel.tp > 1; },
                     std::string(k.key) + " with tensor parallelism (parallel.tp > 1)",
                     "the variant's kernels with each linear split over the TP ranks (docs/variants.md)"});
    return t;
}

// Tensor and pipeline parallelism, torch.compile and the strategies beside each other.
inline std::vector<SupportRow> combinationRows() {
    return {
        {"checkpoint.interval_steps", "parallel.tp or parallel.pp > 1",
         [](S s) { return parallel3d(s) && s.checkpoint.interval_steps > 0; },
         "checkpoint I/O with tensor or pipeline parallelism", "each stage's and TP rank's shard of the checkpoint"},
        {"data_loader", "parallel.tp or parallel.pp > 1", [](S s) { return parallel3d(s) && s.data_loader.modelled; },
         "the input pipeline with tensor or pipeline parallelism", "the batches fed to the first stage only"},
        {"fp8.recipe", "parallel.tp > 1 with FP8 linears",
         [](S s) { return fp8Training(s) && s.parallel.tp > 1 && s.fp8.recipe != Fp8Recipe::tensorwise; },
         "rowwise FP8 linears with tensor parallelism (torchao's Float8 TP plans are tensorwise)",
         "a rowwise Float8 TP plan: per-row scales of a column-sharded input"},
        {"parallel.data", "parallel.tp or parallel.pp > 1",
         [](S s) {
             return parallel3d(s) && s.parallel.data != DataParallel::ddp && s.parallel.data != DataParallel::fsdp2;
         },
         "fsdp1, hsdp and ZeRO with tensor or pipeline parallelism (parallel.tp, parallel.pp)",
         "a 3D expansion over those strategies' schedules (Expand3d.cpp takes DDP and FSDP2)"},
        {"compile.optimizer", "compile.enabled with training.optimizer_impl: fused",
         [](S s) {
             return s.compile.enabled && s.compile.optimizer && s.training.optimizer_impl == OptimizerImpl::fused;
         },
         "a compiled step of training.optimizer_impl: fused is not modelled (the compiled step measured is the foreach "
         "one; fused AdamW is one kernel already)",
         "a measurement of torch.compile over the fused optimizer step", true},
        {"compile.optimizer", "compile.enabled with fp16 (GradScaler) or training.grad_clip_norm",
         [](S s) {
             return s.compile.enabled && s.compile.optimizer &&
                    (s.training.compute_dtype == DType::fp16 || s.training.grad_clip_norm > 0.0);
         },
         "a compiled optimizer step beside GradScaler (fp16) or gradient clipping is not modelled (the compiled step "
         "was measured alone)",
         "a measurement of the compiled step with the scaler's or the clipping's kernels", true},
        {"compile.optimizer", "compile.enabled with parallel.data: fsdp2",
         [](S s) { return s.compile.enabled && s.compile.optimizer && s.parallel.data == DataParallel::fsdp2; },
         "a compiled optimizer step over FSDP2's sharded (DTensor) parameters is not modelled (measured over plain "
         "tensors)",
         "a measurement of the compiled step over DTensor shards", true},
        {"compile.enabled", "parallel.data: fsdp1, hsdp, zero1-3",
         [](S s) { return s.compile.enabled && !ddp(s) && s.parallel.data != DataParallel::fsdp2; },
         "torch.compile with fsdp1, hsdp or ZeRO", "a measurement of compiled steps under those strategies"},
        {"fsdp.sync_every_micro_batch", "parallel.pp > 1",
         [](S s) { return !s.fsdp.sync_every_micro_batch && s.parallel.pp > 1; },
         "false with pipeline parallelism (FSDP2 under PP reduces once a step already)", "none needed: a no-op there"},
        {"fsdp.reshard_after_forward", "an integer, parallel.tp or parallel.pp > 1",
         [](S s) { return s.fsdp.reshard_after_forward.ranks > 0 && parallel3d(s); },
         "an integer reshard_after_forward with tensor or pipeline parallelism",
         "the post-forward group laid out inside the data-parallel dimension"},
    };
}

// The rows in the order they are checked.
inline std::vector<SupportRow> buildTable() {
    std::vector<SupportRow> t;
    for (std::vector<SupportRow> (*part)() : {valueRows, shardingRows, optionRows, combinationRows})
        for (SupportRow& r : part()) t.push_back(std::move(r));
    return t;
}

}  // namespace support

// The table, in the order its rows are checked.
inline const std::vector<SupportRow>& supportTable() {
    static const std::vector<SupportRow> table = support::buildTable();
    return table;
}

inline std::string supportMessage(const SupportRow& r) {
    return r.sentence ? r.what : r.what + " is not modelled yet by this stepsim version";
}

// The first row `sc` asks, or none.
inline std::optional<Unmodelled> firstUnmodelled(const Scenario& sc) {
    for (const SupportRow& r : supportTable())
        if (r.applies(sc)) return Unmodelled{r.key, supportMessage(r)};
    return std::nullopt;
}

}  // namespace stepsim
