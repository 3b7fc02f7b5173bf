#pragma once
// `stepsim calibrate` and `stepsim calibrate fit`: measure the local GPUs and fit a hardware profile, or fit one from
// raw measurements taken elsewhere (sim/fit/ProfileFit.hpp says what each field comes from).
//
// calibrate runs the stages of calibration/bench/stages.txt (the harness stepsim-bench, then the PyTorch scripts of
// calibration/pytorch, each with its budget) through calibration/bench/stages.py, which writes one raw file per stage
// and the manifest OUT_DIR/inputs.txt, then fits that manifest. The harness is looked for at `harness`,
// $STEPSIM_BENCH, next to the stepsim binary (calibration/bench/stepsim-bench in a build tree, or stepsim-bench) and
// on PATH. No harness, or no GPU (the harness exits 2), is an InputError: nothing is fitted. A stage that fails is
// noted and its fields keep the base's.
#include <ostream>
#include <string>
#include <vector>

#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

// The built-in profile named `what`, else the profile file at that path; neither: an InputError.
HardwareProfile profileByNameOrFile(const std::string& what);

struct FitRequest {
    std::vector<std::string> raws;  // raw measurement files (JSON Lines)
    std::string manifest;           // or the manifest that lists them (sim/fit/Manifest.hpp)
    std::string out;                // the profile YAML to write
    std::string name = "calibrated";
    std::string base = "h200-sxm";  // built-in name or file: the fields not measured
    std::string report;             // the fit report; empty: OUT.fit.json
    std::string source;             // the profile's source: how it was made
};

struct FitSummary {
    double heldout_collectives, heldout_gemm;
};

// Reads the raw files (`raws`, or those `manifest` lists), fits, writes the profile and its report, and prints what was
// fitted and the held-out check.
FitSummary fitAndWrite(const FitRequest& r, std::ostream& out);

// One run of the stage runner (calibration/bench/stages.py) over a stage file (default calibration/bench/stages.txt)
// into out_dir; it writes out_dir/inputs.txt, the manifest of the raw files it wrote. The harness is searched for
// only when needs_harness. The runner's exit status 2 (the harness found no GPU) is an InputError, as is a run that
// wrote no manifest.
struct StageRun {
    std::string out_dir, harness, python = "python3", runner, stages, gemm_shapes, only, skip;
    double budget_scale = 1.0;
    bool needs_harness = true;
};
void runStages(const StageRun& r, std::ostream& log);

struct CalibrateOptions {
    std::string out_dir = "calibration-run";
    std::string harness;       // the stepsim-bench binary; empty: searched for
    std::string runner;        // calibration/bench/stages.py; empty: searched for
    std::string python = "python3";
    std::string gemm_shapes;   // GEMMs to measure one by one ('forward|dgrad|wgrad M N K' lines); empty: the
                               // validation's (calibration/validation/gemm_shapes.txt)
    std::string only, skip;    // stage names (calibration/bench/stages.txt), comma-separated
    bool no_pytorch = false;   // the harness alone
    bool quick = false;        // every budget a quarter: a smoke test
    double budget_scale = 1.0;
    std::string name = "calibrated", base = "h200-sxm";
    std::string out;           // the profile YAML; empty: OUT_DIR/profile.yaml
};

// Measures (runStages over calibration/bench/stages.txt), then fits OUT_DIR/inputs.txt (fitAndWrite).
void calibrate(const CalibrateOptions& o, std::ostream& out);

}  // namespace stepsim
