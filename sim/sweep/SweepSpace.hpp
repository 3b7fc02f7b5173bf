#pragma once
// The points of a sweep (docs/sweep.md): each a list of overrides of the base scenario. Point 0 is the scenario as
// given (no override), the reference for the recommendation's gain; then the grid's points in row-major order over
// the axes (the last axis fastest), or `random.samples` of them drawn without replacement; then the `points:`.
//
// A point's key, "k1=v1 k2=v2" over its settings sorted by key ("" for the scenario as given), identifies it in the
// journal: a re-run skips the keys already there.
#include <cstddef>
#include <string>
#include <vector>

#include "sim/scenario/SweepSpec.hpp"

namespace stepsim {

struct SweepPoint {
    std::vector<SweepSetting> settings;  // sorted by key
    std::string key;
};

std::string pointKey(const std::vector<SweepSetting>& settings);

// A setting no strategy of its point reads: shown so in the outputs, never applied.
inline constexpr std::string_view kNotApplicable = "n/a";

// The point as its strategy reads it. Its strategy is its parallel.data setting, or `base_strategy` (the scenario's)
// when it has none. A setting that strategy does not read (strategiesReading, ScenarioLoader.hpp: ddp.* under fsdp2,
// ...) changes nothing there: its value becomes n/a and the key says so, so the points that differ only in such
// settings are one point, simulated once.
SweepPoint applicablePoint(SweepPoint point, std::string_view base_strategy);

// The grid's axes: a point is one index per axis.
class SweepSpace {
public:
    explicit SweepSpace(const SweepSpec& spec);

    std::size_t axes() const { return spec_->dimensions.size(); }
    std::size_t values(std::size_t axis) const { return spec_->dimensions[axis].values.size(); }
    std::size_t gridSize() const;  // the product of the axes' sizes (saturates at SIZE_MAX)
    // The point at one index per axis.
    SweepPoint at(const std::vector<std::size_t>& coords) const;
    // The grid point of row-major number n (0 ≤ n < gridSize()).
    std::vector<std::size_t> coordsOf(std::size_t n) const;

    // What the sweep runs when it enumerates: the scenario as given, the grid (or its random sample), the points.
    std::vector<SweepPoint> enumerate() const;

private:
    const SweepSpec* spec_;
};

}  // namespace stepsim
