#pragma once
// What one section's fit works on (ProfileFit.hpp lists the sections and what each field comes from): the raw
// records, the profile being fitted (it starts as the base profile; a section sets the fields it measured), the
// report (.fit.json) each section adds its entry to, and the fields left at the base's value (the report's
// "kept_from_base"), named in the order the sections run.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fit/RawData.hpp"
#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

struct FitState {
    const RawData& raw;
    HardwareProfile& profile;
    nlohmann::json& report;
    std::vector<std::string> kept;
};

// The held-out check's split: every 4th point (index 3, 7, ...) is left out of the fit and predicted.
inline bool heldOut(std::size_t i) { return i % 4 == 3; }

}  // namespace stepsim
