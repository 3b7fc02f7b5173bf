// Randomized max-min systems (sim/net/FlowNetwork): for random links, routes and private bounds, and after random
// removals and re-bounds, the rates respect every capacity and bound and are max-min fair. Fairness is checked by
// its bottleneck characterization (Bertsekas & Gallager, "Data Networks", §6.5.2): each flow is at its private
// bound, or crosses a saturated link on which no flow has a larger rate.
#include <algorithm>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/net/FlowNetwork.hpp"

namespace stepsim {
namespace {

constexpr double kRel = 1e-9;  // relative tolerance of the progressive filling's arithmetic
constexpr int kSystems = 200;

struct System {
    std::vector<Link> links;
    struct FlowSpec {
        Route route;
        double cap;
    };
    std::vector<FlowSpec> flows;
};

System randomSystem(std::mt19937_64& rng) {
    std::uniform_int_distribution<int> nlinks(1, 12), nflows(1, 30);
    std::uniform_real_distribution<double> cap(1.0, 100.0), unit(0.0, 1.0);
    System s;
    const int L = nlinks(rng);
    for (int l = 0; l < L; ++l) s.links.push_back({fmt::format("l{}", l), LinkKind::nvlink, cap(rng), Time{}});
    const int F = nflows(rng);
    std::uniform_int_distribution<int> hops(1, std::min(L, 4));
    for (int f = 0; f < F; ++f) {
        std::vector<LinkId> all(static_cast<std::size_t>(L));
        for (int l = 0; l < L; ++l) all[static_cast<std::size_t>(l)] = static_cast<LinkId>(l);
        std::shuffle(all.begin(), all.end(), rng);
        all.resize(static_cast<std::size_t>(hops(rng)));
        // A third of the flows unbounded, the rest bounded somewhere between a link's share and beyond any link.
        const double bound = unit(rng) < 1.0 / 3 ? 1e30 : cap(rng) * 1.5;
        s.flows.push_back({all, bound});
    }
    return s;
}

// Checks capacities and bounds over the active flows `ids` (each with a positive rate).
void expectMaxMinFair(const FlowNetwork& n, const std::vector<FlowId>& ids, const std::vector<double>& caps,
                      int system) {
    ASSERT_FALSE(ids.empty());
    for (FlowId f : ids) {
        ASSERT_TRUE(n.active(f));
        EXPECT_GT(n.rate(f), 0.0) << "system " << system << " flow " << f;
        EXPECT_LE(n.rate(f), caps[f] * (1 + kRel)) << "system " << system << " flow " << f;
    }
    for (LinkId l = 0; l < n.links().size(); ++l)
        EXPECT_LE(n.load(l), n.links()[l].capacity_Bps * (1 + kRel)) << "system " << system << " link " << l;
}

TEST(MaxMinProperties, RatesRespectCapacitiesAndBoundsAndAreFair) {
    std::mt19937_64 rng(34);
    for (int sys = 0; sys < kSystems; ++sys) {
        const System s = randomSystem(rng);
        FlowNetwork n(s.links);
        std::vector<FlowId> ids;
        std::vector<double> caps;
        std::vector<Route> routes;
        for (const auto& f : s.flows) {
            const FlowId id = n.add(Time{}, f.route, 1e9, f.cap, 0);
            if (caps.size() <= id) caps.resize(id + 1), routes.resize(id + 1);
            caps[id] = f.cap;
            routes[id] = f.route;
            ids.push_back(id);
        }
        expectMaxMinFair(n, ids, caps, sys);
        // The bottleneck condition: at its bound, or on a saturated link where it has the largest rate.
        for (FlowId f : ids) {
            if (n.rate(f) >= caps[f] * (1 - kRel)) continue;
            bool bottlenecked = false;
            for (LinkId l : routes[f]) {
                const bool saturated = n.load(l) >= n.links()[l].capacity_Bps * (1 - kRel);
                bool largest = true;
                for (FlowId g : ids)
                    if (std::find(routes[g].begin(), routes[g].end(), l) != routes[g].end() &&
                        n.rate(g) > n.rate(f) * (1 + kRel))
                        largest = false;
                bottlenecked = bottlenecked || (saturated && largest);
            }
            EXPECT_TRUE(bottlenecked) << "system " << sys << " flow " << f << " rate " << n.rate(f);
        }
    }
}

// Flows removed and bounds changed in random order: after each change the component-local refill leaves the same
// properties as a fresh system of the flows that remain.
TEST(MaxMinProperties, IncrementalChangesGiveTheRatesOfAFreshSystem) {
    std::mt19937_64 rng(3434);
    for (int sys = 0; sys < kSystems; ++sys) {
        const System s = randomSystem(rng);
        FlowNetwork n(s.links);
        std::vector<FlowId> ids;
        std::vector<System::FlowSpec> spec;
        for (const auto& f : s.flows) {
            ids.push_back(n.add(Time{}, f.route, 1e9, f.cap, 0));
            spec.push_back(f);
        }
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        while (ids.size() > 1) {
            const std::size_t i = std::uniform_int_distribution<std::size_t>(0, ids.size() - 1)(rng);
            if (unit(rng) < 0.5) {
                n.remove(Time{}, ids[i]);
                ids.erase(ids.begin() + static_cast<long>(i));
                spec.erase(spec.begin() + static_cast<long>(i));
            } else {
                spec[i].cap = 1.0 + 99.0 * unit(rng);
                n.setCap(Time{}, ids[i], spec[i].cap);
            }
            FlowNetwork fresh(s.links);
            std::vector<FlowId> fresh_ids;
            for (const auto& f : spec) fresh_ids.push_back(fresh.add(Time{}, f.route, 1e9, f.cap, 0));
            for (std::size_t k = 0; k < ids.size(); ++k)
                EXPECT_NEAR(n.rate(ids[k]), fresh.rate(fresh_ids[k]), 1e-9 * std::max(1.0, fresh.rate(fresh_ids[k])))
                    << "system " << sys << " flow " << k << " of " << ids.size();
        }
    }
}

}  // namespace
}  // namespace stepsim
