#pragma once
// Overlap windows of the gradient syncs, and the ranks' idle at the sync (docs/jitter.md has the same, with figures).
//
// A gradient sync collective is an all_reduce (DDP: one per gradient bucket) or a reduce_scatter (FSDP2: one per
// shard) of the step. It is keyed by its process group and its position among that group's sync collectives in the
// step (`index`; DDP: bucket 0 is the first to become ready in the backward). For one such collective in one measured
// step s of one run, with every time on the simulated clock:
//   first   its first member rank's NCCL kernel became resident (CollectiveRecord::first_arrival)
//   start   its last member arrived and it began (CollectiveRecord::start);  D = end − start, its duration
//   C       the end of the backward compute of step s: min over the group's ranks of the end of the rank's last
//           non-communication kernel of phase backward in step s, leaving out the copies issued after the rank's first
//           wait of a compute stream for a gradient sync (DDP's copies back into the gradients, which wait for the
//           syncs, cannot hide one)
//   slack   = C − end: how long before the compute runs out the collective finished (< 0: part of it is exposed)
// In the reference run (the same workload with the profile's noise and the scenario's stragglers off, so no rank waits
// for another), the same collective in the same step:
//   W_ideal = C⁰ − first⁰ − D⁰       the time the collective could start later than it became ready and still hide
// In every run of the samples:
//   δsync   = start − first          the wait for the last rank (NCCL's barrier)
//   δkernel = W_ideal − δsync − slack = [(first − C) − (first⁰ − C⁰)] + (D − D⁰): how much later relative to the end of
//             compute the collective became ready than in the reference (launch jitter, kernel duration noise,
//             stragglers' slower kernels and hosts), plus how much longer it ran (slower links, contention)
// so that slack = W_ideal − δsync − δkernel exactly. Per bucket over the observations (samples × measured steps):
//   w_ideal_us, delta_sync_us, delta_kernel_us   the means;   W_break = max(0, W_ideal − δsync − δkernel) of the means
//   break_probability                the fraction of observations with slack < 0: the collective outlasted the compute
// W_ideal < 0 is a window already broken without noise (DDP's last bucket always is: nothing is left to hide behind).
//
// Idle at the sync: per measured step, each rank's wait at its first gradient sync of the step for the
// last rank to arrive there, max_r' a_r' − a_r over the world's ranks (a_r: when rank r's NCCL kernel of that
// collective became resident), averaged over the ranks; AccumulationIdle has the mean and sample variance of that
// over the observations. With gradient accumulation (no_sync) the ranks drift apart over the micro-batches before it.
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/metrics/Results.hpp"

namespace stepsim {

// What one run's timeline says about its gradient syncs, measured steps only.
struct SyncObservation {
    struct Sync {
        int group = 0, index = 0, step = 0;
        CollectiveKind kind = CollectiveKind::all_reduce;
        double bytes = 0.0;
        double first_us = 0.0, start_us = 0.0, end_us = 0.0, compute_end_us = 0.0;
    };
    std::vector<Sync> syncs;
    std::vector<double> sync_idle_ms;  // per measured step (empty with one rank)
};

SyncObservation observeSyncs(const Timeline& timeline, const Workload& workload);

// One window per sync collective of the reference's first measured step, in the order they became ready there; a
// collective the samples do not have is left out. `samples` must not be empty.
std::vector<OverlapWindow> overlapWindows(const SyncObservation& reference, const std::vector<SyncObservation>& samples,
                                          const Workload& workload);

// The idle at the sync over the samples' measured steps; empty with one rank.
std::optional<AccumulationIdle> accumulationIdle(const std::vector<SyncObservation>& samples, int grad_accum, int ranks);

}  // namespace stepsim
