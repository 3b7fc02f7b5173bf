#include "sim/sweep/Claims.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace stepsim {

namespace {

const std::string* settingOf(const PointRecord& r, const std::string& key) {
    for (const SweepSetting& s : r.settings)
        if (s.key == key) return &s.value;
    return nullptr;
}

// The record's other settings (all but `skip`), which a matched pair shares.
std::string restOf(const PointRecord& r, const std::vector<std::string>& skip) {
    std::string k;
    for (const SweepSetting& s : r.settings)
        if (std::find(skip.begin(), skip.end(), s.key) == skip.end()) k += s.key + "=" + s.value + " ";
    return k;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The keys that vary together with `key` (its linked axis), which a matched pair may not hold equal.
std::vector<std::string> movesWith(const SweepSpec& spec, const std::string& key) {
    for (const SweepDimension& d : spec.dimensions)
        if (std::find(d.keys.begin(), d.keys.end(), key) != d.keys.end()) return d.keys;
    return {key};
}

// `value` as the sweep's records spell it: "max" and "min" are the largest and smallest numeric value of `key`.
std::optional<std::string> resolve(const std::vector<PointRecord>& records, const std::string& key,
                                   const std::string& value) {
    if (value != "max" && value != "min") return value;
    std::optional<double> best;
    std::string text;
    for (std::size_t i = 1; i < records.size(); ++i)
        if (const std::string* v = settingOf(records[i], key)) {
            char* end = nullptr;
            const double x = std::strtod(v->c_str(), &end);
            if (end == v->c_str() || *end != '\0') continue;
            if (!best || (value == "max" ? x > *best : x < *best)) best = x, text = *v;
        }
    if (!best) return std::nullopt;
    return text;
}

// `bands`: each pair's noise band of its change, where both points ran several samples (noise_band_ms, Results.hpp)
// and the metric is the step: the two bands added in quadrature over the first point's step (common random numbers
// make the true band of a difference narrower: an upper bound).
ClaimVerdict judge(const SweepClaim& c, const std::vector<double>& changes, const std::vector<double>& bands,
                   ClaimVerdict v) {
    const double m = median(changes);
    v.predicted_change = m;
    v.low_change = *std::min_element(changes.begin(), changes.end());
    v.high_change = *std::max_element(changes.begin(), changes.end());
    const double sign = c.by_pct ? (*c.by_pct < 0 ? -1.0 : 1.0) : c.direction;
    const bool right_way = m * sign > 0 && std::abs(m) >= 0.01;
    const bool big_enough = !c.by_pct || std::abs(m) >= 0.5 * std::abs(*c.by_pct) / 100.0;
    v.verdict = !right_way ? "fails" : big_enough ? "holds" : "partly";
    std::string band;
    if (c.metric == "step_time_ms")
        band = bands.size() == changes.size()
                   ? fmt::format(" ± {:.1f}% (the noise band, 95%)", 100.0 * median(bands))
                   : std::string(" (one sample per point: no noise band; sim.samples > 1 gives one)");
    v.detail = fmt::format("{}: {} {:+.1f}%{} (median of {} pairs, {:+.1f}% to {:+.1f}%), claimed {}", v.change,
                           c.metric, 100.0 * m, band, changes.size(), 100.0 * *v.low_change, 100.0 * *v.high_change,
                           c.by_pct ? fmt::format("{:+.1f}%", *c.by_pct) : std::string(sign < 0 ? "less" : "more"));
    return v;
}

ClaimVerdict checkOne(const std::vector<PointRecord>& records, const SweepSpec& spec, const SweepClaim& c) {
    ClaimVerdict v;
    v.name = c.name;
    v.metric = c.metric;
    v.verdict = "untestable";
    if (c.by_pct) v.claimed_change = *c.by_pct / 100.0;
    const auto from = resolve(records, c.key, c.from), to = resolve(records, c.key, c.to);
    v.change = fmt::format("{} {} -> {}", c.key, from.value_or(c.from), to.value_or(c.to));
    if (!from || !to || *from == *to) {
        v.detail = fmt::format("{}: the sweep gives {} no two numeric values to compare", v.change, c.key);
        return v;
    }
    const std::vector<std::string> skip = movesWith(spec, c.key);
    std::map<std::string, std::vector<const PointRecord*>> froms;
    std::map<std::string, const PointRecord*> tos;
    bool any_from = false, any_to = false, any_metric = false;
    std::string infeasible;
    for (std::size_t i = 1; i < records.size(); ++i) {
        const PointRecord& r = records[i];
        const std::string* value = settingOf(r, c.key);
        if (!value || (*value != *from && *value != *to)) continue;
        const bool is_to = *value == *to;
        (is_to ? any_to : any_from) = true;
        if (!r.feasible) {
            // The reason to show: one that names the claim's knob, else the first.
            if (infeasible.empty() ||
                (infeasible.find(c.key) == std::string::npos && r.reason.find(c.key) != std::string::npos))
                infeasible = r.reason;
            continue;
        }
        if (!r.value(c.metric)) continue;
        any_metric = true;
        if (is_to) tos[restOf(r, skip)] = &r;
        else froms[restOf(r, skip)].push_back(&r);
    }
    std::vector<double> changes, bands;
    for (const auto& [rest, fs] : froms)
        if (auto t = tos.find(rest); t != tos.end())
            for (const PointRecord* f : fs) {
                changes.push_back(*t->second->value(c.metric) / *f->value(c.metric) - 1.0);
                const auto bt = t->second->value("noise_band_ms"), bf = f->value("noise_band_ms");
                if (c.metric == "step_time_ms" && bt && bf) bands.push_back(std::hypot(*bt, *bf) / *f->value(c.metric));
            }
    v.pairs = static_cast<int>(changes.size());
    if (!any_from || !any_to) {
        v.detail = fmt::format("{}: the sweep did not run {} at both values", v.change, c.key);
    } else if (changes.empty()) {
        v.detail = fmt::format("{}: no pair of feasible points{}", v.change,
                               !infeasible.empty() ? ": " + infeasible
                               : any_metric        ? std::string()
                                                   : fmt::format(" reports {}", c.metric));
    } else {
        v = judge(c, changes, bands, std::move(v));
    }
    return v;
}

}  // namespace

std::vector<ClaimVerdict> checkClaims(const std::vector<PointRecord>& records, const SweepSpec& spec) {
    std::vector<ClaimVerdict> out;
    for (const SweepClaim& c : spec.claims) out.push_back(checkOne(records, spec, c));
    return out;
}

}  // namespace stepsim
