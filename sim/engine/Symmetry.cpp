#include "sim/engine/Symmetry.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace stepsim {

namespace {

// Whether every group that holds a rank holds its representative (r mod g) too.
bool groupsHoldRepresentatives(const Workload& w, int g) {
    for (const ProcessGroup& pg : w.groups) {
        std::vector<char> in(static_cast<std::size_t>(g), 0);
        for (int r : pg.ranks)
            if (r < g) in[static_cast<std::size_t>(r)] = 1;
        for (int r : pg.ranks)
            if (!in[static_cast<std::size_t>(r % g)]) return false;
    }
    return true;
}

bool movesHostData(const Program& p) {
    for (const Op& op : p.ops)
        if (op.kind == OpKind::transfer) return true;
    return false;
}

}  // namespace

bool symmetryApplies(const Scenario& sc) {
    return sc.sim.symmetry == "auto" && sc.jitter.stragglers.empty();
}

std::string symmetryBlocker(const Workload& w, int ranks, int g, bool jitter) {
    if (!w.representative.empty()) return "already reduced";
    if (g <= 0 || ranks <= g || ranks % g != 0) return "one node, or a partial node";
    if (jitter && ranks < 3 * g) return "two nodes with jitter (the reduction simulates two nodes)";
    if (static_cast<int>(w.programs.size()) < g) return "fewer programs than a node's GPUs";
    if (!groupsHoldRepresentatives(w, g)) return "a process group without its members' representatives";
    for (int r = 0; r < g; ++r)
        if (movesHostData(w.programs[static_cast<std::size_t>(r)])) return "host transfers";
    return {};
}

void mirrorRanks(Workload& w, int ranks, int g, bool jitter) {
    const bool two = jitter && ranks >= 3 * g;
    w.representative.resize(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) w.representative[static_cast<std::size_t>(r)] = two && r >= g ? g + r % g : r % g;
    w.programs.resize(static_cast<std::size_t>(two ? 2 * g : g), w.programs.front());
    if (two)
        for (int r = g; r < 2 * g; ++r) w.programs[static_cast<std::size_t>(r)] = w.programs[static_cast<std::size_t>(r % g)];
    w.programs.shrink_to_fit();
}

std::string reduceBySymmetry(Workload& w, const Fabric& fabric, bool jitter) {
    const int ranks = static_cast<int>(w.programs.size());
    const int g = fabric.gpus_per_node;
    if (std::string why = symmetryBlocker(w, ranks, g, jitter); !why.empty()) return why;
    for (int r = g; r < ranks; ++r)
        if (!(w.programs[static_cast<std::size_t>(r)] == w.programs[static_cast<std::size_t>(r % g)]))
            return "ranks run different programs";
    mirrorRanks(w, ranks, g, jitter);
    return {};
}

std::string symmetryNote(const Workload& w, bool jitter) {
    const std::string how =
        jitter ? "with jitter each simulated rank runs as its class's slowest member: the slowest GPU and host speeds, "
                 "each step the slowest member's factor, its own per-kernel noise"
               : "exact without jitter";
    // Simulated ranks that stand for more than themselves: one per class.
    std::vector<int> members(w.programs.size(), 0);
    for (int r : w.representative) ++members[static_cast<std::size_t>(r)];
    const int g = static_cast<int>(std::count_if(members.begin(), members.end(), [](int n) { return n > 1; }));
    const bool two = g < static_cast<int>(w.programs.size());
    const std::string simulated =
        two ? "the first node's ranks as themselves, the second's each for its class's other members"
            : "one simulated rank each";
    return fmt::format("symmetry: the {} ranks ran as {} classes of {} identical ranks ({}, the collectives on the "
                       "whole fabric; {}); per-rank results list the simulated ranks (sim.symmetry: off simulates "
                       "every rank)",
                       w.ranks(), g, w.ranks() / g, simulated, how);
}

}  // namespace stepsim
