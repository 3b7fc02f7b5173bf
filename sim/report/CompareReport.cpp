#include "sim/report/CompareReport.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "sim/report/JsonReport.hpp"

namespace stepsim {
namespace {

void leaves(const nlohmann::ordered_json& j, const std::string& prefix, std::vector<std::pair<std::string, double>>& out) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_object()) leaves(*it, key, out);
        else if (it->is_number()) out.emplace_back(key, it->get<double>());
        else if (it->is_boolean()) out.emplace_back(key, it->get<bool>() ? 1.0 : 0.0);
    }
}

std::map<std::string, double> asMap(const std::vector<std::pair<std::string, double>>& v) { return {v.begin(), v.end()}; }

std::string cell(const std::optional<double>& x, int decimals = 3) {
    return x ? fmt::format("{:.{}f}", *x, decimals) : std::string("-");
}

}  // namespace

std::vector<std::pair<std::string, double>> numericLeaves(const nlohmann::ordered_json& j) {
    std::vector<std::pair<std::string, double>> out;
    leaves(j, "", out);
    return out;
}

std::vector<CompareRow> compareRows(const Comparison& c) {
    const auto json = [](const ComparedSide& s, std::size_t i) {
        return numericLeaves(toJson(s.runs[i], s.name, s.gpu_memory_gib));
    };
    const auto a0 = json(c.a, 0), b0 = json(c.b, 0);
    // Keys in A's order, then B's own.
    std::vector<std::string> keys;
    for (const auto& [k, v] : a0) keys.push_back(k);
    for (const auto& [k, v] : b0)
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    std::vector<std::map<std::string, double>> as, bs;
    for (std::size_t i = 0; i < c.seeds.size(); ++i) as.push_back(asMap(json(c.a, i))), bs.push_back(asMap(json(c.b, i)));
    std::vector<CompareRow> rows;
    for (const std::string& k : keys) {
        CompareRow r;
        r.key = k;
        const auto get = [&](const std::map<std::string, double>& m) -> std::optional<double> {
            const auto it = m.find(k);
            return it == m.end() ? std::nullopt : std::optional<double>(it->second);
        };
        r.a = get(as[0]);
        r.b = get(bs[0]);
        if (r.a && r.b) {
            r.diff = *r.b - *r.a;
            if (*r.a != 0.0) r.diff_pct = 100.0 * *r.diff / std::abs(*r.a);
            double band = 0.0;
            for (std::size_t i = 1; i < c.seeds.size(); ++i) {
                const auto ai = get(as[i]), bi = get(bs[i]);
                if (ai && bi) band = std::max(band, std::abs((*bi - *ai) - *r.diff));
            }
            r.band = band;
        }
        rows.push_back(r);
    }
    return rows;
}

std::string compareText(const Comparison& c) {
    fmt::memory_buffer b;
    auto out = std::back_inserter(b);
    fmt::format_to(out, "A: {}\nB: {}\n", c.a.name, c.b.name);
    if (c.settings_diff.empty()) fmt::format_to(out, "settings: the same\n");
    else {
        fmt::format_to(out, "settings that differ:\n");
        for (const auto& [k, v] : c.settings_diff) fmt::format_to(out, "  {:<36} {:>16} -> {}\n", k, v.first, v.second);
    }
    fmt::format_to(out, "noise band: max over {} more seed{} of how far B - A moves (A's seed and those, both sides)\n",
                   c.seeds.size() - 1, c.seeds.size() == 2 ? "" : "s");
    fmt::format_to(out, "{:<40} {:>16} {:>16} {:>14} {:>9} {:>12}\n", "key", "A", "B", "B - A", "%", "band +-");
    for (const CompareRow& r : compareRows(c)) {
        const std::string pct = r.diff_pct ? fmt::format("{:+.1f}%", *r.diff_pct) : std::string("-");
        fmt::format_to(out, "{:<40} {:>16} {:>16} {:>14} {:>9} {:>12}\n", r.key, cell(r.a), cell(r.b),
                       r.diff ? fmt::format("{:+.3f}", *r.diff) : std::string("-"), pct, cell(r.band));
    }
    return fmt::to_string(b);
}

nlohmann::ordered_json compareJson(const Comparison& c) {
    using nlohmann::ordered_json;
    const auto num = [](const std::optional<double>& x) -> ordered_json {
        if (!x || !std::isfinite(*x)) return nullptr;
        return std::strtod(fmt::format("{:.12g}", *x).c_str(), nullptr);
    };
    ordered_json j;
    j["a"] = c.a.name;
    j["b"] = c.b.name;
    j["seeds"] = c.seeds;
    ordered_json diff = ordered_json::object();
    for (const auto& [k, v] : c.settings_diff) diff[k] = {v.first, v.second};
    j["settings_diff"] = std::move(diff);
    j["rows"] = ordered_json::array();
    for (const CompareRow& r : compareRows(c))
        j["rows"].push_back({{"key", r.key}, {"a", num(r.a)}, {"b", num(r.b)}, {"diff", num(r.diff)},
                             {"diff_pct", num(r.diff_pct)}, {"noise_band", num(r.band)}});
    return j;
}

std::string compareCsv(const Comparison& c) {
    std::string s = "key,a,b,diff,diff_pct,noise_band\n";
    const auto f = [](const std::optional<double>& x) { return x ? fmt::format("{:.12g}", *x) : std::string(); };
    for (const CompareRow& r : compareRows(c))
        s += fmt::format("{},{},{},{},{},{}\n", r.key, f(r.a), f(r.b), f(r.diff), f(r.diff_pct), f(r.band));
    return s;
}

}  // namespace stepsim
