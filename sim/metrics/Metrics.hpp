#pragma once
// Timeline → Results: the metrics docs/architecture.md ("Metrics") describes and docs/scenario.md ("Results") lists.
//
// Per rank r and step s, the step's window is W = [b(r,s−1), b(r,s)), b = Timeline::step_end, b(r,−1) = 0.
// Every GPU span of the rank is clipped to W, then
//   T_comp = ∪ spans with cls ≠ comm (kernels, copies, ...)   T_copy = ∪ spans with cls = copy (⊂ T_comp)
//   T_comm = ∪ spans with cls = comm (NCCL collectives)
//   overlap       = |T_comp ∩ T_comm|
//   overlap_ratio = overlap / max(|T_comp|, |T_comm|)         (0 when both are empty)
//   exposed_comm  = |T_comm \ T_comp| = |T_comm| − overlap
//   idle          = |W| − |T_comp ∪ T_comm|
//   gpu_busy_pct  = 100 · |T_comp ∪ T_comm| / |W|
//   kernel_gap_us_mean = Σ idle / Σ holes over the measured windows of every rank, a hole a maximal interval of W
//                    outside T_comp ∪ T_comm (the mean gap between the GPU's kernels)
// A rank's value is the mean over the measured steps M = {f .. S−1} (steadyWindow below; M = {0} when only one step
// ran); the reported value is the mean over ranks of the ranks' values (overlap_ratio included: a mean of ratios).
//
//   step_time      = mean over s ∈ M of max over r of |W(r,s)|       (the slowest rank sets the pace)
//   tokens_per_s   = Workload::tokens_per_step · ranks / step_time;  tokens_per_s_per_gpu = … / ranks
//   samples_per_s  = Workload::samples_per_step · ranks / step_time
//   mfu            = Workload::model_flops_per_step / (step_time · peak_flops)   (PaLM, Chowdhery et al. 2022, B)
//
// Collectives (CollectiveRecord of steps in M; n = size of the record's group; nccl-tests' conventions):
//   count  = Σ n / (ranks · |M|)          collectives a GPU takes part in, per step
//   bytes  = Σ n·S / (ranks · |M|)        nccl-tests size S, per GPU per step
//   algbw  = Σ S / Σ t,  busbw = Σ S·factor(kind, n) / Σ t,   t = end − start   (BusBandwidth.hpp)
//   barrier wait = start − first_arrival: mean and max over the instances
//
// Intervals are boost::icl interval sets of integer picoseconds: building them is O(n log n) in the spans,
// clipping a window is O(log n + spans in it).
//
// A Timeline without ranks or steps, with ranks that ran different numbers of steps, a step that ends before
// it began (never finished), or collectives of an unknown group is a program error (std::invalid_argument),
// not bad user input.
#include <vector>

#include "sim/metrics/Results.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/base/Program.hpp"

namespace stepsim {

// The measured steps M = [first, S). Step 0 pays warm-up (allocator, NCCL communicator setup, DDP's first buckets) and
// is never steady. After it, a step is steady once the GPU no longer runs on work its host issued during an earlier
// step. The host issues its kernels ahead of the GPU. Where the GPU's work outlasts the host's issue (step 0's
// warm-up, a forward of large kernels), the host gains a head start of ℓ(r,s) = b(r,s) − e(r,s): rank r's GPU finishes
// step s at b (Timeline::step_end) that long after its host issued the step's end at e (Timeline::host_step_end). In a
// host-bound run that head start then shrinks by the host's excess every step, and such a step reads shorter than
// the host's issue time: its GPU window, b(s) − b(s−1), is shorter than its host's period, e(s) − e(s−1). The
// steady state is reached when ℓ stops shrinking: it stays (host-bound) or grows (GPU-bound).
//   a head-start step: s ≥ 1 with ℓ(r,s) < ℓ(r,s−1) − tol on some rank r,  tol = kSteadyTolerance · the mean window
//   first = 1 + the last head-start step (1 when there is none), at most S − 1
// A window read while the lead still shrinks by less than tol a step is within tol of the host's period, so the
// tolerance bounds the error of calling it steady. When the last step is a head-start step, the run ended before the
// steady state: `steps_to_steady` is then how many more steps the lead takes to vanish at the last step's rate, an
// upper bound (the lead shrinks at that rate and never below 0), max over ranks; the run layer simulates again with
// them (sim/run/Simulate.hpp). A timeline without host_step_end (built by hand) measures from step 1.
// Checkpoints every N = `checkpoint_interval` steps (CheckpointIo.hpp) fall in the windows of steps s = N, 2N, ...
// (the save follows step s − 1's end). A blocking save stops the host until the GPU has drained, so it ends any head
// start at once: such a step is no head-start step. The measured steps are then whole intervals, the last n·N steps
// with n = ⌊(S − first) / N⌋, so that the step time holds 1/N of a checkpoint (the checkpoint amortized over its
// interval); when fewer than N steady steps ran, M is the last N steps and steps_to_steady asks for the rest.
inline constexpr double kSteadyTolerance = 0.01;
struct SteadyWindow {
    int first = 0;            // M = [first, S)
    int steps_to_steady = 0;  // 0: steady by the last step
};
SteadyWindow steadyWindow(const Timeline& timeline, int checkpoint_interval = 0);

// peak_flops: the profile's dense peak for the compute dtype, FLOP/s per GPU (> 0).
// Results::peak_memory_gib is left empty: the caller fills it from the memory model.
Results computeMetrics(const Timeline& timeline, const Workload& workload, double peak_flops);

// Monte-Carlo runs (sim.samples > 1) → one Results: the arithmetic mean of every number (per_rank and
// per_step element by element; they must have the same shape), warnings merged in first-seen order without
// repeats, peak_memory_gib the mean of the samples that have it. With two or more samples, the spread is taken over
// the pooled measured steps of all samples (per_step M of each sample: N = samples · |M| values; a step's step time is
// its slowest rank's, its exposed comm and idle the mean over ranks): step_time_ms_p50/p90/p99, and for exposed comm
// and idle a Spread, by the nearest-rank percentile P_p = x_(⌈p/100 · N⌉) of the sorted values x_(1) ≤ … ≤ x_(N)
// (always one of the values), std the sample standard deviation √(Σ(x − x̄)² / (N − 1)); step_time_ms_histogram has
// kHistogramBins equal bins from the least to the greatest step time. One sample is returned as is; none is
// std::invalid_argument.
inline constexpr int kHistogramBins = 20;
Results aggregateSamples(const std::vector<Results>& samples);

// Each rank's host time issuing one measured step (ms): the sum of its ops' host costs (means, before jitter) over
// the measured steps M = [first, S) (Results::measured_from_step; S = the workload's steps), divided by |M|. Against
// the rank's step time it says how close the step is to being host-bound: the host does not wait for the GPU then, the
// GPU waits for it. `host_speed`: each rank's factor on its host costs (Engine's hostSpeedFactors; a rank it does not
// cover at 1).
std::vector<double> hostIssueMs(const Workload& workload, const std::vector<double>& host_speed = {}, int first = 1);

// The nearest-rank percentile above, p in (0, 100]; `values` must not be empty.
double nearestRankPercentile(std::vector<double> values, double p);

}  // namespace stepsim
