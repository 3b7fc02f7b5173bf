#pragma once
// Results → the stable JSON of docs/scenario.md ("Results"): units in the key names, fixed key order.
//
//   { "name", "step_time_ms", ["samples", "step_time_ms_p50", "step_time_ms_p99", ..., "noise_band_ms" when samples > 1:
//     1.96 sd / √samples of the samples' step times, the 95% half-width of step_time_ms],
//     "tokens_per_s", "tokens_per_s_per_gpu", "samples_per_s", "mfu",
//     "compute_busy_ms", "copy_busy_ms", "comm_busy_ms", "overlap_ms", "overlap_ratio",
//     "exposed_comm_ms", "idle_ms", "gpu_busy_pct",
//     "collectives": {"count", "bytes", "algbw_GBps", "busbw_GBps", "barrier_wait_ms_mean", "barrier_wait_ms_max"},
//     "peak_memory_gib" (null when the memory model did not run), ["memory_gib": {"params", "grads", "optimizer",
//     "activations", "buffers"} and "memory_peak_phase" with it], ["fits_memory", "memory_shortfall_gib" with the
//     GPU's memory],
//     "warnings": [...],
//     "per_rank": [{"rank", "step_time_ms", "compute_busy_ms", "copy_busy_ms", "comm_busy_ms", "overlap_ms",
//                   "overlap_ratio", "exposed_comm_ms", "idle_ms"}, ...],
//     "per_step": [{"step", "step_time_ms", "compute_busy_ms", "comm_busy_ms", "overlap_ms",
//                   "exposed_comm_ms", "idle_ms"}, ...] }
//
// Keys beyond docs/scenario.md's table (name, samples, copy_busy_ms, gpu_busy_pct, the barrier waits, per_rank,
// per_step) are additions, allowed by its "extend it freely". Numbers are rounded to 12 significant digits
// and written in nlohmann's shortest round-trip form (0.1 + 0.2 prints 0.3), so equal Results give
// byte-identical text and last-bit noise of summed doubles does not show; a non-finite number is null.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/metrics/Results.hpp"

namespace stepsim {

// With `gpu_memory_gib` (the profile's GPU memory) and a peak: "fits_memory" (peak ≤ the GPU's memory) and
// "memory_shortfall_gib" (how far over, 0 when it fits) follow "peak_memory_gib": out of memory is a result.
nlohmann::ordered_json toJson(const Results& results, const std::string& scenario_name,
                              std::optional<double> gpu_memory_gib = std::nullopt);

}  // namespace stepsim
