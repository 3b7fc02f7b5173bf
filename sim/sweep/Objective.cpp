#include "sim/sweep/Objective.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace stepsim {

Objective objectiveOf(const SweepSpec& spec) {
    static constexpr std::array<std::string_view, 9> kMore = {
        "tokens_per_s",    "tokens_per_s_per_gpu", "samples_per_s",           "mfu",
        "overlap_ratio",   "overlap_ms",           "gpu_busy_pct",            "collectives.algbw_GBps",
        "collectives.busbw_GBps"};
    Objective o;
    o.key = spec.objective;
    o.goal = spec.goal.value_or(std::find(kMore.begin(), kMore.end(), spec.objective) != kMore.end()
                                    ? SweepGoal::maximize
                                    : SweepGoal::minimize);
    return o;
}

}  // namespace stepsim
