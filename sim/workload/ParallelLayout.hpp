#pragma once
// How tensor, pipeline and data parallelism share the ranks (sim/base/ParallelDims.hpp: parallel.tp, parallel.pp,
// the data-parallel rest), and the process groups that follow.
//
// parallel.order lists the dimensions innermost first, as Megatron-LM's order string does: the default tp-dp-pp
// gives rank = tp_index + tp·(dp_index + dp·pp_index), so a TP group is tp consecutive ranks (inside one NVSwitch
// node when tp ≤ gpus_per_node), data-parallel replicas next, pipeline stages outermost: Megatron's default
// (tp-cp-ep-dp-pp) and torchtitan's device mesh ["pp", "dp_replicate", "dp_shard", "cp", "tp"] (outermost first).
//
// A rank's Program names its groups by slot (its own data-parallel group, its TP group, the four point-to-point links
// of its stage); workloadGroups() lays out every group of the cluster and groupOf() maps a rank's slot to it.
// Point-to-point groups have two ranks, sender first (a sendrecv on two ranks is one flow, sender → receiver): the
// activations of stage s go to s+1 on group act(s), their gradients come back on grad(s); with virtual stages the
// last stage also sends to the first (the ring of interleaved 1F1B).
#include <array>
#include <vector>

#include "sim/base/ParallelDims.hpp"
#include "sim/base/Program.hpp"
#include "sim/base/Scenario.hpp"

namespace stepsim {

enum GroupSlot : int { kDpGroup = 0, kTpGroup = 1, kActNext = 2, kActPrev = 3, kGradPrev = 4, kGradNext = 5 };
inline constexpr int kGroupSlots = 6;

struct RankCoords {
    int tp = 0, dp = 0, pp = 0, cp = 0;
};

class ParallelLayout {
public:
    explicit ParallelLayout(const ParallelDims& dims);

    int tp() const { return dims_.tp; }
    int pp() const { return dims_.pp; }
    int dp() const { return dims_.dp; }
    int world() const { return dims_.modelParallel() * dp(); }
    RankCoords coords(int rank) const;
    int rank(RankCoords c) const;

    // Every process group of the cluster, and for each rank its slots' indices among them (−1: none).
    std::vector<ProcessGroup> groups(bool ring) const;
    std::array<int, kGroupSlots> slots(int rank, bool ring) const;

private:
    static int& at(RankCoords& c, ParallelDim d);
    ParallelDims dims_;
};

// The slots of `program`'s collectives replaced by the groups of `slots` (a rank's, from ParallelLayout::slots).
void assignGroups(Program& program, const std::array<int, kGroupSlots>& slots);

}  // namespace stepsim
