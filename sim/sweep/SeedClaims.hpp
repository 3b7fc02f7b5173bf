#pragma once
// The seed's claims (seed/DIGEST.md, cases S1–S13) that a sweep can put to the test: each says that changing a knob
// from one value to another changes a result by a stated amount. A sweep that varied the knob checks it on matched
// pairs of points (equal in every other varied setting, both feasible): the median relative change over the pairs,
// against the claim's. It confirms the claim when the change has the claim's sign and is at least 1%, and refutes
// it otherwise; it cannot test it when no pair ran (the knob not varied, or the points infeasible: the reason). A
// step-time change carries its noise band where the points ran several samples (noise_band_ms, Results.hpp).
#include <optional>
#include <string>
#include <vector>

#include "sim/base/Scenario.hpp"
#include "sim/scenario/SweepSpec.hpp"
#include "sim/sweep/PointRecord.hpp"

namespace stepsim {

struct ClaimVerdict {
    std::string id;       // "S1"
    std::string claim;    // what the seed says, in words
    std::string metric;   // the result key compared
    std::string verdict;  // "confirms", "refutes" or "untestable"
    std::string detail;   // the numbers, or why it could not be tested
    std::optional<double> claimed_change, predicted_change;  // relative: -0.34 is 34% less
    int pairs = 0;
};

// Verdicts for the claims whose knob the sweep varied (records[0], the scenario as given, is not paired).
std::vector<ClaimVerdict> checkSeedClaims(const std::vector<PointRecord>& records, const SweepSpec& spec,
                                          const Scenario& base);

}  // namespace stepsim
