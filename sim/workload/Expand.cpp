#include "sim/workload/Expand.hpp"

#include "sim/engine/Symmetry.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/base/Support.hpp"
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

// Rejects what the scenario asks that this version does not model, rather than ignoring it: sim/base/Support.hpp's
// table, which the loader checks at the key's line; here again for a Scenario built in code.
void checkSupported(const Scenario& sc) {
    if (const std::optional<Unmodelled> no = firstUnmodelled(sc)) throw inputError(sc.source, 0, no->key, no->message);
}

// The schedule of the scenario's parallelism: the one place a strategy is chosen.
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
    checkSupported(given);
    const Scenario sc = withFp8Linears(given);
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
