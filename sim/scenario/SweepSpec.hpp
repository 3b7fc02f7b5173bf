#pragma once
// A sweep file's `sweep:` section as plain data (docs/sweep.md): the space of scenario overrides to run, the
// search over it, the constraints a point must meet and the objective that ranks the points. SweepYaml.hpp reads
// it; sim/sweep runs it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepsim {

// One override of the base scenario: a key path and its value as YAML text (what `--set key=value` takes).
struct SweepSetting {
    std::string key;
    std::string value;
    bool operator==(const SweepSetting&) const = default;
};

// One axis of the grid: its keys (one for a `grid:` entry, several for a `linked:` group, which vary together) and
// its values, values[i][k] for keys[k]; `line` is where it was written.
struct SweepDimension {
    std::vector<std::string> keys;
    std::vector<std::vector<std::string>> values;
    int line = 0;
};

// A claim the sweep checks (`sweep.claims`, sim/sweep/Claims.hpp): changing `key` from `from` to `to` (YAML text as
// the grid writes it; `max` and `min`: the largest and smallest numeric value the sweep gives the key) changes the
// result `metric` by `by_pct` percent, or, without an amount, in `direction` (−1 less, +1 more).
struct SweepClaim {
    std::string name;
    std::string key, from, to;
    std::string metric;
    std::optional<double> by_pct;
    int direction = 0;
    int line = 0;
};

enum class SweepSearch { grid, coordinate_descent };
enum class SweepGoal { maximize, minimize };

struct SweepSpec {
    std::string source;                                  // the file, for errors
    std::vector<SweepDimension> dimensions;              // grid and linked axes, in file order
    std::vector<std::vector<SweepSetting>> points;       // `points:`, run besides the grid
    std::optional<int> random_samples;                   // `random: {samples: N}`: N grid points drawn, not all
    std::uint64_t random_seed = 1;
    SweepSearch search = SweepSearch::grid;
    std::string objective = "tokens_per_s";              // a result key (docs/scenario.md) or cost_per_token
    int objective_line = 0;
    std::optional<SweepGoal> goal;                       // unset: the objective's own direction (sim/sweep)
    bool fits_memory = false;                            // constraint: peak memory within the GPU's
    std::optional<long> global_batch;                    // constraint: micro_batch × grad_accum × data ranks
    std::optional<double> gpu_hour_usd;                  // price of one GPU-hour, for cost_per_token
    std::vector<SweepClaim> claims;                      // `claims:`, checked on the points (sim/sweep/Claims.hpp)
};

}  // namespace stepsim
