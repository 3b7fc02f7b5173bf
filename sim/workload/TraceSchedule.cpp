#include "sim/workload/TraceSchedule.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/workload/DdpSchedule.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

namespace {

// What a trace's step cannot be asked yet (docs/trace.md), each refused at its key.
void checkTraceSupported(const Scenario& sc) {
    const auto refuse = [&](const std::string& key, const std::string& what) {
        throw inputError(sc.source, 0, key, what + " is not modelled from a trace (model.type: trace) by this version");
    };
    if (sc.parallel.data != DataParallel::ddp) refuse("parallel.data", "a data-parallel mode other than ddp");
    if (sc.parallel.tp > 1) refuse("parallel.tp", "tensor parallelism");
    if (sc.parallel.pp > 1) refuse("parallel.pp", "pipeline parallelism");
    if (sc.compile.enabled) refuse("compile.enabled", "torch.compile");
    if (fp8Training(sc)) refuse("fp8.enabled", "FP8 training");
    if (sc.training.grad_accum != 1) refuse("training.grad_accum", "gradient accumulation over the traced step");
    if (sc.checkpoint.interval_steps > 0) refuse("checkpoint.interval_steps", "checkpoint I/O");
    if (sc.data_loader.modelled) refuse("data_loader", "an input pipeline");
    if (sc.ddp.comm_hook == CommHook::powersgd) refuse("ddp.comm_hook", "PowerSGD");
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

// Builds one rank's Program from the trace: every step, in the trace's launch order.
class TraceProgram {
public:
    TraceProgram(const Scenario& sc, const TraceStep& t, StepContext& c, Program& p, ProgramBuilder& b,
                 DdpSchedule* ddp, std::array<double, kKernelClasses> factor)
        : sc_(sc), t_(t), c_(c), p_(p), b_(b), ddp_(ddp), factor_(factor) {
        world_ = sc.cluster.worldSize();
        const std::size_t shift = ddp ? 1 : 0;  // DDP's NCCL stream is index 1 (kCommStream)
        std::vector<bool> comm(t.streams.size(), false);
        for (const TraceActivity& a : t.activities)
            if (a.cls == KernelClass::comm) comm[std::size_t(a.stream)] = true;
        p.streams.push_back({StreamKind::compute, t.streams.front()});
        if (ddp) p.streams.push_back({StreamKind::comm, "nccl:dp"});
        for (std::size_t i = 1; i < t.streams.size(); ++i)
            p.streams.push_back({comm[i] ? StreamKind::comm : StreamKind::compute, t.streams[i]});
        stream_of_.resize(t.streams.size());
        for (std::size_t i = 0; i < t.streams.size(); ++i) stream_of_[i] = std::uint8_t(i == 0 ? 0 : i + shift);
        std::map<std::string, int> pg;
        for (const TraceActivity& a : t.activities)
            if (a.cls == KernelClass::comm) group_.push_back(pg.try_emplace(a.process_group, int(pg.size())).first->second);
        groups_ = pg.size();
        device_gap_s_ = c.cost.profile().launch.device_gap.median_us * 1e-6;
    }

    std::size_t groups() const { return std::max<std::size_t>(1, groups_); }

    void step(int s) {
        b_.step = s;
        if (ddp_) ddp_->beginStep(s), ddp_->beginBackward(true);
        std::size_t last_backward = t_.activities.size();
        for (std::size_t i = 0; i < t_.activities.size(); ++i)
            if (t_.activities[i].phase == Phase::backward) last_backward = i;
        double host_t = t_.cpu_start_us;
        std::size_t sync = 0, grad = 0, comm = 0;
        for (std::size_t i = 0; i < t_.activities.size(); ++i) {
            const TraceActivity& a = t_.activities[i];
            for (; sync < t_.syncs.size() && t_.syncs[sync].start_us <= a.launch_us; ++sync) hostSync(t_.syncs[sync], host_t);
            if (a.phase != Phase::backward && a.phase != Phase::forward) waitForCollectives();
            issue(a, (a.launch_us - host_t) * 1e-6, a.cls == KernelClass::comm ? comm++ : 0);
            host_t = std::max(host_t, a.launch_us);
            if (ddp_ && a.weight_grad) b_.phase = Phase::backward, ddp_->gradReady(grad++);
            if (i == last_backward || (last_backward == t_.activities.size() && i + 1 == t_.activities.size()))
                endBackward(grad);
        }
        for (; sync < t_.syncs.size(); ++sync) hostSync(t_.syncs[sync], host_t);
        waitForCollectives();
        b_.phase = Phase::other;
        b_.host("host after the last launch", std::max(0.0, t_.cpu_end_us - host_t) * 1e-6);
        // The step ends when every stream has finished its work.
        for (std::size_t k = 1; k < p_.streams.size(); ++k) b_.wait(kComputeStream, b_.record(std::uint8_t(k)));
        b_.stepEnd();
    }

    double flops = 0.0;

private:
    void endBackward(std::size_t& grad) {
        if (!ddp_) return;
        b_.phase = Phase::backward;
        for (; grad < c_.params.size(); ++grad) ddp_->gradReady(grad);  // model.trace_params' rest
        ddp_->endBackward();
    }

    void hostSync(const TraceSync& s, double& host_t) {
        b_.phase = Phase::other;
        b_.host(s.name + " (host before)", std::max(0.0, s.start_us - host_t) * 1e-6);
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
            op.work_s = a.dur_us * 1e-6 * factor_[std::size_t(a.cls)] + gap_s;
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
    DdpSchedule* ddp_;
    std::array<double, kKernelClasses> factor_;
    int world_ = 1;
    std::vector<std::uint8_t> stream_of_;
    std::vector<int> group_;  // each collective's process group, in order
    std::size_t groups_ = 0;
    double device_gap_s_ = 0.0;
    std::vector<std::uint32_t> pending_;
};

}  // namespace

Expansion expandTrace(const Scenario& sc, const CostModel& cost) {
    if (!sc.model.imported) throw std::logic_error("expandTrace: the scenario's trace was not imported by the loader");
    const TraceStep& t = *sc.model.imported;
    checkTraceSupported(sc);
    const auto factor = rescaleFactors(sc, t, cost.profile());
    const int world = sc.cluster.worldSize();
    bool has_comm = false;
    for (const TraceActivity& a : t.activities) has_comm = has_comm || a.cls == KernelClass::comm;

    Expansion out;
    StepContext c = makeStepContext(sc, cost);
    c.params = traceGradients(sc, t);
    for (const ParamInfo& p : c.params) out.params += p.numel;
    const bool wrap = world > 1 && !has_comm;
    if (world > 1 && t.host_collectives > 0 && !has_comm)
        throw inputError(sc.source, 0, "cluster.gpus_per_node",
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
    std::optional<DdpSchedule> ddp;
    if (wrap) ddp.emplace(c, b, order);
    TraceProgram tp(sc, t, c, prog, b, ddp ? &*ddp : nullptr, factor);
    for (int s = 0; s < sc.sim.steps; ++s) tp.step(s);

    Workload& w = out.workload;
    w.steps = sc.sim.steps;
    if (ddp) {
        w.groups = ddp->groups();
        ddp->report(out);
    } else {
        std::vector<int> all(static_cast<std::size_t>(world));
        for (int r = 0; r < world; ++r) all[std::size_t(r)] = r;
        for (std::size_t g = 0; g < tp.groups(); ++g) w.groups.push_back({fmt::format("trace pg {}", g), all});
    }
    w.model_flops_per_step = tp.flops / std::max(1, sc.sim.steps);
    w.tokens_per_step = double(t.tokens);
    w.programs.assign(static_cast<std::size_t>(world), prog);
    out.warnings.push_back(fmt::format("model from the trace {} ({}, trace step {:.3f} ms): its host costs include the "
                                       "profiler's own overhead",
                                       t.file, t.boundary, t.step_us * 1e-3));
    if (factor[std::size_t(KernelClass::gemm)] != 1.0)
        out.warnings.push_back(fmt::format("kernels rescaled from the trace's GPU '{}' ({}): GEMM and attention x{:.3f}, "
                                           "memory-bound x{:.3f}", t.gpu, t.source_profile,
                                           factor[std::size_t(KernelClass::gemm)], factor[std::size_t(KernelClass::memory)]));
    if (world <= 1) out.warnings.push_back("one GPU: no data-parallel communication is simulated");
    return out;
}

}  // namespace stepsim
