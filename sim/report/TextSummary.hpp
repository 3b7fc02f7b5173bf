#pragma once
// Results → a short human summary for the terminal: step time (and its p50/p99 over Monte-Carlo samples),
// throughput, MFU, the per-GPU time breakdown (compute / comm / overlap / exposed / idle), collectives with
// their bus bandwidth, peak memory and the warnings. One labelled line per quantity, values right-aligned
// in one column, units after them.
#include <string>

#include "sim/metrics/Results.hpp"

namespace stepsim {

std::string textSummary(const Results& results, const std::string& name);

}  // namespace stepsim
