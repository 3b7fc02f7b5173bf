#include "sim/report/JsonReport.hpp"

#include <algorithm>

#include <cmath>
#include <cstdlib>
#include <utility>

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


// The result's optional sections beyond the step's figures: checkpoints, the input pipeline, links, overlap
// windows, the idle at the accumulation boundary, the breakdown, memory by phase, the advice.
void addSections(nlohmann::ordered_json& j, const Results& r) {
    using nlohmann::ordered_json;
    if (r.checkpoint) {
        j["checkpoint_blocking_ms"] = num(r.checkpoint->blocking_ms);
        j["checkpoint_ms_per_step"] = num(r.checkpoint->ms_per_step);
        j["checkpoint"] = {{"count", r.checkpoint->count}, {"blocking_ms", num(r.checkpoint->blocking_ms)},
                           {"ms_per_step", num(r.checkpoint->ms_per_step)}, {"write_ms", num(r.checkpoint->write_ms)},
                           {"staged_bytes", num(r.checkpoint->staged_bytes)},
                           {"written_bytes", num(r.checkpoint->written_bytes)}};
    }
    if (r.input) {
        ordered_json in;
        in["h2d_ms"] = num(r.input->h2d_ms);
        in["h2d_GBps"] = num(r.input->h2d_GBps);
        in["steps"] = ordered_json::array();
        for (const StepIoClass& s : r.input->steps)
            in["steps"].push_back({{"step", s.step}, {"h2d_bound", s.h2d_bound}, {"compute_idle", s.compute_idle},
                                   {"max_h2d_us", num(s.max_h2d_us)}, {"max_kernel_gap_us", num(s.max_kernel_gap_us)}});
        j["input_pipeline"] = std::move(in);
    }
    if (r.link_utilization) {
        const LinkUtilization& u = *r.link_utilization;
        ordered_json lu;
        lu["bin_ms"] = num(u.bin_ms);
        lu["bins"] = u.bins;
        lu["links_total"] = u.links_total;
        lu["links"] = ordered_json::array();
        for (const LinkSeries& s : u.links) {
            ordered_json e{{"name", s.name}, {"kind", s.kind}, {"capacity_GBps", num(s.capacity_GBps)},
                           {"peak", num(s.peak)}, {"util", ordered_json::array()}};
            for (double x : s.util) e["util"].push_back(num(x));
            lu["links"].push_back(std::move(e));
        }
        j["link_utilization"] = std::move(lu);
    }
    if (!r.overlap_windows.empty()) {
        j["overlap_windows"] = ordered_json::array();
        for (const OverlapWindow& w : r.overlap_windows) {
            ordered_json e;
            e["group"] = w.group;
            e["index"] = w.index;
            e["kind"] = w.kind;
            e["bytes"] = num(w.bytes);
            e["w_ideal_us"] = num(w.w_ideal_us);
            e["delta_sync_us"] = num(w.delta_sync_us);
            e["delta_kernel_us"] = num(w.delta_kernel_us);
            e["w_break_us"] = num(w.w_break_us);
            e["break_probability"] = num(w.break_probability);
            e["observations"] = w.observations;
            j["overlap_windows"].push_back(std::move(e));
        }
    }
    if (r.accumulation_idle) {
        const AccumulationIdle& a = *r.accumulation_idle;
        j["accumulation_idle"] = {{"grad_accum", a.grad_accum}, {"ranks", a.ranks}, {"mean_ms", num(a.mean_ms)},
                                  {"var_ms2", num(a.var_ms2)}, {"observations", a.observations}};
    }
    if (!r.breakdown_ms.empty()) {
        ordered_json b = ordered_json::object();
        for (const BreakdownPart& p : r.breakdown_ms) b[p.part] = num(p.ms);
        j["breakdown_ms"] = std::move(b);
    }
    if (!r.memory_phases_gib.empty()) {
        ordered_json phases = ordered_json::array();
        for (const MemoryBreakdown& m : r.memory_phases_gib)
            phases.push_back({{"phase", m.phase}, {"params", num(m.params)}, {"grads", num(m.grads)},
                              {"optimizer", num(m.optimizer)}, {"activations", num(m.activations)},
                              {"buffers", num(m.buffers)}, {"total", num(m.sum())}});
        j["memory_phases_gib"] = std::move(phases);
    }
    if (!r.advice.empty()) {
        ordered_json advice = ordered_json::array();
        for (const AdviceItem& a : r.advice)
            advice.push_back({{"key", a.key}, {"value", a.value}, {"gain_pct", num(a.gain_pct)}, {"cost", a.cost},
                              {"reason", a.reason}, {"step_time_ms", num(a.step_time_ms)},
                              {"peak_memory_gib", num(a.peak_memory_gib)},
                              {"memory_delta_gib", num(a.memory_delta_gib)},
                              {"compile_time_s", num(a.compile_time_s)}, {"fits_memory", a.fits_memory}});
        j["advice"] = std::move(advice);
    }
}

// Each rank's and each measured step's figures.
void addPerRankAndStep(nlohmann::ordered_json& j, const Results& r) {
    using nlohmann::ordered_json;
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
}

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
        j["step_time_ms_p90"] = num(r.step_time_ms_p90);
        j["step_time_ms_std"] = num(r.step_time_ms_std);
        j["noise_band_ms"] = num(r.noise_band_ms);
        for (const auto& [key, spread] : {std::pair{"exposed_comm_ms", &r.exposed_comm_ms_spread},
                                          std::pair{"idle_ms", &r.idle_ms_spread}})
            if (*spread) {
                j[fmt::format("{}_p50", key)] = num((*spread)->p50);
                j[fmt::format("{}_p90", key)] = num((*spread)->p90);
                j[fmt::format("{}_p99", key)] = num((*spread)->p99);
                j[fmt::format("{}_std", key)] = num((*spread)->std);
            }
        if (r.step_time_ms_histogram) {
            ordered_json h;
            h["lo_ms"] = num(r.step_time_ms_histogram->lo_ms);
            h["bin_ms"] = num(r.step_time_ms_histogram->bin_ms);
            h["counts"] = r.step_time_ms_histogram->counts;
            j["step_time_ms_histogram"] = std::move(h);
        }
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
    if (r.pp_bubble_ratio) j["pp_bubble_ratio"] = num(r.pp_bubble_ratio);

    ordered_json c;
    c["count"] = num(r.collectives.count);
    c["bytes"] = num(r.collectives.bytes);
    c["algbw_GBps"] = num(r.collectives.algbw_GBps);
    c["busbw_GBps"] = num(r.collectives.busbw_GBps);
    c["barrier_wait_ms_mean"] = num(r.collectives.barrier_wait_ms_mean);
    c["barrier_wait_ms_max"] = num(r.collectives.barrier_wait_ms_max);
    j["collectives"] = std::move(c);

    j["kernels_per_step"] = r.kernels_per_step;
    if (r.compile_time_s) j["compile_time_s"] = num(r.compile_time_s);
    if (r.compiled_graphs_per_step) j["compiled_graphs_per_step"] = *r.compiled_graphs_per_step;
    j["peak_memory_gib"] = num(r.peak_memory_gib);
    if (r.memory_gib)
        j["memory_gib"] = {{"params", num(r.memory_gib->params)}, {"grads", num(r.memory_gib->grads)},
                           {"optimizer", num(r.memory_gib->optimizer)}, {"activations", num(r.memory_gib->activations)},
                           {"buffers", num(r.memory_gib->buffers)}};
    if (r.memory_gib && !r.memory_gib->phase.empty()) j["memory_peak_phase"] = r.memory_gib->phase;
    if (gpu_memory_gib && r.peak_memory_gib) {
        j["fits_memory"] = *r.peak_memory_gib <= *gpu_memory_gib;
        j["memory_shortfall_gib"] = num(std::max(0.0, *r.peak_memory_gib - *gpu_memory_gib));
    }
    addSections(j, r);
    j["warnings"] = ordered_json::array();
    for (const std::string& w : r.warnings) j["warnings"].push_back(w);

    addPerRankAndStep(j, r);
    return j;
}

}  // namespace stepsim
