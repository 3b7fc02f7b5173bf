#include "sim/engine/Symmetry.hpp"

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
    return sc.sim.symmetry == "auto" && sc.jitter.stragglers.empty() && !sc.jitter.enabled;
}

std::string symmetryBlocker(const Workload& w, int ranks, int g) {
    if (!w.representative.empty()) return "already reduced";
    if (g <= 0 || ranks <= g || ranks % g != 0) return "one node, or a partial node";
    if (static_cast<int>(w.programs.size()) < g) return "fewer programs than a node's GPUs";
    if (!groupsHoldRepresentatives(w, g)) return "a process group without its members' representatives";
    for (int r = 0; r < g; ++r)
        if (movesHostData(w.programs[static_cast<std::size_t>(r)])) return "host transfers";
    return {};
}

void mirrorRanks(Workload& w, int ranks, int g) {
    w.representative.resize(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) w.representative[static_cast<std::size_t>(r)] = r % g;
    w.programs.resize(static_cast<std::size_t>(g));
    w.programs.shrink_to_fit();
}

std::string reduceBySymmetry(Workload& w, const Fabric& fabric) {
    const int ranks = static_cast<int>(w.programs.size());
    const int g = fabric.gpus_per_node;
    if (std::string why = symmetryBlocker(w, ranks, g); !why.empty()) return why;
    for (int r = g; r < ranks; ++r)
        if (!(w.programs[static_cast<std::size_t>(r)] == w.programs[static_cast<std::size_t>(r % g)]))
            return "ranks run different programs";
    mirrorRanks(w, ranks, g);
    return {};
}

std::string symmetryNote(const Workload& w, bool jitter) {
    const std::string how =
        jitter ? "with jitter each simulated rank has its class's slowest GPU and host speeds and draws its own "
                 "per-kernel noise (order statistics, not exact)"
               : "exact without jitter";
    return fmt::format("symmetry: the {} ranks ran as {} classes of {} identical ranks (one simulated rank each, the "
                       "collectives on the whole fabric; {}); per-rank results list the simulated ranks "
                       "(sim.symmetry: off simulates every rank)",
                       w.ranks(), w.programs.size(), w.ranks() / static_cast<int>(w.programs.size()), how);
}

}  // namespace stepsim
