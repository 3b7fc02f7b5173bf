#pragma once
// Achieved collective bandwidth, in the convention of nccl-tests (its doc/PERFORMANCE.md):
//
//   algbw = S / t                      S: nccl-tests' size (CollectiveCall::bytes), t: the collective's time
//   busbw = algbw · factor(kind, n)    n: ranks in the group
//     all_reduce                        factor = 2(n−1)/n
//     all_gather, reduce_scatter,       factor = (n−1)/n
//     alltoall
//     broadcast, sendrecv               factor = 1
//
// busbw is the per-rank link bandwidth the algorithm needs, so it compares with the hardware peak whatever n.
// A group of one rank moves nothing over links: factor 0 for the reducing/gathering kinds.
#include "sim/base/Program.hpp"

namespace stepsim {

inline double busBandwidthFactor(CollectiveKind kind, int n) {
    if (n <= 0) return 0.0;
    const double nn = static_cast<double>(n);
    switch (kind) {
        case CollectiveKind::all_reduce: return 2.0 * (nn - 1.0) / nn;
        case CollectiveKind::all_gather:
        case CollectiveKind::reduce_scatter:
        case CollectiveKind::alltoall: return (nn - 1.0) / nn;
        case CollectiveKind::broadcast:
        case CollectiveKind::sendrecv: return 1.0;
    }
    return 1.0;
}

}  // namespace stepsim
