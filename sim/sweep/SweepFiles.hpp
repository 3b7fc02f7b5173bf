#pragma once
// A sweep's output folder: results.csv and results.json (one row per point, in the sweep's order: every varied key,
// feasibility and reason, every result key), and plot.gp with plot.dat and plot.svg: the objective against the two
// most influential knobs (the best over the other knobs at each pair of values, one line per value of the second),
// drawn by gnuplot when it is installed. Written by rank 0 only; the same records give the same bytes.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/Objective.hpp"
#include "sim/sweep/PointRecord.hpp"
#include "sim/sweep/Recommendation.hpp"

namespace stepsim {

struct SweepSummary {
    std::string file;
    std::string search;                           // "grid", "random", "coordinate_descent"
    std::size_t points_total = 0;                 // the space's size
    std::size_t points_run = 0;                   // simulated by this run (not read from the journal)
    std::size_t points_reused = 0;                // read back from the journal
    bool complete = true;                         // false when --max-points stopped it
    std::map<std::string, std::string> baseline;  // the scenario's settings, for the row of the scenario as given
};

// The keys the points vary, in the order they first appear.
std::vector<std::string> variedKeys(const std::vector<PointRecord>& records);

void writeCsv(const std::filesystem::path& file, const std::vector<PointRecord>& records, const SweepSummary& s,
              const Objective& o);
void writeJson(const std::filesystem::path& file, const std::vector<PointRecord>& records, const SweepSummary& s,
               const Objective& o, const Recommendation& r);
// Returns the image written, or a sentence why none was (too few knobs, no feasible point, no gnuplot).
std::string writePlot(const std::filesystem::path& dir, const std::vector<PointRecord>& records, const Objective& o,
                      const Recommendation& r);

}  // namespace stepsim
