// ECMP: equal-cost choices are deterministic, spread over the spines, and cached (ClusterGraph.hpp).
#include <gtest/gtest.h>

#include <set>

#include "sim/topology/Builders.hpp"

namespace stepsim {
namespace {

// Expectations: two clusters built independently give the same route for every GPU pair, and the
// multipath splits are equal too.
TEST(Ecmp, RoutesAreDeterministic) {
    const ClusterGraph a = cluster(hgxH100Node(), 4);
    const ClusterGraph b = cluster(hgxH100Node(), 4);
    for (int s = 0; s < a.gpuCount(); ++s)
        for (int d = 0; d < a.gpuCount(); ++d) {
            ASSERT_EQ(a.route(s, d), b.route(s, d)) << s << "->" << d;
            const auto& pa = a.routes(s, d);
            const auto& pb = b.routes(s, d);
            ASSERT_EQ(pa.size(), pb.size());
            for (std::size_t i = 0; i < pa.size(); ++i) {
                EXPECT_EQ(pa[i].route, pb[i].route);
                EXPECT_EQ(pa[i].share, pb[i].share);
            }
        }
}

// Expectations: the cross-rail routes between two nodes use every one of the 8 spines, and the spine of
// pair (s, d) is spine (s + d) mod 8.
TEST(Ecmp, CrossRailPairsSpreadOverSpines) {
    const ClusterGraph g = cluster(hgxH100Node(), 2);
    std::set<std::string> used;
    for (int s = 0; s < 8; ++s)
        for (int d = 8; d < 16; ++d) {
            const Route& r = g.route(s, d);
            for (LinkId id : r) {
                const auto& v = g.vertex(g.linkTarget(id));
                if (v.kind != VertexKind::spine) continue;
                used.insert(v.name);
                EXPECT_EQ(v.name, "spine" + std::to_string((s + d) % 8));
            }
        }
    EXPECT_EQ(used.size(), 8u);
}

// Expectations: a route between GPU ranks, found by the search stopped at the source (distancesUntil), is the route
// the search over the whole cluster gives: graph b is made to hold the whole search's distances to each destination
// first (a route between vertices computes and caches them), graph a is not; every pair's route is the same.
TEST(Ecmp, StoppedSearchGivesTheWholeSearchsRoute) {
    const ClusterGraph a = cluster(hgxH100Node(), 6);
    const ClusterGraph b = cluster(hgxH100Node(), 6);
    const int n = a.gpuCount();
    int crossing_spines = 0;
    for (int d = 0; d < n; ++d) {
        b.route(b.gpu((d + 1) % n), b.gpu(d));  // caches b's distances to d, from the whole search
        for (int s = 0; s < n; ++s) {
            ASSERT_EQ(a.route(s, d), b.route(s, d)) << s << "->" << d;
            ASSERT_EQ(a.routes(s, d).size(), b.routes(s, d).size()) << s << "->" << d;
            for (LinkId id : a.route(s, d)) crossing_spines += a.vertex(a.linkTarget(id)).kind == VertexKind::spine;
        }
    }
    EXPECT_GT(crossing_spines, 0);  // the pairs include routes over the spines, the largest searches
}

// Expectations: route() is cached: asking twice returns the same object.
TEST(Ecmp, RoutesAreCached) {
    const ClusterGraph g = cluster(hgxH100Node(), 2);
    const Route* first = &g.route(2, 13);
    EXPECT_EQ(first, &g.route(2, 13));
    const auto* parts = &g.routes(2, 5);
    EXPECT_EQ(parts, &g.routes(2, 5));
}

}  // namespace
}  // namespace stepsim
