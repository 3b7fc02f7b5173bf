#pragma once
// How a run's ranks are split between the parallel dimensions: tensor (tp), context (cp), pipeline (pp) and the
// data-parallel rest, dp = world / (tp·cp·pp), with the order in which the dimensions lay out consecutive ranks. The
// one place dp is computed: the workload's layout (sim/workload/ParallelLayout.hpp), its step context, `explain` and
// the sweep's global batch read it here.
//
// Context parallelism is not modelled: cp is 1 (a dimension of size 1 changes no rank's place); it sits beside tp in
// the order, as in Megatron-LM's tp-cp-ep-dp-pp.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "sim/base/Scenario.hpp"

namespace stepsim {

enum class ParallelDim { tp, cp, dp, pp };

struct ParallelDims {
    int tp = 1, cp = 1, pp = 1, dp = 1;
    // Innermost first: rank = i₀ + n₀·(i₁ + n₁·(i₂ + …)) for the dimensions' indices iₖ and sizes nₖ in this order.
    std::vector<ParallelDim> order{ParallelDim::tp, ParallelDim::cp, ParallelDim::dp, ParallelDim::pp};

    int modelParallel() const { return tp * cp * pp; }  // the ranks one data-parallel replica spans
    // The data-parallel degree over `world` ranks.
    int dataParallel(int world) const { return world / std::max(1, modelParallel()); }
    int size(ParallelDim d) const {
        switch (d) {
            case ParallelDim::tp: return tp;
            case ParallelDim::cp: return cp;
            case ParallelDim::dp: return dp;
            case ParallelDim::pp: return pp;
        }
        throw std::logic_error("ParallelDims::size: no such dimension");
    }
};

// parallel.order's dimensions innermost first, cp beside tp.
inline std::vector<ParallelDim> rankOrder(RankOrder o) {
    using D = ParallelDim;
    switch (o) {
        case RankOrder::tp_dp_pp: return {D::tp, D::cp, D::dp, D::pp};
        case RankOrder::tp_pp_dp: return {D::tp, D::cp, D::pp, D::dp};
        case RankOrder::dp_tp_pp: return {D::dp, D::tp, D::cp, D::pp};
        case RankOrder::dp_pp_tp: return {D::dp, D::pp, D::tp, D::cp};
        case RankOrder::pp_tp_dp: return {D::pp, D::tp, D::cp, D::dp};
        case RankOrder::pp_dp_tp: return {D::pp, D::dp, D::tp, D::cp};
    }
    throw std::logic_error("rankOrder: no such order");
}

// The scenario's dimensions over `world` ranks (parallel.tp, parallel.pp, parallel.order; dp the rest).
inline ParallelDims parallelDims(const ParallelSpec& p, int world) {
    ParallelDims d;
    d.tp = p.tp;
    d.pp = p.pp;
    d.dp = d.dataParallel(world);
    d.order = rankOrder(p.order);
    return d;
}

inline ParallelDims parallelDims(const Scenario& sc) { return parallelDims(sc.parallel, sc.cluster.worldSize()); }

}  // namespace stepsim
