#include "sim/workload/OpsHost.hpp"

#include <cstddef>

namespace stepsim {

namespace {

bool runsForward(const OpNode& n) { return n.phase == Phase::forward || n.recompute; }

// The module-call cost each non-view forward op carries (µs per module_call_us): each module's calls over the ops
// run under it, a module with no op passing its calls up to its nearest ancestor with one.
std::vector<double> moduleShare(const OpGraph& g) {
    const std::size_t nm = g.modules.size();
    std::vector<double> under(nm, 0.0), calls(nm, 0.0);
    for (const OpNode& n : g.ops) {
        if (n.view || !runsForward(n)) continue;
        for (int m = n.module; m >= 0 && std::size_t(m) < nm; m = g.modules[std::size_t(m)].parent) under[std::size_t(m)] += 1;
    }
    for (std::size_t m = 0; m < nm; ++m) {
        int to = int(m);
        while (to >= 0 && under[std::size_t(to)] == 0) to = g.modules[std::size_t(to)].parent;
        if (to >= 0) calls[std::size_t(to)] += double(g.modules[m].calls);
    }
    std::vector<double> per_op(nm, 0.0);  // a module's calls per op under it
    for (std::size_t m = 0; m < nm; ++m)
        if (under[m] > 0) per_op[m] = calls[m] / under[m];
    std::vector<double> share(g.ops.size(), 0.0);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const OpNode& n = g.ops[i];
        if (n.view || !runsForward(n)) continue;
        for (int m = n.module; m >= 0 && std::size_t(m) < nm; m = g.modules[std::size_t(m)].parent)
            share[i] += per_op[std::size_t(m)];
    }
    return share;
}

// 1 on the ops where the engine runs a node: the first backward op linked to each forward op, each parameter's
// grad_ready_op (its AccumulateGrad) once per parameter.
std::vector<double> backwardNodes(const OpGraph& g) {
    std::vector<double> nodes(g.ops.size(), 0.0);
    std::vector<bool> seen(g.ops.size(), false);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const OpNode& n = g.ops[i];
        if (n.phase != Phase::backward || n.recompute || n.fwd_op < 0 || std::size_t(n.fwd_op) >= g.ops.size()) continue;
        if (!seen[std::size_t(n.fwd_op)]) seen[std::size_t(n.fwd_op)] = true, nodes[i] += 1;
    }
    for (const OpParam& p : g.params)
        if (p.grad_ready_op >= 0 && std::size_t(p.grad_ready_op) < g.ops.size()) nodes[std::size_t(p.grad_ready_op)] += 1;
    return nodes;
}

}  // namespace

OpsHostCounts opsHostCounts(const OpGraph& g) {
    OpsHostCounts c;
    for (const OpModule& m : g.modules) c.module_calls += m.calls;
    for (const OpNode& n : g.ops)
        if (runsForward(n) && n.seq_nr) ++c.forward_nodes;
    for (double v : backwardNodes(g)) c.backward_nodes += (long long)v;
    return c;
}

std::vector<double> opsExtraHost(const OpGraph& g, const OpsHostRates& r) {
    std::vector<double> extra(g.ops.size(), 0.0);
    if (r.module_call_us <= 0 && r.autograd_node_forward_us <= 0 && r.autograd_node_backward_us <= 0) return extra;
    const std::vector<double> share = moduleShare(g);
    const std::vector<double> nodes = backwardNodes(g);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const OpNode& n = g.ops[i];
        double us = share[i] * r.module_call_us + nodes[i] * r.autograd_node_backward_us;
        if (runsForward(n) && n.seq_nr) us += r.autograd_node_forward_us;
        extra[i] = us * 1e-6;
    }
    return extra;
}

}  // namespace stepsim
