#include "sim/report/JsonReport.hpp"

namespace stepsim {

nlohmann::ordered_json toJson(const Results& r, const std::string& scenario_name) {
    using nlohmann::ordered_json;
    ordered_json j;
    j["name"] = scenario_name;
    j["step_time_ms"] = r.step_time_ms;
    if (r.step_time_ms_p50 || r.step_time_ms_p99) {
        j["samples"] = r.samples;
        j["step_time_ms_p50"] = r.step_time_ms_p50 ? ordered_json(*r.step_time_ms_p50) : ordered_json(nullptr);
        j["step_time_ms_p99"] = r.step_time_ms_p99 ? ordered_json(*r.step_time_ms_p99) : ordered_json(nullptr);
    }
    j["tokens_per_s"] = r.tokens_per_s;
    j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
    j["samples_per_s"] = r.samples_per_s;
    j["mfu"] = r.mfu;
    j["compute_busy_ms"] = r.compute_busy_ms;
    j["copy_busy_ms"] = r.copy_busy_ms;
    j["comm_busy_ms"] = r.comm_busy_ms;
    j["overlap_ms"] = r.overlap_ms;
    j["overlap_ratio"] = r.overlap_ratio;
    j["exposed_comm_ms"] = r.exposed_comm_ms;
    j["idle_ms"] = r.idle_ms;
    j["gpu_busy_pct"] = r.gpu_busy_pct;

    ordered_json c;
    c["count"] = r.collectives.count;
    c["bytes"] = r.collectives.bytes;
    c["algbw_GBps"] = r.collectives.algbw_GBps;
    c["busbw_GBps"] = r.collectives.busbw_GBps;
    c["barrier_wait_ms_mean"] = r.collectives.barrier_wait_ms_mean;
    c["barrier_wait_ms_max"] = r.collectives.barrier_wait_ms_max;
    j["collectives"] = std::move(c);

    j["peak_memory_gib"] = r.peak_memory_gib ? ordered_json(*r.peak_memory_gib) : ordered_json(nullptr);
    j["warnings"] = ordered_json::array();
    for (const std::string& w : r.warnings) j["warnings"].push_back(w);

    j["per_rank"] = ordered_json::array();
    for (const RankResults& x : r.per_rank) {
        ordered_json e;
        e["rank"] = x.rank;
        e["step_time_ms"] = x.step_time_ms;
        e["compute_busy_ms"] = x.compute_busy_ms;
        e["copy_busy_ms"] = x.copy_busy_ms;
        e["comm_busy_ms"] = x.comm_busy_ms;
        e["overlap_ms"] = x.overlap_ms;
        e["overlap_ratio"] = x.overlap_ratio;
        e["exposed_comm_ms"] = x.exposed_comm_ms;
        e["idle_ms"] = x.idle_ms;
        j["per_rank"].push_back(std::move(e));
    }
    j["per_step"] = ordered_json::array();
    for (const StepResults& x : r.per_step) {
        ordered_json e;
        e["step"] = x.step;
        e["step_time_ms"] = x.step_time_ms;
        e["compute_busy_ms"] = x.compute_busy_ms;
        e["comm_busy_ms"] = x.comm_busy_ms;
        e["overlap_ms"] = x.overlap_ms;
        e["exposed_comm_ms"] = x.exposed_comm_ms;
        e["idle_ms"] = x.idle_ms;
        j["per_step"].push_back(std::move(e));
    }
    return j;
}

}  // namespace stepsim
