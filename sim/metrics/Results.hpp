#pragma once
// What a run measured: every result key of docs/scenario.md ("Results"), plus the per-rank and per-step detail
// behind them. `computeMetrics` (Metrics.hpp) fills it from a Timeline; reports (sim/report/) only read it.
//
// Units are in the field names and match the JSON keys. Values are per training step (one optimizer step),
// averaged over the measured steps (the steps after the first once the host's head start has decayed,
// Metrics.hpp's steadyWindow; step 0 when only one step ran), per GPU unless the name says otherwise. Metrics.hpp
// has the formulas.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/IoResults.hpp"

namespace stepsim {

// One rank's breakdown, averaged over the measured steps.
struct RankResults {
    int rank = 0;
    double step_time_ms = 0.0;      // this rank's own step durations
    double compute_busy_ms = 0.0;   // |T_comp|: every non-comm GPU span (copies included)
    double copy_busy_ms = 0.0;      // |union of copy spans| (already inside compute_busy_ms)
    double comm_busy_ms = 0.0;      // |T_comm|
    double overlap_ms = 0.0;        // |T_comp ∩ T_comm|
    double overlap_ratio = 0.0;     // mean over steps of overlap / max(|T_comp|, |T_comm|)
    double exposed_comm_ms = 0.0;   // |T_comm \ T_comp|
    double idle_ms = 0.0;           // step − |T_comp ∪ T_comm|
};

// One step, every step including the first: its time (slowest rank) and the mean over ranks of the rest.
struct StepResults {
    int step = 0;
    double step_time_ms = 0.0;      // max over ranks of that rank's step duration
    double compute_busy_ms = 0.0;
    double comm_busy_ms = 0.0;
    double overlap_ms = 0.0;
    double exposed_comm_ms = 0.0;
    double idle_ms = 0.0;
};

// Collectives per step and per GPU (the collective instances a rank is a member of), with achieved
// bandwidths in the nccl-tests convention (BusBandwidth.hpp); GB = 1e9 bytes.
struct CollectiveResults {
    double count = 0.0;               // collectives per step per GPU
    double bytes = 0.0;               // Σ S (nccl-tests size) per step per GPU
    double algbw_GBps = 0.0;          // Σ S / Σ t over the measured instances, t = end − start
    double busbw_GBps = 0.0;          // Σ S·factor(kind, n) / Σ t
    double barrier_wait_ms_mean = 0.0;  // mean of (start − first_arrival) over the measured instances
    double barrier_wait_ms_max = 0.0;   // its maximum
};

// The spread of a per-step result over the Monte-Carlo samples' measured steps (aggregateSamples, Metrics.hpp).
struct Spread {
    double p50 = 0.0, p90 = 0.0, p99 = 0.0, std = 0.0;
};

// Step times of the samples' measured steps in `counts.size()` equal bins from lo_ms, each bin_ms wide.
struct Histogram {
    double lo_ms = 0.0, bin_ms = 0.0;
    std::vector<int> counts;
};

// One gradient bucket's (DDP) or shard's (FSDP2) overlap window over the samples (OverlapWindows.hpp has the model).
struct OverlapWindow {
    std::string group;        // the process group's name
    int index = 0;            // the collective's position in its group within a step (DDP: the bucket, in order)
    std::string kind;         // all_reduce, reduce_scatter
    double bytes = 0.0;
    double w_ideal_us = 0.0;
    double delta_sync_us = 0.0;   // mean over the observations
    double delta_kernel_us = 0.0; // mean over the observations
    double w_break_us = 0.0;      // max(0, w_ideal − delta_sync − delta_kernel)
    double break_probability = 0.0;
    int observations = 0;         // samples × measured steps
};

// The ranks' wait at the step's first gradient sync for the last to arrive there (OverlapWindows.hpp).
struct AccumulationIdle {
    int grad_accum = 1, ranks = 1;
    double mean_ms = 0.0, var_ms2 = 0.0;
    int observations = 0;
};

// The peak memory per GPU by what holds it (GiB), from the memory model (sim/workload/MemoryEstimate.hpp):
// params (the parameters, autocast's cast copies of the Linear weights, FSDP's gathered parameters), grads, optimizer
// (its state), activations (saved for backward, and the loss's logits), buffers (communication buckets and a comm
// hook's state). The terms sum to peak_memory_gib; they are those alive at the phase of the step where the peak falls
// (`phase`: loss_backward, blocks_backward_start, backward_end or optimizer_step; MemoryEstimate.hpp).
struct MemoryBreakdown {
    double params = 0.0, grads = 0.0, optimizer = 0.0, activations = 0.0, buffers = 0.0;
    std::string phase;
    double sum() const { return params + grads + optimizer + activations + buffers; }
};

// One part of the step's breakdown (Breakdown.hpp): its name (compute.gemm, comm.dp, host_bound, ...) and its mean
// time over the measured steps (ms). The parts of a step sum to step_time_ms.
struct BreakdownPart {
    std::string part;
    double ms = 0.0;
};

// One knob the advice tried (sim/run/Advice.hpp): `key` set to `value` in a what-if run of the same scenario and seed,
// its gain in throughput over the scenario as given (percent, positive: faster), and what it costs.
struct AdviceItem {
    std::string key, value;
    std::vector<std::string> sets;  // every override of the what-if run (key=value), `key`'s first
    std::string reason;            // the breakdown's part that suggested it
    double gain_pct = 0.0;         // 100 · (tokens_per_s / the scenario's − 1)
    double step_time_ms = 0.0;     // the what-if run's
    std::optional<double> peak_memory_gib, memory_delta_gib;
    std::optional<double> compile_time_s;  // the first step's compile time, when the knob compiles
    bool fits_memory = true;
    std::string cost;              // in words: memory, compile time, tokens per step
};

struct Results {
    // Pipeline bubble (parallel.pp > 1): per measured step, the window W from the first forward or backward kernel
    // of any rank to the last one's end; per rank 1 − |its forward and backward compute and its own collectives
    // (tensor parallelism's, FSDP's: every one but the pipeline's send/recv) in W| / |W|; the mean over ranks and
    // steps. With uniform stages and free transfers it is (p−1)/(m+p−1) under 1F1B; stages of unequal work (the
    // embedding on the first, the LM head and loss on the last, layers split unevenly) and the transfers add to it
    // (docs/parallelism.md, "The bubble").
    std::optional<double> pp_bubble_ratio;
    double step_time_ms = 0.0;
    std::optional<double> step_time_ms_p50;  // filled by aggregateSamples when sim.samples > 1
    std::optional<double> step_time_ms_p90;
    std::optional<double> step_time_ms_p99;
    std::optional<double> step_time_ms_std;
    // The noise band of step_time_ms (sim.samples > 1): the half-width of its 95% interval from the samples,
    // 1.96 · sd(the samples' step times) / √samples. Two runs of the same seed share their draws (common random
    // numbers), so their difference carries less noise than this; a difference inside it is noise.
    std::optional<double> noise_band_ms;
    std::optional<Spread> exposed_comm_ms_spread;  // exposed_comm_ms_p50/p90/p99/std in --json
    std::optional<Spread> idle_ms_spread;          // idle_ms_p50/p90/p99/std
    std::optional<Histogram> step_time_ms_histogram;
    std::vector<OverlapWindow> overlap_windows;        // filled by the run layer (simulate)
    std::optional<AccumulationIdle> accumulation_idle; // filled by the run layer when ranks > 1
    int samples = 1;                         // Monte-Carlo samples behind these numbers
    // A host-bound step's time with the host faster and slower by the profile's spread (Simulation::host_range_ms)
    std::optional<std::pair<double, double>> step_time_ms_host_range;

    double tokens_per_s = 0.0;               // all GPUs
    double tokens_per_s_per_gpu = 0.0;
    double samples_per_s = 0.0;              // all GPUs
    double mfu = 0.0;                        // fraction (0..1), not percent

    double compute_busy_ms = 0.0;
    double copy_busy_ms = 0.0;
    double comm_busy_ms = 0.0;
    double overlap_ms = 0.0;
    double overlap_ratio = 0.0;
    double exposed_comm_ms = 0.0;
    double idle_ms = 0.0;
    double gpu_busy_pct = 0.0;               // 100 · |T_comp ∪ T_comm| / step, mean over steps and ranks
    double kernel_gap_us_mean = 0.0;         // mean idle interval between the GPU's kernels (Metrics.hpp)
    // The SM clock the steps ran at under the power limit (MHz), mean over the measured steps and the ranks; absent
    // where the profile has no power model.
    std::optional<double> sm_clock_mhz;

    CollectiveResults collectives;
    // Device kernels (collectives included) rank 0 launches in the last simulated step (the profiler's count).
    int kernels_per_step = 0;
    // torch.compile: the first step's compile time, apart from the steps (which run compiled), and the compiled
    // graphs called per step.
    std::optional<double> compile_time_s;
    std::optional<int> compiled_graphs_per_step;

    std::optional<double> peak_memory_gib;   // per GPU; filled by the caller from the memory model
    std::optional<MemoryBreakdown> memory_gib;  // its terms; filled with it

    std::optional<InputResults> input;            // a data_loader section (IoMetrics.hpp)
    std::optional<CheckpointResults> checkpoint;  // checkpoint.interval_steps > 0
    std::optional<LinkUtilization> link_utilization;  // when the engine recorded link usage

    // The step split into parts that sum to step_time_ms (Breakdown.hpp has the attribution and its order).
    std::vector<BreakdownPart> breakdown_ms;
    // The memory model's terms at each phase of the step (MemoryEstimate.hpp's four phases, in step order; filled with
    // peak_memory_gib where the estimate has phases).
    std::vector<MemoryBreakdown> memory_phases_gib;
    // The knobs a what-if run found to help, best first (sim/run/Advice.hpp; filled only when asked).
    std::vector<AdviceItem> advice;

    std::vector<std::string> warnings;
    // The measured steps are [measured_from_step, steps) (Metrics.hpp's steadyWindow); steps_to_steady > 0: the run
    // ended with the host's head start still decaying, about that many more steps would reach the steady state.
    // With several samples: the latest first step and the most steps of any sample.
    int measured_from_step = 1;
    int steps_to_steady = 0;
    std::vector<RankResults> per_rank;
    std::vector<StepResults> per_step;
};

}  // namespace stepsim
