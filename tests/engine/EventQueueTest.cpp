#include "sim/engine/EventQueue.hpp"

#include <gtest/gtest.h>

namespace stepsim {
namespace {

TEST(EventQueue, PopsInTimeOrder) {
    EventQueue q;
    q.push(Time::ns(30), 0, 3);
    q.push(Time::ns(10), 0, 1);
    q.push(Time::ns(20), 0, 2);
    EXPECT_EQ(q.pop().target, 1u);
    EXPECT_EQ(q.pop().target, 2u);
    EXPECT_EQ(q.pop().target, 3u);
    EXPECT_TRUE(q.empty());
}

TEST(EventQueue, EqualTimesPopFirstInFirstOut) {
    EventQueue q;
    for (std::uint32_t i = 0; i < 100; ++i) q.push(Time::us(5), 0, i);
    for (std::uint32_t i = 0; i < 100; ++i) EXPECT_EQ(q.pop().target, i);
}

TEST(EventQueue, KeepsTypeAndVersion) {
    EventQueue q;
    q.push(Time::ps(7), 4, 9, 11);
    const Event e = q.pop();
    EXPECT_EQ(e.time, Time::ps(7));
    EXPECT_EQ(e.type, 4u);
    EXPECT_EQ(e.version, 11u);
}

TEST(Time, FromSecondsRoundsUpToWholePicoseconds) {
    EXPECT_EQ(fromSeconds(1e-12), Time::ps(1));
    EXPECT_EQ(fromSeconds(1.5e-12), Time::ps(2));
    EXPECT_EQ(fromSeconds(0.0), Time{});
    EXPECT_EQ(fromSeconds(-1.0), Time{});
    EXPECT_EQ(fromMicros(3.0), Time::us(3));
}

}  // namespace
}  // namespace stepsim
