#include "sim/sweep/Sweep.hpp"

#include <chrono>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/EnumNames.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/scenario/SweepYaml.hpp"
#include "sim/sweep/CoordinateDescent.hpp"
#include "sim/sweep/Journal.hpp"
#include "sim/sweep/PointEvaluator.hpp"
#include "sim/sweep/Progress.hpp"
#include "sim/sweep/Ranks.hpp"
#include "sim/sweep/SweepSpace.hpp"

namespace stepsim {

namespace {

struct BudgetSpent {};  // --max-points reached: the sweep stops, what ran is kept

// The axis index of each of the scenario's own values (the first value where the scenario's is not on the axis).
std::vector<std::size_t> scenarioCoords(const SweepSpec& spec, const std::map<std::string, std::string>& settings) {
    const auto same = [](const std::string& a, const std::string& b) {
        if (a == b) return true;
        try {
            std::size_t ia = 0, ib = 0;
            const double x = std::stod(a, &ia), y = std::stod(b, &ib);
            return ia == a.size() && ib == b.size() && x == y;
        } catch (const std::exception&) {
            return false;
        }
    };
    std::vector<std::size_t> c;
    for (const SweepDimension& d : spec.dimensions) {
        std::size_t at = 0;
        for (std::size_t v = 0; v < d.values.size(); ++v) {
            bool all = true;
            for (std::size_t k = 0; k < d.keys.size(); ++k) {
                const auto it = settings.find(d.keys[k]);
                all = all && it != settings.end() && same(it->second, d.values[v][k]);
            }
            if (all) {
                at = v;
                break;
            }
        }
        c.push_back(at);
    }
    return c;
}

// The objective must be a result key: checked on the first feasible record (the scenario as given, usually),
// so that a sweep over a key that is not there stops before it runs the rest.
void requireObjectiveKey(const SweepSpec& spec, const Objective& o, const std::vector<PointRecord>& records) {
    for (const PointRecord& r : records) {
        if (!r.feasible) continue;
        if (r.results.contains(o.key)) return;
        std::string keys;
        for (const auto& [k, v] : r.results.items())
            if (v.is_number()) keys += (keys.empty() ? "" : ", ") + k;
        throw inputError(spec.source, spec.objective_line, "sweep.objective",
                         fmt::format("'{}' is not among the point's results{}; expected one of: {}", o.key,
                                     o.key.find("_p99") != std::string::npos || o.key.find("_p50") != std::string::npos
                                         ? " (percentiles need Monte Carlo samples: sim.samples > 1)"
                                         : "",
                                     keys));
    }
}

}  // namespace

SweepOutcome runSweep(const SweepOptions& opt, std::ostream& out) {
    const auto start = std::chrono::steady_clock::now();
    const SweepSpec spec = loadSweepSpec(opt.file, opt.overrides);
    const Objective objective = objectiveOf(spec);
    const SweepSpace space(spec);
    const PointEvaluator evaluator(opt.file, opt.overrides, spec);
    const Ranks ranks;
    SweepOutcome outcome;
    outcome.root = ranks.root();
    SweepSummary& summary = outcome.summary;
    summary.file = opt.file.string();
    summary.baseline = scenarioSettings(evaluator.base());
    std::string base_text = evaluator.base().name + "\n";
    for (const auto& [k, v] : summary.baseline) base_text += k + "=" + v + "\n";

    // The journal lives on rank 0; its records go to every rank, so that all skip the same points.
    std::optional<Journal> journal;
    nlohmann::ordered_json done_list = nlohmann::ordered_json::array();
    if (ranks.root()) {
        journal.emplace(opt.out_dir, fingerprint(base_text), summary.file);
        for (const auto& [key, r] : journal->done()) done_list.push_back(toJson(r));
    }
    std::map<std::string, PointRecord> done;
    for (const auto& j : nlohmann::ordered_json::parse(ranks.broadcast(done_list.dump()))) {
        PointRecord r = recordFromJson(j);
        done.emplace(r.key, std::move(r));
    }

    const int threads = ranks.threadsPerRank(opt.threads);
    // Under mpirun a rank's stdout is Open MPI's forwarding (a terminal to isatty even when mpirun's output goes to a
    // file): progress there only when asked for.
    const bool terminal = ranks.size() == 1 && stdoutIsTerminal();
    Progress progress(out, ranks.root() && !opt.quiet && opt.progress.value_or(terminal), objective);
    std::size_t budget = opt.max_points.value_or(std::numeric_limits<std::size_t>::max());
    std::set<std::string> listed, run_now;
    const std::string base_strategy(toString(evaluator.base().parallel.data));
    const auto evaluate = [&](const std::vector<SweepPoint>& given) {
        // A knob the point's strategy does not read is n/a there: such points collapse into one (SweepSpace.hpp).
        std::vector<SweepPoint> batch;
        for (const SweepPoint& p : given) batch.push_back(applicablePoint(p, base_strategy));
        std::vector<std::size_t> pending;
        std::set<std::string> batch_keys;
        for (std::size_t i = 0; i < batch.size(); ++i)
            if (!done.count(batch[i].key) && batch_keys.insert(batch[i].key).second) pending.push_back(i);
        const bool cut = pending.size() > budget;
        if (cut) pending.resize(budget);
        budget -= pending.size();
        progress.expect(pending.size());
        const std::vector<std::string> texts = ranks.spread(
            pending.size(), threads,
            [&](std::size_t k) { return toJson(evaluator.evaluate(batch[pending[k]])).dump(); },
            [&](std::size_t, const std::string& text) {
                const PointRecord r = recordFromJson(nlohmann::ordered_json::parse(text));
                journal->append(r);
                progress.add(r);
            });
        for (const std::string& t : texts) {
            PointRecord r = recordFromJson(nlohmann::ordered_json::parse(t));
            run_now.insert(r.key);
            done.insert_or_assign(r.key, std::move(r));
        }
        std::vector<PointRecord> records;
        for (const SweepPoint& p : batch) {
            if (!done.count(p.key)) continue;
            records.push_back(done.at(p.key));
            if (listed.insert(p.key).second) outcome.records.push_back(done.at(p.key));
        }
        if (cut) throw BudgetSpent{};
        return records;
    };

    try {
        requireObjectiveKey(spec, objective, evaluate({SweepPoint{}}));
        if (spec.search == SweepSearch::coordinate_descent) {
            summary.search = "coordinate_descent";
            summary.points_total = space.gridSize();
            coordinateDescent(space, scenarioCoords(spec, summary.baseline), objective, evaluate);
        } else {
            std::vector<SweepPoint> points = space.enumerate();
            summary.search = spec.random_samples ? "random" : "grid";
            summary.points_total = points.size();
            points.erase(points.begin());
            evaluate(points);
        }
    } catch (const BudgetSpent&) {
        summary.complete = false;
    }
    progress.finish();
    requireObjectiveKey(spec, objective, outcome.records);
    summary.points_run = run_now.size();
    summary.points_reused = outcome.records.size() >= run_now.size() ? outcome.records.size() - run_now.size() : 0;
    outcome.recommendation = recommend(outcome.records, objective, spec);
    if (!ranks.root()) return outcome;

    writeCsv(opt.out_dir / "results.csv", outcome.records, summary, objective);
    writeJson(opt.out_dir / "results.json", outcome.records, summary, objective, outcome.recommendation);
    outcome.plot = writePlot(opt.out_dir, outcome.records, objective, outcome.recommendation);
    if (opt.quiet) return outcome;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string what =
        summary.search == "coordinate_descent"
            ? fmt::format("coordinate descent ran {} points of a grid of {}", outcome.records.size(), summary.points_total)
            : fmt::format("{} points", outcome.records.size());
    out << fmt::format("sweep {}: {} ({} simulated now, {} from the journal), {} feasible; {:.1f} s, {} thread{} x {} "
                       "process{}\n",
                       summary.file, what, summary.points_run, summary.points_reused, outcome.recommendation.feasible,
                       s, threads, threads == 1 ? "" : "s", ranks.size(), ranks.size() == 1 ? "" : "es");
    if (!summary.complete)
        out << fmt::format("incomplete: stopped after --max-points {}; run the same command again to go on\n",
                           *opt.max_points);
    out << recommendationText(outcome.recommendation, outcome.records, objective);
    out << fmt::format("written: {}, {}, {}\n", (opt.out_dir / "results.csv").string(),
                       (opt.out_dir / "results.json").string(), outcome.plot);
    return outcome;
}

}  // namespace stepsim
