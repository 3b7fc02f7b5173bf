#pragma once
// One self-contained HTML page per run or sweep (`stepsim run --report DIR`, `stepsim sweep --report DIR`):
// DIR/report.html, inline CSS, SVG and a few lines of JavaScript, nothing fetched.
//
// A run's page: the configuration (every setting, scenarioSettings), the headline results, the breakdown of the step
// as a stacked bar (Results::breakdown_ms), the timeline per stream (each rank's streams over the measured steps: ops,
// busy ms per step and its share of the step, by kernel class), the link heat map (Results::link_utilization: links ×
// time, colour = utilization), memory by phase (Results::memory_phases_gib, stacked by term, against the GPU's
// memory), the advice (Results::advice) and the warnings.
// A sweep's page: the objective against the two most influential knobs (influence: the spread of the best objective
// over a knob's values, among feasible points; each cell the best objective at that pair over the other knobs) and the
// Pareto front of step time and peak memory (points no other feasible point beats on both), with every point.
//
// Every chart is a <figure class="chart"> whose data marks carry class "datum". The page's script counts them and
// writes the outcome into <p id="render-check" data-ok="true|false" data-charts="N" data-errors="E">, E the script
// errors seen (window.onerror); a chart without data marks makes data-ok false and logs console.error. The headless
// test reads that element (tests/report/HtmlReportTest.cpp).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/metrics/Results.hpp"

namespace stepsim {

struct HtmlRun {
    std::string name;
    std::string profile;                          // profileLine
    std::map<std::string, std::string> settings;  // scenarioSettings
    const Results* results = nullptr;
    const Timeline* timeline = nullptr;           // optional: the per-stream summary
    const Workload* workload = nullptr;
    double gpu_memory_gib = 0.0;
};

struct HtmlSweepPoint {
    std::map<std::string, std::string> knobs;  // the knobs' values at this point
    bool feasible = false;
    std::optional<double> objective, step_time_ms, peak_memory_gib;
};

struct HtmlSweep {
    std::string name, objective;
    bool maximize = true;
    std::vector<std::string> knobs;
    std::vector<HtmlSweepPoint> points;
};

std::string htmlRunReport(const HtmlRun& run);
std::string htmlSweepReport(const HtmlSweep& sweep);

// Writes `html` to DIR/report.html (DIR created); returns that path. An unwritable DIR is an InputError.
std::filesystem::path writeHtmlReport(const std::filesystem::path& dir, const std::string& html);

// The two knobs whose values move the best feasible objective the most (fewer when the sweep has fewer).
std::vector<std::string> influentialKnobs(const HtmlSweep& sweep);
// The indices of the feasible points on the Pareto front of step time and peak memory (both lower is better), by
// step time.
std::vector<std::size_t> paretoFront(const HtmlSweep& sweep);

}  // namespace stepsim
