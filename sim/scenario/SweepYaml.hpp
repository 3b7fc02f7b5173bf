#pragma once
// Reads the `sweep:` section of a sweep file (docs/sweep.md) with the scenario's YAML reader, so a mistake names
// the file, the line and the key (`sweep.grid.ddp.bucket_cap_mb[2]`) and says what was expected:
//
//   sweep:
//     grid: {ddp.bucket_cap_mb: [1, 5, 25, 100], training.micro_batch: [1, 2, 4, 8]}   # every combination
//     linked: [{training.micro_batch: [1, 2, 4], training.grad_accum: [4, 2, 1]}]      # vary together
//     points: [{parallel.data: fsdp2, training.micro_batch: 2}]                        # single points besides
//     random: {samples: 50, seed: 1}            # 50 grid points drawn at random instead of all of them
//     search: grid                              # grid | coordinate_descent
//     objective: tokens_per_s                   # a result key, or cost_per_token (needs gpu_hour_usd)
//     goal: maximize                            # maximize | minimize (default: the objective's direction)
//     constraints: [fits_memory, {global_batch: 64}]
//     gpu_hour_usd: 3.5
//
// Every key path must be a setting of the scenario (`stepsim explain FILE` lists them) and every value one the
// scenario schema accepts for it: each is checked against the base scenario up front. A value the schema accepts
// but this version does not model (compile.enabled: true) passes here: the sweep records its points as infeasible.
#include <filesystem>
#include <string>
#include <vector>

#include "sim/scenario/SweepSpec.hpp"

namespace stepsim {

// True when the file is a YAML mapping with a `sweep:` key (a missing or unparsable file: false).
bool hasSweepSection(const std::filesystem::path& file);

// The `sweep:` section of `file`, checked against the base scenario (the file without it, with `overrides`, the
// `--set` strings, applied). A file without a `sweep:` section is an InputError.
SweepSpec loadSweepSpec(const std::filesystem::path& file, const std::vector<std::string>& overrides = {});
// The same from the file's text; `source` names it in errors.
SweepSpec parseSweepSpec(const std::string& text, const std::string& source,
                         const std::vector<std::string>& overrides = {});

}  // namespace stepsim
