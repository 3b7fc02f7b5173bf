#include "sim/report/JsonReport.hpp"

#include <algorithm>

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace stepsim {
namespace {

// A result number: 12 significant digits (far below any model's accuracy, far above the printing noise of
// summed doubles), so 0.009000000000000001 prints as 0.009; non-finite numbers become null.
nlohmann::ordered_json num(double x) {
    if (!std::isfinite(x)) return nullptr;
    if (x == 0.0) return 0.0;
    return std::strtod(fmt::format("{:.12g}", x).c_str(), nullptr);
}

nlohmann::ordered_json num(const std::optional<double>& x) { return x ? num(*x) : nlohmann::ordered_json(nullptr); }

}  // namespace

nlohmann::ordered_json toJson(const Results& r, const std::string& scenario_name, std::optional<double> gpu_memory_gib) {
    using nlohmann::ordered_json;
    ordered_json j;
    j["name"] = scenario_name;
    j["step_time_ms"] = num(r.step_time_ms);
    if (r.step_time_ms_p50 || r.step_time_ms_p99) {
        j["samples"] = r.samples;
        j["step_time_ms_p50"] = num(r.step_time_ms_p50);
        j["step_time_ms_p99"] = num(r.step_time_ms_p99);
    }
    if (r.step_time_ms_host_range)
        j["step_time_ms_host_range"] = {num(r.step_time_ms_host_range->first), num(r.step_time_ms_host_range->second)};
    j["tokens_per_s"] = num(r.tokens_per_s);
    j["tokens_per_s_per_gpu"] = num(r.tokens_per_s_per_gpu);
    j["samples_per_s"] = num(r.samples_per_s);
    j["mfu"] = num(r.mfu);
    j["compute_busy_ms"] = num(r.compute_busy_ms);
    j["copy_busy_ms"] = num(r.copy_busy_ms);
    j["comm_busy_ms"] = num(r.comm_busy_ms);
    j["overlap_ms"] = num(r.overlap_ms);
    j["overlap_ratio"] = num(r.overlap_ratio);
    j["exposed_comm_ms"] = num(r.exposed_comm_ms);
    j["idle_ms"] = num(r.idle_ms);
    j["gpu_busy_pct"] = num(r.gpu_busy_pct);
    j["kernel_gap_us_mean"] = num(r.kernel_gap_us_mean);
    j["sm_clock_mhz"] = num(r.sm_clock_mhz);

    ordered_json c;
    c["count"] = num(r.collectives.count);
    c["bytes"] = num(r.collectives.bytes);
    c["algbw_GBps"] = num(r.collectives.algbw_GBps);
    c["busbw_GBps"] = num(r.collectives.busbw_GBps);
    c["barrier_wait_ms_mean"] = num(r.collectives.barrier_wait_ms_mean);
    c["barrier_wait_ms_max"] = num(r.collectives.barrier_wait_ms_max);
    j["collectives"] = std::move(c);

    j["peak_memory_gib"] = num(r.peak_memory_gib);
    if (gpu_memory_gib && r.peak_memory_gib) {
        j["fits_memory"] = *r.peak_memory_gib <= *gpu_memory_gib;
        j["memory_shortfall_gib"] = num(std::max(0.0, *r.peak_memory_gib - *gpu_memory_gib));
    }
    j["warnings"] = ordered_json::array();
    for (const std::string& w : r.warnings) j["warnings"].push_back(w);

    j["per_rank"] = ordered_json::array();
    for (const RankResults& x : r.per_rank) {
        ordered_json e;
        e["rank"] = x.rank;
        e["step_time_ms"] = num(x.step_time_ms);
        e["compute_busy_ms"] = num(x.compute_busy_ms);
        e["copy_busy_ms"] = num(x.copy_busy_ms);
        e["comm_busy_ms"] = num(x.comm_busy_ms);
        e["overlap_ms"] = num(x.overlap_ms);
        e["overlap_ratio"] = num(x.overlap_ratio);
        e["exposed_comm_ms"] = num(x.exposed_comm_ms);
        e["idle_ms"] = num(x.idle_ms);
        j["per_rank"].push_back(std::move(e));
    }
    j["per_step"] = ordered_json::array();
    for (const StepResults& x : r.per_step) {
        ordered_json e;
        e["step"] = x.step;
        e["step_time_ms"] = num(x.step_time_ms);
        e["compute_busy_ms"] = num(x.compute_busy_ms);
        e["comm_busy_ms"] = num(x.comm_busy_ms);
        e["overlap_ms"] = num(x.overlap_ms);
        e["exposed_comm_ms"] = num(x.exposed_comm_ms);
        e["idle_ms"] = num(x.idle_ms);
        j["per_step"].push_back(std::move(e));
    }
    return j;
}

}  // namespace stepsim
