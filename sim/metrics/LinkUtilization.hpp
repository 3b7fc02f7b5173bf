#pragma once
// Link utilization over time from the engine's link samples (LinkUsage.hpp): for every NVLink, PCIe, NIC, network
// and storage link that carried traffic, the time-weighted mean of load / capacity in each of `bins` equal bins over
// [0, the last step's end]. A link's load is piecewise constant between its samples, so a bin's mean is exact:
// Σ over the sample intervals inside it of load · overlap / (capacity · bin).
// Heat-map classes: cold under 30%, warm 30–60%, hot 60–85%, saturated 85% and over.
#include <optional>
#include <string_view>

#include "sim/engine/Timeline.hpp"
#include "sim/metrics/IoResults.hpp"

namespace stepsim {

enum class UtilClass { cold, warm, hot, saturated };
UtilClass utilizationClass(double util);
std::string_view utilizationClassName(UtilClass c);

// Empty when the timeline has no link samples (not recorded).
std::optional<LinkUtilization> linkUtilization(const Timeline& tl, int bins = 100);

}  // namespace stepsim
