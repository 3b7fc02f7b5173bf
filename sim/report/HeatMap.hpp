#pragma once
// The link-utilization heat map (links × time) of `stepsim run --plot DIR`: DIR/link_utilization.dat (one line per
// link and bin: link index, bin start in ms, utilization 0..1, its class), DIR/link_utilization.gp (the gnuplot
// script: the four classes of LinkUtilization.hpp as four colours, cold < 30% blue, warm yellow, hot 60–85% orange,
// saturated red) and, when gnuplot runs, DIR/link_utilization.png.
#include <filesystem>
#include <string>

#include "sim/metrics/IoResults.hpp"

namespace stepsim {

// Writes the data and the script; returns the script's path.
std::filesystem::path writeHeatMap(const LinkUtilization& u, const std::string& title, const std::filesystem::path& dir);
// Runs gnuplot on the script (in its folder); false when gnuplot is missing or fails.
bool runGnuplot(const std::filesystem::path& script);

}  // namespace stepsim
