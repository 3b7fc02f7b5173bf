#include "sim/cli/CompareCommand.hpp"

#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/base/InputError.hpp"
#include "sim/report/CompareReport.hpp"
#include "sim/run/Compare.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {
namespace {

struct CompareFlags {
    std::string a, b, json, csv;
    std::vector<std::string> set, a_set, both_set;
    int seeds = 4;
    int threads = 0;
};

std::string sideName(const Scenario& sc, const std::vector<std::string>& sets) {
    return sets.empty() ? sc.name : fmt::format("{} --set {}", sc.name, fmt::join(sets, " --set "));
}

void write(const std::string& path, const std::string& text) {
    std::ofstream os(path);
    if (!os) throw inputError(path, 0, "", "cannot open this file for writing");
    os << text;
}

}  // namespace

void addCompareCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand("compare", "Run two scenarios, or one with two sets of overrides, side by side: "
                                              "every result key, the difference and its noise band over seeds");
    auto f = std::make_shared<CompareFlags>();
    cmd->add_option("A", f->a, "Scenario YAML file")->required();
    cmd->add_option("B", f->b, "Second scenario YAML file (default: A again, with --set's overrides)");
    const auto multi = [&](const char* name, std::vector<std::string>& into, const char* help) {
        cmd->add_option(name, into, help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    };
    multi("--set", f->set, "Override a key of B by its path, e.g. --set compile.enabled=true (repeatable)");
    multi("--a-set", f->a_set, "Override a key of A (repeatable)");
    multi("--both-set", f->both_set, "Override a key of both, before each side's own (repeatable)");
    cmd->add_option("--seeds", f->seeds, "Runs per side, at A's seed and more, for the noise band (default 4)")
        ->check(CLI::Range(1, 64));
    cmd->add_option("--threads", f->threads, "Threads for the runs; 0: one per core")->check(CLI::NonNegativeNumber);
    cmd->add_option("--json", f->json, "Also write the table as JSON to this file");
    cmd->add_option("--csv", f->csv, "Also write the table as CSV to this file");
    cmd->callback([f] {
        const std::string b_file = f->b.empty() ? f->a : f->b;
        if (f->b.empty() && f->set.empty() && f->a_set.empty())
            throw inputError(f->a, 0, "", "compare needs a second scenario file, or --set (B's overrides) or --a-set "
                                          "to make the two sides differ");
        std::vector<std::string> a_sets = f->both_set, b_sets = f->both_set;
        a_sets.insert(a_sets.end(), f->a_set.begin(), f->a_set.end());
        b_sets.insert(b_sets.end(), f->set.begin(), f->set.end());
        const Scenario a = loadScenario(f->a, a_sets);
        const Scenario b = loadScenario(b_file, b_sets);
        const HardwareProfile pa = resolveProfile(a.cluster, f->a);
        const HardwareProfile pb = resolveProfile(b.cluster, b_file);
        std::vector<std::string> a_own = f->a_set, b_own = f->set;
        const Comparison c =
            compareScenarios(a, pa, sideName(a, a_own), b, pb, sideName(b, b_own), f->seeds, f->threads);
        std::cout << compareText(c);
        if (!f->json.empty()) write(f->json, compareJson(c).dump(2) + "\n");
        if (!f->csv.empty()) write(f->csv, compareCsv(c));
    });
}

}  // namespace stepsim
