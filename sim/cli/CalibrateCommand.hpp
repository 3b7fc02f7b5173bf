#pragma once
// `stepsim calibrate`, `stepsim calibrate fit` and `stepsim profile show` (issue 6): CLI11 options for the library's
// calibrate and fitAndWrite (sim/run/Calibrate.hpp) and profileTable (sim/report/ProfileTable.hpp).
//
//   stepsim calibrate [--out-dir DIR] [--harness PATH] [--stage-runner PATH] [--python PY] [--only|--skip STAGES]
//                     [--no-pytorch] [--gemm-shapes FILE] [--quick] [--budget-scale F] [--name NAME]
//                     [--base NAME|FILE] [-o PROFILE.yaml]
//       Measures the local GPUs (the stages of calibration/bench/stages.txt) and fits OUT_DIR/inputs.txt.
//   stepsim calibrate --check PROFILE [--raw FILE ...]
//       How far this machine is from PROFILE, class by class (sim/run/CalibrateCheck.hpp).
//   stepsim calibrate fit RAW.jsonl [more.jsonl ...] | --manifest FILE  -o PROFILE.yaml [--name NAME]
//                         [--base NAME|FILE] [--report REPORT.json]
//       Fits a profile from raw measurements, listed or in a manifest (one path per line, relative to its folder:
//       calibration/profiles/NAME/inputs.txt); fields that were not measured come from --base (default: the built-in
//       h200-sxm). The report (default PROFILE.fit.json) holds every fitted quantity's error, domain and the held-out
//       check.
//   stepsim profile show PROFILE.yaml|NAME
//       A readable table of a profile, each rate beside its datasheet peak.
#include <CLI/CLI.hpp>

namespace stepsim {

void addCalibrateCommands(CLI::App& app);

}  // namespace stepsim
