#include "sim/metrics/OverlapWindows.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace stepsim {
namespace {

double us(Time t) { return static_cast<double>(t.count()) * 1e-6; }

bool isSync(CollectiveKind k) { return k == CollectiveKind::all_reduce || k == CollectiveKind::reduce_scatter; }

// [step] → the index of the rank's first op that makes a compute stream wait for a gradient sync to finish (DDP's
// finalize_backward, FSDP2's wait for an earlier reduce-scatter); the program's size where a step has none. The copies
// from there on (DDP's copies back into the gradients) wait for the syncs: they are not compute a sync hides behind.
std::vector<std::size_t> syncWaits(const Program& p, std::size_t steps) {
    std::vector<std::size_t> first(steps, p.ops.size());
    std::vector<bool> after_sync(p.streams.size(), false);  // the stream's last collective was a gradient sync
    std::vector<bool> sync_event(p.events + 1, false);       // recorded on a comm stream after a gradient sync
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (op.kind == OpKind::collective && op.stream < after_sync.size())
            after_sync[op.stream] = isSync(p.collectives[op.collective].kind);
        else if (op.kind == OpKind::record_event && op.stream < after_sync.size() && op.event < sync_event.size())
            sync_event[op.event] = after_sync[op.stream] && p.streams[op.stream].kind == StreamKind::comm;
        else if (op.kind == OpKind::wait_event && op.event < sync_event.size() && sync_event[op.event] &&
                 op.stream < p.streams.size() && p.streams[op.stream].kind == StreamKind::compute && op.step >= 0 &&
                 std::size_t(op.step) < steps)
            first[std::size_t(op.step)] = std::min(first[std::size_t(op.step)], i);
    }
    return first;
}

// [rank][step] → the end of the rank's last backward compute kernel of the step, copies issued after its first wait for
// a gradient sync left out (µs; −1: none).
std::vector<std::vector<double>> backwardEnds(const Timeline& tl, const Workload& wl) {
    const std::size_t steps = tl.step_end.empty() ? 0 : tl.step_end.front().size();
    std::vector<std::vector<double>> c(std::size_t(tl.ranks), std::vector<double>(steps, -1.0));
    std::vector<std::vector<std::size_t>> waits;
    for (const Program& p : wl.programs) waits.push_back(syncWaits(p, steps));
    for (const Span& s : tl.spans) {
        if (s.cls == KernelClass::comm) continue;
        const Op& op = wl.programs[std::size_t(s.rank)].ops[s.op];
        if (op.phase != Phase::backward || op.step < 0 || std::size_t(op.step) >= steps) continue;
        if (s.cls == KernelClass::copy && s.op >= waits[std::size_t(s.rank)][std::size_t(op.step)]) continue;
        double& e = c[std::size_t(s.rank)][std::size_t(op.step)];
        e = std::max(e, us(s.end));
    }
    return c;
}

}  // namespace

SyncObservation observeSyncs(const Timeline& tl, const Workload& wl) {
    SyncObservation o;
    const auto c = backwardEnds(tl, wl);
    const int steps = c.empty() ? 0 : static_cast<int>(c.front().size());
    const int first = steps > 1 ? 1 : 0;
    // Records in the order they started within each group and step: the group's seq is its call order.
    std::vector<const CollectiveRecord*> recs;
    for (const CollectiveRecord& r : tl.collectives)
        if (isSync(r.kind) && r.step >= first && r.step < steps) recs.push_back(&r);
    std::sort(recs.begin(), recs.end(), [](const CollectiveRecord* a, const CollectiveRecord* b) {
        return a->group != b->group ? a->group < b->group : a->seq < b->seq;
    });
    std::map<std::pair<int, int>, int> next;  // (group, step) → index
    for (const CollectiveRecord* r : recs) {
        double end_c = std::numeric_limits<double>::infinity();
        for (int rank : wl.groups[std::size_t(r->group)].ranks) {
            // A reduced run (Workload::representative): a rank's compute is its representative's.
            const int sim_rank = wl.representative.empty() ? rank : wl.representative[std::size_t(rank)];
            if (const double e = c[std::size_t(sim_rank)][std::size_t(r->step)]; e >= 0) end_c = std::min(end_c, e);
        }
        if (!(end_c < std::numeric_limits<double>::infinity())) continue;  // no backward compute in the step
        o.syncs.push_back({r->group, next[{r->group, r->step}]++, r->step, r->kind, r->bytes, us(r->first_arrival),
                           us(r->start), us(r->end), end_c});
    }
    if (tl.ranks > 1) {
        // [step][rank] → the rank's arrival at its first gradient sync of the step (its NCCL kernel resident), µs.
        std::vector<std::vector<double>> arrival(std::size_t(steps), std::vector<double>(std::size_t(tl.ranks), -1.0));
        for (const Span& sp : tl.spans) {
            if (sp.cls != KernelClass::comm) continue;
            const Program& p = wl.programs[std::size_t(sp.rank)];
            const Op& op = p.ops[sp.op];
            if (op.kind != OpKind::collective || !isSync(p.collectives[op.collective].kind) || op.step < first ||
                op.step >= steps)
                continue;
            double& a = arrival[std::size_t(op.step)][std::size_t(sp.rank)];
            if (a < 0 || us(sp.start) < a) a = us(sp.start);
        }
        for (int s = first; s < steps; ++s) {
            const auto& a = arrival[std::size_t(s)];
            if (std::any_of(a.begin(), a.end(), [](double x) { return x < 0; })) continue;  // a rank without a sync
            const double last = *std::max_element(a.begin(), a.end());
            double sum = 0.0;
            for (double x : a) sum += last - x;
            o.sync_idle_ms.push_back(sum / static_cast<double>(a.size()) * 1e-3);
        }
    }
    return o;
}

std::vector<OverlapWindow> overlapWindows(const SyncObservation& reference, const std::vector<SyncObservation>& samples,
                                          const Workload& wl) {
    // W_ideal of each collective in each step of the reference, keyed (group, index, step).
    std::map<std::tuple<int, int, int>, double> ideal;
    for (const auto& r : reference.syncs)
        ideal[{r.group, r.index, r.step}] = r.compute_end_us - r.first_us - (r.end_us - r.start_us);
    std::vector<SyncObservation::Sync> ref;
    int first_step = std::numeric_limits<int>::max();
    for (const auto& s : reference.syncs) first_step = std::min(first_step, s.step);
    for (const auto& s : reference.syncs)
        if (s.step == first_step) ref.push_back(s);
    std::stable_sort(ref.begin(), ref.end(), [](const auto& a, const auto& b) { return a.first_us < b.first_us; });
    std::vector<OverlapWindow> out;
    for (const auto& r : ref) {
        OverlapWindow w;
        w.group = wl.groups[std::size_t(r.group)].name;
        w.index = r.index;
        w.kind = std::string(collectiveKindName(r.kind));
        w.bytes = r.bytes;
        int broken = 0;
        for (const SyncObservation& o : samples)
            for (const auto& s : o.syncs) {
                if (s.group != r.group || s.index != r.index) continue;
                const auto it = ideal.find({s.group, s.index, s.step});
                if (it == ideal.end()) continue;
                const double sync = s.start_us - s.first_us, slack = s.compute_end_us - s.end_us;
                w.w_ideal_us += it->second;
                w.delta_sync_us += sync;
                w.delta_kernel_us += it->second - sync - slack;
                broken += slack < 0 ? 1 : 0;
                ++w.observations;
            }
        if (w.observations == 0) continue;
        w.w_ideal_us /= w.observations;
        w.delta_sync_us /= w.observations;
        w.delta_kernel_us /= w.observations;
        w.w_break_us = std::max(0.0, w.w_ideal_us - w.delta_sync_us - w.delta_kernel_us);
        w.break_probability = static_cast<double>(broken) / w.observations;
        out.push_back(std::move(w));
    }
    return out;
}

std::optional<AccumulationIdle> accumulationIdle(const std::vector<SyncObservation>& samples, int grad_accum,
                                                 int ranks) {
    std::vector<double> v;
    for (const SyncObservation& o : samples) v.insert(v.end(), o.sync_idle_ms.begin(), o.sync_idle_ms.end());
    if (ranks < 2 || v.empty()) return std::nullopt;
    AccumulationIdle a;
    a.grad_accum = grad_accum;
    a.ranks = ranks;
    a.observations = static_cast<int>(v.size());
    for (double x : v) a.mean_ms += x / static_cast<double>(v.size());
    if (v.size() > 1) {
        for (double x : v) a.var_ms2 += (x - a.mean_ms) * (x - a.mean_ms);
        a.var_ms2 /= static_cast<double>(v.size() - 1);
    }
    return a;
}

}  // namespace stepsim
