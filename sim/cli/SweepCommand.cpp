#include "sim/cli/SweepCommand.hpp"

#include <iostream>
#include <memory>

#include "sim/report/HtmlReport.hpp"
#include "sim/scenario/SweepYaml.hpp"
#include "sim/sweep/Objective.hpp"
#include "sim/sweep/Sweep.hpp"
#include "sim/sweep/SweepFiles.hpp"

namespace stepsim {

void addSweepCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand("sweep", "Run a sweep file's points (a scenario with a `sweep:` section) and "
                                            "recommend the best configuration (docs/sweep.md)");
    auto o = std::make_shared<SweepOptions>();
    auto file = std::make_shared<std::string>();
    auto dir = std::make_shared<std::string>();
    auto max_points = std::make_shared<std::size_t>(0);
    auto progress = std::make_shared<bool>(false);
    auto no_progress = std::make_shared<bool>(false);
    cmd->add_option("FILE", *file, "Sweep file: a scenario YAML with a `sweep:` section")->required();
    cmd->add_option("--out", *dir, "Folder for points.jsonl (the journal a re-run resumes from), results.csv, "
                                   "results.json and the plot")
        ->required();
    cmd->add_option("--set", o->overrides, "Override a key of the base scenario by its path (repeatable)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--threads", o->threads, "Threads per process (default 0: the cores)")->check(CLI::NonNegativeNumber);
    auto* mp = cmd->add_option("--max-points", *max_points, "Simulate at most N new points, then stop (run again to "
                                                            "go on)")
                   ->check(CLI::PositiveNumber);
    auto* p = cmd->add_flag("--progress", *progress, "Show progress even when stdout is not a terminal");
    cmd->add_flag("--no-progress", *no_progress, "Show no progress line")->excludes(p);
    cmd->add_flag("-q,--quiet", o->quiet, "Print nothing on stdout");
    auto report = std::make_shared<std::string>();
    cmd->add_option("--report", *report, "Also write one self-contained HTML page into this folder (report.html): the "
                                         "objective against the two most influential knobs and the Pareto front of "
                                         "step time and memory");
    cmd->callback([=] {
        SweepOptions opt = *o;
        opt.file = *file;
        opt.out_dir = *dir;
        if (mp->count()) opt.max_points = *max_points;
        if (*progress) opt.progress = true;
        if (*no_progress) opt.progress = false;
        const SweepOutcome outcome = runSweep(opt, std::cout);
        if (!report->empty() && outcome.root) {
            const Objective objective = objectiveOf(loadSweepSpec(opt.file, opt.overrides));
            HtmlSweep page{opt.file.filename().string(), objective.key, objective.goal == SweepGoal::maximize,
                           variedKeys(outcome.records), {}};
            for (const PointRecord& r : outcome.records) {
                HtmlSweepPoint p;
                for (const SweepSetting& x : r.settings) p.knobs[x.key] = x.value;
                p.feasible = r.feasible;
                p.objective = objective.of(r);
                p.step_time_ms = r.value("step_time_ms");
                p.peak_memory_gib = r.value("peak_memory_gib");
                page.points.push_back(std::move(p));
            }
            writeHtmlReport(*report, htmlSweepReport(page));
        }
    });
}

}  // namespace stepsim
