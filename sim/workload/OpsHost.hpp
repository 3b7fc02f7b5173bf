#pragma once
// The host's costs of an eager step over a captured op graph that its op-times table leaves out (the profile's
// ops_host, HardwareProfile.hpp: OpsHostRates), as host seconds added before each op of the graph:
//   module_call_us × each module's calls, spread evenly over the non-view forward ops (a recomputed forward's
//     included) run under it or a module inside it (a module that ran no such op gives its share to its parent's);
//   autograd_node_forward_us on each forward op that records an autograd node (a seq_nr; a view's too);
//   autograd_node_backward_us once per node the engine runs: on the first backward op linked to each forward op
//     (fwd_op), and on each parameter's grad_ready_op (its AccumulateGrad).
// Counted from the graph alone: the totals are in OpsHostCounts.
#include <vector>

#include "sim/base/OpGraph.hpp"
#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

struct OpsHostCounts {
    long long module_calls = 0;     // the modules' calls (recomputed ones included)
    long long forward_nodes = 0;    // forward ops (and recomputed ones) that record an autograd node
    long long backward_nodes = 0;   // nodes the backward runs: linked forward ops and the parameters' AccumulateGrad
};

OpsHostCounts opsHostCounts(const OpGraph& g);

// Seconds of host time added before op i (one per op of the graph).
std::vector<double> opsExtraHost(const OpGraph& g, const OpsHostRates& rates);

}  // namespace stepsim
