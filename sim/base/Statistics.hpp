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

// The q-quantile (0 ≤ q ≤ 1) of a list, linear between the order statistics (numpy's default); 0 for an empty list.
inline double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const double pos = std::clamp(q, 0.0, 1.0) * double(v.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - double(lo)) * (v[hi] - v[lo]);
}

}  // namespace stepsim
