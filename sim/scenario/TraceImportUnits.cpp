#include "sim/scenario/TraceImportUnits.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

namespace stepsim {

namespace {

struct Repeat {
    std::size_t start = 0, period = 0, count = 0;
    std::size_t covered() const { return period * count; }
};

// The longest back-to-back repeat of one pattern in `ids` (see the header).
Repeat longestRepeat(const std::vector<int>& ids) {
    Repeat best;
    const std::size_t n = ids.size();
    for (std::size_t p = 1; 2 * p <= n; ++p) {
        // Runs of positions i with ids[i] == ids[i + p]: a run of r from s repeats the pattern at s floor(r/p)+1 times.
        std::size_t i = 0;
        while (i + p < n) {
            if (ids[i] != ids[i + p]) {
                ++i;
                continue;
            }
            std::size_t j = i;
            while (j + p < n && ids[j] == ids[j + p]) ++j;
            const Repeat r{i, p, (j - i) / p + 1};
            if (r.count >= 2 && r.covered() > best.covered()) best = r;
            i = j;
        }
    }
    return best;
}

}  // namespace

namespace {

// Assigns each activity its block; the reason there are none, or "".
std::string assignUnits(TraceStep& t, const std::vector<long long>& node_seq,
                        const std::map<long long, double>& node_made) {
    std::vector<std::size_t> fwd;
    std::vector<int> ids;
    std::unordered_map<std::string, int> id_of;
    for (std::size_t i = 0; i < t.activities.size(); ++i) {
        if (t.activities[i].phase != Phase::forward) continue;
        fwd.push_back(i);
        ids.push_back(id_of.try_emplace(t.activities[i].name, int(id_of.size())).first->second);
    }
    const Repeat r = longestRepeat(ids);
    if (r.count < 2) return "the forward repeats no pattern of kernels (no block structure)";
    t.units = int(r.count);
    t.unit_activities = int(r.period);
    for (std::size_t k = 0; k < r.covered(); ++k) t.activities[fwd[r.start + k]].unit = int(k / r.period);
    // Backward: the block of the forward op that made each activity's autograd node.
    for (std::size_t i = 0; i < t.activities.size(); ++i) {
        TraceActivity& a = t.activities[i];
        if (a.phase != Phase::backward || node_seq[i] < 0) continue;
        const auto made = node_made.find(node_seq[i]);
        if (made == node_made.end()) continue;
        const auto next = std::lower_bound(fwd.begin(), fwd.end(), made->second,
                                           [&](std::size_t f, double ts) { return t.activities[f].launch_us < ts; });
        if (next != fwd.end()) a.unit = t.activities[*next].unit;
    }
    // Each block's backward one span, the blocks in reverse order, each making a gradient.
    const std::size_t n = std::size_t(t.units);
    std::vector<long> first(n, -1), last(n, -1);
    std::vector<double> grads(n, 0.0);
    for (std::size_t i = 0; i < t.activities.size(); ++i) {
        const TraceActivity& a = t.activities[i];
        if (a.phase != Phase::backward || a.unit < 0) continue;
        const std::size_t u = std::size_t(a.unit);
        if (first[u] < 0) first[u] = long(i);
        last[u] = long(i);
        grads[u] += a.grad_numel;
    }
    for (std::size_t u = 0; u < n; ++u) {
        if (first[u] < 0) return fmt::format("block {} of the {} repeated in the forward has no backward found", u, n);
        for (long i = first[u]; i <= last[u]; ++i)
            if (const int o = t.activities[std::size_t(i)].unit; o >= 0 && std::size_t(o) != u)
                return fmt::format("the backward of block {} interleaves with block {}'s", u, o);
        if (u > 0 && last[u] > first[u - 1])
            return fmt::format("block {}'s backward runs after block {}'s (not in reverse order)", u, u - 1);
        if (grads[u] <= 0)
            return fmt::format("block {} makes no gradient the trace shows (profile with record_shapes=True)", u);
    }
    return "";
}

}  // namespace

void findTraceUnits(TraceStep& t, const std::vector<long long>& node_seq, const std::map<long long, double>& node_made) {
    t.units_note = assignUnits(t, node_seq, node_made);
    if (!t.units_note.empty()) {
        t.units = 0;
        t.unit_activities = 0;
        for (TraceActivity& a : t.activities) a.unit = -1;
    }
    // The parameters, in the order their gradients are made.
    t.params.clear();
    for (const TraceActivity& a : t.activities) {
        if (a.grad_numel <= 0) continue;
        const std::string kind = a.weight_grad        ? fmt::format("weight {}x{}", a.shape.m, a.shape.n)
                                 : a.grad_tensors == 2 ? std::string("norm weight and bias")
                                                       : std::string("norm or embedding");
        const std::string where = a.unit < 0 ? std::string("root") : fmt::format("block {}", a.unit);
        t.params.push_back({fmt::format("{} param {} ({})", where, t.params.size(), kind), a.grad_numel,
                            a.grad_tensors, a.unit, a.weight_grad});
    }
}

}  // namespace stepsim
