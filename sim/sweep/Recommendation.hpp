#pragma once
// The sweep's answer: the best feasible point by the objective; its gain over the scenario as given (records[0]);
// each varied knob's sensitivity, the spread of the objective's best with that knob held at each of its values,
// (max − min) / |best|, the knobs that matter first; the sweep's claims and whether the points bear them out (Claims.hpp);
// and, when the points have step_time_ms_p99 (sim.samples > 1), whether the choice still beats the scenario as
// given at the 99th percentile, and which point has the lowest p99.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sweep/Objective.hpp"
#include "sim/sweep/PointRecord.hpp"
#include "sim/sweep/Claims.hpp"

namespace stepsim {

struct KnobSensitivity {
    std::string key;
    std::vector<std::pair<std::string, double>> best_by_value;  // the objective's best at each value (feasible ones)
    double spread = 0.0;                                        // (max − min) / |best overall|
};

struct P99Check {
    bool available = false;
    std::optional<double> best_p99, baseline_p99;   // ms
    std::optional<std::size_t> lowest_p99;          // the record with the lowest p99
    std::optional<bool> wins;                       // the recommendation's p99 below the scenario's as given
};

struct Recommendation {
    std::optional<std::size_t> best;                // index into the records
    std::optional<double> best_value, baseline_value, gain;
    std::string baseline_reason;                    // why the scenario as given is infeasible, when it is
    std::vector<KnobSensitivity> sensitivity;       // most influential first
    std::vector<ClaimVerdict> claims;
    P99Check p99;
    std::size_t feasible = 0;
};

Recommendation recommend(const std::vector<PointRecord>& records, const Objective& objective, const SweepSpec& spec);

nlohmann::ordered_json toJson(const Recommendation& r, const std::vector<PointRecord>& records,
                              const Objective& objective);

// A few lines for the terminal.
std::string recommendationText(const Recommendation& r, const std::vector<PointRecord>& records,
                               const Objective& objective);

}  // namespace stepsim
