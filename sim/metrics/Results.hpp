#pragma once
// What a run measured: every result key of docs/scenario.md ("Results"), plus the per-rank and per-step detail
// behind them. `computeMetrics` (Metrics.hpp) fills it from a Timeline; reports (sim/report/) only read it.
//
// Units are in the field names and match the JSON keys. Values are per training step (one optimizer step),
// averaged over the simulated steps after the first (step 0 when only one step ran), per GPU unless the
// name says otherwise. Metrics.hpp has the formulas.
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

struct Results {
    double step_time_ms = 0.0;
    std::optional<double> step_time_ms_p50;  // filled by aggregateSamples when sim.samples > 1
    std::optional<double> step_time_ms_p99;
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

    std::optional<double> peak_memory_gib;   // per GPU; filled by the caller from the memory model

    std::vector<std::string> warnings;
    std::vector<RankResults> per_rank;
    std::vector<StepResults> per_step;
};

}  // namespace stepsim
