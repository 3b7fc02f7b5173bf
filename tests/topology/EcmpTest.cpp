// ECMP: equal-cost choices are deterministic, spread over the spines, and cached (ClusterGraph.hpp).
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <vector>

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

// Expectations: on a fat-tree cluster the builder's tiling is kept, and every route derived from a canonical pair's
// (ClusterGraph.hpp, "Shifted routes") is the search's: graph b is the same cluster with its tiling cleared (every pair
// searched). Clusters: HGX H100 with its four NVSwitch chips (ECMP inside the node) over three units, the last one
// partial; the engine's merged-NVSwitch node; PCIe nodes with two NICs (two rails, two spines); three GPUs of each
// node (three rails and spines: keys that differ by an odd multiple of 3 choose other NVSwitch chips, which the
// image must not take). Sources in the first, second and last node of each unit, every destination.
TEST(Ecmp, ShiftedRoutesAreTheSearchsRoutes) {
    struct Case {
        NodeTemplate node;
        int nodes;
        NetworkSpec network;
        std::optional<int> gpus_per_node;
    };
    NetworkSpec two_nics;
    two_nics.nics_per_node = 2;
    NetworkSpec oversubscribed;
    oversubscribed.oversubscription = 2.0;
    const std::vector<Case> cases = {{hgxH100Node(), 70, {}, std::nullopt},
                                     {mergedNvSwitches(hgxH100Node()), 40, oversubscribed, std::nullopt},
                                     {pcieNodeTemplate(8), 35, two_nics, std::nullopt},
                                     {hgxH100Node(), 36, {}, 3}};
    for (const Case& c : cases) {
        const ClusterGraph a = cluster(c.node, c.nodes, c.network, c.gpus_per_node);
        ClusterGraph b = cluster(c.node, c.nodes, c.network, c.gpus_per_node);
        ASSERT_TRUE(a.tiled()) << c.node.name;
        b.setTiling({});
        ASSERT_FALSE(b.tiled());
        const int g = a.gpuCount() / c.nodes;
        std::vector<int> sources;
        for (int n = 0; n < c.nodes; ++n)
            if (n % kNodesPerScalableUnit <= 1 || n % kNodesPerScalableUnit == kNodesPerScalableUnit - 1 ||
                n == c.nodes - 1)
                for (int l = 0; l < g; ++l) sources.push_back(n * g + l);
        int spine_routes = 0;
        for (int s : sources)
            for (int d = 0; d < a.gpuCount(); ++d) {
                ASSERT_EQ(a.route(s, d), b.route(s, d)) << c.node.name << " x " << c.nodes << ": " << s << "->" << d;
                for (LinkId id : a.route(s, d)) spine_routes += a.vertex(a.linkTarget(id)).kind == VertexKind::spine;
            }
        EXPECT_GT(spine_routes, 0) << c.node.name;
    }
}

// Expectations: a tiling that does not match the graph is not kept (a unit size of 0, a node list of the wrong
// length), and changing the graph after the build clears the builder's (its blocks no longer describe it).
TEST(Ecmp, TilingIsKeptOnlyWhileItDescribesTheGraph) {
    ClusterGraph g = cluster(hgxH100Node(), 3);
    ASSERT_TRUE(g.tiled());
    ClusterTiling wrong;
    wrong.nodes_per_unit = kNodesPerScalableUnit;
    wrong.gpus_per_node = 8;
    wrong.node_first = {0, 1};  // two nodes of three
    g.setTiling(wrong);
    EXPECT_FALSE(g.tiled());
    ClusterGraph h = cluster(hgxH100Node(), 3);
    h.addVertex(VertexKind::storage, "extra", std::nullopt);
    EXPECT_FALSE(h.tiled());
    const ClusterGraph fresh = cluster(hgxH100Node(), 3);
    EXPECT_EQ(h.route(0, 23), fresh.route(0, 23));
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
