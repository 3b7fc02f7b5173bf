#include "sim/fit/ByShape.hpp"

#include <algorithm>

#include "sim/base/Statistics.hpp"

namespace stepsim {

std::vector<GemmShapeValue> medianByShape(const ByShape& v, double floor) {
    std::vector<GemmShapeValue> out;
    for (const auto& [mnk, x] : v) out.push_back({mnk[0], mnk[1], mnk[2], std::max(floor, median(x))});
    return out;
}

nlohmann::json shapeReport(const std::vector<GemmShapeValue>& list) {
    std::vector<double> all;
    for (const auto& g : list) all.push_back(g.value);
    return {{"shapes", all.size()}, {"median", median(all)},
            {"range", {*std::min_element(all.begin(), all.end()), *std::max_element(all.begin(), all.end())}}};
}

}  // namespace stepsim
