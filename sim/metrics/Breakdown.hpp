#pragma once
// The step split into what its time went to: Results::breakdown_ms, whose parts sum to step_time_ms.
//
// Which window: step_time is the mean over the measured steps M of the slowest rank's window (Metrics.hpp), so the
// breakdown splits, for each s ∈ M, the window W = [b(r*,s−1), b(r*,s)) of that step's slowest rank r* (the lowest
// rank of equal ones), and averages each part over M. Every instant of W goes to exactly one part, the first of this
// priority order that holds at it (so the parts tile W and sum to |W| in integer picoseconds):
//   1. compute.gemm, compute.attention, compute.memory, compute.optimizer, compute.copy, compute.other: a GPU span of
//      that KernelClass runs on any of the rank's streams (several at once: the first class of this list);
//   2. comm.<group>: an NCCL span runs and no compute span does (exposed communication), named by its process group's
//      first word (dp, tp, pp, shard, replicate, world, ...; several at once: the group first in Workload::groups);
//      a pipeline group's (pp) span counts here only from its collective's start (the last member's arrival,
//      CollectiveRecord::start), its wait for the peer stage before that is part 3;
//   3. pipeline_bubble: a pp group's span waiting for its peer stage;
//   4. checkpoint: a checkpoint's transfer of the rank (staging copy, storage write) is in flight;
//   5. loader: an input-pipeline transfer of the rank (H2D copy, a loader worker's batch) is in flight;
//   6. host_bound: the GPU waits for its host: the first GPU op to start after the instant's idle interval [a, b) had
//      not been issued yet (its launch's end e, Timeline::host_op_end, > a); [a, min(b, e)) is host-bound, except where the host
//      was preparing a batch on the main thread then (host work named "loader: ...", data_loader.num_workers: 0),
//      which is loader;
//   7. pipeline_bubble: with parallel.pp > 1, idle within the step's pipeline window (the first forward or backward
//      kernel of any rank to the last one's end, as Results::pp_bubble_ratio);
//   8. idle: the rest (launch gaps, waits for events, the tail after the host's issue).
// A collective span is matched to its CollectiveRecord by order, as the trace does (TraceReport.hpp): the k-th
// collective op of group g on a rank is the k-th record of g by seq; a span without one counts whole in part 2.
// Every fixed part is listed, 0 where nothing fell in it; a comm part only for a group with exposed time. With several
// Monte-Carlo samples aggregateSamples averages each part (the mean of sums is the sum of means).
#include <string>
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/metrics/Results.hpp"

namespace stepsim {

// The parts of the measured steps [first, S), in the order above (part 7 folded into pipeline_bubble).
std::vector<BreakdownPart> stepBreakdown(const Timeline& timeline, const Workload& workload, int first);

// One maximal interval of one rank's step window that went to one part (for the trace's annotations).
struct AttributedInterval {
    int rank = 0, step = 0;
    Time start, end;
    std::string part;
};

// Every rank's every step window attributed as above, intervals of the parts not in `skip_prefix` (e.g. "compute."),
// in (rank, time) order.
std::vector<AttributedInterval> attributeWindows(const Timeline& timeline, const Workload& workload,
                                                 const std::string& skip_prefix = "compute.");

// A process group's label in the breakdown: its name's first word ("dp (tp 0, pp 1)" → "dp").
std::string groupLabel(const std::string& group_name);

}  // namespace stepsim
