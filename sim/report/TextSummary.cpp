#include "sim/report/TextSummary.hpp"

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
        spread = fmt::format("p50 {:.3f}, p99 {:.3f} over {} samples", *r.step_time_ms_p50, *r.step_time_ms_p99,
                             r.samples);
    line("step time", r.step_time_ms, 3, "ms", spread);
    line("throughput", r.tokens_per_s, 0, "tokens/s", fmt::format("{:.0f} per GPU", r.tokens_per_s_per_gpu));
    line("", r.samples_per_s, 2, "samples/s");
    line("MFU", 100.0 * r.mfu, 1, "%");
    fmt::format_to(out, "  per GPU and step\n");
    line("compute busy", r.compute_busy_ms, 3, "ms", fmt::format("copies {:.3f} ms", r.copy_busy_ms));
    line("comm busy", r.comm_busy_ms, 3, "ms");
    line("overlap", r.overlap_ms, 3, "ms", fmt::format("ratio {:.3f}", r.overlap_ratio));
    line("exposed comm", r.exposed_comm_ms, 3, "ms");
    line("idle", r.idle_ms, 3, "ms");
    line("GPU busy", r.gpu_busy_pct, 1, "%");
    line("kernel gap (mean)", r.kernel_gap_us_mean, 1, "us");
    if (r.sm_clock_mhz) line("SM clock", *r.sm_clock_mhz, 0, "MHz", "at the power limit the step's load sets");
    const CollectiveResults& c = r.collectives;
    line("collectives", c.count, 1, "per step", fmt::format("{:.3f} GB", c.bytes * 1e-9));
    line("algbw", c.algbw_GBps, 1, "GB/s");
    line("busbw", c.busbw_GBps, 1, "GB/s");
    line("barrier wait", c.barrier_wait_ms_mean, 3, "ms", fmt::format("mean, max {:.3f} ms", c.barrier_wait_ms_max));
    if (r.peak_memory_gib)
        line("peak memory", *r.peak_memory_gib, 2, "GiB");
    else
        fmt::format_to(out, "  {:<16}{:>14}\n", "peak memory", "n/a");
    if (r.warnings.empty()) {
        fmt::format_to(out, "  no warnings\n");
    } else {
        fmt::format_to(out, "  warnings ({})\n", r.warnings.size());
        for (const std::string& w : r.warnings) fmt::format_to(out, "    - {}\n", w);
    }
    return fmt::to_string(b);
}

}  // namespace stepsim
