#pragma once
// Summary statistics shared by the fit, the validation and the reports.
#include <algorithm>
#include <vector>

namespace stepsim {

// The median of a list (mean of the two middle values for an even count); 0 for an empty list.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace stepsim
