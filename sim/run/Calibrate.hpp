#pragma once
// `stepsim calibrate` and `stepsim calibrate fit`: measure the local GPUs and fit a hardware profile, or fit one from
// raw measurements taken elsewhere (calibration/fit/ProfileFit.hpp says what each field comes from).
//
// calibrate runs the calibration harness (calibration/bench: stepsim-bench) on every local GPU, then the PyTorch kernel
// benchmarks (calibration/pytorch/stepsim_torch_bench.py) and the training-step scripts beside it, then fits; it writes
// OUT_DIR/bench.jsonl, OUT_DIR/torch.jsonl, one raw file per script, the profile and its fit report, and says how long
// each stage took. The harness is looked for at `harness`, $STEPSIM_BENCH, next to the stepsim binary
// (calibration/bench/stepsim-bench in a build tree, or stepsim-bench) and on PATH. No harness, or no GPU (the harness
// exits 2), is an InputError: nothing is fitted. A script that fails is noted and its fields keep the base's.
#include <ostream>
#include <string>
#include <vector>

#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

// The built-in profile named `what`, else the profile file at that path; neither: an InputError.
HardwareProfile profileByNameOrFile(const std::string& what);

struct FitRequest {
    std::vector<std::string> raws;  // raw measurement files (JSON Lines)
    std::string manifest;           // or the manifest that lists them (calibration/fit/Manifest.hpp)
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

struct CalibrateOptions {
    std::string out_dir = "calibration-run";
    std::string harness;       // the stepsim-bench binary; empty: searched for
    std::string torch_script;  // stepsim_torch_bench.py (the other scripts run from its folder); empty: searched for
    std::string python = "python3";
    std::string gemm_shapes;   // GEMMs to measure one by one ('forward|dgrad|wgrad M N K' lines); empty: none
    bool no_pytorch = false;   // the harness alone
    bool quick = false;        // small grids: a smoke test
    double time_limit = 480;   // seconds the harness may measure
    std::string name = "calibrated", base = "h200-sxm";
    std::string out;           // the profile YAML; empty: OUT_DIR/profile.yaml
};

// Measures, then fits (fitAndWrite); the commands it runs and its notes go to `out`.
void calibrate(const CalibrateOptions& o, std::ostream& out);

}  // namespace stepsim
