#include "sim/workload/Expand.hpp"

#include "sim/engine/Symmetry.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/workload/CheckpointIo.hpp"
#include "sim/workload/CompileTransform.hpp"
#include "sim/workload/DdpSchedule.hpp"
#include "sim/workload/Expand3d.hpp"
#include "sim/workload/Fsdp1Schedule.hpp"
#include "sim/workload/Fsdp2Schedule.hpp"
#include "sim/workload/HsdpSchedule.hpp"
#include "sim/workload/InputPipeline.hpp"
#include "sim/workload/OptimizerStep.hpp"
#include "sim/workload/ParallelSchedule.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"
#include "sim/workload/OpsSchedule.hpp"
#include "sim/workload/TraceSchedule.hpp"
#include "sim/workload/TransformerStep.hpp"
#include "sim/workload/Zero3Schedule.hpp"
#include "sim/workload/ZeroSchedule.hpp"

namespace stepsim {

namespace {

// Rejects what the scenario asks that this version does not model, rather than ignoring it.
void checkSupported(const Scenario& sc) {
    const std::string& f = sc.source;
    auto unsupported = [&](const std::string& key, const std::string& what) {
        throw inputError(f, 0, key, what + " is not modelled yet by this stepsim version");
    };
    if (sc.model.type != "transformer") unsupported("model.type", "'" + sc.model.type + "'");
    const DataParallel data = sc.parallel.data;
    const bool fsdp = data == DataParallel::fsdp1 || data == DataParallel::fsdp2 || data == DataParallel::hsdp;
    if (data != DataParallel::ddp && data != DataParallel::fsdp2 && (sc.parallel.tp > 1 || sc.parallel.pp > 1))
        unsupported("parallel.data", "fsdp1, hsdp and ZeRO with tensor or pipeline parallelism (parallel.tp, parallel.pp)");
    if (data != DataParallel::ddp && data != DataParallel::fsdp2 && sc.compile.enabled)
        unsupported("compile.enabled", "torch.compile with fsdp1, hsdp or ZeRO");
    if (fsdp) {
        if (sc.fsdp.backward_prefetch == BackwardPrefetch::post && data != DataParallel::fsdp1)
            unsupported("fsdp.backward_prefetch", "backward_prefetch: post (FSDP1's BACKWARD_POST) with fsdp2 or hsdp");
        for (const auto& [key, d] : {std::pair{"fsdp.param_dtype", sc.fsdp.param_dtype},
                                     std::pair{"fsdp.reduce_dtype", sc.fsdp.reduce_dtype}})
            if (d == DType::fp8) unsupported(key, "an fp8 MixedPrecisionPolicy dtype (FP8 all-gather)");
        const DType g = fsdpGatherDtype(sc);
        if (g != DType::fp32 && g != sc.training.compute_dtype)
            throw inputError(f, 0, "fsdp.param_dtype",
                             "a 16-bit fsdp.param_dtype must equal training.compute_dtype (the step computes in the "
                             "dtype its parameters are gathered in)");
    }
    if (sc.parallel.pp > 1 && sc.model.tied_embeddings)
        unsupported("model.tied_embeddings", "tied embeddings across pipeline stages (parallel.pp > 1)");
    const bool parallel3d = sc.parallel.tp > 1 || sc.parallel.pp > 1;
    if (parallel3d && sc.checkpoint.interval_steps > 0)
        unsupported("checkpoint.interval_steps", "checkpoint I/O with tensor or pipeline parallelism");
    if (parallel3d && sc.data_loader.modelled)
        unsupported("data_loader", "the input pipeline with tensor or pipeline parallelism");
    if (!sc.fsdp.sync_every_micro_batch && sc.parallel.pp > 1)
        unsupported("fsdp.sync_every_micro_batch", "false with pipeline parallelism (FSDP2 under PP reduces once a step "
                                                   "already)");
    if (sc.fsdp.reshard_after_forward.ranks > 0 && parallel3d)
        unsupported("fsdp.reshard_after_forward", "an integer reshard_after_forward with tensor or pipeline parallelism");
    // The model variants' kernels are built for a linear whole on each rank: not with a linear split over TP ranks
    // (docs/variants.md, "What is refused"), but for Llama's: rotary embeddings, separate q/k/v, an fp32 loss.
    const ModelSpec& m = sc.model;
    for (const auto& [key, on] : {std::pair{"model.linear_bias", m.linear_bias}, std::pair{"model.qkv_bias", m.qkv_bias},
                                  std::pair{"model.qkv", m.qkv == QkvLayout::fused_permute},
                                  std::pair{"model.dropout", m.dropout > 0.0}, std::pair{"model.mlp", m.mlp == MlpKind::geglu},
                                  std::pair{"model.head_dim", m.head_dim.has_value()},
                                  std::pair{"model.fused_gate_up", m.fused_gate_up},
                                  std::pair{"model.embedding_scale", m.embedding_scale},
                                  std::pair{"model.implementation", m.implementation != ModelImplementation::stepsim}})
        if (on && sc.parallel.tp > 1) unsupported(key, std::string(key) + " with tensor parallelism (parallel.tp > 1)");
    if (m.implementation == ModelImplementation::nanogpt || m.implementation == ModelImplementation::torchtitan)
        unsupported("model.implementation", "a kernel sequence without a committed capture or trace of its code");
    if (fp8Training(sc) && sc.parallel.tp > 1 && sc.fp8.recipe != Fp8Recipe::tensorwise)
        unsupported("fp8.recipe", "rowwise FP8 linears with tensor parallelism (torchao's Float8 TP plans are tensorwise)");
    if (parallel3d && data == DataParallel::ddp) {  // under another strategy DDP's keys have no effect (the loader's)
        const DdpSpec& d = sc.ddp;
        const char* with = " with tensor or pipeline parallelism";
        if (d.find_unused_parameters) unsupported("ddp.find_unused_parameters", std::string("find_unused_parameters") + with);
        if (d.static_graph) unsupported("ddp.static_graph", std::string("static_graph") + with);
        if (d.duplicate_gradients > 0) unsupported("ddp.duplicate_gradients", std::string("duplicate gradients") + with);
        if (d.comm_hook == CommHook::powersgd) unsupported("ddp.comm_hook", std::string("PowerSGD") + with);
    }
    if (sc.compile.enabled && data == DataParallel::ddp) {
        const DdpSpec& d = sc.ddp;
        if (d.find_unused_parameters) unsupported("ddp.find_unused_parameters", "find_unused_parameters under torch.compile");
        if (d.static_graph) unsupported("ddp.static_graph", "static_graph under torch.compile");
        if (d.duplicate_gradients > 0) unsupported("ddp.duplicate_gradients", "duplicate gradients under torch.compile");
        if (d.comm_hook == CommHook::powersgd) unsupported("ddp.comm_hook", "PowerSGD under torch.compile");
    }
}

// The schedule of the scenario's parallelism: the one place a strategy is chosen (checkSupported admits DDP alone).
// `shard`: the context of the parameters as the optimizer holds them (FSDP: sharded, in training.param_dtype); `c`
// the step's.
std::unique_ptr<ParallelSchedule> makeSchedule(StepContext& c, const StepContext& shard, ProgramBuilder& b) {
    switch (c.sc.parallel.data) {
        case DataParallel::ddp: return std::make_unique<DdpSchedule>(c, b, gradientReadyOrder(c));
        case DataParallel::fsdp2: return std::make_unique<Fsdp2Schedule>(shard, c, b);
        case DataParallel::fsdp1: return std::make_unique<Fsdp1Schedule>(shard, c, b);
        case DataParallel::hsdp: return std::make_unique<HsdpSchedule>(shard, c, b, c.sc.cluster.nodes);
        case DataParallel::zero1:
        case DataParallel::zero2: return std::make_unique<ZeroSchedule>(c, b);
        case DataParallel::zero3: return std::make_unique<Zero3Schedule>(c, b);
    }
    throw std::logic_error("expand: no schedule for the scenario's parallel.data");
}

// One training step: zero_grad, the micro-steps (the schedule synchronizes the last one's gradients), the optimizer
// step. Returns the step's model FLOPs.
double trainingStep(StepContext& c, const StepContext& shard, ProgramBuilder& b, ParallelSchedule& schedule, int step,
                    double params, InputPipeline& input, CheckpointIo& checkpoint) {
    b.step = step;
    schedule.beginStep(step);
    zeroGrad(b, c);
    const double flops_before = b.model_flops;
    for (int micro = 0; micro < c.sc.training.grad_accum; ++micro) {
        input.batch(step, micro);
        TransformerStep ms(c, b, /*accumulate=*/micro > 0 && schedule.autogradAccumulates(), &schedule);
        ms.forward();
        schedule.beginBackward(micro == c.sc.training.grad_accum - 1);
        ms.backward([&](std::size_t i) { schedule.gradReady(i); });
        schedule.endBackward();
    }
    const double flops = b.model_flops - flops_before;
    optimizerStep(b, shard, params * schedule.optimizerShare());
    schedule.afterOptimizer();
    b.stepEnd();
    checkpoint.afterStep(step);
    return flops;
}

std::vector<std::string> warnings(const StepContext& c) {
    std::vector<std::string> out;
    if (c.out_of_domain > 0)
        out.push_back(fmt::format("{} GEMM or attention kernels per step have shapes outside the profile's "
                                  "measured grid (priced by the model alone)",
                                  c.out_of_domain / std::max(1, c.sc.sim.steps)));
    if (c.world <= 1) out.push_back("one GPU: no data-parallel communication is simulated");
    for (const std::string& w : c.sc.model.hf_overrides) out.push_back(w);
    if (c.sc.model.loss_dtype == LossDtype::fp32 && !c.autocast &&
        c.sc.model.implementation == ModelImplementation::stepsim)
        out.push_back("model.loss_dtype: fp32 changes nothing here: without autocast the loss takes logits.float() "
                      "already");
    if (fp8Training(c.sc))
        for (std::string& w : fp8SlowerWarnings(c)) out.push_back(std::move(w));
    return out;
}

// The scenario the step's kernels run: under FSDP2 in the dtype the parameters are gathered in (a
// MixedPrecisionPolicy's param_dtype: bf16 parameters, no autocast casts).
Scenario computeScenario(const Scenario& sc) {
    Scenario out = sc;
    const DataParallel d = sc.parallel.data;
    if (d == DataParallel::fsdp2 || d == DataParallel::fsdp1 || d == DataParallel::hsdp)
        out.training.param_dtype = fsdpGatherDtype(sc);
    return out;
}

// training.compute_dtype: fp8 asks for FP8 linears (fp8.enabled) with every other op in bf16.
Scenario withFp8Linears(const Scenario& sc) {
    Scenario out = sc;
    if (sc.training.compute_dtype == DType::fp8) out.training.compute_dtype = DType::bf16, out.fp8.enabled = true;
    return out;
}

}  // namespace

Expansion expand(const Scenario& given, const CostModel& cost) {
    if (given.model.type == "trace") return expandTrace(given, cost);
    if (given.model.type == "ops") return expandOps(given, cost);
    const Scenario sc = withFp8Linears(given);
    checkSupported(sc);
    const AttentionRates& att = cost.profile().attention;
    if (sc.model.dropout > 0.0 && !(att.dropout_forward_ratio > 0.0 && att.dropout_backward_ratio > 0.0))
        throw inputError(sc.source, 0, "model.dropout",
                         fmt::format("profile {} has no measurement of SDPA with dropout "
                                     "(attention.dropout_forward_ratio and dropout_backward_ratio: fit them from "
                                     "calibration/pytorch/variant_raw.py's records, docs/variants.md)",
                                     cost.profile().name));
    if (sc.parallel.tp > 1 || sc.parallel.pp > 1) return expandParallel3d(sc, cost);
    Expansion out;
    const Scenario compute_sc = computeScenario(sc);
    StepContext c = makeStepContext(compute_sc, cost);
    StepContext shard = makeStepContext(sc, cost);
    if (sc.parallel.data == DataParallel::hsdp) shard.world = sc.cluster.gpus_per_node;  // the shard group
    for (const ParamInfo& p : c.params) out.params += p.numel;

    Program prog;
    ProgramBuilder b(c, prog);
    const std::unique_ptr<ParallelSchedule> schedule = makeSchedule(c, shard, b);
    prog.streams = schedule->streams();
    InputPipeline input(c, b, prog);
    CheckpointIo checkpoint(c, b, prog, out.params, schedule->optimizerShare(), shard.pe);
    double flops_per_step = 0.0;
    for (int step = 0; step < sc.sim.steps; ++step)
        flops_per_step = trainingStep(c, shard, b, *schedule, step, out.params, input, checkpoint);

    if (sc.compile.enabled) {
        const CompileReport compiled = compileProgram(prog, sc, cost.profile(), c.params.size());
        out.compile_time_s = compiled.compile_time_s;
        out.compiled_graphs_per_step = compiled.graphs_per_step;
    }
    Workload& w = out.workload;
    w.steps = sc.sim.steps;
    w.groups = schedule->groups();
    w.model_flops_per_step = flops_per_step;
    w.tokens_per_step = double(c.t.T) * sc.training.grad_accum;
    w.samples_per_step = double(c.t.b) * sc.training.grad_accum;
    w.checkpoint_interval = sc.checkpoint.interval_steps;
    // Every rank runs this Program, its calls on the process groups the schedule gives that rank (HSDP's and a
    // partial reshard's groups differ per rank). Where every rank's groups are the same and the symmetry reduction
    // applies (sim/engine/Symmetry.hpp), one node's GPUs hold it and the other ranks mirror them.
    const int node = sc.cluster.gpus_per_node;
    const bool per_rank_groups = !schedule->rankGroups(0).empty();
    w.programs.assign(std::min(c.world, node), prog);
    if (!per_rank_groups && symmetryApplies(sc) && symmetryBlocker(w, c.world, node, sc.jitter.enabled).empty()) {
        mirrorRanks(w, c.world, node, sc.jitter.enabled);
    } else {
        w.programs.assign(c.world, prog);
        for (int r = 0; r < c.world && per_rank_groups; ++r) {
            const std::vector<int> slots = schedule->rankGroups(r);
            for (CollectiveCall& call : w.programs[std::size_t(r)].collectives)
                call.group = slots.at(std::size_t(call.group));
        }
    }
    out.memory = estimateStepPeak(c, c.world > 1);
    schedule->report(out);
    out.warnings = warnings(c);
    return out;
}

}  // namespace stepsim
