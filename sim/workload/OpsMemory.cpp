#include "sim/workload/OpsMemory.hpp"

#include <array>
#include <cmath>

namespace stepsim {

double allocatorBytes(double bytes) {
    if (bytes <= 0) return 0.0;
    constexpr double block = 512, small = 1 << 20, round_large = 2 << 20;
    if (bytes < small) return block * std::ceil(bytes / block);
    return round_large * std::ceil(bytes / round_large);
}

MemoryEstimate opsMemoryPeak(const OpGraph& g, const ParallelMemory& par) {
    constexpr std::size_t kinds = 8;
    const auto kindIndex = [](OpTensorKind k) { return std::size_t(k); };
    std::vector<bool> allocated_by_op(g.tensors.size(), false);
    for (const OpNode& n : g.ops)
        for (int t : n.alloc) allocated_by_op[std::size_t(t)] = true;
    const auto resident = [&](std::size_t t) {
        const OpTensorKind k = g.tensors[t].kind;
        return k == OpTensorKind::param || k == OpTensorKind::optimizer_state || k == OpTensorKind::buffer;
    };
    const auto bytesOf = [&](std::size_t t) {
        const OpTensorKind k = g.tensors[t].kind;
        const bool sharded = k == OpTensorKind::param || k == OpTensorKind::grad || k == OpTensorKind::optimizer_state;
        return g.tensors[t].cpu ? 0.0 : allocatorBytes(g.tensors[t].bytes * (sharded ? par.shard : 1.0));
    };
    std::array<double, kinds> live{};
    std::vector<bool> alive(g.tensors.size(), false);
    for (std::size_t t = 0; t < g.tensors.size(); ++t)
        if (resident(t) || !allocated_by_op[t]) alive[t] = true, live[kindIndex(g.tensors[t].kind)] += bytesOf(t);

    std::array<double, kinds> best = live;
    double best_total = -1, best_gathered = 0;
    Phase best_phase = Phase::forward;
    for (const OpNode& n : g.ops) {
        for (int t : n.alloc)
            if (!alive[std::size_t(t)])
                alive[std::size_t(t)] = true,
                live[kindIndex(g.tensors[std::size_t(t)].kind)] += bytesOf(std::size_t(t));
        const double gathered = par.gathered_root + (n.phase == Phase::optimizer ? 0.0 : par.gathered_units);
        double total = gathered;
        for (double v : live) total += v;
        if (total > best_total) best_total = total, best = live, best_phase = n.phase, best_gathered = gathered;
        for (int t : n.free)
            if (alive[std::size_t(t)] && !resident(std::size_t(t)))
                alive[std::size_t(t)] = false,
                live[kindIndex(g.tensors[std::size_t(t)].kind)] -= bytesOf(std::size_t(t));
    }
    MemoryEstimate m;
    m.grads = best[kindIndex(OpTensorKind::grad)];
    m.optimizer = best[kindIndex(OpTensorKind::optimizer_state)];
    m.params = best[kindIndex(OpTensorKind::param)] + best[kindIndex(OpTensorKind::buffer)];
    m.activations = best[kindIndex(OpTensorKind::activation)] + best[kindIndex(OpTensorKind::temp)] +
                    best[kindIndex(OpTensorKind::input)] + best[kindIndex(OpTensorKind::other)];
    m.buckets = par.buckets;
    m.gathered = best_gathered;
    m.phase = best_phase == Phase::forward ? "forward" : best_phase == Phase::backward ? "backward" : "optimizer";
    return m;
}

}  // namespace stepsim
