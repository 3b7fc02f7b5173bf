#include "sim/workload/Expand3d.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "sim/workload/CompileTransform.hpp"
#include "sim/workload/DdpSchedule.hpp"
#include "sim/workload/Fsdp2Schedule.hpp"
#include "sim/workload/OptimizerStep.hpp"
#include "sim/workload/ParallelLayout.hpp"
#include "sim/workload/PipelineStage.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/TransformerStep.hpp"

namespace stepsim {

namespace {

struct StageResult {
    Program program;
    double flops = 0;
    MemoryEstimate memory;
    std::vector<Bucket> buckets;
    int out_of_domain = 0;
    CompileReport compiled;
};

// torch.compile over the stage's Program (CompileTransform.hpp), TP's collectives traced into its graphs.
void compileStage(StageResult& r, const Scenario& sc, const CostModel& cost, std::size_t tensors) {
    if (sc.compile.enabled) r.compiled = compileProgram(r.program, sc, cost.profile(), tensors, kTpGroup);
}

void addTpStream(StepContext& c, std::vector<StreamInfo>& streams) {
    if (!c.async_tp) return;
    streams.push_back({StreamKind::comm, "nccl:tp async"});
    c.tp_stream = std::uint8_t(streams.size() - 1);
}

// Without pipeline parallelism: the data-parallel schedule's step (as expand()'s), its kernels TP-sharded.
StageResult dataParallelStage(const Scenario& compute_sc, const Scenario& sc, const CostModel& cost) {
    StageResult r;
    StepContext c = makeStepContext(compute_sc, cost);
    const StepContext shard = makeStepContext(sc, cost);
    ProgramBuilder b(c, r.program);
    std::unique_ptr<ParallelSchedule> schedule;
    if (sc.parallel.data == DataParallel::fsdp2) schedule = std::make_unique<Fsdp2Schedule>(shard, c, b);
    else schedule = std::make_unique<DdpSchedule>(c, b, gradientReadyOrder(c));
    std::vector<StreamInfo> streams = schedule->streams();
    addTpStream(c, streams);
    r.program.streams = streams;
    double params = 0;
    for (const ParamInfo& p : c.params) params += p.numel;
    for (int step = 0; step < sc.sim.steps; ++step) {
        b.step = step;
        schedule->beginStep(step);
        zeroGrad(b, c);
        const double before = b.model_flops;
        for (int micro = 0; micro < sc.training.grad_accum; ++micro) {
            TransformerStep ms(c, b, micro > 0 && schedule->autogradAccumulates(), schedule.get());
            ms.forward();
            schedule->beginBackward(micro == sc.training.grad_accum - 1);
            ms.backward([&](std::size_t i) { schedule->gradReady(i); });
            schedule->endBackward();
        }
        r.flops = b.model_flops - before;
        optimizerStep(b, shard, params * schedule->optimizerShare());
        b.stepEnd();
    }
    Expansion tmp;
    tmp.memory = estimateMemory(c, c.world > 1);
    schedule->report(tmp);
    r.memory = tmp.memory;
    r.buckets = tmp.buckets;
    r.out_of_domain = c.out_of_domain;
    compileStage(r, sc, cost, c.params.size());
    return r;
}

StageResult pipelineStage(const Scenario& compute_sc, const Scenario& sc, const CostModel& cost, int stage) {
    StageResult r;
    StepContext c = makeStepContext(compute_sc, cost);
    StepContext shard = makeStepContext(sc, cost);
    const std::vector<ModelSlice> slices = pipelineSlices(c.t, stage, sc.parallel.pp, sc.parallel.pp_virtual_stages);
    c.params = sliceParams(c.params, slices);
    shard.params = sliceParams(shard.params, slices);
    ProgramBuilder b(c, r.program);
    std::unique_ptr<DdpSchedule> ddp;
    if (sc.parallel.data == DataParallel::ddp) ddp = std::make_unique<DdpSchedule>(c, b, stageReadyOrder(c, slices));
    PipelineStage ps(c, shard, b, ddp.get(), stage);
    std::vector<StreamInfo> streams =
        ps.streams(ddp ? ddp->streams() : std::vector<StreamInfo>{{StreamKind::compute, "compute"}});
    addTpStream(c, streams);
    r.program.streams = streams;
    for (int step = 0; step < sc.sim.steps; ++step) r.flops = ps.step(step);
    r.memory = ps.memory();
    r.out_of_domain = c.out_of_domain;
    compileStage(r, sc, cost, c.params.size());
    return r;
}

}  // namespace

Expansion expandParallel3d(const Scenario& sc, const CostModel& cost) {
    Scenario compute_sc = sc;
    if (sc.parallel.data == DataParallel::fsdp2) compute_sc.training.param_dtype = fsdpGatherDtype(sc);
    const ParallelSpec& par = sc.parallel;
    const ParallelLayout layout(parallelDims(sc));
    const bool ring = par.pp > 1 && par.pp_virtual_stages > 1;

    Expansion out;
    std::vector<StageResult> stages;
    for (int s = 0; s < par.pp; ++s)
        stages.push_back(par.pp == 1 ? dataParallelStage(compute_sc, sc, cost) : pipelineStage(compute_sc, sc, cost, s));

    Workload& w = out.workload;
    w.steps = sc.sim.steps;
    w.groups = layout.groups(ring);
    w.pipeline_stages = par.pp;
    w.programs.reserve(std::size_t(layout.world()));
    for (int r = 0; r < layout.world(); ++r) {
        w.programs.push_back(stages[std::size_t(layout.coords(r).pp)].program);
        assignGroups(w.programs.back(), layout.slots(r, ring));
    }
    const TransformerShape whole = transformerShape(sc.model, sc.training.micro_batch);
    for (const ParamInfo& p : transformerParams(whole)) out.params += p.numel;
    int out_of_domain = 0;
    for (const StageResult& s : stages) {
        w.model_flops_per_step += s.flops / double(par.pp);
        out_of_domain += s.out_of_domain;
        if (s.memory.peak() > out.memory.peak()) out.memory = s.memory;
        out.stage_memory.push_back(s.memory);
        out.compile_time_s = std::max(out.compile_time_s, s.compiled.compile_time_s / double(par.pp));
        out.compiled_graphs_per_step = std::max(out.compiled_graphs_per_step, s.compiled.graphs_per_step);
    }
    out.buckets = stages.front().buckets;
    const double group = double(par.tp) * par.pp;
    w.tokens_per_step = double(whole.T) * sc.training.grad_accum / group;
    w.samples_per_step = double(whole.b) * sc.training.grad_accum / group;
    if (out_of_domain > 0)
        out.warnings.push_back(fmt::format("{} GEMM or attention kernels per step have shapes outside the profile's "
                                           "measured grid (priced by the model alone)",
                                           out_of_domain / std::max(1, sc.sim.steps)));
    if (layout.dp() <= 1) out.warnings.push_back("dp = 1: no data-parallel communication is simulated");
    return out;
}

}  // namespace stepsim
