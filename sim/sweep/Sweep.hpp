#pragma once
// `stepsim sweep FILE --out DIR`: runs the points of a sweep file (docs/sweep.md) and recommends one.
//
//   1. reads the `sweep:` section (SweepYaml.hpp) and the base scenario (the rest of the file, with --set);
//   2. opens DIR/points.jsonl (Journal.hpp): points already there are not run again;
//   3. runs the scenario as given, then the grid (or its random sample, and the listed points) as one batch, or a
//      coordinate descent over the grid, batch by batch (CoordinateDescent.hpp); each batch on this process's
//      threads and, under mpirun, on every rank (Ranks.hpp), each record appended to the journal as it finishes;
//   4. on rank 0: results.csv, results.json, the plot (SweepFiles.hpp) and the recommendation (Recommendation.hpp),
//      a few lines of it on `out`.
// The outputs depend only on the file, the --set strings and the stepsim build, not on threads, ranks or how many
// runs it took to finish (the journal's order does depend on them).
#include <cstddef>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/sweep/PointRecord.hpp"
#include "sim/sweep/Recommendation.hpp"
#include "sim/sweep/SweepFiles.hpp"

namespace stepsim {

struct SweepOptions {
    std::filesystem::path file;
    std::vector<std::string> overrides;        // --set key.path=value, applied to every point
    std::filesystem::path out_dir;
    int threads = 0;                           // per process; 0: the cores (shared by the ranks on a host)
    std::optional<std::size_t> max_points;     // run at most this many new points, then stop (a re-run goes on)
    std::optional<bool> progress;              // default: when standard output is a terminal
    bool quiet = false;                        // no summary on `out`
};

struct SweepOutcome {
    std::vector<PointRecord> records;          // in the sweep's order; [0] is the scenario as given
    SweepSummary summary;
    Recommendation recommendation;
    std::string plot;                          // the image, or why there is none
    bool root = true;                          // false on MPI ranks other than 0 (which write nothing)
};

SweepOutcome runSweep(const SweepOptions& options, std::ostream& out);

}  // namespace stepsim
