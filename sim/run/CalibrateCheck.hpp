#pragma once
// `stepsim calibrate --check PROFILE`: how far this machine is from a profile, class by class.
//
// The measurement is calibration/bench/check.txt, run by calibration/bench/stages.py (a handful of points per class,
// under a minute on one GPU); or raw files given with --raw (any the fit reads). Each point is predicted with
// PROFILE's cost models (sim/cost/CostModel) and compared: the ratio measured / predicted, by class:
//   gemm       PyTorch's bf16 GEMMs as a step runs them (gemm records, source pytorch-step)
//   attention  SDPA's default backend, forward and backward (kernel records sdpa_default_fwd/bwd)
//   memory     memory-bound kernels with an α-β rate (casts, the residual add, GELU, log-softmax)
//   host       the host's cost of one eager op (dispatch record eager_host)
//   nccl       collectives at the default algorithm and protocol (collective records; two GPUs or more)
// A class whose median ratio is further from 1 than its threshold says to recalibrate (docs/calibration.md, "Check a
// machine", says where each threshold comes from).
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "sim/fit/RawData.hpp"
#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

struct CheckClass {
    std::string name;
    int points = 0;
    double median_ratio = 0;  // measured / predicted, the median over the class's points
    double worst_ratio = 0;   // the point furthest from 1
    double threshold = 0;     // |median_ratio − 1| above this: recalibrate
    bool recalibrate() const;
};

// Predicts every point of `raw` a class knows with `profile`; classes without a point are left out.
std::vector<CheckClass> checkProfile(const HardwareProfile& profile, const RawData& raw);

// Prints the classes as a table and the verdict; returns whether any class says to recalibrate.
bool printCheck(const std::vector<CheckClass>& classes, const std::string& profileName, std::ostream& out);

struct CheckOptions {
    std::string profile;                 // built-in name or file
    std::vector<std::string> raws;       // measured already: no measurement is run
    std::string out_dir = "calibration-check";
    std::string harness, python = "python3", runner;  // the stage runner; empty: searched for
};

// Measures (unless raws are given), then compares and prints; returns whether to recalibrate.
bool calibrateCheck(const CheckOptions& o, std::ostream& out);

}  // namespace stepsim
