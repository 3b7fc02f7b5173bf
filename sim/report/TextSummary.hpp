#pragma once
// Results → a short human summary for the terminal: step time (and its p50/p99 over Monte-Carlo samples),
// throughput, MFU, the per-GPU time breakdown (compute / comm / overlap / exposed / idle), collectives with
// their bus bandwidth, peak memory and the warnings. One labelled line per quantity, values right-aligned
// in one column, units after them.
#include <string>

#include "sim/cost/HardwareProfile.hpp"
#include "sim/metrics/Results.hpp"

namespace stepsim {

std::string textSummary(const Results& results, const std::string& name);

// One line naming the profile and where it came from, e.g. "profile: h200x2 (NVIDIA H200), fitted by stepsim
// calibrate fit from calibration/profiles/h200x2/inputs.txt, built in": a fitted profile's inputs (its manifest, or
// the count of raw files its fit command lists), else its `source` as written (e.g. "datasheet"), then its file.
std::string profileLine(const HardwareProfile& profile);

}  // namespace stepsim
