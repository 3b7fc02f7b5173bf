#include "sim/sweep/Recommendation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "sim/sweep/SweepSpace.hpp"

namespace stepsim {

namespace {

std::vector<KnobSensitivity> sensitivities(const std::vector<PointRecord>& records, const Objective& o, double best) {
    std::vector<std::string> keys;
    for (std::size_t i = 1; i < records.size(); ++i)
        for (const SweepSetting& s : records[i].settings)
            if (std::find(keys.begin(), keys.end(), s.key) == keys.end()) keys.push_back(s.key);
    std::vector<KnobSensitivity> out;
    for (const std::string& key : keys) {
        KnobSensitivity k{key, {}, 0.0};
        for (std::size_t i = 1; i < records.size(); ++i) {
            const auto x = o.of(records[i]);
            if (!x) continue;
            for (const SweepSetting& s : records[i].settings) {
                if (s.key != key || s.value == kNotApplicable) continue;  // the point's strategy does not read it
                auto it = std::find_if(k.best_by_value.begin(), k.best_by_value.end(),
                                       [&](const auto& p) { return p.first == s.value; });
                if (it == k.best_by_value.end()) k.best_by_value.emplace_back(s.value, *x);
                else if (o.better(*x, it->second)) it->second = *x;
            }
        }
        if (k.best_by_value.size() >= 2 && best != 0.0) {
            const auto [lo, hi] = std::minmax_element(k.best_by_value.begin(), k.best_by_value.end(),
                                                      [](const auto& a, const auto& b) { return a.second < b.second; });
            k.spread = (hi->second - lo->second) / std::abs(best);
        }
        out.push_back(std::move(k));
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.spread > b.spread; });
    return out;
}

std::string settingsText(const PointRecord& r) { return r.key.empty() ? "the scenario as given" : r.key; }

}  // namespace

Recommendation recommend(const std::vector<PointRecord>& records, const Objective& o, const SweepSpec& spec) {
    Recommendation r;
    for (std::size_t i = 0; i < records.size(); ++i) {
        const auto x = o.of(records[i]);
        if (!x) continue;
        ++r.feasible;
        if (!r.best_value || o.better(*x, *r.best_value)) r.best = i, r.best_value = x;
    }
    if (!records.empty()) {
        r.baseline_value = o.of(records[0]);
        if (!records[0].feasible) r.baseline_reason = records[0].reason;
    }
    if (r.best_value && r.baseline_value) r.gain = o.gain(*r.best_value, *r.baseline_value);
    if (r.best_value) r.sensitivity = sensitivities(records, o, *r.best_value);
    r.claims = checkClaims(records, spec);
    const std::string p99 = "step_time_ms_p99";
    std::optional<double> lowest;
    for (std::size_t i = 0; i < records.size(); ++i)
        if (const auto x = records[i].feasible ? records[i].value(p99) : std::nullopt; x && (!lowest || *x < *lowest))
            lowest = x, r.p99.lowest_p99 = i;
    if (r.best && records[*r.best].value(p99)) {
        r.p99.available = true;
        r.p99.best_p99 = records[*r.best].value(p99);
        if (records[0].feasible) r.p99.baseline_p99 = records[0].value(p99);
        if (r.p99.baseline_p99) r.p99.wins = *r.p99.best_p99 <= *r.p99.baseline_p99;
    }
    return r;
}

nlohmann::ordered_json toJson(const Recommendation& r, const std::vector<PointRecord>& records, const Objective& o) {
    nlohmann::ordered_json j;
    j["objective"] = o.key;
    j["goal"] = o.goal == SweepGoal::maximize ? "maximize" : "minimize";
    j["feasible_points"] = r.feasible;
    if (r.best) {
        j["best"] = {{"point", *r.best}, {"settings", toJson(records[*r.best])["settings"]}, {"value", *r.best_value}};
    } else {
        j["best"] = nullptr;
    }
    j["baseline_value"] = r.baseline_value ? nlohmann::ordered_json(*r.baseline_value) : nullptr;
    if (!r.baseline_reason.empty()) j["baseline_reason"] = r.baseline_reason;
    j["gain"] = r.gain ? nlohmann::ordered_json(*r.gain) : nullptr;
    j["sensitivity"] = nlohmann::ordered_json::array();
    for (const KnobSensitivity& k : r.sensitivity) {
        nlohmann::ordered_json by = nlohmann::ordered_json::object();
        for (const auto& [v, x] : k.best_by_value) by[v] = x;
        j["sensitivity"].push_back({{"key", k.key}, {"spread", k.spread}, {"best_by_value", by}});
    }
    j["claims"] = nlohmann::ordered_json::array();
    for (const ClaimVerdict& c : r.claims) {
        const auto opt = [](const std::optional<double>& x) { return x ? nlohmann::ordered_json(*x) : nullptr; };
        j["claims"].push_back({{"name", c.name}, {"change", c.change}, {"metric", c.metric}, {"verdict", c.verdict},
                               {"claimed_change", opt(c.claimed_change)}, {"predicted_change", opt(c.predicted_change)},
                               {"low_change", opt(c.low_change)}, {"high_change", opt(c.high_change)},
                               {"pairs", c.pairs}, {"detail", c.detail}});
    }
    nlohmann::ordered_json p;
    p["available"] = r.p99.available;
    if (r.p99.available) {
        p["best_step_time_ms_p99"] = *r.p99.best_p99;
        p["baseline_step_time_ms_p99"] = r.p99.baseline_p99 ? nlohmann::ordered_json(*r.p99.baseline_p99) : nullptr;
        p["wins_at_p99"] = r.p99.wins ? nlohmann::ordered_json(*r.p99.wins) : nullptr;
        p["lowest_p99_point"] = *r.p99.lowest_p99;
    }
    j["p99"] = p;
    return j;
}

std::string recommendationText(const Recommendation& r, const std::vector<PointRecord>& records, const Objective& o) {
    std::string t;
    if (!r.best) {
        t += "best: none: no point is feasible";
        if (!records.empty()) t += fmt::format(" (the scenario as given: {})", records[0].reason);
        return t + "\n";
    }
    t += fmt::format("best: {}\n      {} {:.6g}", settingsText(records[*r.best]), o.key, *r.best_value);
    if (r.gain)
        t += fmt::format(", {:+.1f}% over the scenario as given ({:.6g})\n", 100.0 * *r.gain, *r.baseline_value);
    else
        t += fmt::format("; the scenario as given is infeasible: {}\n", r.baseline_reason);
    if (!r.sensitivity.empty()) {
        t += "sensitivity (objective's best across a knob's values):";
        for (const KnobSensitivity& k : r.sensitivity) {
            const auto best = std::max_element(k.best_by_value.begin(), k.best_by_value.end(),
                                               [&](const auto& a, const auto& b) { return o.better(b.second, a.second); });
            t += fmt::format("\n  {:<28} {:5.1f}%", k.key, 100.0 * k.spread);
            if (best != k.best_by_value.end() && k.best_by_value.size() >= 2) t += fmt::format("  best at {}", best->first);
            else if (k.best_by_value.size() < 2) t += "  (fewer than two feasible values)";
        }
        t += "\n";
    }
    for (const ClaimVerdict& c : r.claims) t += fmt::format("claim \"{}\" {}: {}\n", c.name, c.verdict, c.detail);
    if (!r.p99.available)
        t += "p99: not available (the points ran one sample each; set sim.samples > 1 for step_time_ms_p99)\n";
    else if (r.p99.wins)
        t += fmt::format("p99: {} at p99 ({:.2f} ms, as given {:.2f} ms); lowest p99: point {}\n",
                         *r.p99.wins ? "still wins" : "loses", *r.p99.best_p99, *r.p99.baseline_p99,
                         *r.p99.lowest_p99);
    else
        t += fmt::format("p99: {:.2f} ms; lowest p99: point {}\n", *r.p99.best_p99, *r.p99.lowest_p99);
    return t;
}

}  // namespace stepsim
