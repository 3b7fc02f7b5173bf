#pragma once
// What a sweep ranks its points by: a result key (docs/scenario.md's table, read from each point's flattened
// results by name, e.g. step_time_ms_p99 with sim.samples > 1) or cost_per_token (gpu_hour_usd × GPUs / 3600 /
// tokens_per_s, US dollars per token), and whether more or less is better. Throughput, utilization and overlap keys
// are maximized, everything else (times, memory, cost) minimized, unless the sweep's `goal:` says otherwise.
#include <optional>
#include <string>

#include "sim/scenario/SweepSpec.hpp"
#include "sim/sweep/PointRecord.hpp"

namespace stepsim {

struct Objective {
    std::string key;
    SweepGoal goal = SweepGoal::maximize;

    // The record's objective when it is feasible and has the key.
    std::optional<double> of(const PointRecord& r) const {
        return r.feasible ? r.value(key) : std::nullopt;
    }
    bool better(double a, double b) const { return goal == SweepGoal::maximize ? a > b : a < b; }
    // The relative gain of `a` over `b` in the goal's direction (0.1: 10% more throughput, or 10% less time).
    double gain(double a, double b) const { return goal == SweepGoal::maximize ? a / b - 1.0 : b / a - 1.0; }
};

Objective objectiveOf(const SweepSpec& spec);

}  // namespace stepsim
