#pragma once
// The symmetry reduction: ranks that run the same Program on the same kind of links are simulated once.
//
// On a fabric of identical nodes, rank r (local index r mod G, G GPUs per node) stands in the class of local index
// r mod G. When every rank runs its class representative's Program (the data-parallel replicas do), every process
// group that holds a rank also holds that rank's representative, and nothing draws per-rank randomness (no jitter, no
// stragglers; with jitter see below) or moves host data (no transfer ops: a mirror's PCIe and storage traffic would be missing), every rank
// of a class does at every instant what its representative does. Then only the G representatives of the first node
// are simulated (Workload::representative), and each collective is still laid out on the whole fabric: its flows from
// every member, each mirror's flow bounded as its representative's (the same compute beside it), the flows of one
// class with the same size and bound merged into one flow of the flow network that crosses each link once per member
// (FlowNetwork.hpp). That merged flow gives every member the same rate; the full network gives them the same rates
// too as long as the merged flow runs at its bound (its members all at their bounds then fit on every link, which
// is the max-min solution of the full network), which the engine checks at every rate change
// (Timeline::symmetry_broken); where it is broken the caller runs every rank instead.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/net/Fabric.hpp"

namespace stepsim {

// With jitter (Jitter.hpp) the members of a class are no longer identical, and the reduced run takes each class's
// slowest member, the order statistic that decides a collective's barrier: each simulated rank runs at the slowest GPU
// speed and the slowest host speed of its class's members (the order statistics the full run deals them,
// slowestOfClass), its factor for each step is the slowest member's GPU for that step (the largest over the members
// of the factors the full run draws for them, drawn once per class), and it draws its own per-kernel and per-launch
// noise, which averages out over a step's kernels. Its mirrors' flows follow its compute. Measured against the full
// simulation of the same seed: tests/engine/SymmetryTest.cpp, docs/performance.md.
//
// With jitter one member alone is not every member: a member that reaches a collective before the slowest waits beside
// its resident NCCL kernel, and its compute slows and lags (GpuCompute.hpp) while the slowest's does not, so the job's
// step can end on a member that is not the slowest. A jittered run therefore simulates two nodes: the first node's
// ranks as themselves (one member each, exact draws) and the second's each standing for its class's other members
// (their slowest, as above); the job's step is the later of the two.
//
// Reduces `w` to simulated ranks per class where the Programs, groups and transfers allow it (above): one node, or
// with `jitter` two (above). Returns "" when reduced, else why not.
std::string reduceBySymmetry(Workload& w, const Fabric& fabric, bool jitter = false);

// What keeps a job of `ranks` ranks on nodes of `g` GPUs whose first g Programs are w's from the reduction, its
// Programs' equality aside ("" for nothing); an expansion that gives every rank one Program checks this and holds g
// copies only (mirrorRanks: rank r runs as r mod g), or with `jitter` 2g where the job has three nodes or more (rank r
// of the first node as itself, every other as g + r mod g; a jittered job of two nodes is simulated as it is: two
// nodes either way).
std::string symmetryBlocker(const Workload& w, int ranks, int g, bool jitter = false);
void mirrorRanks(Workload& w, int ranks, int g, bool jitter = false);

// sim.symmetry: auto's policy: reduce unless the scenario names stragglers (which pick ranks); with jitter the
// reduced run takes each class's slowest member (above).
bool symmetryApplies(const Scenario& sc);

// The warning a reduced run's result carries (`jitter`: the scenario draws jitter).
std::string symmetryNote(const Workload& w, bool jitter);

// Per-rank factors of the whole job (a GPU's or host's speed, Jitter.hpp) folded onto the simulated ranks: each the
// largest (slowest) of its class's members, the order statistic that decides a data-parallel step; unreduced, as given.
inline std::vector<double> slowestOfClass(const Workload& w, std::vector<double> all) {
    if (w.representative.empty()) return all;
    std::vector<double> out(w.programs.size(), 0.0);
    for (std::size_t r = 0; r < all.size(); ++r) {
        double& o = out[static_cast<std::size_t>(w.representative[r])];
        o = std::max(o, all[r]);
    }
    return out;
}
template <std::size_t N>
std::vector<std::array<double, N>> slowestOfClass(const Workload& w, std::vector<std::array<double, N>> all) {
    if (w.representative.empty()) return all;
    std::vector<std::array<double, N>> out(w.programs.size(), std::array<double, N>{});
    for (std::size_t r = 0; r < all.size(); ++r)
        for (std::size_t k = 0; k < N; ++k) {
            double& o = out[static_cast<std::size_t>(w.representative[r])][k];
            o = std::max(o, all[r][k]);
        }
    return out;
}


}  // namespace stepsim
