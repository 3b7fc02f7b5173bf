#include "sim/report/HtmlReport.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/report/EnumNames.hpp"

namespace stepsim {
namespace {

std::string esc(std::string_view s) {
    std::string o;
    for (char c : s) {
        switch (c) {
            case '&': o += "&amp;"; break;
            case '<': o += "&lt;"; break;
            case '>': o += "&gt;"; break;
            case '"': o += "&quot;"; break;
            default: o += c;
        }
    }
    return o;
}

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                    "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6", "#d37295"};
const char* colour(std::size_t i) { return kPalette[i % std::size(kPalette)]; }

// White (0) to dark red (1).
std::string heat(double u) {
    u = std::clamp(u, 0.0, 1.0);
    const int g = int(std::lround(255 * (1 - 0.85 * u))), b = int(std::lround(255 * (1 - u)));
    return fmt::format("rgb(255,{},{})", g, b);
}

const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:right}
td:first-child,th:first-child{text-align:left}figure{margin:8px 0}figcaption{color:#555;font-size:12px}
.legend span{display:inline-block;margin-right:12px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
.warn li{margin-bottom:4px}details{margin:6px 0}#render-check{color:#888;font-size:11px}
)";

// Counts every chart's data marks and reports into #render-check (HtmlReport.hpp).
const char* kScript = R"(
<script>
(function(){
  var errors = 0;
  window.addEventListener('error', function(){ errors++; });
  function check(){
    var charts = document.querySelectorAll('figure.chart'), ok = charts.length > 0;
    charts.forEach(function(c){
      if (c.querySelectorAll('.datum').length === 0) { ok = false; console.error('chart without data: ' + c.id); }
    });
    var p = document.getElementById('render-check');
    p.setAttribute('data-ok', String(ok && errors === 0));
    p.setAttribute('data-charts', String(charts.length));
    p.setAttribute('data-errors', String(errors));
    p.textContent = 'rendered ' + charts.length + ' charts' + (ok ? ', every one with data' : ', some without data');
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', check); else check();
})();
</script>
)";

std::string page(const std::string& title, const std::string& body) {
    return fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{}</style>"
                       "</head><body>\n<h1>{}</h1>\n{}\n<p id=\"render-check\" data-ok=\"false\">not checked</p>{}"
                       "</body></html>\n",
                       esc(title), kStyle, esc(title), body, kScript);
}

std::string legend(const std::vector<std::pair<std::string, std::size_t>>& items) {
    std::string s = "<div class=\"legend\">";
    for (const auto& [name, c] : items)
        s += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", colour(c), esc(name));
    return s + "</div>";
}

std::string configSection(const HtmlRun& run) {
    std::string s = "<h2>Configuration</h2>\n<p>" + esc(run.profile) + "</p>\n<details><summary>every setting (" +
                    std::to_string(run.settings.size()) + ")</summary><table><tr><th>key</th><th>value</th></tr>";
    for (const auto& [k, v] : run.settings) s += fmt::format("<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(v));
    return s + "</table></details>\n";
}

std::string headline(const Results& r) {
    std::string s = "<table>";
    const auto row = [&](const char* k, const std::string& v) { s += fmt::format("<tr><td>{}</td><td>{}</td></tr>", k, v); };
    row("step time", fmt::format("{:.3f} ms", r.step_time_ms));
    row("throughput", fmt::format("{:.0f} tokens/s ({:.0f} per GPU)", r.tokens_per_s, r.tokens_per_s_per_gpu));
    row("MFU", fmt::format("{:.1f}%", 100 * r.mfu));
    row("exposed communication", fmt::format("{:.3f} ms", r.exposed_comm_ms));
    if (r.peak_memory_gib) row("peak memory", fmt::format("{:.2f} GiB", *r.peak_memory_gib));
    if (r.pp_bubble_ratio) row("pipeline bubble", fmt::format("{:.1f}%", 100 * *r.pp_bubble_ratio));
    return s + "</table>\n";
}

std::string breakdownSection(const Results& r) {
    std::string s = "<h2>Where the step goes</h2>\n";
    double total = 0;
    for (const BreakdownPart& p : r.breakdown_ms) total += p.ms;
    if (r.breakdown_ms.empty() || total <= 0) return s + "<p>no breakdown (no measured step)</p>\n";
    const double width = 1000;
    std::string bar, rows;
    std::vector<std::pair<std::string, std::size_t>> items;
    double x = 0;
    for (std::size_t i = 0; i < r.breakdown_ms.size(); ++i) {
        const BreakdownPart& p = r.breakdown_ms[i];
        if (p.ms <= 0) continue;
        const double w = width * p.ms / total;
        bar += fmt::format("<rect class=\"datum\" x=\"{:.2f}\" y=\"0\" width=\"{:.2f}\" height=\"36\" fill=\"{}\">"
                           "<title>{}: {:.3f} ms ({:.1f}%)</title></rect>",
                           x, w, colour(i), esc(p.part), p.ms, 100 * p.ms / total);
        x += w;
        items.push_back({p.part, i});
        rows += fmt::format("<tr><td><i style=\"display:inline-block;width:10px;height:10px;background:{}\"></i> {}</td>"
                            "<td>{:.3f} ms</td><td>{:.1f}%</td></tr>",
                            colour(i), esc(p.part), p.ms, 100 * p.ms / r.step_time_ms);
    }
    s += fmt::format("<figure class=\"chart\" id=\"breakdown\"><svg viewBox=\"0 0 {} 36\" width=\"100%\" height=\"36\" "
                     "preserveAspectRatio=\"none\">{}</svg>{}<figcaption>the slowest rank's step window, each instant "
                     "given to one part by priority (Breakdown.hpp); the parts sum to the step, {:.3f} ms</figcaption>"
                     "</figure>\n<table><tr><th>part</th><th>time</th><th>share</th></tr>{}</table>\n",
                     width, bar, legend(items), r.step_time_ms, rows);
    return s;
}

// Each rank's streams over the measured steps: ops, busy time per step, share of the step, by class.
std::string streamSection(const HtmlRun& run) {
    std::string s = "<h2>Timeline per stream</h2>\n";
    if (!run.timeline || !run.workload || run.timeline->step_end.empty()) return s + "<p>no timeline</p>\n";
    const Timeline& tl = *run.timeline;
    const Workload& wl = *run.workload;
    const Results& r = *run.results;
    const int first = std::max(0, r.measured_from_step);
    const int steps = int(tl.step_end.front().size());
    const double measured = std::max(1, steps - first);
    constexpr int kMaxRanks = 8;
    const int ranks = std::min<int>(tl.ranks, kMaxRanks);
    struct Row {
        int ops = 0;
        double busy_ms = 0;
        double by_class[kKernelClasses] = {};
    };
    std::vector<std::vector<Row>> rows(static_cast<std::size_t>(ranks));
    for (int k = 0; k < ranks; ++k) rows[std::size_t(k)].resize(wl.programs[std::size_t(k)].streams.size());
    for (const Span& sp : tl.spans) {
        if (sp.rank >= ranks) continue;
        const Op& op = wl.programs[std::size_t(sp.rank)].ops[sp.op];
        if (op.step < first || sp.stream >= rows[std::size_t(sp.rank)].size()) continue;
        Row& row = rows[std::size_t(sp.rank)][sp.stream];
        const double ms = (sp.end - sp.start).seconds() * 1e3;
        ++row.ops;
        row.busy_ms += ms;
        row.by_class[std::size_t(sp.cls)] += ms;
    }
    const double step = r.step_time_ms > 0 ? r.step_time_ms : 1;
    std::string table = "<table><tr><th>rank</th><th>stream</th><th>ops per step</th><th>busy per step</th><th>share of "
                        "the step</th><th>by class (ms per step)</th></tr>";
    std::string bars;
    int line = 0;
    for (int k = 0; k < ranks; ++k)
        for (std::size_t t = 0; t < rows[std::size_t(k)].size(); ++t) {
            const Row& row = rows[std::size_t(k)][t];
            std::string classes, seg;
            double x = 0;
            for (std::size_t c = 0; c < kKernelClasses; ++c) {
                if (row.by_class[c] <= 0) continue;
                classes += fmt::format("{} {:.3f} ", kernelClassName(KernelClass(c)), row.by_class[c] / measured);
                const double w = 600 * row.by_class[c] / measured / step;
                seg += fmt::format("<rect class=\"datum\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"14\" fill=\"{}\">"
                                   "<title>rank {} {}: {} {:.3f} ms per step</title></rect>",
                                   160 + x, line * 18, w, colour(c), k, esc(wl.programs[std::size_t(k)].streams[t].name),
                                   kernelClassName(KernelClass(c)), row.by_class[c] / measured);
                x += w;
            }
            bars += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"11\">rank {} {}</text>{}", line * 18 + 11, k,
                                esc(wl.programs[std::size_t(k)].streams[t].name), seg);
            table += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.0f}</td><td>{:.3f} ms</td><td>{:.1f}%</td><td>{}</td></tr>",
                                 k, esc(wl.programs[std::size_t(k)].streams[t].name), row.ops / measured,
                                 row.busy_ms / measured, 100 * row.busy_ms / measured / step, classes);
            ++line;
        }
    std::vector<std::pair<std::string, std::size_t>> items;
    for (std::size_t c = 0; c < kKernelClasses; ++c) items.push_back({std::string(kernelClassName(KernelClass(c))), c});
    s += fmt::format("<figure class=\"chart\" id=\"streams\"><svg viewBox=\"0 0 760 {}\" width=\"760\" height=\"{}\">{}"
                     "<line x1=\"760\" y1=\"0\" x2=\"760\" y2=\"{}\" stroke=\"#999\"/></svg>{}<figcaption>busy time per "
                     "measured step by kernel class; the full width is the step ({:.3f} ms){}</figcaption></figure>\n{}"
                     "</table>\n",
                     line * 18, line * 18, bars, line * 18, legend(items), r.step_time_ms,
                     tl.ranks > kMaxRanks ? fmt::format("; the first {} of {} ranks", kMaxRanks, tl.ranks) : "", table);
    return s;
}

std::string heatMapSection(const Results& r) {
    std::string s = "<h2>Link heat map</h2>\n";
    if (!r.link_utilization || r.link_utilization->links.empty() || r.link_utilization->bins == 0)
        return s + "<p>no link carried traffic (or link usage was not recorded)</p>\n";
    const LinkUtilization& u = *r.link_utilization;
    // The busiest links by mean utilization, at most kRows, in link order.
    constexpr std::size_t kRows = 48;
    std::vector<std::size_t> idx(u.links.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    const auto mean = [&](std::size_t i) {
        double m = 0;
        for (double x : u.links[i].util) m += x;
        return u.links[i].util.empty() ? 0.0 : m / double(u.links[i].util.size());
    };
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return mean(a) > mean(b); });
    if (idx.size() > kRows) idx.resize(kRows);
    std::sort(idx.begin(), idx.end());
    const double cw = std::max(1.0, 800.0 / u.bins), ch = 10;
    std::string cells;
    for (std::size_t row = 0; row < idx.size(); ++row) {
        const LinkSeries& l = u.links[idx[row]];
        cells += fmt::format("<text x=\"0\" y=\"{:.1f}\" font-size=\"9\">{}</text>", row * ch + 8, esc(l.name));
        for (std::size_t b = 0; b < l.util.size(); ++b)
            if (l.util[b] > 0)
                cells += fmt::format("<rect class=\"datum\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" "
                                     "fill=\"{}\"><title>{} {:.1f} ms: {:.0f}%</title></rect>",
                                     220 + b * cw, row * ch, cw, ch, heat(l.util[b]), esc(l.name), b * u.bin_ms,
                                     100 * l.util[b]);
    }
    const double h = idx.size() * ch;
    return s + fmt::format("<figure class=\"chart\" id=\"heatmap\"><svg viewBox=\"0 0 {:.0f} {:.0f}\" width=\"{:.0f}\" "
                           "height=\"{:.0f}\">{}</svg><figcaption>{} of {} links (the busiest, {} carried traffic), "
                           "{} bins of {:.3f} ms; white idle, dark red full</figcaption></figure>\n",
                           220 + u.bins * cw, h, 220 + u.bins * cw, h, cells, idx.size(), u.links_total, u.links.size(),
                           u.bins, u.bin_ms);
}

std::string memorySection(const Results& r, double gpu_gib) {
    std::string s = "<h2>Memory by phase</h2>\n";
    std::vector<MemoryBreakdown> phases = r.memory_phases_gib;
    if (phases.empty() && r.memory_gib) phases.push_back(*r.memory_gib);
    if (phases.empty()) return s + "<p>no memory estimate (an imported trace records no allocations)</p>\n";
    double top = gpu_gib;
    for (const MemoryBreakdown& m : phases) top = std::max(top, m.sum());
    const double H = 220, W = 130;
    std::string bars;
    const char* terms[] = {"params", "grads", "optimizer", "activations", "buffers"};
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const MemoryBreakdown& m = phases[i];
        const double v[] = {m.params, m.grads, m.optimizer, m.activations, m.buffers};
        double y = H;
        for (std::size_t t = 0; t < 5; ++t) {
            const double h = H * v[t] / top;
            y -= h;
            if (v[t] > 0)
                bars += fmt::format("<rect class=\"datum\" x=\"{:.1f}\" y=\"{:.2f}\" width=\"90\" height=\"{:.2f}\" "
                                    "fill=\"{}\"><title>{} {}: {:.2f} GiB</title></rect>",
                                    40 + i * W, y, h, colour(t), esc(m.phase), terms[t], v[t]);
        }
        bars += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\">{}</text><text x=\"{:.1f}\" y=\"{:.1f}\" "
                            "font-size=\"10\">{:.2f} GiB</text>",
                            40 + i * W, H + 14, esc(m.phase.empty() ? "peak" : m.phase), 40 + i * W, y - 3, m.sum());
    }
    const double gy = H - H * gpu_gib / top;
    bars += fmt::format("<line x1=\"30\" x2=\"{:.0f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#c00\" stroke-dasharray=\"4\"/>"
                        "<text x=\"32\" y=\"{:.1f}\" font-size=\"10\" fill=\"#c00\">GPU {:.1f} GiB</text>",
                        40 + phases.size() * W, gy, gy, gy - 3, gpu_gib);
    std::vector<std::pair<std::string, std::size_t>> items;
    for (std::size_t t = 0; t < 5; ++t) items.push_back({terms[t], t});
    return s + fmt::format("<figure class=\"chart\" id=\"memory\"><svg viewBox=\"0 -16 {:.0f} {:.0f}\" width=\"{:.0f}\" "
                           "height=\"{:.0f}\">{}</svg>{}<figcaption>the memory model's terms per GPU at each phase of "
                           "the step (GiB); the peak is the largest</figcaption></figure>\n",
                           60 + phases.size() * W, H + 36, 60 + phases.size() * W, H + 36, bars, legend(items));
}

std::string adviceSection(const Results& r) {
    std::string s = "<h2>What to change</h2>\n";
    if (r.advice.empty()) return s + "<p>no advice: none was asked (run --advice), or no knob tried helped</p>\n";
    double top = 0;
    for (const AdviceItem& a : r.advice) top = std::max(top, std::abs(a.gain_pct));
    std::string bars, rows;
    for (std::size_t i = 0; i < r.advice.size(); ++i) {
        const AdviceItem& a = r.advice[i];
        const double w = top > 0 ? 500 * std::abs(a.gain_pct) / top : 0;
        bars += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"11\">{}={}</text><rect class=\"datum\" x=\"260\" "
                            "y=\"{}\" width=\"{:.2f}\" height=\"14\" fill=\"{}\"><title>{:+.1f}%</title></rect>"
                            "<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\">{:+.1f}%</text>",
                            i * 20 + 11, esc(a.key), esc(a.value), i * 20, w, a.gain_pct >= 0 ? "#59a14f" : "#e15759",
                            a.gain_pct, 265 + w, i * 20 + 11, a.gain_pct);
        std::string sets;
        for (const std::string& x : a.sets) sets += (sets.empty() ? "" : " ") + ("--set " + x);
        rows += fmt::format("<tr><td>{}</td><td>{:+.1f}%</td><td>{:.3f} ms</td><td>{}</td><td>{}</td></tr>", esc(sets),
                            a.gain_pct, a.step_time_ms, esc(a.cost), esc(a.reason));
    }
    return s + fmt::format("<figure class=\"chart\" id=\"advice\"><svg viewBox=\"0 0 860 {}\" width=\"860\" "
                           "height=\"{}\">{}</svg><figcaption>gain in tokens/s of each what-if run (same scenario and "
                           "seed), best first</figcaption></figure>\n<table><tr><th>what-if</th><th>gain</th><th>step"
                           "</th><th>cost</th><th>suggested by</th></tr>{}</table>\n",
                           r.advice.size() * 20, r.advice.size() * 20, bars, rows);
}

std::string warningsSection(const std::vector<std::string>& warnings) {
    if (warnings.empty()) return "<h2>Warnings</h2>\n<p>none</p>\n";
    std::string s = "<h2>Warnings</h2>\n<ul class=\"warn\">";
    for (const std::string& w : warnings) s += "<li>" + esc(w) + "</li>";
    return s + "</ul>\n";
}

// A point's knob value as a number where it reads as one.
std::optional<double> asNumber(const std::string& v) {
    try {
        std::size_t used = 0;
        const double x = std::stod(v, &used);
        if (used == v.size()) return x;
    } catch (...) {
    }
    return std::nullopt;
}

// A knob's values in order: numerically where all are numbers, else as text.
std::vector<std::string> valuesOf(const HtmlSweep& s, const std::string& knob) {
    std::set<std::string> seen;
    for (const HtmlSweepPoint& p : s.points)
        if (const auto it = p.knobs.find(knob); it != p.knobs.end()) seen.insert(it->second);
    std::vector<std::string> v(seen.begin(), seen.end());
    if (std::all_of(v.begin(), v.end(), [](const std::string& x) { return asNumber(x).has_value(); }))
        std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) { return *asNumber(a) < *asNumber(b); });
    return v;
}

bool better(const HtmlSweep& s, double a, double b) { return s.maximize ? a > b : a < b; }

std::string objectiveGrid(const HtmlSweep& s) {
    const std::vector<std::string> knobs = influentialKnobs(s);
    std::string out = "<h2>The objective against the two most influential knobs</h2>\n";
    if (knobs.empty()) return out + "<p>no knob with feasible points</p>\n";
    const std::vector<std::string> xs = valuesOf(s, knobs[0]);
    const std::vector<std::string> ys = knobs.size() > 1 ? valuesOf(s, knobs[1]) : std::vector<std::string>{""};
    std::vector<std::vector<std::optional<double>>> best(ys.size(), std::vector<std::optional<double>>(xs.size()));
    double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
    for (const HtmlSweepPoint& p : s.points) {
        if (!p.feasible || !p.objective) continue;
        const auto xi = std::find(xs.begin(), xs.end(), p.knobs.count(knobs[0]) ? p.knobs.at(knobs[0]) : "") - xs.begin();
        const std::string yv = knobs.size() > 1 && p.knobs.count(knobs[1]) ? p.knobs.at(knobs[1]) : "";
        const auto yi = std::find(ys.begin(), ys.end(), yv) - ys.begin();
        if (xi >= std::ptrdiff_t(xs.size()) || yi >= std::ptrdiff_t(ys.size())) continue;
        auto& cell = best[std::size_t(yi)][std::size_t(xi)];
        if (!cell || better(s, *p.objective, *cell)) cell = p.objective;
        lo = std::min(lo, *p.objective), hi = std::max(hi, *p.objective);
    }
    const double cw = 90, ch = 30, left = 150, topm = 20;
    std::string cells;
    for (std::size_t x = 0; x < xs.size(); ++x)
        cells += fmt::format("<text x=\"{:.0f}\" y=\"14\" font-size=\"11\">{}</text>", left + x * cw + 4, esc(xs[x]));
    for (std::size_t y = 0; y < ys.size(); ++y) {
        cells += fmt::format("<text x=\"0\" y=\"{:.0f}\" font-size=\"11\">{}</text>", topm + y * ch + 19, esc(ys[y]));
        for (std::size_t x = 0; x < xs.size(); ++x) {
            if (!best[y][x]) continue;
            const double t = hi > lo ? (*best[y][x] - lo) / (hi - lo) : 1.0;
            const double goodness = s.maximize ? t : 1 - t;
            cells += fmt::format("<rect class=\"datum\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
                                 "<title>{}</title></rect><text x=\"{:.0f}\" y=\"{:.0f}\" font-size=\"11\">{:.4g}</text>",
                                 left + x * cw, topm + y * ch, cw - 2, ch - 2, heat(goodness), *best[y][x],
                                 left + x * cw + 4, topm + y * ch + 19, *best[y][x]);
        }
    }
    return out + fmt::format("<figure class=\"chart\" id=\"objective\"><svg viewBox=\"0 0 {:.0f} {:.0f}\" "
                             "width=\"{:.0f}\" height=\"{:.0f}\">{}</svg><figcaption>{} ({}) at each pair of {} "
                             "(columns) and {} (rows), the best over the other knobs among feasible points; darker is "
                             "better</figcaption></figure>\n",
                             left + xs.size() * cw, topm + ys.size() * ch, left + xs.size() * cw, topm + ys.size() * ch,
                             cells, esc(s.objective), s.maximize ? "higher is better" : "lower is better", esc(knobs[0]),
                             knobs.size() > 1 ? esc(knobs[1]) : std::string("(one knob)"));
}

std::string paretoSection(const HtmlSweep& s) {
    std::string out = "<h2>Pareto front of step time and memory</h2>\n";
    double tmax = 0, mmax = 0;
    int plotted = 0;
    for (const HtmlSweepPoint& p : s.points)
        if (p.feasible && p.step_time_ms && p.peak_memory_gib)
            tmax = std::max(tmax, *p.step_time_ms), mmax = std::max(mmax, *p.peak_memory_gib), ++plotted;
    if (plotted == 0) return out + "<p>no feasible point with a step time and a peak memory</p>\n";
    const std::vector<std::size_t> front = paretoFront(s);
    const double W = 600, H = 300, L = 50;
    const auto px = [&](double t) { return L + W * t / (tmax * 1.05); };
    const auto py = [&](double m) { return H - H * m / (mmax * 1.05); };
    std::string dots, line, rows;
    for (std::size_t i = 0; i < s.points.size(); ++i) {
        const HtmlSweepPoint& p = s.points[i];
        if (!p.feasible || !p.step_time_ms || !p.peak_memory_gib) continue;
        const bool on = std::find(front.begin(), front.end(), i) != front.end();
        std::string label;
        for (const auto& [k, v] : p.knobs) label += k + "=" + v + " ";
        dots += fmt::format("<circle class=\"datum\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}: {:.3f} "
                            "ms, {:.2f} GiB</title></circle>",
                            px(*p.step_time_ms), py(*p.peak_memory_gib), on ? 5 : 3, on ? "#e15759" : "#4e79a7",
                            esc(label), *p.step_time_ms, *p.peak_memory_gib);
    }
    for (std::size_t i : front) {
        const HtmlSweepPoint& p = s.points[i];
        line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", px(*p.step_time_ms), py(*p.peak_memory_gib));
        std::string label;
        for (const auto& [k, v] : p.knobs) label += k + "=" + v + " ";
        rows += fmt::format("<tr><td>{}</td><td>{:.3f} ms</td><td>{:.2f} GiB</td></tr>", esc(label), *p.step_time_ms,
                            *p.peak_memory_gib);
    }
    return out + fmt::format("<figure class=\"chart\" id=\"pareto\"><svg viewBox=\"0 0 {:.0f} {:.0f}\" width=\"{:.0f}\" "
                             "height=\"{:.0f}\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/><line "
                             "x1=\"{}\" y1=\"0\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/><polyline points=\"{}\" "
                             "fill=\"none\" stroke=\"#e15759\"/>{}<text x=\"{}\" y=\"{}\" font-size=\"11\">step time "
                             "(0 to {:.1f} ms)</text><text x=\"0\" y=\"12\" font-size=\"11\">memory (GiB, to {:.1f})"
                             "</text></svg><figcaption>{} feasible points; red: the front (no other point is faster and "
                             "smaller)</figcaption></figure>\n<table><tr><th>on the front</th><th>step</th><th>peak "
                             "memory</th></tr>{}</table>\n",
                             L + W + 10, H + 30, L + W + 10, H + 30, L, H, L + W, H, L, L, H, line, dots, L, H + 20,
                             tmax * 1.05, mmax * 1.05, plotted, rows);
}

}  // namespace

std::string htmlRunReport(const HtmlRun& run) {
    const Results& r = *run.results;
    std::string body = configSection(run) + "<h2>Results</h2>\n" + headline(r) + breakdownSection(r) +
                       streamSection(run) + heatMapSection(r) + memorySection(r, run.gpu_memory_gib) + adviceSection(r) +
                       warningsSection(r.warnings);
    return page("stepsim: " + run.name, body);
}

std::vector<std::string> influentialKnobs(const HtmlSweep& s) {
    std::vector<std::pair<double, std::string>> spread;
    for (const std::string& k : s.knobs) {
        std::map<std::string, double> best;
        for (const HtmlSweepPoint& p : s.points) {
            if (!p.feasible || !p.objective || !p.knobs.count(k)) continue;
            auto [it, added] = best.try_emplace(p.knobs.at(k), *p.objective);
            if (!added && better(s, *p.objective, it->second)) it->second = *p.objective;
        }
        if (best.empty()) continue;
        double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
        for (const auto& [v, o] : best) lo = std::min(lo, o), hi = std::max(hi, o);
        spread.push_back({hi - lo, k});
    }
    std::stable_sort(spread.begin(), spread.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < spread.size() && i < 2; ++i) out.push_back(spread[i].second);
    return out;
}

std::vector<std::size_t> paretoFront(const HtmlSweep& s) {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < s.points.size(); ++i)
        if (s.points[i].feasible && s.points[i].step_time_ms && s.points[i].peak_memory_gib) idx.push_back(i);
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        const HtmlSweepPoint &x = s.points[a], &y = s.points[b];
        return *x.step_time_ms != *y.step_time_ms ? *x.step_time_ms < *y.step_time_ms : *x.peak_memory_gib < *y.peak_memory_gib;
    });
    std::vector<std::size_t> front;
    double least = std::numeric_limits<double>::max();
    for (std::size_t i : idx)
        if (*s.points[i].peak_memory_gib < least) {
            front.push_back(i);
            least = *s.points[i].peak_memory_gib;
        }
    return front;
}

std::string htmlSweepReport(const HtmlSweep& s) {
    std::size_t feasible = 0;
    for (const HtmlSweepPoint& p : s.points) feasible += p.feasible;
    std::string body = fmt::format("<p>{} points, {} feasible; objective {} ({})</p>\n", s.points.size(), feasible,
                                   esc(s.objective), s.maximize ? "maximized" : "minimized");
    body += objectiveGrid(s) + paretoSection(s);
    return page("stepsim sweep: " + s.name, body);
}

std::filesystem::path writeHtmlReport(const std::filesystem::path& dir, const std::string& html) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::filesystem::path file = dir / "report.html";
    std::ofstream os(file);
    if (!os) throw inputError(file.string(), 0, "", "cannot open this file for writing (--report)");
    os << html;
    return file;
}

}  // namespace stepsim
