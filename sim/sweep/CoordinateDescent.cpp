#include "sim/sweep/CoordinateDescent.hpp"

namespace stepsim {

std::vector<std::size_t> coordinateDescent(
    const SweepSpace& space, std::vector<std::size_t> cur, const Objective& objective,
    const std::function<std::vector<PointRecord>(const std::vector<SweepPoint>&)>& evaluate) {
    std::optional<double> cur_value = objective.of(evaluate({space.at(cur)}).front());
    // Each pass that moves improves the objective strictly, so passes end; the bound guards against a cycle
    // of equal values.
    const std::size_t max_passes = 4 * space.axes() + 4;
    for (std::size_t pass = 0; pass < max_passes; ++pass) {
        bool moved = false;
        for (std::size_t a = 0; a < space.axes(); ++a) {
            std::vector<SweepPoint> batch;
            for (std::size_t v = 0; v < space.values(a); ++v) {
                std::vector<std::size_t> c = cur;
                c[a] = v;
                batch.push_back(space.at(c));
            }
            const std::vector<PointRecord> records = evaluate(batch);
            for (std::size_t v = 0; v < records.size(); ++v) {
                const std::optional<double> x = objective.of(records[v]);
                if (x && (!cur_value || objective.better(*x, *cur_value))) {
                    cur[a] = v;
                    cur_value = x;
                    moved = true;
                }
            }
        }
        if (!moved) break;
    }
    return cur;
}

}  // namespace stepsim
