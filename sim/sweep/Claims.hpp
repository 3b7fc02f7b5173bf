#pragma once
// Claims a sweep puts to the test (`sweep.claims`, SweepSpec.hpp): each says that changing one knob from one value
// to another changes a result by a stated amount (or in a stated direction). A sweep that varied the knob checks it
// on matched pairs of points: both feasible, equal in every other varied setting (the keys varied together with the
// claim's knob on a `linked` axis excepted). Per pair the relative change c = metric(to) / metric(from) − 1; the
// verdict reads the median m over the pairs, and the pairs' range [min c, max c] is shown as the claim's spread.
//   holds       m has the claim's sign, |m| ≥ 1%, and, with an amount, |m| ≥ half the claimed |change|
//   partly      m has the claim's sign and |m| ≥ 1%, but is under half the claimed amount
//   fails       m has the other sign, or |m| < 1%
//   untestable  no pair ran: the knob not varied across the claim's values, or the points infeasible (the reason)
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/SweepSpec.hpp"
#include "sim/sweep/PointRecord.hpp"

namespace stepsim {

struct ClaimVerdict {
    std::string name;     // the claim's own words
    std::string change;   // "compile.enabled false -> true"
    std::string metric;   // the result key compared
    std::string verdict;  // holds | partly | fails | untestable
    std::string detail;   // the numbers, or why it could not be tested
    std::optional<double> claimed_change, predicted_change;  // relative: -0.34 is 34% less
    std::optional<double> low_change, high_change;           // the range over the pairs
    int pairs = 0;
};

// Verdicts for every claim of `spec` (records[0], the scenario as given, is not paired).
std::vector<ClaimVerdict> checkClaims(const std::vector<PointRecord>& records, const SweepSpec& spec);

}  // namespace stepsim
