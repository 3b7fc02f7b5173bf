#include "sim/report/TextSummary.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <sstream>
#include <string>


#include <fmt/format.h>

namespace stepsim {

std::string profileLine(const HardwareProfile& p) {
    std::string origin = p.source;
    const std::string fit = "stepsim calibrate fit";
    if (p.source.rfind(fit, 0) == 0) {
        std::istringstream words(p.source.substr(fit.size()));
        std::string word, manifest;
        int raw_files = 0;
        while (words >> word) {
            if (word == "--manifest") words >> manifest;
            else if (word.ends_with(".jsonl")) ++raw_files;
        }
        const std::filesystem::path dir = std::filesystem::path(p.file).parent_path();
        origin = "fitted by " + fit + " from " +
                 (manifest.empty() ? fmt::format("{} raw files", raw_files) : (dir / manifest).lexically_normal().string());
    }
    std::string line = fmt::format("profile: {} ({}), {}", p.name, p.gpu.model, origin);
    if (p.builtin) line += ", built in";
    else if (!p.file.empty()) line += ", " + p.file;
    return line + "\n";
}

std::string textSummary(const Results& r, const std::string& name) {
    fmt::memory_buffer b;
    auto out = std::back_inserter(b);
    // label, value, unit, note
    const auto line = [&](std::string_view label, double value, int decimals, std::string_view unit,
                          const std::string& note = {}) {
        std::string l = fmt::format("  {:<16}{:>14.{}f} {:<10}{}", label, value, decimals, unit, note);
        l.erase(l.find_last_not_of(' ') + 1);
        fmt::format_to(out, "{}\n", l);
    };

    fmt::format_to(out, "{}\n", name);
    std::string spread;
    if (r.step_time_ms_p50 && r.step_time_ms_p99)
        spread = fmt::format("± {:.3f} (95%, the noise band); p50 {:.3f}, p90 {:.3f}, p99 {:.3f}, sd {:.3f} over {} "
                             "samples' steps",
                             r.noise_band_ms.value_or(0.0), *r.step_time_ms_p50, r.step_time_ms_p90.value_or(0.0),
                             *r.step_time_ms_p99, r.step_time_ms_std.value_or(0.0), r.samples);
    line("step time", r.step_time_ms, 3, "ms", spread);
    line("throughput", r.tokens_per_s, 0, "tokens/s", fmt::format("{:.0f} per GPU", r.tokens_per_s_per_gpu));
    line("", r.samples_per_s, 2, "samples/s");
    line("MFU", 100.0 * r.mfu, 1, "%");
    fmt::format_to(out, "  per GPU and step\n");
    line("compute busy", r.compute_busy_ms, 3, "ms", fmt::format("copies {:.3f} ms", r.copy_busy_ms));
    line("comm busy", r.comm_busy_ms, 3, "ms");
    line("overlap", r.overlap_ms, 3, "ms", fmt::format("ratio {:.3f}", r.overlap_ratio));
    const auto spreadNote = [](const std::optional<Spread>& s) {
        return s ? fmt::format("p50 {:.3f}, p99 {:.3f}, sd {:.3f}", s->p50, s->p99, s->std) : std::string{};
    };
    line("exposed comm", r.exposed_comm_ms, 3, "ms", spreadNote(r.exposed_comm_ms_spread));
    line("idle", r.idle_ms, 3, "ms", spreadNote(r.idle_ms_spread));
    line("GPU busy", r.gpu_busy_pct, 1, "%");
    line("kernel gap (mean)", r.kernel_gap_us_mean, 1, "us");
    if (r.sm_clock_mhz) line("SM clock", *r.sm_clock_mhz, 0, "MHz", "at the power limit the step's load sets");
    if (r.pp_bubble_ratio) line("pipeline bubble", 100 * *r.pp_bubble_ratio, 1, "%", "of the pipeline's span, per stage");
    const CollectiveResults& c = r.collectives;
    line("collectives", c.count, 1, "per step", fmt::format("{:.3f} GB", c.bytes * 1e-9));
    line("algbw", c.algbw_GBps, 1, "GB/s");
    line("busbw", c.busbw_GBps, 1, "GB/s");
    line("barrier wait", c.barrier_wait_ms_mean, 3, "ms", fmt::format("mean, max {:.3f} ms", c.barrier_wait_ms_max));
    line("kernels", r.kernels_per_step, 0, "per step");
    if (r.compile_time_s)
        line("compile", *r.compile_time_s, 1, "s", fmt::format("first step only; {} graphs per step",
                                                               r.compiled_graphs_per_step.value_or(0)));
    if (r.accumulation_idle)
        line("idle at sync", r.accumulation_idle->mean_ms, 3, "ms",
             fmt::format("mean wait at the first gradient sync; variance {:.4f} ms^2 (grad_accum {})",
                         r.accumulation_idle->var_ms2, r.accumulation_idle->grad_accum));
    if (!r.overlap_windows.empty()) {
        // How many break at all, then the three most likely to break, the narrowest window left first.
        std::vector<const OverlapWindow*> w;
        for (const OverlapWindow& x : r.overlap_windows) w.push_back(&x);
        std::stable_sort(w.begin(), w.end(), [](const OverlapWindow* a, const OverlapWindow* b) {
            return a->break_probability != b->break_probability ? a->break_probability > b->break_probability
                                                                : a->w_break_us < b->w_break_us;
        });
        const auto breaking =
            std::count_if(w.begin(), w.end(), [](const OverlapWindow* x) { return x->break_probability > 0; });
        fmt::format_to(out, "  overlap windows: {} of {} gradient syncs break in some samples' steps\n", breaking,
                       w.size());
        for (std::size_t i = 0; i < std::min<std::size_t>(3, w.size()); ++i)
            fmt::format_to(out,
                           "    {} #{} ({:.1f} MB): W_ideal {:.1f} us, dsync {:.1f}, dkernel {:.1f}, W_break {:.1f} us, "
                           "breaks {:.0f}%\n",
                           w[i]->group, w[i]->index, w[i]->bytes * 1e-6, w[i]->w_ideal_us, w[i]->delta_sync_us,
                           w[i]->delta_kernel_us, w[i]->w_break_us, 100.0 * w[i]->break_probability);
    }
    if (r.peak_memory_gib)
        line("peak memory", *r.peak_memory_gib, 2, "GiB",
             r.memory_gib ? fmt::format("params {:.2f}, grads {:.2f}, optimizer {:.2f}, activations {:.2f}, "
                                        "buffers {:.2f}",
                                        r.memory_gib->params, r.memory_gib->grads, r.memory_gib->optimizer,
                                        r.memory_gib->activations, r.memory_gib->buffers)
                          : std::string());
    else
        fmt::format_to(out, "  {:<16}{:>14}\n", "peak memory", "n/a");
    if (r.checkpoint)
        line("checkpoint", r.checkpoint->blocking_ms, 1, "ms",
             fmt::format("blocking each, {:.1f} ms per step; write {:.1f} ms", r.checkpoint->ms_per_step,
                         r.checkpoint->write_ms));
    if (r.input) {
        int h2d = 0, idle = 0;
        for (const StepIoClass& s : r.input->steps) h2d += s.h2d_bound, idle += s.compute_idle;
        line("H2D copies", r.input->h2d_ms, 3, "ms",
             fmt::format("{:.1f} GB/s; steps H2D-bound {}, compute-idle {} of {}", r.input->h2d_GBps, h2d, idle,
                         r.input->steps.size()));
    }
    if (!r.breakdown_ms.empty()) {
        fmt::format_to(out, "  where the step goes (the slowest rank's window; parts sum to the step)\n");
        for (const BreakdownPart& p : r.breakdown_ms) {
            if (p.ms <= 0.0) continue;
            fmt::format_to(out, "    {:<22}{:>10.3f} ms  {:5.1f}%\n", p.part, p.ms,
                           r.step_time_ms > 0 ? 100.0 * p.ms / r.step_time_ms : 0.0);
        }
    }
    if (!r.advice.empty()) {
        fmt::format_to(out, "  what to change (each a what-if run of the same scenario and seed, best first)\n");
        for (const AdviceItem& a : r.advice)
            fmt::format_to(out, "    {}={}: {:+.1f}% tokens/s ({:.3f} ms a step); {}; for {}\n", a.key, a.value,
                           a.gain_pct, a.step_time_ms, a.cost, a.reason);
    }
    if (r.warnings.empty()) {
        fmt::format_to(out, "  no warnings\n");
    } else {
        fmt::format_to(out, "  warnings ({})\n", r.warnings.size());
        for (const std::string& w : r.warnings) fmt::format_to(out, "    - {}\n", w);
    }
    return fmt::to_string(b);
}

}  // namespace stepsim
