#include "sim/workload/TraceSchedule.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/base/TraceSupport.hpp"
#include "sim/cost/TraceHostCost.hpp"
#include "sim/workload/DdpSchedule.hpp"
#include "sim/workload/Fsdp2Schedule.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

namespace {

// What a trace's step cannot be asked (sim/base/TraceSupport.hpp; the loader refuses it at the key's line).
void checkTraceSupported(const Scenario& sc) {
    if (const auto no = traceUnsupported(sc)) throw inputError(sc.source, 0, no->first, no->second);
}

// Each class's factor from the trace's GPU to the scenario's profile (1 for the same GPU).
std::array<double, kKernelClasses> rescaleFactors(const Scenario& sc, const TraceStep& t, const HardwareProfile& p) {
    std::array<double, kKernelClasses> f;
    f.fill(1.0);
    if (t.gpu.empty() || p.gpu.model == t.gpu) return f;
    if (t.source_peak_tflops_bf16 <= 0 || t.source_hbm_gbps <= 0)
        throw inputError(sc.source, 0, "cluster.profile",
                         fmt::format("the profile's GPU '{}' is not the trace's '{}', and no built-in profile of '{}' "
                                     "gives the rates to rescale its kernels from",
                                     p.gpu.model, t.gpu, t.gpu));
    const double flops = t.source_peak_tflops_bf16 / p.gpu.peak_tflops_bf16;
    const double hbm = t.source_hbm_gbps / p.gpu.hbm_gbps;
    f[std::size_t(KernelClass::gemm)] = f[std::size_t(KernelClass::attention)] = flops;
    for (KernelClass k : {KernelClass::memory, KernelClass::optimizer, KernelClass::copy}) f[std::size_t(k)] = hbm;
    return f;
}

// The gradients DDP reduces: one per backward weight-gradient GEMM, in the order they are made, and the rest of
// model.trace_params.
std::vector<ParamInfo> traceGradients(const Scenario& sc, const TraceStep& t) {
    std::vector<ParamInfo> out;
    double sum = 0;
    for (const TraceActivity& a : t.activities)
        if (a.weight_grad) {
            const double n = double(a.shape.m) * double(a.shape.n);
            out.push_back({fmt::format("grad {} ({}x{})", out.size(), a.shape.m, a.shape.n), n, -1, true});
            sum += n;
        }
    const double hint = sc.model.trace_params;
    if (hint > 0 && hint < sum)
        throw inputError(sc.source, 0, "model.trace_params",
                         fmt::format("expected at least the {:.0f} parameters the trace's backward weight-gradient "
                                     "GEMMs produce, got {:.0f}", sum, hint));
    if (hint > sum) out.push_back({"parameters outside the GEMMs", hint - sum, -1, false});
    return out;
}

// FSDP2's parameters: those found from the ops that make their gradients (TraceImportUnits.hpp), each in its block
// (ParamInfo::layer) or the root, and the rest of model.trace_params in the root.
std::vector<ParamInfo> traceShardedParams(const Scenario& sc, const TraceStep& t) {
    if (t.units == 0)
        throw inputError(sc.source, 0, "parallel.data",
                         fmt::format("fsdp2 over a trace needs its repeated blocks (FSDP's units): {}", t.units_note));
    std::vector<ParamInfo> out;
    double sum = 0;
    for (const TraceParam& p : t.params) {
        out.push_back({p.name, p.numel, p.unit, p.matmul, 0.0});
        sum += p.numel;
    }
    const double hint = sc.model.trace_params;
    if (hint > 0 && hint < sum)
        throw inputError(sc.source, 0, "model.trace_params",
                         fmt::format("expected at least the {:.0f} parameters the trace's backward makes gradients for, "
                                     "got {:.0f}", sum, hint));
    if (hint > sum) out.push_back({"root: parameters the trace does not show", hint - sum, -1, false, 0.0});
    return out;
}

// Where a sharded schedule's hooks act in the trace's launch sequence: the first and last activity of each block's
// forward and backward, of the forward and of the backward (npos: none).
struct UnitSpans {
    static constexpr std::size_t npos = std::size_t(-1);
    std::vector<std::size_t> fwd_first, fwd_last, bwd_first, bwd_last;
    std::size_t forward_first = npos, forward_last = npos, backward_first = npos, backward_last = npos;

    explicit UnitSpans(const TraceStep& t)
        : fwd_first(std::size_t(t.units), npos), fwd_last(fwd_first), bwd_first(fwd_first), bwd_last(fwd_first) {
        for (std::size_t i = 0; i < t.activities.size(); ++i) {
            const TraceActivity& a = t.activities[i];
            const bool f = a.phase == Phase::forward, b = a.phase == Phase::backward;
            if (f) forward_last = i, forward_first = std::min(forward_first, i);
            if (b) backward_last = i, backward_first = std::min(backward_first, i);
            if (a.unit < 0 || (!f && !b)) continue;
            auto& first = f ? fwd_first : bwd_first;
            auto& last = f ? fwd_last : bwd_last;
            const std::size_t u = std::size_t(a.unit);
            first[u] = std::min(first[u], i);
            last[u] = i;
        }
    }
};

// Builds one rank's Program from the trace: every step, in the trace's launch order. `sched`: the data-parallel
// schedule wrapping the step (DDP or FSDP2), or none; its streams come after the compute stream, the trace's other
// streams after them.
class TraceProgram {
public:
    TraceProgram(const Scenario& sc, const TraceStep& t, StepContext& c, Program& p, ProgramBuilder& b,
                 ParallelSchedule* sched, bool sharded, std::array<double, kKernelClasses> factor)
        : sc_(sc), t_(t), c_(c), p_(p), b_(b), sched_(sched), sharded_(sharded), factor_(factor), spans_(t),
          host_(t, c.cost.profile().launch, sc.cluster.worldSize() > 1) {
        world_ = sc.cluster.worldSize();
        profile_host_ = sc.model.trace_host == "profile";
        std::vector<bool> comm(t.streams.size(), false);
        for (const TraceActivity& a : t.activities)
            if (a.cls == KernelClass::comm) comm[std::size_t(a.stream)] = true;
        p.streams.push_back({StreamKind::compute, t.streams.front()});
        std::size_t shift = 0;
        if (sched) {
            const std::vector<StreamInfo> own = sched->streams();
            for (std::size_t k = 1; k < own.size(); ++k) p.streams.push_back(own[k]);
            shift = own.size() - 1;
        }
        for (std::size_t i = 1; i < t.streams.size(); ++i)
            p.streams.push_back({comm[i] ? StreamKind::comm : StreamKind::compute, t.streams[i]});
        stream_of_.resize(t.streams.size());
        for (std::size_t i = 0; i < t.streams.size(); ++i) stream_of_[i] = std::uint8_t(i == 0 ? 0 : i + shift);
        std::map<std::string, int> pg;
        for (const TraceActivity& a : t.activities)
            if (a.cls == KernelClass::comm) group_.push_back(pg.try_emplace(a.process_group, int(pg.size())).first->second);
        groups_ = pg.size();
        device_gap_s_ = c.cost.profile().launch.device_gap.median_us * 1e-6;
        optimizer_share_ = sched ? sched->optimizerShare() : 1.0;
    }

    std::size_t groups() const { return std::max<std::size_t>(1, groups_); }

    void step(int s) {
        b_.step = s;
        if (sched_) sched_->beginStep(s), sched_->beginBackward(true);
        double host_t = t_.cpu_start_us;
        std::size_t sync = 0, grad = 0, comm = 0;
        if (profile_host_) host_t = t_.activities.front().launch_us;  // no host time outside the launches
        for (std::size_t i = 0; i < t_.activities.size(); ++i) {
            const TraceActivity& a = t_.activities[i];
            for (; sync < t_.syncs.size() && t_.syncs[sync].start_us <= a.launch_us; ++sync) hostSync(t_.syncs[sync], host_t);
            if (a.phase != Phase::backward && a.phase != Phase::forward) waitForCollectives();
            if (sharded_) hooksBefore(i);
            const double traced_s = (a.launch_us - host_t) * 1e-6;
            issue(a, profile_host_ ? host_.of(a) * 1e-6 : traced_s, a.cls == KernelClass::comm ? comm++ : 0);
            host_t = std::max(host_t, a.launch_us);
            if (!sharded_ && sched_ && a.weight_grad) b_.phase = Phase::backward, sched_->gradReady(grad++);
            if (sharded_) hooksAfter(i);
            if (i == spans_.backward_last || (spans_.backward_last == UnitSpans::npos && i + 1 == t_.activities.size()))
                endBackward(grad);
        }
        for (; sync < t_.syncs.size(); ++sync) hostSync(t_.syncs[sync], host_t);
        waitForCollectives();
        b_.phase = Phase::other;
        b_.host("host after the last launch", profile_host_ ? 0.0 : std::max(0.0, t_.cpu_end_us - host_t) * 1e-6);
        // The step ends when every stream has finished its work.
        for (std::size_t k = 1; k < p_.streams.size(); ++k) b_.wait(kComputeStream, b_.record(std::uint8_t(k)));
        b_.stepEnd();
    }

    double flops = 0.0;

private:
    // FSDP2's module hooks at the blocks' first and last activities (ParallelSchedule.hpp). The root's pre-forward
    // runs before the forward's first activity, its pre-backward before the backward's first (where the root's
    // output is, a trace does not say).
    void hooksBefore(std::size_t i) {
        if (i == spans_.forward_first) b_.phase = Phase::forward, sched_->beforeForward();
        if (i == spans_.backward_first) b_.phase = Phase::backward, sched_->beforeHeadBackward();
        for (std::size_t u = 0; u < spans_.fwd_first.size(); ++u) {
            if (spans_.fwd_first[u] == i) b_.phase = Phase::forward, sched_->beforeLayerForward(int(u));
            if (spans_.bwd_first[u] == i) b_.phase = Phase::backward, sched_->beforeLayerBackward(int(u));
        }
    }

    void hooksAfter(std::size_t i) {
        for (std::size_t u = 0; u < spans_.fwd_first.size(); ++u) {
            if (spans_.fwd_last[u] == i) b_.phase = Phase::forward, sched_->afterLayerForward(int(u));
            if (spans_.bwd_last[u] == i) b_.phase = Phase::backward, sched_->afterLayerBackward(int(u));
        }
        if (i == spans_.forward_last) b_.phase = Phase::forward, sched_->afterForward();
    }

    void endBackward(std::size_t& grad) {
        if (!sched_) return;
        b_.phase = Phase::backward;
        if (!sharded_)
            for (; grad < c_.params.size(); ++grad) sched_->gradReady(grad);  // model.trace_params' rest
        sched_->endBackward();
    }

    void hostSync(const TraceSync& s, double& host_t) {
        b_.phase = Phase::other;
        b_.host(s.name + " (host before)", profile_host_ ? 0.0 : std::max(0.0, s.start_us - host_t) * 1e-6);
        for (std::size_t k = 0; k < p_.streams.size(); ++k) b_.hostSync(b_.record(std::uint8_t(k)));
        host_t = std::max(host_t, s.end_us);
    }

    void waitForCollectives() {
        for (std::uint32_t ev : pending_) b_.wait(kComputeStream, ev);
        pending_.clear();
    }

    void issue(const TraceActivity& a, double host_s, std::size_t comm_index) {
        const std::uint8_t stream = stream_of_[std::size_t(a.stream)];
        const bool collective = a.cls == KernelClass::comm && world_ > 1;
        if (a.cls == KernelClass::comm && stream != kComputeStream) {
            b_.phase = a.phase;
            b_.wait(stream, b_.record(kComputeStream));  // NCCL's stream waits for the work issued before it
        }
        Op op;
        op.kind = collective ? OpKind::collective : OpKind::kernel;
        op.cls = a.cls;
        op.phase = a.phase;
        op.stream = stream;
        op.name = p_.intern(a.name);
        op.step = b_.step;
        op.gemm = a.shape;
        op.host_s = std::max(0.0, host_s);
        if (collective) {
            op.bytes = a.comm_bytes;
            op.collective = static_cast<std::uint32_t>(p_.collectives.size());
            p_.collectives.push_back({a.collective, group_[comm_index], a.comm_bytes,
                                      a.comm_dtype.empty() ? "fp32" : a.comm_dtype});
        } else {
            const double gap_s = a.gap_us > 0 ? a.gap_us * 1e-6 : device_gap_s_;
            // The optimizer steps the local shard under FSDP2: its kernels' work shrinks with it.
            const double share = a.phase == Phase::optimizer ? optimizer_share_ : 1.0;
            op.work_s = a.dur_us * 1e-6 * factor_[std::size_t(a.cls)] * share + gap_s;
            op.gap_s = static_cast<float>(gap_s);
        }
        if (a.cls == KernelClass::gemm && a.shape.m > 0) {
            op.flops = 2.0 * double(a.shape.m) * double(a.shape.n) * double(a.shape.k);
            flops += op.flops;
        }
        p_.ops.push_back(op);
        if (a.cls == KernelClass::comm && stream != kComputeStream) pending_.push_back(b_.record(stream));
    }

    const Scenario& sc_;
    const TraceStep& t_;
    StepContext& c_;
    Program& p_;
    ProgramBuilder& b_;
    ParallelSchedule* sched_;
    bool sharded_;
    std::array<double, kKernelClasses> factor_;
    UnitSpans spans_;
    TraceHostCosts host_;
    bool profile_host_ = false;
    int world_ = 1;
    std::vector<std::uint8_t> stream_of_;
    std::vector<int> group_;  // each collective's process group, in order
    std::size_t groups_ = 0;
    double device_gap_s_ = 0.0;
    double optimizer_share_ = 1.0;
    std::vector<std::uint32_t> pending_;
};

}  // namespace

Expansion expandTrace(const Scenario& sc, const CostModel& cost) {
    if (!sc.model.imported) throw std::logic_error("expandTrace: the scenario's trace was not imported by the loader");
    const TraceStep& t = *sc.model.imported;
    checkTraceSupported(sc);
    const auto factor = rescaleFactors(sc, t, cost.profile());
    const int world = sc.cluster.worldSize();
    const bool fsdp = sc.parallel.data == DataParallel::fsdp2;
    bool has_comm = false;
    for (const TraceActivity& a : t.activities) has_comm = has_comm || a.cls == KernelClass::comm;

    Expansion out;
    StepContext c = makeStepContext(sc, cost);
    if (fsdp && has_comm)
        throw inputError(sc.source, 0, "parallel.data",
                         "fsdp2 shards a one-GPU trace's step, and this trace's step already runs NCCL collectives "
                         "(its own data-parallel wrapper): trace the step without one");
    c.params = fsdp ? traceShardedParams(sc, t) : traceGradients(sc, t);
    c.t.L = fsdp ? t.units : c.t.L;  // FSDP2's groups: one per block, then the root (shardGroups)
    for (const ParamInfo& p : c.params) out.params += p.numel;
    const bool wrap = fsdp || (world > 1 && !has_comm);
    if ((world > 1 || fsdp) && t.host_collectives > 0 && !has_comm)
        throw inputError(sc.source, 0, fsdp ? "parallel.data" : "cluster.gpus_per_node",
                         fmt::format("the trace's step issued {} collectives that ran no NCCL kernel (a data-parallel "
                                     "step at world size 1): where they run in a larger world is unknown; trace the "
                                     "step without the data-parallel wrapper to ask for more ranks",
                                     t.host_collectives));
    if (wrap && c.params.empty())
        throw inputError(sc.source, 0, "model.trace_params",
                         "a data-parallel world needs the trace's gradients: its backward has no GEMM with a recorded "
                         "shape (profile with record_shapes=True) and model.trace_params is not set");
    Program prog;
    ProgramBuilder b(c, prog);
    std::vector<std::size_t> order(c.params.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::unique_ptr<ParallelSchedule> sched;
    if (fsdp) sched = std::make_unique<Fsdp2Schedule>(c, c, b);
    else if (wrap) sched = std::make_unique<DdpSchedule>(c, b, order);
    TraceProgram tp(sc, t, c, prog, b, sched.get(), fsdp, factor);
    for (int s = 0; s < sc.sim.steps; ++s) tp.step(s);

    Workload& w = out.workload;
    w.steps = sc.sim.steps;
    if (sched) {
        w.groups = sched->groups();
        if (!fsdp) sched->report(out);  // DDP's buckets (FSDP2's report is the built-in model's memory: none here)
    } else {
        std::vector<int> all(static_cast<std::size_t>(world));
        for (int r = 0; r < world; ++r) all[std::size_t(r)] = r;
        for (std::size_t g = 0; g < tp.groups(); ++g) w.groups.push_back({fmt::format("trace pg {}", g), all});
    }
    w.model_flops_per_step = tp.flops / std::max(1, sc.sim.steps);
    w.tokens_per_step = double(t.tokens);
    w.programs.assign(static_cast<std::size_t>(world), prog);
    // A partial reshard's post-forward groups differ per rank (Fsdp2Schedule::rankGroups).
    for (int r = 0; r < world && sched && !sched->rankGroups(0).empty(); ++r) {
        const std::vector<int> slots = sched->rankGroups(r);
        for (CollectiveCall& call : w.programs[std::size_t(r)].collectives) call.group = slots.at(std::size_t(call.group));
    }
    const TraceHostCosts host(t, cost.profile().launch, world > 1);
    const double traced_ms = TraceHostCosts::tracedStep(t) * 1e-3, prof_ms = host.profileStep(t) * 1e-3;
    if (sc.model.trace_host == "profile")
        out.warnings.push_back(fmt::format("model from the trace {} ({}, trace step {:.3f} ms): host costs from the "
                                           "profile (model.trace_host: profile), {:.3f} ms of host time a step against "
                                           "{:.3f} ms traced: the profiler's overhead, {:.3f} ms a step, removed",
                                           t.file, t.boundary, t.step_us * 1e-3, prof_ms, traced_ms, traced_ms - prof_ms));
    else
        out.warnings.push_back(fmt::format("model from the trace {} ({}, trace step {:.3f} ms): host costs as traced, "
                                           "{:.3f} ms of host time a step, of which the profiler's overhead is {:.3f} ms "
                                           "(traced minus the profile's {:.3f} ms; model.trace_host: profile removes it)",
                                           t.file, t.boundary, t.step_us * 1e-3, traced_ms, traced_ms - prof_ms, prof_ms));
    if (fsdp)
        out.warnings.push_back(fmt::format("fsdp2 over the trace's {} repeated blocks ({} forward activities each) and "
                                           "the root; no memory estimate (a trace records no allocations)",
                                           t.units, t.unit_activities));
    if (factor[std::size_t(KernelClass::gemm)] != 1.0)
        out.warnings.push_back(fmt::format("kernels rescaled from the trace's GPU '{}' ({}): GEMM and attention x{:.3f}, "
                                           "memory-bound x{:.3f}", t.gpu, t.source_profile,
                                           factor[std::size_t(KernelClass::gemm)], factor[std::size_t(KernelClass::memory)]));
    if (world <= 1) out.warnings.push_back("one GPU: no data-parallel communication is simulated");
    return out;
}

}  // namespace stepsim
