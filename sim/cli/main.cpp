// The `stepsim` command: subcommands, nothing else.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "sim/cli/CalibrateCommand.hpp"
#include "sim/cli/CollectiveCommand.hpp"
#include "sim/cli/CompareCommand.hpp"
#include "sim/cli/SweepCommand.hpp"
#include "sim/cli/TopoCommand.hpp"
#include "sim/base/Files.hpp"
#include "sim/base/InputError.hpp"
#include "sim/base/Time.hpp"
#include "sim/report/HeatMap.hpp"
#include "sim/report/HtmlReport.hpp"
#include "sim/report/JsonReport.hpp"
#include "sim/report/TextSummary.hpp"
#include "sim/report/TraceReport.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/scenario/SweepYaml.hpp"
#include "sim/run/Advice.hpp"
#include "sim/run/Explain.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/run/PublishedValidation.hpp"
#include "sim/run/Validation.hpp"

namespace {

// `run --require-fit` on a scenario whose peak memory exceeds the GPU's: exit status 4 (kDoesNotFit).
struct DoesNotFit {};

// An output file: refused when it is one of the command's `inputs` (it would overwrite it) or cannot be opened;
// closeOutput flushes it and refuses a failed write (a full disk, /dev/full).
std::ofstream openOutput(const std::string& path, const std::vector<std::filesystem::path>& inputs = {}) {
    stepsim::requireNotAnInput(path, inputs);
    std::ofstream os(path, std::ios::binary | std::ios::trunc);
    if (!os) throw stepsim::inputError(path, 0, "", "cannot open this file for writing");
    return os;
}

void closeOutput(std::ofstream& os, const std::string& path) {
    os.flush();
    if (!os) throw stepsim::inputError(path, 0, "", "cannot write this file (is the disk full?)");
}

void addRunCommand(CLI::App& app) {
    auto* run = app.add_subcommand("run", "Simulate a what-if scenario file and report step time, throughput, "
                                          "overlap and memory");
    auto file = std::make_shared<std::string>();
    auto json = std::make_shared<std::string>();
    auto trace = std::make_shared<std::string>();
    auto sets = std::make_shared<std::vector<std::string>>();
    auto quiet = std::make_shared<bool>(false);
    auto plot = std::make_shared<std::string>();
    run->add_option("FILE", *file, "Scenario YAML file (schema: docs/scenario.md in the repository)")->required();
    run->add_option("--plot", *plot,
                    "Write the link-utilization heat map (links x time, gnuplot) into this folder: "
                    "link_utilization.png, .dat and .gp");
    run->add_option("--json", *json, "Write the results as JSON (stable keys, units in the names) to this file");
    run->add_option("--trace", *trace,
                    "Write a Chrome/Perfetto trace (pid = rank, tid = stream) to this file; open in ui.perfetto.dev");
    run->add_option("--set", *sets, "Override a scenario key by its path, e.g. --set ddp.bucket_cap_mb=100 "
                                    "(repeatable)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    run->add_flag("-q,--quiet", *quiet, "Print nothing on stdout");
    auto threads = std::make_shared<int>(0);
    run->add_option("--threads", *threads, "Threads for the Monte-Carlo samples (sim.samples); 0: one per core. The "
                                           "results are the same at any count")
        ->check(CLI::NonNegativeNumber);
    auto require_fit = std::make_shared<bool>(false);
    run->add_flag("--require-fit", *require_fit,
                  "Exit with status 4 when the estimated peak memory exceeds the GPU's (the results are written "
                  "all the same, with fits_memory: false)");
    auto advice = std::make_shared<bool>(false);
    run->add_flag("--advice", *advice,
                  "Try the few knobs the step's breakdown suggests, each in a what-if run of the same scenario and "
                  "seed, and list those that help, best first (text, --json's advice, --report)");
    auto report = std::make_shared<std::string>();
    run->add_option("--report", *report,
                    "Write one self-contained HTML page into this folder (report.html): the configuration, the "
                    "breakdown, the timeline per stream, the link heat map, memory by phase, the advice (--report "
                    "implies --advice) and the warnings");
    run->callback([=] {
        const stepsim::Scenario sc = stepsim::loadScenario(*file, *sets);
        if (stepsim::hasSweepSection(*file))
            std::cerr << "note: " << *file << " has a sweep: section; run simulates the scenario as given (stepsim "
                      << "sweep " << *file << " --out DIR runs the sweep)\n";
        const stepsim::HardwareProfile profile = stepsim::resolveProfile(sc.cluster, *file);
        // The outputs are refused before the run when they would overwrite an input or cannot be opened.
        const std::vector<std::filesystem::path> inputs{*file, sc.cluster.profile, sc.cluster.node};
        for (const std::string* out : {json.get(), trace.get()})
            if (!out->empty()) openOutput(*out, inputs);
        // Link usage is recorded when a report that shows it is asked for (it costs nothing otherwise).
        stepsim::Simulation sim = [&] {
            try {
                return stepsim::simulate(sc, profile,
                                         !json->empty() || !trace->empty() || !plot->empty() || !report->empty(),
                                         *threads);
            } catch (const stepsim::TimeOverflow& e) {
                // The inputs ask for a run longer than the simulator's time holds: bad input, not a bug.
                throw stepsim::inputError(*file, 0, "",
                                          std::string(e.what()) + ": a time in the scenario or its profile is too large, "
                                                                  "or a rate too small, for a run this simulator holds");
            }
        }();
        if (*advice || !report->empty())
            sim.results.advice = stepsim::advise(*file, *sets, sim.results, profile, *threads);
        if (!plot->empty() && sim.results.link_utilization) {
            const auto gp = stepsim::writeHeatMap(*sim.results.link_utilization, sc.name, *plot);
            if (!stepsim::runGnuplot(gp))
                std::cerr << "stepsim: gnuplot did not run; the heat map's data and script are in " << *plot << '\n';
        }
        if (!json->empty()) {
            std::ofstream os = openOutput(*json, inputs);
            os << stepsim::toJson(sim.results, sc.name, sim.gpu_memory_gib).dump(2) << '\n';
            closeOutput(os, *json);
        }
        if (!trace->empty()) {
            std::ofstream os = openOutput(*trace, inputs);
            stepsim::writeTrace(os, sim.timeline, sim.expansion.workload, sim.results.memory_phases_gib);
            closeOutput(os, *trace);
        }
        if (!report->empty()) {
            stepsim::HtmlRun page{sc.name, stepsim::profileLine(profile), stepsim::scenarioSettings(sc), &sim.results,
                                  &sim.timeline, &sim.expansion.workload, sim.gpu_memory_gib};
            if (!page.profile.empty() && page.profile.back() == '\n') page.profile.pop_back();
            const auto path = stepsim::writeHtmlReport(*report, stepsim::htmlRunReport(page));
            if (*quiet == false) std::cerr << "report: " << path.string() << '\n';
        }
        if (!*quiet) {
            std::cout << stepsim::profileLine(profile);
            std::cout << stepsim::textSummary(sim.results, sc.name);
        }
        if (*require_fit && !sim.fitsMemory()) throw DoesNotFit();
    });
}

void addExplainCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand("explain", "Print a scenario with every default and derived value filled in");
    auto file = std::make_shared<std::string>();
    auto sets = std::make_shared<std::vector<std::string>>();
    cmd->add_option("FILE", *file, "Scenario YAML file")->required();
    cmd->add_option("--set", *sets, "Override a scenario key by its path (repeatable)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->callback([=] {
        const stepsim::Scenario sc = stepsim::loadScenario(*file, *sets);
        std::cout << stepsim::explainScenario(sc);
        std::cout << stepsim::explainDerived(sc, stepsim::resolveProfile(sc.cluster, *file));
    });
}

void addValidateCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand("validate", "Compare predictions with measured training runs and print the table "
                                               "(step time, exposed communication, overlap; median and worst error, over all "
                                               "configurations and over those whose runs reproduce within 10%), then the "
                                               "what-if pairs: configurations that differ in one setting, the change "
                                               "measured against the change predicted");
    auto measured = std::make_shared<std::string>();
    auto dir = std::make_shared<std::string>();
    auto profile = std::make_shared<std::string>();
    auto markdown = std::make_shared<std::string>();
    auto json = std::make_shared<std::string>();
    cmd->add_option("MEASURED", *measured, "JSON Lines of measured runs (results/validation/measured/measured.jsonl)");
    cmd->add_option("--scenarios", *dir, "Folder with one <id>.yaml scenario per measured configuration");
    auto published = std::make_shared<std::string>();
    cmd->add_option("--published", *published,
                    "Published runs instead (JSON Lines: source, hardware, configuration, tokens/s per GPU and peak "
                    "memory, the row's scenario; scenarios/published/torchtitan.jsonl): each row predicted and scored");
    cmd->add_option("--profile", *profile, "Profile for every prediction (default: each scenario's cluster.profile)");
    cmd->add_option("--markdown", *markdown, "Also write the table as Markdown to this file");
    cmd->add_option("--json", *json, "Also write the table as JSON to this file");
    auto heldout = std::make_shared<std::string>();
    cmd->add_option("--heldout", *heldout,
                    "Predictions committed before their configurations first ran (JSON Lines: round, id and the `stepsim "
                    "run --json` output; results/validation/heldout/rounds.jsonl): scored as they were predicted then");
    cmd->callback([=] {
        if (!published->empty()) {
            if (!measured->empty() || !dir->empty() || !heldout->empty() || !profile->empty())
                throw CLI::ValidationError("--published", "takes the published runs' file alone (each row names its "
                                                          "scenario and that scenario its profile)");
            const std::string md = stepsim::toMarkdown(stepsim::validatePublished(*published));
            std::cout << md;
            if (!markdown->empty()) openOutput(*markdown) << md;
            if (!json->empty()) throw CLI::ValidationError("--json", "is not written for --published");
            return;
        }
        if (measured->empty()) throw CLI::RequiredError("MEASURED (or --published FILE)");
        if (dir->empty()) throw CLI::RequiredError("--scenarios");
        stepsim::ValidationTable t = stepsim::validate(*measured, *dir, *profile);
        if (!heldout->empty()) stepsim::addHeldout(t, *heldout);
        const std::string md = stepsim::toMarkdown(t);
        std::cout << md;
        const std::vector<std::filesystem::path> inputs{*measured, *heldout};
        if (!markdown->empty()) {
            std::ofstream os = openOutput(*markdown, inputs);
            os << md;
            closeOutput(os, *markdown);
        }
        if (!json->empty()) {
            std::ofstream os = openOutput(*json, inputs);
            os << stepsim::toJson(t).dump(2) << '\n';
            closeOutput(os, *json);
        }
    });
}

// Exit status (docs/scenario.md, "Exit status"): 0 success, 2 bad input (a scenario, profile, topology or
// measurement file, or the command line), 3 an internal error (a bug: please report it with the input), 4 a model
// that does not fit in GPU memory under `run --require-fit`.
constexpr int kSuccess = 0;
constexpr int kBadInput = 2;
constexpr int kInternalError = 3;
constexpr int kDoesNotFit = 4;

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"stepsim: predicts the step time of distributed PyTorch training on GPU clusters, and what "
                 "tuning makes it fastest"};
    app.require_subcommand(1);
    addRunCommand(app);
    addExplainCommand(app);
    addValidateCommand(app);
    stepsim::addCompareCommand(app);
    stepsim::addCollectiveCommand(app);
    stepsim::addTopoCommand(app);
    stepsim::addSweepCommand(app);
    stepsim::addCalibrateCommands(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; every other command-line mistake is bad input: CLI11 prints it, we exit 2.
        return app.exit(e) == 0 ? kSuccess : kBadInput;
    } catch (const DoesNotFit&) {
        std::cerr << "error: the estimated peak memory exceeds the GPU's (--require-fit)\n";
        return kDoesNotFit;
    } catch (const stepsim::InputError& e) {
        std::cerr << "error: " << e.what() << '\n';
        return kBadInput;
    } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << '\n';
        return kInternalError;
    } catch (...) {
        std::cerr << "internal error: an exception that is not a std::exception\n";
        return kInternalError;
    }
    return kSuccess;
}
