// Max-min fair sharing: each test states a small system and its expected rates (SimGrid maxmin_test style).
#include "sim/net/FlowNetwork.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace stepsim
