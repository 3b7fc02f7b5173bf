#pragma once
// `stepsim sweep FILE --out DIR [--set key=value ...] [--threads N] [--max-points N] [--progress|--no-progress]
// [-q]`: CLI11 wiring of runSweep (sim/sweep/Sweep.hpp; docs/sweep.md). Under `mpirun -n N` in a build with
// STEPSIM_WITH_MPI the points are spread over the ranks and rank 0 writes the same files.
#include <CLI/CLI.hpp>

namespace stepsim {

void addSweepCommand(CLI::App& app);

}  // namespace stepsim
