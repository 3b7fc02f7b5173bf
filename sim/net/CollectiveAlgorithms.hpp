#pragma once
// The data phase of a collective as flows on the fabric: which GPU sends how many bytes to which, each flow
// bounded by what the collective reaches alone (its bus bandwidth), so that a collective alone reproduces its
// calibration and one that shares links slows down through the max-min flow network.
//
// Ring (NCCL's ring algorithms; nccl-tests' bus bandwidth): every rank sends S·F bytes to its ring successor,
// F = the bus factor (all_reduce 2(n−1)/n, all_gather / reduce_scatter (n−1)/n), at most busbw each; the
// collective ends when the slowest flow ends. Other algorithms decompose likewise (see each function).
#include <string>
#include <vector>

#include "sim/net/Fabric.hpp"
#include "sim/workload/Program.hpp"

namespace stepsim {

struct FlowSpec {
    int src = 0, dst = 0;   // global GPU ranks; the engine routes src → dst on the fabric
    double bytes = 0.0;
    double cap_Bps = 0.0;   // private bound of the flow
};

// `algo` is what the cost model chose ("Ring", "Tree", "NVLS", ...); `busbw_Bps` and `factor` as in
// CollectiveEstimate. Returns no flows for a one-rank group or zero bytes.
std::vector<FlowSpec> collectiveFlows(CollectiveKind kind, const std::string& algo, const std::vector<int>& ranks,
                                      const Fabric& fabric, double bytes, double busbw_Bps, double factor);

}  // namespace stepsim
