#include "sim/sweep/SweepFiles.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"

namespace stepsim {

namespace {

std::ofstream create(const std::filesystem::path& file) {
    std::ofstream os(file, std::ios::binary | std::ios::trunc);
    if (!os) throw inputError(file.string(), 0, "", "cannot open this file for writing");
    return os;
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string valueText(const nlohmann::ordered_json& v) {
    if (v.is_null()) return "";
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

std::vector<std::string> resultKeys(const std::vector<PointRecord>& records) {
    std::vector<std::string> keys;
    for (const PointRecord& r : records)
        for (const auto& [k, v] : r.results.items())
            if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    return keys;
}

std::string settingOr(const PointRecord& r, const std::string& key, const std::string& fallback) {
    for (const SweepSetting& s : r.settings)
        if (s.key == key) return s.value;
    return fallback;
}

std::string quoteGnuplot(const std::string& s) {
    std::string q;
    for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return "\"" + q + "\"";
}

}  // namespace

std::vector<std::string> variedKeys(const std::vector<PointRecord>& records) {
    std::vector<std::string> keys;
    for (const PointRecord& r : records)
        for (const SweepSetting& s : r.settings)
            if (std::find(keys.begin(), keys.end(), s.key) == keys.end()) keys.push_back(s.key);
    return keys;
}

void writeCsv(const std::filesystem::path& file, const std::vector<PointRecord>& records, const SweepSummary& s,
              const Objective& o) {
    std::ofstream os = create(file);
    const std::vector<std::string> varied = variedKeys(records), results = resultKeys(records);
    os << "point,as_given";
    for (const auto& k : varied) os << ',' << csvField(k);
    os << ",feasible,reason,objective";
    for (const auto& k : results) os << ',' << csvField(k);
    os << '\n';
    for (std::size_t i = 0; i < records.size(); ++i) {
        const PointRecord& r = records[i];
        os << i << ',' << (r.key.empty() ? "true" : "false");
        for (const auto& k : varied) {
            const auto base = s.baseline.find(k);
            os << ',' << csvField(settingOr(r, k, base == s.baseline.end() ? "" : base->second));
        }
        os << ',' << (r.feasible ? "true" : "false") << ',' << csvField(r.reason) << ',';
        if (const auto x = o.of(r)) os << nlohmann::json(*x).dump();
        for (const auto& k : results) os << ',' << (r.results.contains(k) ? csvField(valueText(r.results[k])) : "");
        os << '\n';
    }
}

void writeJson(const std::filesystem::path& file, const std::vector<PointRecord>& records, const SweepSummary& s,
               const Objective& o, const Recommendation& r) {
    nlohmann::ordered_json j;
    j["sweep"] = s.file;
    j["search"] = s.search;
    j["points_total"] = s.points_total;
    j["points"] = records.size();
    j["complete"] = s.complete;
    j["varied_keys"] = variedKeys(records);
    j["recommendation"] = toJson(r, records, o);
    j["records"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < records.size(); ++i) {
        nlohmann::ordered_json p = toJson(records[i]);
        p["point"] = i;
        p["objective"] = o.of(records[i]) ? nlohmann::ordered_json(*o.of(records[i])) : nullptr;
        j["records"].push_back(std::move(p));
    }
    create(file) << j.dump(2) << '\n';
}

std::string writePlot(const std::filesystem::path& dir, const std::vector<PointRecord>& records, const Objective& o,
                      const Recommendation& r) {
    if (r.sensitivity.empty() || !r.best) return "no plot: no feasible point with a varied knob";
    const KnobSensitivity& x = r.sensitivity[0];
    const KnobSensitivity* y = r.sensitivity.size() > 1 ? &r.sensitivity[1] : nullptr;
    // The x axis: the first knob's values, numeric ones in numeric order.
    std::vector<std::string> xs;
    for (const auto& [v, _] : x.best_by_value) xs.push_back(v);
    const bool numeric = std::all_of(xs.begin(), xs.end(), [](const std::string& v) {
        char* end = nullptr;
        std::strtod(v.c_str(), &end);
        return !v.empty() && *end == '\0';
    });
    if (numeric)
        std::sort(xs.begin(), xs.end(), [](const std::string& a, const std::string& b) {
            return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
        });
    std::vector<std::string> ys{""};
    if (y) {
        ys.clear();
        for (const auto& [v, _] : y->best_by_value) ys.push_back(v);
    }
    std::ofstream dat = create(dir / "plot.dat");
    std::vector<std::string> titles;  // of the blocks written (a value of the second knob with a feasible point)
    for (std::size_t b = 0; b < ys.size(); ++b) {
        std::string block;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            std::optional<double> best;
            for (std::size_t k = 1; k < records.size(); ++k) {
                const auto v = o.of(records[k]);
                if (!v || settingOr(records[k], x.key, "") != xs[i] || (y && settingOr(records[k], y->key, "") != ys[b]))
                    continue;
                if (!best || o.better(*v, *best)) best = v;
            }
            if (best) block += fmt::format("{} {} {}\n", i, quoteGnuplot(xs[i]), nlohmann::json(*best).dump());
        }
        if (block.empty()) continue;
        dat << "# " << (y ? y->key + "=" + ys[b] : o.key) << '\n' << block << "\n\n";
        titles.push_back(y ? ys[b] : o.key);
    }
    dat.close();
    std::ofstream gp = create(dir / "plot.gp");
    gp << "# gnuplot " << (dir / "plot.gp").string() << "  (plot.dat: x index, x value, the objective's best over the "
       << "other knobs)\n"
       << "set terminal svg size 900,540 font 'sans,12' background rgb 'white'\n"
       << "set termoption noenhanced\n"
       << "set output " << quoteGnuplot((dir / "plot.svg").string()) << '\n'
       << "set title " << quoteGnuplot(fmt::format("{} ({}), best over the other knobs", o.key,
                                                   o.goal == SweepGoal::maximize ? "higher is better" : "lower is better"))
       << " noenhanced\n"
       << "set xlabel " << quoteGnuplot(x.key) << " noenhanced\n"
       << "set ylabel " << quoteGnuplot(o.key) << " noenhanced\n"
       << "set grid\nset key outside right noenhanced title " << quoteGnuplot(y ? y->key : "") << '\n'
       << "set offsets 0.2, 0.2, 0, 0\n"
       << "plot ";
    for (std::size_t b = 0; b < titles.size(); ++b)
        gp << (b ? ", \\\n     " : "") << quoteGnuplot((dir / "plot.dat").string()) << " index " << b
           << " using 1:3:xtic(2) with linespoints pt 7 title " << quoteGnuplot(titles[b]);
    gp << '\n';
    gp.close();
    const std::string cmd = fmt::format("gnuplot {} 2>&1", quoteGnuplot((dir / "plot.gp").string()));
    if (std::system(("command -v gnuplot >/dev/null 2>&1 && " + cmd + " >/dev/null").c_str()) != 0)
        return fmt::format("no plot image: gnuplot did not run (install gnuplot-nox; then gnuplot {})",
                           (dir / "plot.gp").string());
    return (dir / "plot.svg").string();
}

}  // namespace stepsim
