// Grid expansion: the scenario as given first, then row-major order over the axes, linked keys together, random
// samples distinct and reproducible, listed points last.
#include <set>

#include <gtest/gtest.h>

#include "sim/sweep/SweepSpace.hpp"

namespace stepsim {
namespace {

SweepSpec spec() {
    SweepSpec s;
    s.dimensions.push_back({{"a"}, {{"1"}, {"2"}}, 0});
    s.dimensions.push_back({{"c", "b"}, {{"x", "10"}, {"y", "20"}, {"z", "30"}}, 0});  // linked
    return s;
}

TEST(SweepSpace, GridIsEveryCombinationAfterTheScenarioAsGiven) {
    const SweepSpec s = spec();
    const std::vector<SweepPoint> p = SweepSpace(s).enumerate();
    ASSERT_EQ(p.size(), 1u + 2 * 3);
    EXPECT_EQ(p[0].key, "");
    EXPECT_TRUE(p[0].settings.empty());
    EXPECT_EQ(p[1].key, "a=1 b=10 c=x");  // settings sorted by key; the last axis fastest
    EXPECT_EQ(p[2].key, "a=1 b=20 c=y");
    EXPECT_EQ(p[4].key, "a=2 b=10 c=x");
    EXPECT_EQ(p[6].key, "a=2 b=30 c=z");
}

TEST(SweepSpace, LinkedKeysVaryTogether) {
    const SweepSpec s = spec();
    for (const SweepPoint& p : SweepSpace(s).enumerate()) {
        if (p.settings.empty()) continue;
        ASSERT_EQ(p.settings.size(), 3u);
        EXPECT_EQ(p.settings[1].value, std::to_string((p.settings[2].value[0] - 'x' + 1) * 10));
    }
}

TEST(SweepSpace, RandomSamplesAreDistinctReproducibleAndFewer) {
    SweepSpec s = spec();
    s.random_samples = 4;
    s.random_seed = 3;
    const auto a = SweepSpace(s).enumerate(), b = SweepSpace(s).enumerate();
    ASSERT_EQ(a.size(), 5u);
    std::set<std::string> keys;
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].key, b[i].key);
        keys.insert(a[i].key);
    }
    EXPECT_EQ(keys.size(), 5u);
    s.random_seed = 4;
    const auto c = SweepSpace(s).enumerate();
    bool differs = false;
    for (std::size_t i = 0; i < c.size(); ++i) differs = differs || c[i].key != a[i].key;
    EXPECT_TRUE(differs);
    s.random_samples = 100;  // more than the grid: all of it
    EXPECT_EQ(SweepSpace(s).enumerate().size(), 7u);
}

TEST(SweepSpace, ListedPointsComeAfterTheGrid) {
    SweepSpec s = spec();
    s.points.push_back({{"a", "9"}});
    const auto p = SweepSpace(s).enumerate();
    EXPECT_EQ(p.back().key, "a=9");
}

}  // namespace
}  // namespace stepsim
