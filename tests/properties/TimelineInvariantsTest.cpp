// Invariants every simulated timeline holds: spans start before they end, a stream runs one op at a time, a
// collective starts when its last member arrives and ends for all members together, and steps end in order. The
// timeline is a two-node run with jitter on and gradient accumulation, so every kind of span is in it; each test
// first checks that what it looks for is there.
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "tests/properties/PropertyScenario.hpp"

namespace stepsim::properties {
namespace {

const Simulation& run() {
    static const Simulation sim =
        simulateSmall({"cluster.nodes=2", "training.grad_accum=2", "jitter.enabled=true", "sim.steps=4"});
    return sim;
}

TEST(TimelineInvariants, EverySpanStartsNoLaterThanItEnds) {
    const Timeline& tl = run().timeline;
    ASSERT_FALSE(tl.spans.empty());
    for (const Span& s : tl.spans) {
        EXPECT_GE(s.start.count(), 0);
        EXPECT_LE(s.start, s.end) << "rank " << s.rank << " op " << s.op;
    }
}

TEST(TimelineInvariants, SpansOfOneStreamDoNotOverlap) {
    const Timeline& tl = run().timeline;
    std::map<std::pair<int, int>, std::vector<const Span*>> by_stream;
    for (const Span& s : tl.spans) by_stream[{s.rank, s.stream}].push_back(&s);
    ASSERT_GE(by_stream.size(), 2u * static_cast<std::size_t>(tl.ranks));  // a compute and a comm stream per rank
    for (auto& [key, spans] : by_stream) {
        std::sort(spans.begin(), spans.end(), [](const Span* a, const Span* b) { return a->start < b->start; });
        for (std::size_t i = 1; i < spans.size(); ++i)
            EXPECT_LE(spans[i - 1]->end, spans[i]->start) << "rank " << key.first << " stream " << key.second;
    }
}

// A member's span of a collective begins when that rank arrives (its NCCL kernel is resident from then): the
// collective starts at the latest of those arrivals, its first arrival is the earliest, and it ends on every member
// at once.
TEST(TimelineInvariants, ACollectiveStartsWhenItsLastMemberArrives) {
    const Simulation& sim = run();
    const Timeline& tl = sim.timeline;
    const Workload& w = sim.expansion.workload;
    ASSERT_FALSE(tl.collectives.empty());
    // Each rank's spans of collectives in one group, in order: the engine numbers a group's instances in that order.
    std::map<std::tuple<int, int>, std::vector<const Span*>> member;  // (group, rank) -> spans
    for (const Span& s : tl.spans) {
        const Op& op = w.programs[static_cast<std::size_t>(s.rank)].ops[s.op];
        if (op.kind != OpKind::collective) continue;
        const int group = w.programs[static_cast<std::size_t>(s.rank)].collectives[op.collective].group;
        member[{group, s.rank}].push_back(&s);
    }
    ASSERT_FALSE(member.empty());
    for (auto& [key, spans] : member)
        std::sort(spans.begin(), spans.end(), [](const Span* a, const Span* b) { return a->start < b->start; });
    for (const CollectiveRecord& c : tl.collectives) {
        const std::vector<int>& ranks = w.groups[static_cast<std::size_t>(c.group)].ranks;
        ASSERT_GE(ranks.size(), 2u);
        Time first = Time::max(), last;
        for (int r : ranks) {
            const auto it = member.find({c.group, r});
            ASSERT_NE(it, member.end()) << "group " << c.group << " rank " << r;
            ASSERT_LT(c.seq, it->second.size()) << "group " << c.group << " rank " << r;
            const Span& s = *it->second[c.seq];
            first = std::min(first, s.start);
            last = std::max(last, s.start);
            EXPECT_EQ(s.end, c.end) << "group " << c.group << " seq " << c.seq << " rank " << r;
        }
        EXPECT_EQ(c.first_arrival, first) << "group " << c.group << " seq " << c.seq;
        EXPECT_EQ(c.start, last) << "group " << c.group << " seq " << c.seq;
        EXPECT_LE(c.start, c.end);
    }
}

TEST(TimelineInvariants, StepEndsIncrease) {
    const Timeline& tl = run().timeline;
    ASSERT_EQ(tl.step_end.size(), static_cast<std::size_t>(tl.ranks));
    for (std::size_t r = 0; r < tl.step_end.size(); ++r) {
        ASSERT_EQ(tl.step_end[r].size(), 4u) << "rank " << r;
        for (std::size_t i = 1; i < tl.step_end[r].size(); ++i)
            EXPECT_LT(tl.step_end[r][i - 1], tl.step_end[r][i]) << "rank " << r << " step " << i;
    }
}

TEST(TimelineInvariants, EverySpanEndsByItsRanksLastStep) {
    const Timeline& tl = run().timeline;
    ASSERT_FALSE(tl.spans.empty());
    for (const Span& s : tl.spans) {
        ASSERT_LT(static_cast<std::size_t>(s.rank), tl.step_end.size());
        ASSERT_FALSE(tl.step_end[static_cast<std::size_t>(s.rank)].empty());
        EXPECT_LE(s.end, tl.step_end[static_cast<std::size_t>(s.rank)].back()) << "rank " << s.rank << " op " << s.op;
    }
}

}  // namespace
}  // namespace stepsim::properties
