#include "sim/workload/ParallelLayout.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace stepsim {

ParallelLayout::ParallelLayout(const ParallelDims& dims) : dims_(dims) {}

int& ParallelLayout::at(RankCoords& c, ParallelDim d) {
    switch (d) {
        case ParallelDim::tp: return c.tp;
        case ParallelDim::cp: return c.cp;
        case ParallelDim::dp: return c.dp;
        case ParallelDim::pp: return c.pp;
    }
    throw std::logic_error("ParallelLayout: no such dimension");
}

RankCoords ParallelLayout::coords(int rank) const {
    RankCoords c;
    for (ParallelDim d : dims_.order) {
        at(c, d) = rank % dims_.size(d);
        rank /= dims_.size(d);
    }
    return c;
}

int ParallelLayout::rank(RankCoords c) const {
    int r = 0;
    for (auto d = dims_.order.rbegin(); d != dims_.order.rend(); ++d) r = r * dims_.size(*d) + at(c, *d);
    return r;
}

// Groups in this order: the dp groups (one per (tp, pp) pair), the tp groups (one per (dp, pp) pair), then per
// pipeline (tp, dp) and stage s the activation link act(s) and the gradient link grad(s).
std::vector<ProcessGroup> ParallelLayout::groups(bool ring) const {
    std::vector<ProcessGroup> out;
    for (int p = 0; p < pp(); ++p)
        for (int t = 0; t < tp(); ++t) {
            ProcessGroup g{fmt::format("dp (tp {}, pp {})", t, p), {}};
            for (int d = 0; d < dp(); ++d) g.ranks.push_back(rank({t, d, p}));
            out.push_back(std::move(g));
        }
    for (int p = 0; p < pp(); ++p)
        for (int d = 0; d < dp(); ++d) {
            ProcessGroup g{fmt::format("tp (dp {}, pp {})", d, p), {}};
            for (int t = 0; t < tp(); ++t) g.ranks.push_back(rank({t, d, p}));
            out.push_back(std::move(g));
        }
    if (pp() == 1) return out;
    for (int t = 0; t < tp(); ++t)
        for (int d = 0; d < dp(); ++d)
            for (int s = 0; s < pp(); ++s) {
                const int next = (s + 1) % pp();
                if (next == 0 && !ring) continue;
                const int a = rank({t, d, s}), b = rank({t, d, next});
                out.push_back({fmt::format("pp act {}>{} (tp {}, dp {})", s, next, t, d), {a, b}});
                out.push_back({fmt::format("pp grad {}>{} (tp {}, dp {})", next, s, t, d), {b, a}});
            }
    return out;
}

std::array<int, kGroupSlots> ParallelLayout::slots(int rank, bool ring) const {
    const RankCoords c = coords(rank);
    std::array<int, kGroupSlots> s{};
    s.fill(-1);
    s[kDpGroup] = c.pp * tp() + c.tp;
    s[kTpGroup] = pp() * tp() + c.pp * dp() + c.dp;
    if (pp() == 1) return s;
    const int base = pp() * tp() + pp() * dp();
    const int links = ring ? pp() : pp() - 1;  // act/grad pairs per pipeline
    const int pipe = base + 2 * links * (c.tp * dp() + c.dp);
    auto pair = [&](int stage) { return pipe + 2 * stage; };  // act(stage); grad(stage) is one after
    if (ring || c.pp + 1 < pp()) {
        s[kActNext] = pair(c.pp);
        s[kGradNext] = pair(c.pp) + 1;
    }
    if (ring || c.pp > 0) {
        const int prev = (c.pp + pp() - 1) % pp();
        s[kActPrev] = pair(prev);
        s[kGradPrev] = pair(prev) + 1;
    }
    return s;
}

void assignGroups(Program& program, const std::array<int, kGroupSlots>& slots) {
    for (CollectiveCall& call : program.collectives) {
        const int g = call.group >= 0 && call.group < kGroupSlots ? slots[std::size_t(call.group)] : -1;
        if (g < 0) throw std::logic_error(fmt::format("a collective on group slot {} the rank does not have", call.group));
        call.group = g;
    }
}

}  // namespace stepsim
