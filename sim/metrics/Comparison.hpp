#pragma once
// Two runs side by side, as sim/run/Compare.hpp makes them and sim/report/CompareReport.hpp writes them: plain data.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/Results.hpp"

namespace stepsim {

struct ComparedSide {
    std::string name;                  // the scenario's name, with its overrides
    std::vector<Results> runs;         // [seed]: runs[0] at the scenario's seed
    double gpu_memory_gib = 0.0;
    std::map<std::string, std::string> settings;  // scenarioSettings
};

struct Comparison {
    ComparedSide a, b;
    std::vector<std::uint64_t> seeds;
    // The settings that differ: key → (A's value, B's value); "(unset)" where a side has no such key.
    std::map<std::string, std::pair<std::string, std::string>> settings_diff;
};

}  // namespace stepsim
