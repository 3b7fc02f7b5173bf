#include "sim/sweep/SweepSpace.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include "sim/base/InputError.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {

std::string pointKey(const std::vector<SweepSetting>& settings) {
    std::string key;
    for (const SweepSetting& s : settings) key += (key.empty() ? "" : " ") + s.key + "=" + s.value;
    return key;
}

SweepPoint applicablePoint(SweepPoint point, std::string_view base_strategy) {
    std::string_view strategy = base_strategy;
    for (const SweepSetting& s : point.settings)
        if (s.key == "parallel.data") strategy = s.value;
    bool changed = false;
    for (SweepSetting& s : point.settings) {
        const std::vector<std::string_view> reading = strategiesReading(s.key);
        if (reading.empty() || std::find(reading.begin(), reading.end(), strategy) != reading.end()) continue;
        s.value = std::string(kNotApplicable);
        changed = true;
    }
    if (changed) point.key = pointKey(point.settings);
    return point;
}

SweepSpace::SweepSpace(const SweepSpec& spec) : spec_(&spec) {}

std::size_t SweepSpace::gridSize() const {
    if (axes() == 0) return 0;
    std::size_t n = 1;
    for (std::size_t a = 0; a < axes(); ++a) {
        if (n > std::numeric_limits<std::size_t>::max() / values(a)) return std::numeric_limits<std::size_t>::max();
        n *= values(a);
    }
    return n;
}

SweepPoint SweepSpace::at(const std::vector<std::size_t>& coords) const {
    SweepPoint p;
    for (std::size_t a = 0; a < axes(); ++a) {
        const SweepDimension& d = spec_->dimensions[a];
        for (std::size_t k = 0; k < d.keys.size(); ++k) p.settings.push_back({d.keys[k], d.values[coords[a]][k]});
    }
    std::sort(p.settings.begin(), p.settings.end(), [](const auto& x, const auto& y) { return x.key < y.key; });
    p.key = pointKey(p.settings);
    return p;
}

std::vector<std::size_t> SweepSpace::coordsOf(std::size_t n) const {
    std::vector<std::size_t> c(axes());
    for (std::size_t a = axes(); a-- > 0;) {
        c[a] = n % values(a);
        n /= values(a);
    }
    return c;
}

std::vector<SweepPoint> SweepSpace::enumerate() const {
    // A sweep that runs more points than this is a mistake in the file (a grid of many long axes), not a plan.
    constexpr std::size_t kMaxPoints = 10'000'000;
    std::vector<SweepPoint> points{SweepPoint{}};
    const std::size_t grid = gridSize();
    if (grid > 0) {
        if (spec_->random_samples) {
            // Floyd's sampling of k distinct grid numbers, seeded (std::mt19937_64's sequence is fixed by the
            // standard; the draw below uses no implementation-defined distribution), then in grid order.
            const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(*spec_->random_samples), grid);
            std::mt19937_64 rng(spec_->random_seed);
            std::vector<std::size_t> chosen;
            for (std::size_t j = grid - k; j < grid; ++j) {
                const std::size_t t = static_cast<std::size_t>(rng() % (j + 1));
                chosen.push_back(std::find(chosen.begin(), chosen.end(), t) == chosen.end() ? t : j);
            }
            std::sort(chosen.begin(), chosen.end());
            for (std::size_t n : chosen) points.push_back(at(coordsOf(n)));
        } else {
            if (grid > kMaxPoints)
                throw inputError(spec_->source, spec_->dimensions.front().line, "sweep.grid",
                                 fmt::format("the grid has {} points, more than {}: draw some with random: "
                                             "{{samples: N}} or search: coordinate_descent",
                                             grid == std::numeric_limits<std::size_t>::max() ? std::string("too many")
                                                                                              : std::to_string(grid),
                                             kMaxPoints));
            for (std::size_t n = 0; n < grid; ++n) points.push_back(at(coordsOf(n)));
        }
    }
    for (const auto& settings : spec_->points) points.push_back({settings, pointKey(settings)});
    return points;
}

}  // namespace stepsim
