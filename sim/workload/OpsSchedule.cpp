#include "sim/workload/OpsSchedule.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/base/OpsSupport.hpp"
#include "sim/cost/OpCost.hpp"
#include "sim/engine/EngineConfig.hpp"
#include "sim/workload/DdpSchedule.hpp"
#include "sim/workload/Fsdp2Schedule.hpp"
#include "sim/workload/OpsHost.hpp"
#include "sim/workload/OpsMemory.hpp"
#include "sim/workload/OpsUnits.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

namespace {

constexpr std::size_t npos = std::size_t(-1);

// Where the wrappers' hooks act in the op sequence: the forward and backward regions (the backward's from its first
// op to its last, activation checkpointing's recompute inside it) and each unit's first and last op in each.
struct OpSpans {
    std::size_t forward_first = npos, forward_last = npos, backward_first = npos, backward_last = npos;
    std::vector<std::size_t> fwd_first, fwd_last, bwd_first, bwd_last;

    OpSpans(const OpGraph& g, const OpUnits* units) {
        for (std::size_t i = 0; i < g.ops.size(); ++i)
            if (g.ops[i].phase == Phase::backward) backward_last = i, backward_first = std::min(backward_first, i);
        for (std::size_t i = 0; i < g.ops.size() && i < backward_first; ++i)
            if (g.ops[i].phase == Phase::forward) forward_last = i, forward_first = std::min(forward_first, i);
        if (!units) return;
        const std::size_t n = units->modules.size();
        fwd_first.assign(n, npos), fwd_last = bwd_first = bwd_last = fwd_first;
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            const int u = units->op_unit[i];
            if (u < 0 || g.ops[i].view) continue;
            const bool fwd = i < backward_first && g.ops[i].phase == Phase::forward;
            const bool bwd = i >= backward_first && i <= backward_last;
            if (!fwd && !bwd) continue;
            auto& first = fwd ? fwd_first : bwd_first;
            auto& last = fwd ? fwd_last : bwd_last;
            first[std::size_t(u)] = std::min(first[std::size_t(u)], i);
            last[std::size_t(u)] = i;
        }
        // The post-backward hook runs once the unit's last gradient is ready.
        for (std::size_t p = 0; p < g.params.size(); ++p) {
            const int u = units->param_unit[p];
            const int r = g.params[p].grad_ready_op;
            if (u >= 0 && r >= 0) {
                std::size_t& last = bwd_last[std::size_t(u)];
                last = last == npos ? std::size_t(r) : std::max(last, std::size_t(r));
            }
        }
    }
};

std::vector<ParamInfo> graphParams(const OpGraph& g, const OpUnits* units) {
    std::vector<ParamInfo> out;
    for (std::size_t i = 0; i < g.params.size(); ++i) {
        const OpParam& p = g.params[i];
        const bool linear = p.module >= 0 && g.modules[std::size_t(p.module)].cls.find("Linear") != std::string::npos;
        out.push_back({p.name, double(p.numel()), units ? units->param_unit[i] : -1, linear && p.shape.size() == 2,
                       p.shape.empty() ? 0.0 : double(p.shape.front())});
    }
    return out;
}

class OpsProgram {
public:
    OpsProgram(const Scenario& sc, const OpGraph& g, StepContext& c, Program& p, ProgramBuilder& b,
               ParallelSchedule& sched, const OpUnits* units)
        : sc_(sc), g_(g), c_(c), p_(p), b_(b), sched_(sched), sharded_(units != nullptr), spans_(g, units) {
        ready_after_.resize(g.ops.size());
        for (std::size_t i = 0; i < g.params.size(); ++i)
            if (g.params[i].grad_ready_op >= 0) ready_after_[std::size_t(g.params[i].grad_ready_op)].push_back(i);
        const LaunchRates& l = c.cost.profile().launch;
        eager_s_ = l.eager_host.median_us * 1e-6;
        optimizer_s_ = l.optimizer_host_per_tensor_us * 1e-6 * double(g.params.size());
        share_ = sched.optimizerShare();
        gaps_ = engineConfig(c.cost, false, 0).device_gap_s;
        for (std::size_t i = 0; i < g.ops.size(); ++i)
            if (g.ops[i].phase == Phase::optimizer) optimizer_first_ = std::min(optimizer_first_, i);
        // What the op-times table leaves out of the host's time (module calls, autograd's nodes); the profile's
        // per-kernel host costs of the other path hold them already.
        if (!g.times.empty()) extra_host_ = opsExtraHost(g, c.cost.profile().ops_host);
        fsdp2_hook_s_ = c.cost.profile().ops_host.fsdp2_hook_us * 1e-6;
    }

    void step(int s) {
        b_.step = s;
        sched_.beginStep(s);
        b_.phase = Phase::other;
        b_.host("zero_grad", eager_s_);
        for (std::size_t i = 0; i < g_.ops.size(); ++i) {
            hooksBefore(i);
            issue(i);
            hooksAfter(i);
        }
        if (spans_.backward_last == npos) endBackward();
        sched_.afterOptimizer();
        b_.phase = Phase::other;
        if (pending_host_s_ > 0) b_.host("module and autograd host", pending_host_s_), pending_host_s_ = 0;
        for (std::size_t k = 1; k < p_.streams.size(); ++k) b_.wait(kComputeStream, b_.record(std::uint8_t(k)));
        b_.stepEnd();
    }

    double flops = 0.0;                  // model FLOPs of a step (recomputed ops not counted)
    std::size_t kernels = 0;             // kernels a step launches
    std::map<std::string, int> unknown;  // ops priced as elementwise for want of a family

private:
    void hooksBefore(std::size_t i) {
        if (i == spans_.forward_first) b_.phase = Phase::forward, hook(), sched_.beforeForward();
        if (i == spans_.backward_first) {
            b_.phase = Phase::backward;
            sched_.beginBackward(true);
            hook();
            sched_.beforeHeadBackward();
        }
        if (i == optimizer_first_) {
            if (spans_.backward_last != npos && i <= spans_.backward_last)
                throw inputError(sc_.source, 0, "model.ops",
                                 fmt::format("{}: the optimizer's op {} runs inside the backward", g_.file, i));
            b_.phase = Phase::optimizer;
            b_.host("optimizer.step", optimizer_s_ > 0 ? optimizer_s_ : eager_s_);
        }
        if (!sharded_) return;
        for (std::size_t u = 0; u < spans_.fwd_first.size(); ++u) {
            if (spans_.fwd_first[u] == i) b_.phase = Phase::forward, hook(), sched_.beforeLayerForward(int(u));
            if (spans_.bwd_first[u] == i) b_.phase = Phase::backward, hook(), sched_.beforeLayerBackward(int(u));
        }
    }

    void hooksAfter(std::size_t i) {
        if (!ready_after_[i].empty()) b_.phase = Phase::backward;
        for (std::size_t p : ready_after_[i]) sched_.gradReady(p);
        if (sharded_)
            for (std::size_t u = 0; u < spans_.fwd_first.size(); ++u) {
                if (spans_.fwd_last[u] == i) b_.phase = Phase::forward, hook(), sched_.afterLayerForward(int(u));
                if (spans_.bwd_last[u] == i) b_.phase = Phase::backward, hook(), sched_.afterLayerBackward(int(u));
            }
        if (i == spans_.forward_last) b_.phase = Phase::forward, hook(), sched_.afterForward();
        if (i == spans_.backward_last) endBackward();
    }

    void endBackward() {
        b_.phase = Phase::backward;
        hook();
        sched_.endBackward();
    }

    // FSDP2's Python in one of its hooks (the profile's ops_host.fsdp2_hook_us), before the hook's own work.
    void hook() {
        if (sharded_ && fsdp2_hook_s_ > 0) b_.host("fsdp2 hook", fsdp2_hook_s_);
    }

    // One op's kernels on the compute stream.
    void issue(std::size_t i) {
        const OpNode& n = g_.ops[i];
        b_.phase = n.phase;
        if (!extra_host_.empty()) pending_host_s_ += extra_host_[i];
        std::vector<OpKernel> ks = opKernels(g_, n);
        if (n.phase == Phase::optimizer)
            for (OpKernel& k : ks) k.bytes *= share_;  // the local shard under FSDP2
        const bool timed = !g_.times.empty() && g_.times[i].measured;
        if (ks.empty() && !timed) return;
        if (!ks.empty() && opFamily(n) == OpFamily::other) ++unknown[n.op];
        const double per_kernel = n.phase == Phase::backward && !n.recompute ? c_.backward_s : c_.forward_s;
        std::vector<Op> ops;
        for (const OpKernel& k : ks) {
            bool inside = true;
            Op op = priceKernel(c_.cost, k, n.phase, inside);
            if (!inside) ++c_.out_of_domain;
            op.name = p_.intern(k.name);
            op.host_s = per_kernel;
            ops.push_back(op);
        }
        if (timed) ops = measured(i, ops);
        // The module calls' and autograd nodes' host time since the last launch, before this op's first kernel.
        if (!ops.empty() && pending_host_s_ > 0) ops.front().host_s += pending_host_s_, pending_host_s_ = 0;
        for (Op& op : ops) {
            op.step = b_.step;
            op.stream = kComputeStream;
            if (!n.recompute && (op.cls == KernelClass::gemm || op.cls == KernelClass::attention)) flops += op.flops;
            p_.ops.push_back(op);
        }
        kernels += ops.size();
        // A .item() of a GPU tensor (the model's kernels: its copy to the host) blocks the host; a host tensor's
        // does not.
        if (opFamily(n) == OpFamily::sync && !ks.empty()) b_.hostSync(b_.record(kComputeStream));
    }

    // The table's kernels and time for op i: its device time over its kernels, its host time on the first. The time
    // was taken between CUDA events with the GPU kept busy ahead of the op (calibration/capture/time_ops.py), so it
    // holds the launch gap before each of its kernels, which the engine adds itself (GpuCompute.hpp): each
    // kernel's gap is taken off its share (not below zero).
    std::vector<Op> measured(std::size_t i, const std::vector<Op>& model) const {
        const OpTime& t = g_.times[i];
        std::vector<Op> out;
        const double share = g_.ops[i].phase == Phase::optimizer ? share_ : 1.0;
        for (int k = 0; k < t.kernels; ++k) {
            Op op = model.empty() ? Op{} : model[std::min<std::size_t>(std::size_t(k), model.size() - 1)];
            if (model.empty()) {
                op.kind = OpKind::kernel;
                op.cls = KernelClass::memory;
                op.phase = g_.ops[i].phase;
                op.name = p_.intern(g_.ops[i].op);
            }
            const double gap = op.gap_s > 0 ? double(op.gap_s) : gaps_[std::size_t(op.cls)];
            op.work_s = std::max(0.0, t.device_us * 1e-6 * share / t.kernels - gap);
            op.host_s = k == 0 ? t.host_us * 1e-6 : 0.0;
            if (k > 0) op.flops = 0;
            out.push_back(op);
        }
        if (t.kernels == 0 && t.host_us > 0) b_.host(g_.ops[i].op, t.host_us * 1e-6);
        return out;
    }

    const Scenario& sc_;
    const OpGraph& g_;
    StepContext& c_;
    Program& p_;
    ProgramBuilder& b_;
    ParallelSchedule& sched_;
    bool sharded_;
    OpSpans spans_;
    std::vector<std::vector<std::size_t>> ready_after_;
    double eager_s_ = 0, optimizer_s_ = 0, share_ = 1;
    std::array<double, kKernelClasses> gaps_{};  // the engine's launch gap before a kernel of each class
    std::size_t optimizer_first_ = npos;
    std::vector<double> extra_host_;  // opsExtraHost: seconds before each op (op-times path only)
    double pending_host_s_ = 0;       // of it, not yet put before a kernel
    double fsdp2_hook_s_ = 0;         // the host's time in each FSDP2 hook
};

ParallelMemory parallelMemory(const Scenario& sc, const OpGraph& g, const StepContext& c, const OpUnits* units,
                              bool ddp_one) {
    ParallelMemory m;
    const int world = sc.cluster.worldSize();
    if (!units) {
        // DDP's buckets, allocated at construction (with gradient_as_bucket_view the gradients are their views).
        if ((world > 1 || ddp_one) && !sc.ddp.gradient_as_bucket_view)
            for (const OpParam& p : g.params) m.buckets += double(p.numel()) * c.pe;
        return m;
    }
    m.shard = 1.0 / double(std::max(world, 1));
    const double ge = elementBytes(fsdpGatherDtype(sc));
    std::vector<double> unit(units->modules.size(), 0.0);
    for (std::size_t i = 0; i < g.params.size(); ++i)
        if (units->param_unit[i] >= 0)
            unit[std::size_t(units->param_unit[i])] += double(g.params[i].numel()) * ge;
        else
            m.gathered_root += double(g.params[i].numel()) * ge;
    std::sort(unit.rbegin(), unit.rend());
    if (sc.fsdp.reshard_after_forward)
        m.gathered_units = unit[0] + (unit.size() > 1 ? unit[1] : 0.0);
    else
        m.gathered_units = std::accumulate(unit.begin(), unit.end(), 0.0);
    return m;
}

}  // namespace

Expansion expandOps(const Scenario& sc, const CostModel& cost) {
    if (!sc.model.graph) throw std::logic_error("expandOps: the scenario's op graph was not read by the loader");
    if (const auto no = opsUnsupported(sc)) throw inputError(sc.source, 0, no->first, no->second);
    const OpGraph& g = *sc.model.graph;
    const bool fsdp = sc.parallel.data == DataParallel::fsdp2;
    const int world = sc.cluster.worldSize();
    std::optional<OpUnits> units;
    if (fsdp) units = findOpUnits(g, sc.fsdp.units, sc.source);

    // DDP named at one GPU: the reducer runs over a one-rank group (its hooks, bucket copies, all-reduces and the
    // forward's DDP host cost), built as a data-parallel schedule whose collectives have one member.
    const bool ddp_one = !fsdp && world == 1 && g.data_parallel_named;
    Expansion out;
    StepContext c = makeStepContext(sc, cost);
    if (ddp_one) c.forward_s = cost.profile().launch.forward_host_ddp.median_us * 1e-6;
    c.params = graphParams(g, units ? &*units : nullptr);
    c.t.L = units ? int(units->modules.size()) : 0;
    for (const ParamInfo& p : c.params) out.params += p.numel;
    // DDP's gradient-ready order: by the op after which each gradient is final (ties in registration order).
    std::vector<std::size_t> order(c.params.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto key = [&](std::size_t i) {
            const int r = g.params[i].grad_ready_op;
            return r < 0 ? std::numeric_limits<long long>::max() : (long long)r;
        };
        return key(a) < key(b);
    });
    Program prog;
    ProgramBuilder b(c, prog);
    std::unique_ptr<ParallelSchedule> sched;
    if (fsdp) sched = std::make_unique<Fsdp2Schedule>(c, c, b);
    StepContext reducer = c;  // DdpSchedule synchronizes when its group has more than one rank
    if (ddp_one) reducer.world = 2;
    if (!fsdp) sched = std::make_unique<DdpSchedule>(ddp_one ? reducer : c, b, order);
    prog.streams = sched->streams();
    OpsProgram op(sc, g, c, prog, b, *sched, units ? &*units : nullptr);
    for (int s = 0; s < sc.sim.steps; ++s) op.step(s);

    Workload& w = out.workload;
    w.steps = sc.sim.steps;
    w.groups = sched->groups();
    if (ddp_one) w.groups = {ProcessGroup{"dp", {0}}};
    if (!fsdp) sched->report(out);  // DDP's buckets
    w.model_flops_per_step = op.flops / std::max(1, sc.sim.steps);
    w.tokens_per_step = double(g.b) * double(g.s);
    w.samples_per_step = double(g.b);
    w.programs.assign(std::size_t(world), prog);
    for (int r = 0; r < world && !sched->rankGroups(0).empty(); ++r) {
        const std::vector<int> slots = sched->rankGroups(r);
        for (CollectiveCall& call : w.programs[std::size_t(r)].collectives)
            call.group = slots.at(std::size_t(call.group));
    }
    out.memory = opsMemoryPeak(g, parallelMemory(sc, g, c, units ? &*units : nullptr, ddp_one));

    out.warnings.push_back(fmt::format(
        "model from the op graph {} ({}, torch {}, captured on {}; {} ops, {} kernels a "
        "step{})",
        g.file, g.source, g.torch, g.device_name, g.ops.size(), op.kernels / std::size_t(std::max(1, sc.sim.steps)),
        g.times.empty() ? "" : fmt::format("; kernels and times measured: {}", g.times_file)));
    const OpsHostRates& oh = cost.profile().ops_host;
    if (!g.times.empty() && (oh.module_call_us > 0 || oh.autograd_node_forward_us > 0 || oh.autograd_node_backward_us > 0)) {
        const OpsHostCounts n = opsHostCounts(g);
        const double ms = (double(n.module_calls) * oh.module_call_us + double(n.forward_nodes) * oh.autograd_node_forward_us +
                           double(n.backward_nodes) * oh.autograd_node_backward_us) * 1e-3;
        out.warnings.push_back(fmt::format(
            "host time the op times leave out (profile ops_host): {} module calls, {} autograd nodes recorded in the "
            "forward, {} run in the backward: {:.2f} ms a step",
            n.module_calls, n.forward_nodes, n.backward_nodes, ms));
    }
    if (!op.unknown.empty()) {
        std::string list;
        for (const auto& [name, count] : op.unknown)
            list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", name, count / std::max(1, sc.sim.steps));
        out.warnings.push_back("ops of no known family, priced as one elementwise kernel over their bytes: " + list);
    }
    if (c.out_of_domain > 0)
        out.warnings.push_back(fmt::format("{} kernels a step priced outside the profile's measured domain",
                                           c.out_of_domain / std::max(1, sc.sim.steps)));
    if (units) out.warnings.push_back(fmt::format("fsdp2 units: {}, and the root", units->rule));
    if (world <= 1 && !fsdp && !ddp_one) out.warnings.push_back("one GPU: no data-parallel communication is simulated");
    if (ddp_one) out.warnings.push_back("DDP at one GPU: the reducer's bucket copies and one-rank all-reduces run");
    return out;
}

}  // namespace stepsim
