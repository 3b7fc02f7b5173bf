// Max-min fair sharing: each test states a small system and its expected rates (SimGrid maxmin_test style).
#include "sim/net/FlowNetwork.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace stepsim {
namespace {

std::vector<Link> links(std::initializer_list<double> caps) {
    std::vector<Link> v;
    for (double c : caps) v.push_back({"l", LinkKind::nvlink, c, Time{}});
    return v;
}
constexpr double kInf = 1e30;

// System: one link C=10, flows a, b on it. Expectations: 5 each.
TEST(FlowNetwork, TwoFlowsOnOneLinkGetHalfEach) {
    FlowNetwork n(links({10}));
    FlowId a = n.add(Time{}, {0}, 100, kInf, 0);
    FlowId b = n.add(Time{}, {0}, 100, kInf, 0);
    EXPECT_DOUBLE_EQ(n.rate(a), 5);
    EXPECT_DOUBLE_EQ(n.rate(b), 5);
}

// System: links L0 C=10, L1 C=4; flow a on L0 and L1, flow b on L0. Expectations: a = 4 (bottleneck L1),
// b takes what a leaves on L0: 6.
TEST(FlowNetwork, FlowBottleneckedElsewhereLeavesItsShare) {
    FlowNetwork n(links({10, 4}));
    FlowId a = n.add(Time{}, {0, 1}, 100, kInf, 0);
    FlowId b = n.add(Time{}, {0}, 100, kInf, 0);
    EXPECT_DOUBLE_EQ(n.rate(a), 4);
    EXPECT_DOUBLE_EQ(n.rate(b), 6);
}

// System: link C=10, flow a bounded at 2, flow b unbounded. Expectations: a = 2, b = 8.
TEST(FlowNetwork, PrivateBoundCapsAFlow) {
    FlowNetwork n(links({10}));
    FlowId a = n.add(Time{}, {0}, 100, 2, 0);
    FlowId b = n.add(Time{}, {0}, 100, kInf, 0);
    EXPECT_DOUBLE_EQ(n.rate(a), 2);
    EXPECT_DOUBLE_EQ(n.rate(b), 8);
}

// System: a alone on C=10 → 10; then b joins → 5 and 5; a leaves → b gets 10 again.
TEST(FlowNetwork, RemovalGivesCapacityBack) {
    FlowNetwork n(links({10}));
    FlowId a = n.add(Time{}, {0}, 100, kInf, 0);
    EXPECT_DOUBLE_EQ(n.rate(a), 10);
    FlowId b = n.add(Time::ps(1), {0}, 100, kInf, 0);
    EXPECT_DOUBLE_EQ(n.rate(a), 5);
    n.remove(Time::ps(2), a);
    EXPECT_DOUBLE_EQ(n.rate(b), 10);
}

// Two independent components: changing one reports nothing from the other.
TEST(FlowNetwork, OnlyTheTouchedComponentIsRecomputed) {
    FlowNetwork n(links({10, 10}));
    FlowId a = n.add(Time{}, {0}, 100, kInf, 0);
    n.add(Time{}, {1}, 100, kInf, 0);
    const auto& ch = n.changed();
    ASSERT_EQ(ch.size(), 1u);
    EXPECT_NE(ch[0], a);
}

// Remaining bytes advance at the old rate before a rate change: 100 B at 10 B/s for 2 s leaves 80 B,
// then at 5 B/s the flow ends 16 s later.
TEST(FlowNetwork, CompletionFollowsRateChanges) {
    FlowNetwork n(links({10}));
    FlowId a = n.add(Time{}, {0}, 100, kInf, 0);
    EXPECT_EQ(n.completion(a), fromSeconds(10));
    const Time two = fromSeconds(2);
    n.add(two, {0}, 1000, kInf, 0);
    EXPECT_DOUBLE_EQ(n.remaining(a), 80);
    EXPECT_EQ(n.completion(a), two + fromSeconds(16));
}

// Lowering a private bound re-shares the link: a capped to 1 → b gets 9.
TEST(FlowNetwork, SetCapReshares) {
    FlowNetwork n(links({10}));
    FlowId a = n.add(Time{}, {0}, 100, kInf, 0);
    FlowId b = n.add(Time{}, {0}, 100, kInf, 0);
    n.setCap(Time{}, a, 1);
    EXPECT_DOUBLE_EQ(n.rate(a), 1);
    EXPECT_DOUBLE_EQ(n.rate(b), 9);
}

// Three flows on a chain L0(C=6)–L1(C=9): a on L0, b on L0+L1, c on L1.
// Expectations: L0 saturates first at 3 (a, b = 3), then c takes 9 − 3 = 6.
TEST(FlowNetwork, ProgressiveFillingOnAChain) {
    FlowNetwork n(links({6, 9}));
    FlowId a = n.add(Time{}, {0}, 100, kInf, 0);
    FlowId b = n.add(Time{}, {0, 1}, 100, kInf, 0);
    FlowId c = n.add(Time{}, {1}, 100, kInf, 0);
    EXPECT_DOUBLE_EQ(n.rate(a), 3);
    EXPECT_DOUBLE_EQ(n.rate(b), 3);
    EXPECT_DOUBLE_EQ(n.rate(c), 6);
}

// Kept components follow flows joining and leaving them. Links L0, L1 (C=10): a on L0, c on L1, re-bounded (each
// component kept); e on L0+L1 joins them: a capped to 1, c to 3 leave e min(10 − 1, 10 − 3) = 7, which needs c in
// a's component. e leaves: c re-bounded to 8 gets 8 alone (its component, c alone, is
// the one refilled), a keeps 1.
TEST(FlowNetwork, KeptComponentsFollowJoinsAndLeaves) {
    FlowNetwork n(links({10, 10}));
    FlowId a = n.add(Time{}, {0}, 100, kInf, 0);
    FlowId c = n.add(Time{}, {1}, 100, kInf, 0);
    n.setCap(Time{}, a, 4);
    n.setCap(Time{}, c, 3);
    EXPECT_DOUBLE_EQ(n.rate(a), 4);
    EXPECT_DOUBLE_EQ(n.rate(c), 3);
    FlowId e = n.add(Time{}, {0, 1}, 100, kInf, 0);
    EXPECT_DOUBLE_EQ(n.rate(e), 6);  // L0: 10 − 4
    n.setCap(Time{}, a, 1);
    EXPECT_DOUBLE_EQ(n.rate(a), 1);
    EXPECT_DOUBLE_EQ(n.rate(e), 7);  // L1: 10 − 3
    n.setCap(Time{}, c, 2);
    EXPECT_DOUBLE_EQ(n.rate(e), 8);
    n.remove(Time{}, e);
    n.setCap(Time{}, c, 8);
    EXPECT_DOUBLE_EQ(n.rate(c), 8);
    EXPECT_DOUBLE_EQ(n.rate(a), 1);
    EXPECT_EQ(n.changed(), std::vector<FlowId>{c});  // c's component is c alone again: nothing else refilled
}

// setCap's shortcut (a flow at its bound on links with spare capacity moves alone). System: links L0 C=10,
// L1 C=4; a on L0 bounded at 2, b on L0 and L1 (bottleneck L1: 4), c on L0 bounded at 1.
// Re-bounding a to 3 (L0 keeps 10 - 3 - 4 - 1 = 2 spare): a = 3, b and c unchanged, only a reported.
// Re-bounding a to 6 (L0 would carry 11): the refill, b and c at their bottlenecks, a gets 10 - 4 - 1 = 5.
TEST(FlowNetwork, ReboundingAFlowWithSpareLinksMovesItAlone) {
    FlowNetwork n(links({10, 4}));
    const FlowId a = n.add(Time{}, {0}, 100, 2, 0);
    const FlowId b = n.add(Time{}, {0, 1}, 100, kInf, 0);
    const FlowId c = n.add(Time{}, {0}, 100, 1, 0);
    ASSERT_DOUBLE_EQ(n.rate(b), 4);
    n.setCap(Time{}, a, 3);
    EXPECT_DOUBLE_EQ(n.rate(a), 3);
    EXPECT_DOUBLE_EQ(n.rate(b), 4);
    EXPECT_DOUBLE_EQ(n.rate(c), 1);
    EXPECT_EQ(n.changed(), std::vector<FlowId>{a});
    n.setCap(Time{}, a, 6);
    EXPECT_DOUBLE_EQ(n.rate(a), 5);
    EXPECT_DOUBLE_EQ(n.rate(b), 4);
    EXPECT_DOUBLE_EQ(n.rate(c), 1);
    // Back down to 2, then the refill and the shortcut agree with a network built with that bound.
    n.setCap(Time{}, a, 2);
    FlowNetwork fresh(links({10, 4}));
    fresh.add(Time{}, {0}, 100, 2, 0);
    fresh.add(Time{}, {0, 1}, 100, kInf, 0);
    fresh.add(Time{}, {0}, 100, 1, 0);
    for (FlowId f : {a, b, c}) EXPECT_EQ(n.rate(f), fresh.rate(f));
}

// A route that names a link twice loads it twice (a flow standing for two identical ones, the symmetry reduction).
// System: link C=10, flow a crossing it twice, flow b once. Expectations: all three shares equal: a = b = 10/3.
TEST(FlowNetwork, ALinkNamedTwiceCarriesTheFlowTwice) {
    FlowNetwork n(links({10}));
    const FlowId a = n.add(Time{}, {0, 0}, 100, kInf, 0);
    const FlowId b = n.add(Time{}, {0}, 100, kInf, 0);
    EXPECT_DOUBLE_EQ(n.rate(a), 10.0 / 3);
    EXPECT_DOUBLE_EQ(n.rate(b), 10.0 / 3);
    EXPECT_DOUBLE_EQ(n.load(0), 10.0);
    n.remove(Time{}, a);
    EXPECT_DOUBLE_EQ(n.rate(b), 10.0);
}

// Progressive filling over every link of every flow, from scratch (the reference for the test below).
std::vector<double> maxMinRates(const std::vector<double>& caps_of_links, const std::vector<Route>& routes,
                                const std::vector<double>& bounds) {
    std::vector<double> rate(routes.size(), -1.0), left = caps_of_links;
    std::vector<int> unfrozen(caps_of_links.size(), 0);
    for (const Route& r : routes)
        for (LinkId l : r) ++unfrozen[l];
    std::size_t todo = routes.size();
    while (todo > 0) {
        double level = 1e300;
        for (std::size_t l = 0; l < left.size(); ++l)
            if (unfrozen[l] > 0) level = std::min(level, std::max(0.0, left[l]) / unfrozen[l]);
        for (std::size_t f = 0; f < routes.size(); ++f)
            if (rate[f] < 0) level = std::min(level, bounds[f]);
        const double tie = level * (1.0 + 1e-12);
        std::vector<std::size_t> now;
        for (std::size_t f = 0; f < routes.size(); ++f) {
            if (rate[f] >= 0) continue;
            bool hit = bounds[f] <= tie;
            for (LinkId l : routes[f]) hit = hit || std::max(0.0, left[l]) / unfrozen[l] <= tie;
            if (hit) now.push_back(f);
        }
        for (std::size_t f : now) {
            rate[f] = level;
            --todo;
            for (LinkId l : routes[f]) left[l] -= level, --unfrozen[l];
        }
    }
    return rate;
}

// Links one flow alone crosses are folded into its bound (FlowNetwork.hpp, "Private links"): over random systems of
// 12 links and up to 10 flows (routes of 1 to 5 links, some named twice), flows joining, leaving and re-bounded in a
// random order, every rate after every change is the max-min rate of the whole system solved from scratch over every
// link (to 1e-9: the reference freezes in another order).
TEST(FlowNetwork, RatesAreTheMaxMinOfEveryLink) {
    std::mt19937 rng(7);
    std::vector<double> caps;
    for (int l = 0; l < 12; ++l) caps.push_back(1.0 + double(rng() % 20));
    std::vector<Link> ls;
    for (double c : caps) ls.push_back({"l", LinkKind::nvlink, c, Time{}});
    FlowNetwork n(ls);
    std::vector<FlowId> ids;
    std::vector<Route> routes;
    std::vector<double> bounds;
    for (int step = 0; step < 3000; ++step) {
        const unsigned what = rng() % 3;
        if ((what == 0 && ids.size() < 10) || ids.empty()) {
            Route r;
            const int len = 1 + int(rng() % 5);
            for (int i = 0; i < len; ++i) r.push_back(LinkId(rng() % 12));
            const double b = rng() % 4 == 0 ? kInf : 0.5 + double(rng() % 16);
            ids.push_back(n.add(Time{}, r, 1e9, b, 0));
            routes.push_back(r);
            bounds.push_back(b);
        } else if (what == 1) {
            const std::size_t i = rng() % ids.size();
            n.remove(Time{}, ids[i]);
            ids.erase(ids.begin() + long(i)), routes.erase(routes.begin() + long(i)), bounds.erase(bounds.begin() + long(i));
        } else {
            const std::size_t i = rng() % ids.size();
            bounds[i] = rng() % 4 == 0 ? kInf : 0.5 + double(rng() % 16);
            n.setCap(Time{}, ids[i], bounds[i]);
        }
        const std::vector<double> want = maxMinRates(caps, routes, bounds);
        for (std::size_t i = 0; i < ids.size(); ++i)
            ASSERT_NEAR(n.rate(ids[i]), want[i], 1e-9 * want[i]) << "step " << step << " flow " << i;
    }
}

}  // namespace
}  // namespace stepsim
