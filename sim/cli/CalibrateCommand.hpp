#pragma once
// `stepsim calibrate`, `stepsim calibrate fit` and `stepsim profile show` (issue 6).
//
//   stepsim calibrate [--out-dir DIR] [--harness PATH] [--torch-script PATH] [--python PY] [--no-pytorch]
//                     [--quick] [--time-limit S] [--name NAME] [--base NAME|FILE] [-o PROFILE.yaml]
//       Runs the calibration harness (calibration/bench: stepsim-bench) on every local GPU, then the PyTorch
//       kernel benchmarks (calibration/pytorch/stepsim_torch_bench.py), then fits; writes DIR/bench.jsonl,
//       DIR/torch.jsonl, the profile and its fit report, and prints how long each stage took.
//       The harness is looked for at --harness, $STEPSIM_BENCH, next to the stepsim binary
//       (calibration/bench/stepsim-bench in a build tree, or stepsim-bench) and on PATH. No harness, or no GPU
//       (the harness exits 2), is a clear error: nothing is fitted.
//   stepsim calibrate fit RAW.jsonl [more.jsonl ...] -o PROFILE.yaml [--name NAME] [--base NAME|FILE]
//                                                     [--report REPORT.json]
//       Fits a profile from raw measurements (calibration/fit/ProfileFit.hpp); fields that were not measured
//       come from --base (default: the built-in h200-sxm). The report (default PROFILE.fit.json) holds every
//       fitted quantity's error, domain and the held-out check.
//   stepsim profile show PROFILE.yaml|NAME
//       A readable table of a profile, each rate beside its datasheet peak.
#include <string>

#include <CLI/CLI.hpp>

#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

void addCalibrateCommands(CLI::App& app);

// The table `stepsim profile show` prints.
std::string profileTable(const HardwareProfile& p);

}  // namespace stepsim
