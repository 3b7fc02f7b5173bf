#include "sim/run/Validation.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/base/Statistics.hpp"
#include "sim/metrics/Metrics.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/run/Simulate.hpp"

namespace stepsim {

namespace {

const nlohmann::json& need(const nlohmann::json& j, const char* key, const std::string& file, int line) {
    if (!j.contains(key)) throw inputError(file, line, key, "missing in this measured record");
    return j.at(key);
}

// A measured step time: a positive number of milliseconds.
double positiveMs(const nlohmann::json& v, const std::string& file, int line, const char* key) {
    if (!v.is_number() || !(v.get<double>() > 0.0))
        throw inputError(file, line, key, "expected a positive step time in milliseconds, got " + v.dump());
    return v.get<double>();
}

// The exposed-communication target: within 20% of the measurement, or 0.2 ms where that is less.
bool exposedClose(double abs_error_ms, double measured_ms) { return abs_error_ms <= std::max(0.2, 0.2 * measured_ms); }

// The step errors of the rows `keep` selects, and how their rows with trusted comm figures score.
template <class Keep>
StepErrors score(const std::vector<ValidationRow>& rows, Keep keep) {
    StepErrors e;
    std::vector<double> step, exposed;
    for (const ValidationRow& r : rows) {
        if (!keep(r)) continue;
        step.push_back(std::abs(r.error_pct));
        if (step.back() > e.worst_abs_error_pct) e.worst_abs_error_pct = step.back(), e.worst_id = r.id;
        if (r.comm_trusted && r.measured_exposed_ms) {
            exposed.push_back(std::abs(*r.predicted_exposed_ms - *r.measured_exposed_ms));
            ++e.exposed_scored;
            if (exposedClose(exposed.back(), *r.measured_exposed_ms)) ++e.exposed_within_20pct;
        }
    }
    e.rows = static_cast<int>(step.size());
    e.median_abs_error_pct = median(step);
    e.exposed_median_abs_error_ms = median(exposed);
    return e;
}

// Adds a row's runs to `runs`, and those inside its host-bound range to `within` (nothing without a range).
void countRangeRuns(const ValidationRow& r, int& runs, int& within) {
    if (!r.host_range_ms) return;
    for (double ms : r.run_ms) {
        ++runs;
        within += ms >= r.host_range_ms->first && ms <= r.host_range_ms->second;
    }
}

// Whether a setting's value `a` comes before `b` in a what-if pair: numbers ascending, false and none first, else
// alphabetical.
bool comesFirst(const std::string& a, const std::string& b) {
    double x = 0, y = 0;
    const auto number = [](const std::string& s, double& v) {
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        return ec == std::errc() && end == s.data() + s.size();
    };
    if (number(a, x) && number(b, y)) return x < y;
    for (const char* low : {"false", "none"}) {
        if (a == low) return true;
        if (b == low) return false;
    }
    return a < b;
}

// What makes two scenarios' settings a what-if pair: the one key they differ in, with its two values; or, where
// they differ in the micro-batch and the accumulation steps alone with the same product (one global batch split two
// ways), the pair of them, "micro_batch × grad_accum", each value written "4 × 1". Nothing for other differences.
struct Difference {
    std::string setting, a, b;
    double order_a = 0, order_b = 0;  // for the split: the micro-batch, the smaller first; else unused
    bool split = false;
};

std::optional<Difference> whatIf(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b) {
    std::vector<std::string> differ;
    for (const auto& [key, value] : a)
        if (auto it = b.find(key); it == b.end() || it->second != value) differ.push_back(key);
    for (const auto& [key, value] : b)
        if (!a.contains(key)) differ.push_back(key);
    for (const std::string& key : differ)
        if (!a.contains(key) || !b.contains(key)) return std::nullopt;
    if (differ.size() == 1) return Difference{differ[0], a.at(differ[0]), b.at(differ[0])};
    const std::string mb = "training.micro_batch", ga = "training.grad_accum";
    if (differ != std::vector<std::string>{ga, mb}) return std::nullopt;  // a's keys, in order
    const auto num = [](const std::string& s) { return std::stod(s); };
    if (num(a.at(mb)) * num(a.at(ga)) != num(b.at(mb)) * num(b.at(ga))) return std::nullopt;
    return Difference{"training.micro_batch × grad_accum", a.at(mb) + " × " + a.at(ga), b.at(mb) + " × " + b.at(ga),
                      num(a.at(mb)), num(b.at(mb)), true};
}

// The what-if pairs among the rows (settings: each row's scenarioSettings), oriented from the setting's first value
// to its second (comesFirst; a split from the smaller micro-batch).
std::vector<KnobEffect> knobEffects(const std::vector<ValidationRow>& rows,
                                    const std::vector<std::map<std::string, std::string>>& settings) {
    std::vector<KnobEffect> out;
    for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t j = i + 1; j < rows.size(); ++j) {
            const std::optional<Difference> d = whatIf(settings[i], settings[j]);
            if (!d) continue;
            const bool swap = d->split ? d->order_b < d->order_a : comesFirst(d->b, d->a);
            const ValidationRow& base = rows[swap ? j : i];
            const ValidationRow& other = rows[swap ? i : j];
            KnobEffect e;
            e.setting = d->setting;
            e.from = swap ? d->b : d->a;
            e.to = swap ? d->a : d->b;
            e.base_id = base.id;
            e.other_id = other.id;
            e.measured_pct = 100.0 * (other.measured_ms / base.measured_ms - 1.0);
            e.predicted_pct = 100.0 * (other.predicted_ms / base.predicted_ms - 1.0);
            e.reproducible = base.reproducible && other.reproducible;
            out.push_back(std::move(e));
        }
    std::stable_sort(out.begin(), out.end(), [](const KnobEffect& x, const KnobEffect& y) { return x.setting < y.setting; });
    return out;
}

// How the pairs `keep` selects score.
template <class Keep>
EffectErrors scoreEffects(const std::vector<KnobEffect>& effects, Keep keep) {
    EffectErrors e;
    std::vector<double> err;
    for (const KnobEffect& k : effects) {
        if (!keep(k)) continue;
        err.push_back(std::abs(k.errorPct()));
        if (err.back() > e.worst_abs_error_pct) e.worst_abs_error_pct = err.back(), e.worst = k.base_id + " → " + k.other_id;
        if (std::abs(k.measured_pct) >= kDirectedChangePct) {
            ++e.directed;
            e.direction_right += (k.predicted_pct > 0) == (k.measured_pct > 0);
        }
    }
    e.pairs = static_cast<int>(err.size());
    e.median_abs_error_pct = median(err);
    return e;
}

// A measured run's communication figures, the candidates the measured exposed comm and overlap come from.
struct MeasuredComm {
    // Candidate isolated profiles (the first run's, then each repeat's), each with its run's step.
    struct Profile {
        double step_ms, span_ms, exposed_ms, overlap;
        bool cuda_only;
    };
    std::vector<Profile> profiles;
    // Steady state (train_gpt.py --steady-steps: consecutive steps profiled unsynchronized, as the timed steps run):
    // exposed comm and overlap ratio per step, from the first run and each repeat that has them, when the profiled
    // steps ran within 10% of the run's timed step (the profiler's per-launch cost slows host-bound steps, and their
    // overlap with them).
    std::vector<double> steady_exposed, steady_overlap;
};

bool steadyTrusted(double profiled_ms, double timed_ms) {
    return profiled_ms > 0 && std::abs(profiled_ms - timed_ms) <= 0.10 * timed_ms;
}

// The measured side of record `j` (line `line` of `file`): its id, the runs' step times and their spread, and `comm`.
ValidationRow measuredRow(const nlohmann::json& j, const std::string& file, int line, MeasuredComm& comm) {
    ValidationRow r;
    r.id = need(j, "id", file, line).get<std::string>();
    if (r.id.empty() || r.id.find('/') != std::string::npos)
        throw inputError(file, line, "id", "expected a configuration id (a scenario's file stem), got '" + r.id + "'");
    r.run_ms.push_back(
        positiveMs(need(need(j, "step_time_ms", file, line), "median", file, line), file, line, "step_time_ms.median"));
    if (j.contains("steady") && j["steady"].contains("exposed_comm_ms")) {
        std::vector<double> steps = j["steady"].value("step_time_ms", std::vector<double>{});
        if (!steps.empty() && steadyTrusted(median(steps), r.run_ms.front())) {
            comm.steady_exposed.push_back(j["steady"].value("exposed_comm_ms", 0.0));
            comm.steady_overlap.push_back(j["steady"].value("overlap_ratio", 0.0));
        }
    }
    if (j.contains("profile") && j["profile"].contains("primary")) {
        const nlohmann::json& p = j["profile"]["primary"];
        comm.profiles.push_back({r.run_ms.front(), p.value("span_ms", 0.0), p.value("exposed_comm_ms", 0.0),
                                 p.value("overlap_ratio", 0.0),
                                 j["profile"].value("mode", std::string()).rfind("cuda only", 0) == 0});
    }
    if (j.contains("step_time_ms_repeats") && j["step_time_ms_repeats"].is_array())
        for (const auto& rep : j["step_time_ms_repeats"]) {
            r.run_ms.push_back(positiveMs(need(rep, "median", file, line), file, line, "step_time_ms_repeats[].median"));
            if (rep.contains("steady_exposed_comm_ms") && steadyTrusted(rep.value("steady_step_ms", 0.0), r.run_ms.back())) {
                comm.steady_exposed.push_back(rep.value("steady_exposed_comm_ms", 0.0));
                comm.steady_overlap.push_back(rep.value("steady_overlap_ratio", 0.0));
            }
            if (rep.contains("span_ms") && rep["span_ms"].is_number())
                comm.profiles.push_back({r.run_ms.back(), rep.value("span_ms", 0.0), rep.value("exposed_comm_ms", 0.0),
                                         rep.value("overlap_ratio", 0.0),
                                         rep.value("profile_mode", std::string()).rfind("cuda only", 0) == 0});
        }
    r.measured_ms = median(r.run_ms);
    const auto [lo, hi] = std::minmax_element(r.run_ms.begin(), r.run_ms.end());
    r.run_spread_pct = 100.0 * (*hi - *lo) / r.measured_ms;
    r.reproducible = r.run_ms.size() >= 2 && r.run_spread_pct <= kReproducibleSpreadPct;
    return r;
}

// The measured exposed comm and overlap of a multi-GPU row: the steady state's median when any run has it, else one
// isolated profiled step, the first within 10% of its run's step, CUDA-only preferred.
void measuredCommFigures(ValidationRow& r, const MeasuredComm& comm) {
    if (r.gpus > 1 && !comm.steady_exposed.empty()) {
        r.steady_runs = static_cast<int>(comm.steady_exposed.size());
        r.comm_trusted = true;
        r.measured_exposed_ms = median(comm.steady_exposed);
        r.measured_overlap = median(comm.steady_overlap);
    } else if (r.gpus > 1 && !comm.profiles.empty()) {
        auto trusted = [](const MeasuredComm::Profile& c) {
            return c.span_ms > 0 && std::abs(c.span_ms - c.step_ms) <= 0.10 * c.step_ms;
        };
        const MeasuredComm::Profile* use = &comm.profiles.front();
        for (const MeasuredComm::Profile& c : comm.profiles)
            if (trusted(c) && (!trusted(*use) || (c.cuda_only && !use->cuda_only))) use = &c;
        r.comm_trusted = trusted(*use);
        r.measured_exposed_ms = use->exposed_ms;
        r.measured_overlap = use->overlap;
    }
}

// Row `r`'s prediction: its scenario (scenario_dir/ID.yaml, on `profile` when one is given) simulated. Returns the
// scenario's settings, for the what-if pairs.
std::map<std::string, std::string> predictRow(ValidationRow& r, const MeasuredComm& comm,
                                              const std::filesystem::path& scenario_dir, const std::string& profile) {
    const std::filesystem::path scenario = scenario_dir / (r.id + ".yaml");
    std::vector<std::string> overrides;
    if (!profile.empty()) overrides.push_back("cluster.profile=" + profile);
    const Scenario sc = loadScenario(scenario, overrides);
    r.gpus = sc.cluster.worldSize();
    std::map<std::string, std::string> settings = scenarioSettings(sc);
    const Simulation sim = simulate(sc, resolveProfile(sc.cluster, scenario.string()));
    r.predicted_ms = sim.results.step_time_ms;
    r.host_bound = sim.host_bound;
    if (r.host_bound) r.host_range_ms = sim.host_range_ms;
    r.error_pct = 100.0 * (r.predicted_ms - r.measured_ms) / r.measured_ms;
    measuredCommFigures(r, comm);
    if (r.measured_exposed_ms) {
        r.predicted_exposed_ms = sim.results.exposed_comm_ms;
        r.predicted_overlap = sim.results.overlap_ratio;
    }
    return settings;
}

// The table's scores over its rows: step time over all, the reproducible, the irreproducible, the GPU- and
// host-bound rows; the host's range; the what-if pairs of rows that differ in one setting, over all and by setting.
void scoreTable(ValidationTable& t, const std::vector<std::map<std::string, std::string>>& settings) {
    const StepErrors all = score(t.rows, [](const ValidationRow&) { return true; });
    t.median_abs_error_pct = all.median_abs_error_pct;
    t.worst_abs_error_pct = all.worst_abs_error_pct;
    t.worst_id = all.worst_id;
    t.exposed_scored = all.exposed_scored;
    t.exposed_within_20pct = all.exposed_within_20pct;
    t.exposed_median_abs_error_ms = all.exposed_median_abs_error_ms;
    t.reproducible = score(t.rows, [](const ValidationRow& r) { return r.reproducible; });
    t.irreproducible = score(t.rows, [](const ValidationRow& r) { return !r.reproducible; });
    t.gpu_bound = score(t.rows, [](const ValidationRow& r) { return !r.host_bound; });
    t.host_bound = score(t.rows, [](const ValidationRow& r) { return r.host_bound; });
    for (const ValidationRow& r : t.rows) {
        if (!r.reproducible) t.irreproducible_max_spread_pct = std::max(t.irreproducible_max_spread_pct, r.run_spread_pct);
        countRangeRuns(r, t.host_range_runs, t.host_range_runs_within);
    }
    t.effects = knobEffects(t.rows, settings);
    t.effects_all = scoreEffects(t.effects, [](const KnobEffect&) { return true; });
    t.effects_reproducible = scoreEffects(t.effects, [](const KnobEffect& k) { return k.reproducible; });
    for (std::size_t i = 0; i < t.effects.size(); ++i) {  // sorted by setting: each setting once
        const std::string& setting = t.effects[i].setting;
        if (i > 0 && t.effects[i - 1].setting == setting) continue;
        const EffectErrors every = scoreEffects(t.effects, [&](const KnobEffect& k) { return k.setting == setting; });
        const EffectErrors rep =
            scoreEffects(t.effects, [&](const KnobEffect& k) { return k.setting == setting && k.reproducible; });
        t.effects_by_setting.push_back(
            {setting, every.pairs, rep.pairs, every.median_abs_error_pct, rep.median_abs_error_pct});
    }
}

}  // namespace

ValidationTable validate(const std::filesystem::path& measured_jsonl, const std::filesystem::path& scenario_dir,
                         const std::string& profile) {
    const std::string file = measured_jsonl.string();
    std::ifstream in(measured_jsonl);
    if (!in) throw inputError(file, 0, "", "cannot read the measured runs");
    ValidationTable t;
    t.profile = profile.empty() ? "each scenario's cluster.profile" : profile;
    std::string text;
    int line = 0;
    std::vector<std::map<std::string, std::string>> settings;  // each row's scenario, for the what-if pairs
    while (std::getline(in, text)) {
        ++line;
        if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text);
        } catch (const nlohmann::json::parse_error& e) {
            throw inputError(file, line, "", std::string("not a JSON object: ") + e.what());
        }
        if (!j.is_object()) throw inputError(file, line, "", "expected a JSON object (one measured run), got " + j.dump());
        // A value of the wrong JSON type anywhere in the record is bad input, named with its line.
        try {
            if (j.value("status", std::string("ok")) != "ok") continue;
            MeasuredComm comm;
            ValidationRow r = measuredRow(j, file, line, comm);
            settings.push_back(predictRow(r, comm, scenario_dir, profile));
            t.rows.push_back(std::move(r));
        } catch (const nlohmann::json::exception& e) {
            throw inputError(file, line, "", std::string("a value of the wrong type in this measured record: ") + e.what());
        }
    }
    if (t.rows.empty()) throw inputError(file, 0, "", "no measured runs with status ok");
    scoreTable(t, settings);
    return t;
}

namespace {

// One line of the held-out predictions: {"round": R, "id": ID, "prediction": <`stepsim run --json` output>}, scored
// against the measured row `measured` of the same id.
HeldoutRow heldoutRow(const nlohmann::json& line, const ValidationRow& measured, const std::string& file, int n) {
    const nlohmann::json& j = line["prediction"];
    HeldoutRow h{line["round"].get<std::string>(), measured, measured.predicted_ms};
    ValidationRow& r = h.row;
    if (!j.contains("step_time_ms") || !j["step_time_ms"].is_number())
        throw inputError(file, n, "prediction.step_time_ms", "missing: expected `stepsim run --json` output");
    r.predicted_ms = j["step_time_ms"].get<double>();
    r.error_pct = 100.0 * (r.predicted_ms / r.measured_ms - 1.0);
    r.host_bound = false;
    if (j.contains("warnings"))
        for (const auto& w : j["warnings"]) r.host_bound |= w.get<std::string>().rfind("host-bound", 0) == 0;
    r.host_range_ms.reset();
    if (j.contains("step_time_ms_host_range") && j["step_time_ms_host_range"].is_array())
        r.host_range_ms = {j["step_time_ms_host_range"][0].get<double>(), j["step_time_ms_host_range"][1].get<double>()};
    if (r.measured_exposed_ms) {
        r.predicted_exposed_ms = j.value("exposed_comm_ms", 0.0);
        r.predicted_overlap = j.value("overlap_ratio", 0.0);
    }
    return h;
}

}  // namespace

void addHeldout(ValidationTable& t, const std::filesystem::path& predictions) {
    std::ifstream in(predictions);
    if (!in) throw inputError(predictions.string(), 0, "", "cannot read the held-out predictions");
    const std::string file = predictions.string();
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
        if (text.empty()) continue;
        nlohmann::json line;
        try {
            line = nlohmann::json::parse(text);
        } catch (const nlohmann::json::parse_error& e) {
            throw inputError(file, n, "", std::string("not a JSON object: ") + e.what());
        }
        for (const char* key : {"round", "id"})
            if (!line.is_object() || !line.contains(key) || !line[key].is_string())
                throw inputError(file, n, key, "missing: expected a string");
        if (!line.contains("prediction") || !line["prediction"].is_object())
            throw inputError(file, n, "prediction", "missing: expected the `stepsim run --json` output as an object");
        const std::string id = line["id"].get<std::string>();
        const auto measured = std::find_if(t.rows.begin(), t.rows.end(), [&](const ValidationRow& r) { return r.id == id; });
        if (measured == t.rows.end()) {
            t.heldout_waiting.push_back(line["round"].get<std::string>() + "/" + id);
            continue;
        }
        t.heldout.push_back(heldoutRow(line, *measured, file, n));
    }
    std::vector<ValidationRow> rows;
    for (const HeldoutRow& h : t.heldout) {
        rows.push_back(h.row);
        countRangeRuns(h.row, t.heldout_host_range_runs, t.heldout_host_range_runs_within);
    }
    t.heldout_all = score(rows, [](const ValidationRow&) { return true; });
    t.heldout_gpu_bound = score(rows, [](const ValidationRow& r) { return !r.host_bound; });
    t.heldout_host_bound = score(rows, [](const ValidationRow& r) { return r.host_bound; });
}

namespace {

// The table's rows and the step-time and communication scores over them, with the marks' legend.
std::string markdownRows(const ValidationTable& t) {
    std::string s = fmt::format("Predictions with profile `{}` against {} measured configurations.\n\n", t.profile,
                                t.rows.size());
    s += "| configuration | GPUs | measured step (ms) | predicted (ms) | error | exposed comm measured / predicted (ms) "
         "| overlap ratio measured / predicted |\n|---|---|---|---|---|---|---|\n";
    for (const ValidationRow& r : t.rows) {
        std::string exposed = "–", overlap = "–";
        if (r.measured_exposed_ms) {
            const char* mark = r.steady_runs > 0 ? " ‡" : (r.comm_trusted ? "" : " †");
            exposed = fmt::format("{:.2f} / {:.2f}{}", *r.measured_exposed_ms, *r.predicted_exposed_ms, mark);
            overlap = fmt::format("{:.3f} / {:.3f}{}", *r.measured_overlap, *r.predicted_overlap, mark);
        }
        std::string measured = fmt::format("{:.2f}", r.measured_ms);
        if (r.run_ms.size() > 1) {
            measured += " (runs";
            for (double v : r.run_ms) measured += fmt::format(" {:.2f}", v);
            measured += ")";
        }
        if (!r.reproducible) measured += " §";
        std::string predicted = fmt::format("{:.2f}{}", r.predicted_ms, r.host_bound ? " h" : "");
        if (r.host_range_ms) predicted += fmt::format(" [{:.1f}–{:.1f}]", r.host_range_ms->first, r.host_range_ms->second);
        s += fmt::format("| {} | {} | {} | {} | {:+.1f}% | {} | {} |\n", r.id, r.gpus, measured, predicted, r.error_pct,
                         exposed, overlap);
    }
    s += fmt::format("\nStep time: median |error| {:.1f}%, worst {:.1f}% ({}).\n", t.median_abs_error_pct,
                     t.worst_abs_error_pct, t.worst_id);
    if (t.reproducible.rows > 0)
        s += fmt::format("On the {} configurations whose runs reproduce (median steps within {:.0f}% of each other): median "
                         "|error| {:.1f}%, worst {:.1f}% ({}); exposed communication within 20% on {} of {}, median "
                         "|error| {:.2f} ms.\n",
                         t.reproducible.rows, kReproducibleSpreadPct, t.reproducible.median_abs_error_pct,
                         t.reproducible.worst_abs_error_pct, t.reproducible.worst_id, t.reproducible.exposed_within_20pct,
                         t.reproducible.exposed_scored, t.reproducible.exposed_median_abs_error_ms);
    if (t.irreproducible.rows > 0)
        s += fmt::format("On the {} others (one run, or runs up to {:.0f}% apart between machine starts): "
                         "median |error| {:.1f}%, worst {:.1f}% ({}); exposed communication within 20% on {} of {}, "
                         "median |error| {:.2f} ms.\n",
                         t.irreproducible.rows, t.irreproducible_max_spread_pct, t.irreproducible.median_abs_error_pct,
                         t.irreproducible.worst_abs_error_pct, t.irreproducible.worst_id,
                         t.irreproducible.exposed_within_20pct, t.irreproducible.exposed_scored,
                         t.irreproducible.exposed_median_abs_error_ms);
    for (const auto& [e, what] : {std::pair{&t.gpu_bound, "the simulation calls GPU-bound"},
                                  std::pair{&t.host_bound, "it calls host-bound (h)"}})
        if (e->rows > 0)
            s += fmt::format("On the {} rows {}: median |error| {:.1f}%, worst {:.1f}% ({}); exposed communication "
                             "within 20% on {} of {}, median |error| {:.2f} ms.\n",
                             e->rows, what, e->median_abs_error_pct, e->worst_abs_error_pct, e->worst_id,
                             e->exposed_within_20pct, e->exposed_scored, e->exposed_median_abs_error_ms);
    if (t.host_range_runs > 0)
        s += fmt::format("Of the host-bound rows' {} runs, {} took a median step within the range the simulation gives "
                         "with the host faster and slower by the profile's spread (launch.host_cost_spread: the 10th to "
                         "90th percentile of the calibration runs' host cost per kernel) [in brackets].\n",
                         t.host_range_runs, t.host_range_runs_within);
    s += fmt::format("Exposed communication, on the {} rows with a trusted profile: {} within 20% (or 0.2 ms), "
                     "median |error| {:.2f} ms.\n",
                     t.exposed_scored, t.exposed_within_20pct, t.exposed_median_abs_error_ms);
    s += "Measured step: the median over runs of each run's median step; \"runs\" lists them when a configuration "
         "ran more than once (another machine start, or CUDA-only profiling). § its runs do not reproduce: one run, or "
         "runs more than 10% apart. h: the simulated step is host-bound (the host busy 75% of it or more; "
         "`stepsim run` warns).\n";
    s += "Measured communication: ‡ the median over runs that profiled consecutive steps unsynchronized, as the timed "
         "steps run (train_gpt.py --steady-steps), at a step within 10% of the run's timed step; otherwise one isolated "
         "profiled step's.\n";
    s += "† the profiled step ran more than 10% longer than the timed step (profiler overhead on a host-bound step): "
         "its measured communication figures are inflated and not used as a reference.\n";
    return s;
}

// The held-out rounds: each configuration as predicted before it ran, and the scores; empty without rounds.
std::string markdownHeldout(const ValidationTable& t) {
    std::string s;
    if (t.heldout.empty()) return s;
    s += fmt::format("\nHeld out: {} configurations predicted and committed before they first ran, scored as they were "
                     "predicted then (this build's prediction beside).\n\n",
                     t.heldout.size());
    s += "| round | configuration | predicted then (ms) | measured (ms) | error | predicted now (ms) |\n"
         "|---|---|---|---|---|---|\n";
    for (const HeldoutRow& h : t.heldout) {
        std::string then = fmt::format("{:.2f}{}", h.row.predicted_ms, h.row.host_bound ? " h" : "");
        if (h.row.host_range_ms)
            then += fmt::format(" [{:.1f}–{:.1f}]", h.row.host_range_ms->first, h.row.host_range_ms->second);
        s += fmt::format("| {} | {} | {} | {:.2f}{} | {:+.1f}% | {:.2f} |\n", h.round, h.row.id, then,
                         h.row.measured_ms, h.row.reproducible ? "" : " §", h.row.error_pct, h.predicted_now_ms);
    }
    s += "\n";
    for (const auto& [e, what] : {std::pair{&t.heldout_all, "held-out configurations, as predicted before they ran"},
                                  std::pair{&t.heldout_gpu_bound, "the prediction then called GPU-bound"},
                                  std::pair{&t.heldout_host_bound, "it called host-bound"}})
        if (e->rows > 0)
            s += fmt::format("On the {} {}: median |error| {:.1f}%, worst {:.1f}% ({}); exposed communication within "
                             "20% on {} of {}.\n",
                             e->rows, what, e->median_abs_error_pct, e->worst_abs_error_pct, e->worst_id,
                             e->exposed_within_20pct, e->exposed_scored);
    if (t.heldout_host_range_runs > 0)
        s += fmt::format("Of the runs of those called host-bound with a range, {} of {} took a median step within "
                         "it.\n",
                         t.heldout_host_range_runs_within, t.heldout_host_range_runs);
    if (!t.heldout_waiting.empty()) {
        s += fmt::format("Not measured yet ({}):", t.heldout_waiting.size());
        for (const std::string& w : t.heldout_waiting) s += " " + w;
        s += ".\n";
    }
    return s;
}

// The what-if pairs: each pair's change measured and predicted, the scores over them and by setting; empty without
// pairs.
std::string markdownEffects(const ValidationTable& t) {
    std::string s;
    if (t.effects.empty()) return s;
    s += fmt::format("\nWhat-if pairs: the {} pairs of configurations whose scenarios differ in one setting (or split "
                     "one global batch two ways between micro-batch and accumulation), and how much that changes the "
                     "step, measured and predicted.\n\n",
                     t.effects.size());
    s += "| setting | from → to | configurations | measured change | predicted change | error of the ratio |\n"
         "|---|---|---|---|---|---|\n";
    for (const KnobEffect& k : t.effects)
        s += fmt::format("| {} | {} → {} | {} → {}{} | {:+.1f}% | {:+.1f}% | {:+.1f}% |\n", k.setting, k.from, k.to,
                         k.base_id, k.other_id, k.reproducible ? "" : " §", k.measured_pct, k.predicted_pct,
                         k.errorPct());
    s += "\n";
    for (const auto& [e, what] : {std::pair{&t.effects_all, "pairs"},
                                  std::pair{&t.effects_reproducible, "pairs whose two configurations reproduce"}})
        if (e->pairs > 0)
            s += fmt::format("On the {} {}: the predicted ratio of the two steps a median {:.1f}% from the measured, "
                             "worst {:.1f}% ({}); the direction right on {} of the {} whose measured change is {:.0f}% "
                             "or more.\n",
                             e->pairs, what, e->median_abs_error_pct, e->worst_abs_error_pct, e->worst,
                             e->direction_right, e->directed, kDirectedChangePct);
    s += "§ the runs of one of the two configurations, or of both, do not reproduce.\n";
    // By setting: how far each setting's changes are from the measured, so a reader sees which were checked.
    s += "\n| setting | pairs (reproducible) | median error of the ratio, reproducible pairs | all pairs |\n"
         "|---|---|---|---|\n";
    for (const SettingErrors& e : t.effects_by_setting)
        s += fmt::format("| {} | {} ({}) | {} | {:.1f}% |\n", e.setting, e.pairs, e.reproducible_pairs,
                         e.reproducible_pairs ? fmt::format("{:.1f}%", e.median_abs_error_pct_reproducible)
                                              : std::string("–"),
                         e.median_abs_error_pct);
    return s;
}

}  // namespace

std::string toMarkdown(const ValidationTable& t) {
    std::string s = markdownRows(t);
    s += markdownHeldout(t);
    s += markdownEffects(t);
    return s;
}

namespace {
nlohmann::ordered_json effectErrorsJson(const EffectErrors& e) {
    return {{"pairs", e.pairs},
            {"median_abs_error_pct", e.median_abs_error_pct},
            {"worst_abs_error_pct", e.worst_abs_error_pct},
            {"worst", e.worst},
            {"directed", e.directed},
            {"direction_right", e.direction_right}};
}

nlohmann::ordered_json errorsJson(const StepErrors& e);

nlohmann::ordered_json heldoutJson(const ValidationTable& t) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const HeldoutRow& h : t.heldout) {
        nlohmann::ordered_json j{{"round", h.round},
                                 {"id", h.row.id},
                                 {"predicted_then_ms", h.row.predicted_ms},
                                 {"measured_step_time_ms", h.row.measured_ms},
                                 {"error_pct", h.row.error_pct},
                                 {"predicted_now_ms", h.predicted_now_ms},
                                 {"predicted_host_bound", h.row.host_bound},
                                 {"reproducible", h.row.reproducible}};
        if (h.row.host_range_ms) j["predicted_host_range_ms"] = {h.row.host_range_ms->first, h.row.host_range_ms->second};
        rows.push_back(j);
    }
    return {{"all", errorsJson(t.heldout_all)},
            {"gpu_bound", errorsJson(t.heldout_gpu_bound)},
            {"host_bound", errorsJson(t.heldout_host_bound)},
            {"host_range_runs", t.heldout_host_range_runs},
            {"host_range_runs_within", t.heldout_host_range_runs_within},
            {"waiting", t.heldout_waiting},
            {"rows", rows}};
}

nlohmann::ordered_json errorsJson(const StepErrors& e) {
    return {{"rows", e.rows},
            {"median_abs_error_pct", e.median_abs_error_pct},
            {"worst_abs_error_pct", e.worst_abs_error_pct},
            {"worst_id", e.worst_id},
            {"exposed_scored", e.exposed_scored},
            {"exposed_within_20pct", e.exposed_within_20pct},
            {"exposed_median_abs_error_ms", e.exposed_median_abs_error_ms}};
}
}  // namespace

nlohmann::ordered_json toJson(const ValidationTable& t) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const ValidationRow& r : t.rows) {
        nlohmann::ordered_json j{{"id", r.id},
                                 {"gpus", r.gpus},
                                 {"measured_step_time_ms", r.measured_ms},
                                 {"predicted_step_time_ms", r.predicted_ms},
                                 {"error_pct", r.error_pct},
                                 {"run_step_time_ms", r.run_ms},
                                 {"run_spread_pct", r.run_spread_pct},
                                 {"reproducible", r.reproducible},
                                 {"comm_trusted", r.comm_trusted},
                                 {"predicted_host_bound", r.host_bound},
                                 {"comm_steady_runs", r.steady_runs}};
        if (r.host_range_ms) j["predicted_host_range_ms"] = {r.host_range_ms->first, r.host_range_ms->second};
        if (r.measured_exposed_ms) {
            j["measured_exposed_comm_ms"] = *r.measured_exposed_ms;
            j["predicted_exposed_comm_ms"] = *r.predicted_exposed_ms;
            j["measured_overlap_ratio"] = *r.measured_overlap;
            j["predicted_overlap_ratio"] = *r.predicted_overlap;
        }
        rows.push_back(j);
    }
    nlohmann::ordered_json effects = nlohmann::ordered_json::array();
    for (const KnobEffect& k : t.effects)
        effects.push_back({{"setting", k.setting},
                           {"from", k.from},
                           {"to", k.to},
                           {"base_id", k.base_id},
                           {"other_id", k.other_id},
                           {"measured_change_pct", k.measured_pct},
                           {"predicted_change_pct", k.predicted_pct},
                           {"reproducible", k.reproducible}});
    nlohmann::ordered_json bySetting = nlohmann::ordered_json::array();
    for (const SettingErrors& e : t.effects_by_setting) {
        nlohmann::ordered_json j{{"setting", e.setting}, {"pairs", e.pairs}, {"reproducible_pairs", e.reproducible_pairs},
                                 {"median_abs_error_pct", e.median_abs_error_pct}};
        if (e.reproducible_pairs) j["median_abs_error_pct_reproducible"] = e.median_abs_error_pct_reproducible;
        bySetting.push_back(j);
    }
    return {{"profile", t.profile},
            {"median_abs_error_pct", t.median_abs_error_pct},
            {"worst_abs_error_pct", t.worst_abs_error_pct},
            {"worst_id", t.worst_id},
            {"reproducible", errorsJson(t.reproducible)},
            {"irreproducible", errorsJson(t.irreproducible)},
            {"gpu_bound", errorsJson(t.gpu_bound)},
            {"host_bound", errorsJson(t.host_bound)},
            {"host_range_runs", t.host_range_runs},
            {"host_range_runs_within", t.host_range_runs_within},
            {"exposed_scored", t.exposed_scored},
            {"exposed_within_20pct", t.exposed_within_20pct},
            {"exposed_median_abs_error_ms", t.exposed_median_abs_error_ms},
            {"rows", rows},
            {"effects_all", effectErrorsJson(t.effects_all)},
            {"effects_reproducible", effectErrorsJson(t.effects_reproducible)},
            {"effects", effects},
            {"effects_by_setting", bySetting},
            {"heldout", heldoutJson(t)}};
}

}  // namespace stepsim
