#include "sim/metrics/Breakdown.hpp"
#include "sim/metrics/IntervalSet.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <utility>


namespace stepsim {
namespace {

// The compute parts, in priority order, by KernelClass.
constexpr KernelClass kComputeOrder[] = {KernelClass::gemm,  KernelClass::attention, KernelClass::memory,
                                         KernelClass::optimizer, KernelClass::copy, KernelClass::other};
constexpr const char* kComputeNames[] = {"compute.gemm",      "compute.attention", "compute.memory",
                                         "compute.optimizer", "compute.copy",      "compute.other"};

// One rank's activity over the whole run, by what it is.
struct RankActivity {
    IntervalSet compute[std::size(kComputeOrder)];
    std::vector<IntervalSet> comm;  // [label]: exposed-comm candidates by group label
    IntervalSet pp_wait, checkpoint, loader;
    IntervalSet host_loader;  // the host preparing a batch on the main thread (host work named "loader: ...")
    std::vector<std::pair<std::int64_t, std::int64_t>> starts;  // (start, issue end) of every GPU span, by start
};

// The labels of the groups (first word), in order of first appearance, and each group's label index.
struct Labels {
    std::vector<std::string> names;
    std::vector<int> of_group;
    int pp = -1;  // the label "pp", if any group has it
};

Labels labelsOf(const Workload& wl) {
    Labels L;
    for (const ProcessGroup& g : wl.groups) {
        const std::string label = groupLabel(g.name);
        auto it = std::find(L.names.begin(), L.names.end(), label);
        if (it == L.names.end()) it = L.names.insert(L.names.end(), label);
        L.of_group.push_back(static_cast<int>(it - L.names.begin()));
    }
    for (std::size_t i = 0; i < L.names.size(); ++i)
        if (L.names[i] == "pp") L.pp = static_cast<int>(i);
    return L;
}

const CollectiveCall* callOf(const Workload& wl, const Span& s) {
    if (s.cls != KernelClass::comm || std::size_t(s.rank) >= wl.programs.size()) return nullptr;
    const Program& p = wl.programs[std::size_t(s.rank)];
    if (s.op >= p.ops.size()) return nullptr;
    const Op& op = p.ops[s.op];
    if (op.kind != OpKind::collective || op.collective >= p.collectives.size()) return nullptr;
    return &p.collectives[op.collective];
}

// Each comm span's collective start (the last member's arrival), by span index: the k-th collective op of group g on a
// rank is the k-th record of g by seq.
// Only the ranks `wanted` marks.
std::vector<std::optional<std::int64_t>> collectiveStarts(const Timeline& tl, const Workload& wl,
                                                          const std::vector<char>& wanted) {
    std::vector<std::optional<std::int64_t>> out(tl.spans.size());
    std::map<std::pair<int, int>, std::vector<std::size_t>> spans;  // (rank, group) → span indices
    for (std::size_t i = 0; i < tl.spans.size(); ++i) {
        const std::size_t r = std::size_t(tl.spans[i].rank);
        if (r < wanted.size() && !wanted[r]) continue;
        if (const CollectiveCall* c = callOf(wl, tl.spans[i])) spans[{tl.spans[i].rank, c->group}].push_back(i);
    }
    std::map<int, std::vector<const CollectiveRecord*>> records;
    for (const CollectiveRecord& r : tl.collectives) records[r.group].push_back(&r);
    for (auto& [g, v] : records)
        std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
    for (auto& [key, v] : spans) {
        std::sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) { return tl.spans[a].op < tl.spans[b].op; });
        const auto it = records.find(key.second);
        if (it == records.end()) continue;
        for (std::size_t k = 0; k < v.size() && k < it->second.size(); ++k) out[v[k]] = it->second[k]->start.count();
    }
    return out;
}

class Attributor {
public:
    // `wanted`: the ranks to attribute (empty: all); the others' activity is not gathered.
    Attributor(const Timeline& tl, const Workload& wl, std::vector<char> wanted = {})
        : tl_(tl), wl_(wl), labels_(labelsOf(wl)), wanted_(std::move(wanted)) {
        const std::size_t ranks = std::size_t(std::max(0, tl.ranks));
        if (wanted_.empty()) wanted_.assign(ranks, 1);
        ranks_.resize(ranks);
        for (std::size_t r = 0; r < ranks; ++r) ranks_[r].comm.resize(labels_.names.size());
        const auto starts = collectiveStarts(tl, wl, wanted_);
        for (std::size_t i = 0; i < tl.spans.size(); ++i) add(tl.spans[i], starts[i]);
        for (const TransferRecord& t : tl.transfers) {
            if (std::size_t(t.rank) >= ranks || t.end <= t.start || !wanted_[std::size_t(t.rank)]) continue;
            const TransferCall& c = wl.programs[std::size_t(t.rank)].transfers[t.call];
            (c.checkpoint >= 0 ? ranks_[t.rank].checkpoint : ranks_[t.rank].loader)
                .add(Interval(t.start.count(), t.end.count()));
        }
        for (std::size_t r = 0; r < ranks && r < tl.host_op_end.size() && r < wl.programs.size(); ++r) {
            if (!wanted_[r]) continue;
            const Program& p = wl.programs[r];
            const std::vector<Time>& end = tl.host_op_end[r];
            for (std::size_t i = 0; i < p.ops.size() && i < end.size(); ++i) {
                const std::int64_t from = i == 0 ? 0 : end[i - 1].count(), to = end[i].count();
                if (p.ops[i].kind == OpKind::host_work && to > from && p.names[p.ops[i].name].rfind("loader:", 0) == 0)
                    ranks_[r].host_loader.add(Interval(from, to));
            }
        }
        for (RankActivity& a : ranks_) std::sort(a.starts.begin(), a.starts.end());
        if (wl.pipeline_stages > 1) pipelineWindows();
    }

    // The part names in priority order, parts 7 and 3 sharing pipeline_bubble.
    std::vector<std::string> partNames() const {
        std::vector<std::string> names(std::begin(kComputeNames), std::end(kComputeNames));
        for (const std::string& l : labels_.names) names.push_back("comm." + l);
        for (const char* n : {"pipeline_bubble", "checkpoint", "loader", "host_bound", "idle"}) names.push_back(n);
        return names;
    }

    // Rank r's window [a, b) of step `step`: one set per part of partNames(), disjoint, covering [a, b).
    std::vector<IntervalSet> attribute(int r, int step, std::int64_t a, std::int64_t b) const {
        const RankActivity& act = ranks_[std::size_t(r)];
        const std::size_t nc = std::size(kComputeOrder), nl = labels_.names.size();
        std::vector<IntervalSet> parts(nc + nl + 5);
        if (b <= a) return parts;
        const Interval win(a, b);
        IntervalSet taken;
        const auto take = [&](IntervalSet& part, const IntervalSet& candidate) {
            part += (candidate & win) - taken;
            taken += part;
        };
        for (std::size_t c = 0; c < nc; ++c) take(parts[c], act.compute[c]);
        for (std::size_t l = 0; l < nl; ++l) take(parts[nc + l], act.comm[l]);
        IntervalSet& bubble = parts[nc + nl];
        take(bubble, act.pp_wait);
        take(parts[nc + nl + 1], act.checkpoint);
        take(parts[nc + nl + 2], act.loader);
        const IntervalSet waiting = hostBound(act, IntervalSet(win) - taken);
        take(parts[nc + nl + 2], waiting & act.host_loader);
        take(parts[nc + nl + 3], waiting);
        if (std::size_t(step) < pipeline_.size() && pipeline_[std::size_t(step)].second > pipeline_[std::size_t(step)].first)
            take(bubble, IntervalSet(Interval(pipeline_[std::size_t(step)].first, pipeline_[std::size_t(step)].second)));
        parts[nc + nl + 4] = IntervalSet(win) - taken;
        return parts;
    }

private:
    void add(const Span& s, const std::optional<std::int64_t>& collective_start) {
        if (std::size_t(s.rank) >= ranks_.size() || s.end <= s.start || !wanted_[std::size_t(s.rank)]) return;
        RankActivity& a = ranks_[std::size_t(s.rank)];
        const std::int64_t from = s.start.count(), to = s.end.count();
        const auto& host = tl_.host_op_end;
        const bool issued = std::size_t(s.rank) < host.size() && s.op < host[std::size_t(s.rank)].size();
        a.starts.push_back({from, issued ? host[std::size_t(s.rank)][s.op].count() : 0});
        if (s.cls != KernelClass::comm) {
            for (std::size_t c = 0; c < std::size(kComputeOrder); ++c)
                if (kComputeOrder[c] == s.cls) a.compute[c].add(Interval(from, to));
            return;
        }
        const CollectiveCall* call = callOf(wl_, s);
        const int label = call && call->group >= 0 && std::size_t(call->group) < labels_.of_group.size()
                              ? labels_.of_group[std::size_t(call->group)]
                              : 0;
        if (labels_.names.empty()) return;
        std::int64_t moving = from;  // where the collective's own time begins on this span
        if (label == labels_.pp && collective_start) moving = std::clamp(*collective_start, from, to);
        if (moving > from) a.pp_wait.add(Interval(from, moving));
        if (to > moving) a.comm[std::size_t(label)].add(Interval(moving, to));
    }

    // Of the idle intervals [a, b), the part before the host issued the GPU op that ends them: [a, min(b, e)) for the
    // first span starting at or after b, e its launch's end (the earliest of spans starting together).
    IntervalSet hostBound(const RankActivity& act, const IntervalSet& idle) const {
        IntervalSet out;
        if (tl_.host_op_end.empty()) return out;
        for (const Interval& iv : idle) {
            const std::int64_t a = iv.lower(), b = iv.upper();
            auto it = std::lower_bound(act.starts.begin(), act.starts.end(), std::pair{b, std::int64_t(-1)});
            if (it == act.starts.end()) continue;
            const std::int64_t first = it->first;
            std::int64_t e = it->second;
            for (; it != act.starts.end() && it->first == first; ++it) e = std::min(e, it->second);
            if (e > a) out.add(Interval(a, std::min(b, e)));
        }
        return out;
    }

    // Each step's pipeline window: the first forward or backward kernel of any rank to the last one's end.
    void pipelineWindows() {
        const std::size_t steps = tl_.step_end.empty() ? 0 : tl_.step_end.front().size();
        pipeline_.assign(steps, {INT64_MAX, INT64_MIN});
        for (const Span& s : tl_.spans) {
            if (s.cls == KernelClass::comm || s.end <= s.start || std::size_t(s.rank) >= wl_.programs.size()) continue;
            const Op& op = wl_.programs[std::size_t(s.rank)].ops[s.op];
            if (op.kind != OpKind::kernel || (op.phase != Phase::forward && op.phase != Phase::backward)) continue;
            if (op.step < 0 || std::size_t(op.step) >= steps) continue;
            auto& w = pipeline_[std::size_t(op.step)];
            w = {std::min(w.first, s.start.count()), std::max(w.second, s.end.count())};
        }
    }

    const Timeline& tl_;
    const Workload& wl_;
    Labels labels_;
    std::vector<char> wanted_;
    std::vector<RankActivity> ranks_;
    std::vector<std::pair<std::int64_t, std::int64_t>> pipeline_;  // [step]
};

// Where rank r's window of step s begins: the end of its previous step (0 for the first).
std::int64_t windowStart(const Timeline& tl, std::size_t r, std::size_t s) {
    return s == 0 ? 0 : tl.step_end[r][s - 1].count();
}

}  // namespace

std::string groupLabel(const std::string& name) {
    const std::size_t end = name.find_first_of(" (");
    return name.substr(0, end == std::string::npos ? name.size() : end);
}

std::vector<BreakdownPart> stepBreakdown(const Timeline& tl, const Workload& wl, int first) {
    if (tl.ranks <= 0 || tl.step_end.empty()) return {};
    const int steps = static_cast<int>(tl.step_end.front().size());
    first = std::clamp(first, 0, std::max(0, steps - 1));
    // Each measured step's slowest rank (the lowest of equal ones); only those are attributed.
    std::vector<std::size_t> slowest_of(std::size_t(steps), 0);
    std::vector<char> wanted(tl.step_end.size(), 0);
    for (int s = first; s < steps; ++s) {
        std::int64_t longest = -1;
        for (std::size_t r = 0; r < tl.step_end.size(); ++r) {
            const std::int64_t len = tl.step_end[r][std::size_t(s)].count() - windowStart(tl, r, std::size_t(s));
            if (len > longest) longest = len, slowest_of[std::size_t(s)] = r;
        }
        wanted[slowest_of[std::size_t(s)]] = 1;
    }
    const Attributor at(tl, wl, wanted);
    const std::vector<std::string> names = at.partNames();
    std::vector<std::int64_t> sum(names.size(), 0);
    for (int s = first; s < steps; ++s) {
        const std::size_t slowest = slowest_of[std::size_t(s)];
        const std::int64_t a = windowStart(tl, slowest, std::size_t(s));
        const auto parts = at.attribute(int(slowest), s, a, tl.step_end[slowest][std::size_t(s)].count());
        for (std::size_t p = 0; p < parts.size(); ++p) sum[p] += boost::icl::length(parts[p]);
    }
    const double count = double(steps - first);
    std::vector<BreakdownPart> out;
    for (std::size_t p = 0; p < names.size(); ++p) {
        const bool comm = names[p].rfind("comm.", 0) == 0;
        if (comm && sum[p] == 0) continue;  // a group without exposed time in any measured step: not listed
        out.push_back({names[p], double(sum[p]) * 1e-9 / count});
    }
    return out;
}

std::vector<AttributedInterval> attributeWindows(const Timeline& tl, const Workload& wl, const std::string& skip) {
    std::vector<AttributedInterval> out;
    if (tl.ranks <= 0 || tl.step_end.empty()) return out;
    const Attributor at(tl, wl);
    const std::vector<std::string> names = at.partNames();
    for (std::size_t r = 0; r < tl.step_end.size(); ++r)
        for (std::size_t s = 0; s < tl.step_end[r].size(); ++s) {
            const auto parts = at.attribute(int(r), int(s), windowStart(tl, r, s), tl.step_end[r][s].count());
            const std::size_t begin = out.size();
            for (std::size_t p = 0; p < parts.size(); ++p) {
                if (!skip.empty() && names[p].rfind(skip, 0) == 0) continue;
                for (const Interval& iv : parts[p])
                    out.push_back({int(r), int(s), Time::ps(iv.lower()), Time::ps(iv.upper()), names[p]});
            }
            std::sort(out.begin() + std::ptrdiff_t(begin), out.end(),
                      [](const AttributedInterval& x, const AttributedInterval& y) { return x.start < y.start; });
        }
    return out;
}

}  // namespace stepsim
