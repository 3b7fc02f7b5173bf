#include "sim/run/PublishedValidation.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/base/InputError.hpp"
#include "sim/base/Statistics.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {

namespace {

std::string text(const nlohmann::json& j, const char* key, const std::string& file, int line) {
    if (!j.contains(key) || !j[key].is_string())
        throw inputError(file, line, key, "expected a string");
    return j[key].get<std::string>();
}

double positive(const nlohmann::json& j, const char* key, const std::string& file, int line) {
    if (!j.contains(key) || !j[key].is_number() || !(j[key].get<double>() > 0))
        throw inputError(file, line, key, "expected a positive number");
    return j[key].get<double>();
}

PublishedRow readRow(const nlohmann::json& j, const std::string& file, int line) {
    PublishedRow r;
    r.id = text(j, "id", file, line);
    r.source = text(j, "source", file, line);
    r.table = text(j, "table", file, line);
    r.row = text(j, "row", file, line);
    r.hardware = text(j, "hardware", file, line);
    r.configuration = text(j, "configuration", file, line);
    r.published_tps = positive(j, "tokens_per_s_per_gpu", file, line);
    if (j.contains("memory_gib") && !j["memory_gib"].is_null()) r.published_memory_gib = positive(j, "memory_gib", file, line);
    if (j.contains("scenario") && !j["scenario"].is_null()) r.scenario = text(j, "scenario", file, line);
    else r.cannot_ask = text(j, "cannot_ask", file, line);
    if (r.scenario.empty() && r.cannot_ask.empty())
        throw inputError(file, line, "cannot_ask", "expected a scenario, or why the row cannot be asked");
    return r;
}

// Simulates one row's scenario; a refusal (InputError) leaves the row not asked, with the refusal as its reason.
void predict(PublishedRow& r, const std::filesystem::path& folder) {
    const std::filesystem::path file = folder / r.scenario;
    try {
        const Scenario sc = loadScenario(file);
        const HardwareProfile profile = resolveProfile(sc.cluster, file.string());
        const Simulation sim = simulate(sc, profile);
        r.profile = profile.name;
        r.predicted_tps = sim.results.tokens_per_s_per_gpu;
        r.error_pct = 100.0 * (r.predicted_tps - r.published_tps) / r.published_tps;
        r.predicted_memory_gib = sim.results.peak_memory_gib;
        if (r.published_memory_gib && r.predicted_memory_gib)
            r.memory_error_pct = 100.0 * (*r.predicted_memory_gib - *r.published_memory_gib) / *r.published_memory_gib;
        r.warnings = sim.results.warnings;
    } catch (const InputError& e) {
        r.cannot_ask = std::string("refused: ") + e.what();
    }
}

double worstAbs(const std::vector<double>& v) {
    double w = 0;
    for (double x : v) w = std::max(w, std::abs(x));
    return w;
}

double medianAbs(std::vector<double> v) {
    for (double& x : v) x = std::abs(x);
    return median(v);
}

}  // namespace

PublishedTable validatePublished(const std::filesystem::path& data) {
    std::ifstream in(data);
    if (!in) throw inputError(data.string(), 0, "", "cannot open the published runs' file (does it exist?)");
    PublishedTable t;
    std::string s;
    int line = 0;
    std::vector<std::pair<PublishedRatio, int>> ratios;
    while (std::getline(in, s)) {
        ++line;
        if (s.find_first_not_of(" \t\r") == std::string::npos) continue;
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(s);
        } catch (const nlohmann::json::parse_error& e) {
            throw inputError(data.string(), line, "", std::string("not a JSON object: ") + e.what());
        }
        if (j.contains("ratio")) {
            PublishedRatio r{text(j, "ratio", data.string(), line), text(j, "numerator", data.string(), line),
                             text(j, "denominator", data.string(), line), positive(j, "published", data.string(), line),
                             std::nullopt, std::nullopt};
            ratios.emplace_back(r, line);
            continue;
        }
        t.rows.push_back(readRow(j, data.string(), line));
    }
    const std::filesystem::path folder = data.parent_path();
    std::vector<double> errors, memory;
    for (PublishedRow& r : t.rows) {
        if (r.cannot_ask.empty()) predict(r, folder);
        if (!r.cannot_ask.empty()) {
            ++t.cannot_ask;
            continue;
        }
        ++t.asked;
        errors.push_back(r.error_pct);
        if (std::abs(r.error_pct) >= t.worst_abs_error_pct) {
            t.worst_abs_error_pct = std::abs(r.error_pct);
            t.worst_id = r.id;
        }
        if (r.memory_error_pct) memory.push_back(*r.memory_error_pct);
    }
    t.median_abs_error_pct = medianAbs(errors);
    t.memory_scored = static_cast<int>(memory.size());
    t.memory_median_abs_error_pct = medianAbs(memory);
    t.memory_worst_abs_error_pct = worstAbs(memory);
    std::map<std::string, const PublishedRow*> by_id;
    for (const PublishedRow& r : t.rows) by_id[r.id] = &r;
    for (auto& [r, at] : ratios) {
        const auto num = by_id.find(r.numerator), den = by_id.find(r.denominator);
        if (num == by_id.end() || den == by_id.end())
            throw inputError(data.string(), at, num == by_id.end() ? "numerator" : "denominator",
                             "expected the id of a row of this file");
        if (num->second->cannot_ask.empty() && den->second->cannot_ask.empty()) {
            r.predicted = num->second->predicted_tps / den->second->predicted_tps;
            r.error_pct = 100.0 * (*r.predicted - r.published) / r.published;
            t.ratio_worst_abs_error_pct = std::max(t.ratio_worst_abs_error_pct, std::abs(*r.error_pct));
        }
        t.ratios.push_back(r);
    }
    return t;
}

std::string toMarkdown(const PublishedTable& t) {
    std::string s;
    s += "| id | source | hardware | configuration | published tokens/s/GPU | stepsim | error | published GiB | stepsim GiB "
         "| error |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|\n";
    const auto pct = [](const std::optional<double>& x) { return x ? fmt::format("{:+.1f}%", *x) : std::string("-"); };
    const auto gib = [](const std::optional<double>& x) { return x ? fmt::format("{:.1f}", *x) : std::string("-"); };
    for (const PublishedRow& r : t.rows) {
        const std::string src = fmt::format("{}, {}, {}", r.source, r.table, r.row);
        if (!r.cannot_ask.empty()) {
            s += fmt::format("| {} | {} | {} | {} | {:.0f} | cannot ask: {} | | {} | | |\n", r.id, src, r.hardware,
                             r.configuration, r.published_tps, r.cannot_ask, gib(r.published_memory_gib));
            continue;
        }
        s += fmt::format("| {} | {} | {} | {} | {:.0f} | {:.0f} | {:+.1f}% | {} | {} | {} |\n", r.id, src, r.hardware,
                         r.configuration, r.published_tps, r.predicted_tps, r.error_pct, gib(r.published_memory_gib),
                         gib(r.predicted_memory_gib), pct(r.memory_error_pct));
    }
    s += fmt::format("\nRows asked: {} of {} ({} cannot be asked). Tokens/s per GPU: median |error| {:.1f}%, worst {:.1f}% "
                     "({}). Peak memory, {} rows published: median |error| {:.1f}%, worst {:.1f}%.\n",
                     t.asked, t.rows.size(), t.cannot_ask, t.median_abs_error_pct, t.worst_abs_error_pct,
                     t.worst_id.empty() ? "-" : t.worst_id, t.memory_scored, t.memory_median_abs_error_pct,
                     t.memory_worst_abs_error_pct);
    if (!t.ratios.empty()) {
        s += "\n| ratio | rows | published | stepsim | error |\n|---|---|---:|---:|---:|\n";
        for (const PublishedRatio& r : t.ratios)
            s += fmt::format("| {} | {} / {} | {:.4f} | {} | {} |\n", r.name, r.numerator, r.denominator, r.published,
                             r.predicted ? fmt::format("{:.4f}", *r.predicted) : std::string("cannot ask"),
                             pct(r.error_pct));
        s += fmt::format("\nRatios: worst |error| {:.2f}%.\n", t.ratio_worst_abs_error_pct);
    }
    return s;
}

}  // namespace stepsim
