#include "sim/cli/CalibrateCommand.hpp"

#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "sim/base/InputError.hpp"
#include "sim/cli/NumberRange.hpp"
#include "sim/report/ProfileTable.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/run/Calibrate.hpp"
#include "sim/run/CalibrateCheck.hpp"

namespace stepsim {
namespace {

// `stepsim calibrate`'s options.
std::shared_ptr<CalibrateOptions> addCalibrateOptions(CLI::App& cal) {
    auto co = std::make_shared<CalibrateOptions>();
    cal.add_option("--out-dir", co->out_dir, "Folder for the raw measurements, their manifest inputs.txt, the profile "
                                             "and its report")->capture_default_str();
    cal.add_option("--harness", co->harness, "The stepsim-bench binary (built from calibration/bench)");
    cal.add_option("--stage-runner", co->runner, "calibration/bench/stages.py (default: searched for beside the "
                                                 "binary and in the source tree)");
    cal.add_option("--python", co->python, "Python with PyTorch, for the scripts")->capture_default_str();
    cal.add_option("--only", co->only, "Run only these stages (comma-separated names of calibration/bench/stages.txt)");
    cal.add_option("--skip", co->skip, "Skip these stages (comma-separated names)");
    cal.add_flag("--no-pytorch", co->no_pytorch, "The harness alone (--only harness)");
    cal.add_option("--gemm-shapes", co->gemm_shapes,
                   "The GEMMs measured one by one: the gap before each in a step's stream "
                   "(launch.gemm_gap_by_shape) and, with two GPUs or more, that gap beside an all-reduce moving data "
                   "(launch.gemm_gap_beside_transfer_by_shape) and its slowdown beside a resident NCCL kernel "
                   "(interference.gemm_by_shape); lines 'forward|dgrad|wgrad M N K' (default: the validation's, "
                   "calibration/validation/gemm_shapes.txt; gemm_shapes.py lists a scenario's)")
        ->check(CLI::ExistingFile);
    cal.add_flag("--quick", co->quick, "Every stage at a quarter of its budget (a smoke test, not a calibration)");
    cal.add_option("--budget-scale", co->budget_scale, "Every stage's budget times this")->capture_default_str()
        ->check(numberRange(0.01, 100));
    cal.add_option("--name", co->name, "Name of the fitted profile")->capture_default_str();
    cal.add_option("--base", co->base, "Profile (built-in name or file) for fields not measured")->capture_default_str();
    cal.add_option("-o,--output", co->out, "Profile YAML to write (default OUT_DIR/profile.yaml)");
    return co;
}

// `stepsim calibrate --check PROFILE [--raw FILE...]`'s options (on the calibrate command itself).
std::shared_ptr<CheckOptions> addCheckOptions(CLI::App& cal) {
    auto ck = std::make_shared<CheckOptions>();
    cal.add_option("--check", ck->profile,
                   "Instead of calibrating: measure a handful of points per class (calibration/bench/check.txt, under "
                   "a minute on one GPU) and say how far this machine is from PROFILE (built-in name or file)");
    cal.add_option("--raw", ck->raws, "With --check: compare these raw files instead of measuring")
        ->check(CLI::ExistingFile);
    return ck;
}

// `stepsim calibrate fit`.
CLI::App* addFitCommand(CLI::App& cal) {
    auto* fit = cal.add_subcommand("fit", "Fit a hardware profile from raw calibration measurements (JSON Lines)");
    auto fo = std::make_shared<FitRequest>();
    auto* raws = fit->add_option("RAW", fo->raws, "Raw measurement files from stepsim-bench and stepsim_torch_bench.py");
    fit->add_option("--manifest", fo->manifest,
                    "A file listing the raw files instead, one path per line relative to its folder ('#' comments)")
        ->excludes(raws);
    fit->add_option("-o,--output", fo->out, "Profile YAML to write")->required();
    fit->add_option("--name", fo->name, "Name of the profile")->capture_default_str();
    fit->add_option("--base", fo->base, "Profile (built-in name or file) for fields not measured")->capture_default_str();
    fit->add_option("--report", fo->report, "Fit report JSON (default: PROFILE.fit.json)");
    fit->callback([fo] {
        if (fo->raws.empty() && fo->manifest.empty()) throw CLI::RequiredError("RAW or --manifest");
        // The profile's source: the command that refits it (with a manifest, the whole command).
        fo->source = "stepsim calibrate fit";
        for (const auto& r : fo->raws) fo->source += " " + r;
        if (!fo->manifest.empty()) {
            fo->source += " --manifest " + fo->manifest + " --name " + fo->name;
            if (fo->base != FitRequest{}.base) fo->source += " --base " + fo->base;
        }
        fo->source += " -o " + fo->out;
        fitAndWrite(*fo, std::cout);
    });
    return fit;
}

// `stepsim profile show`.
void addProfileCommand(CLI::App& app) {
    auto* prof = app.add_subcommand("profile", "Hardware profiles");
    prof->require_subcommand(1);
    auto* show = prof->add_subcommand("show", "Print a profile as a table, each rate beside its datasheet peak");
    auto which = std::make_shared<std::string>();
    show->add_option("PROFILE", *which, "Profile YAML file or built-in name")->required();
    show->callback([which] { std::cout << profileTable(profileByNameOrFile(*which)); });
    // `stepsim profile derive DELTA -o OUT`: a measured profile carried to another GPU by a datasheet delta file
    // (sim/cost/ProfileDerive.hpp), written whole, as `calibrate fit` writes one.
    auto* derive = prof->add_subcommand("derive", "Write a profile derived from a measured one and a datasheet delta "
                                                  "file (another host's power limit and HBM, or another GPU)");
    auto delta = std::make_shared<std::string>(), out = std::make_shared<std::string>();
    derive->add_option("DELTA", *delta, "Datasheet delta YAML (stepsim_profile_delta: 1)")->required();
    derive->add_option("-o,--output", *out, "Profile YAML to write")->required();
    derive->callback([delta, out] {
        const stepsim::HardwareProfile p = stepsim::deriveProfileFromFile(*delta);
        std::ofstream f(*out);
        if (!f) throw stepsim::InputError(*out + ": cannot write the profile");
        f << "# Derived by `stepsim profile derive " << *delta << " -o " << *out << "`: do not edit; change the delta\n"
          << "# file and derive again (" << (p.derivation.notes.empty() ? std::string("see the delta file")
                                                                        : p.derivation.notes)
          << " explains each step).\n"
          << stepsim::writeProfile(p);
        std::cout << stepsim::profileTable(p);
    });
}

}  // namespace

void addCalibrateCommands(CLI::App& app) {
    auto* cal = app.add_subcommand("calibrate", "Measure the local GPUs (NCCL, GEMMs, memory, transfers, launch, "
                                                "interference) and fit a hardware profile");
    const std::shared_ptr<CalibrateOptions> co = addCalibrateOptions(*cal);
    const std::shared_ptr<CheckOptions> ck = addCheckOptions(*cal);
    CLI::App* fit = addFitCommand(*cal);
    cal->callback([co, ck, fit] {
        if (fit->parsed()) return;
        if (ck->profile.empty()) {
            if (!ck->raws.empty()) throw CLI::ValidationError("--raw", "needs --check PROFILE");
            calibrate(*co, std::cout);
            return;
        }
        ck->harness = co->harness;
        ck->python = co->python;
        ck->runner = co->runner;
        if (co->out_dir != CalibrateOptions{}.out_dir) ck->out_dir = co->out_dir;
        calibrateCheck(*ck, std::cout);
    });
    addProfileCommand(app);
}

}  // namespace stepsim
