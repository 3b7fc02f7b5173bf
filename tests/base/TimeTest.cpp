// Simulated time's arithmetic is checked (issue 34: time arithmetic that cannot overflow silently): a sum, difference
// or product beyond the 64-bit picosecond range throws TimeOverflow saying the limit, never wraps to a negative time.
#include "sim/base/Time.hpp"

#include <cmath>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace stepsim {
namespace {

using ::testing::HasSubstr;

TEST(Time, ArithmeticWithinTheRangeIsExact) {
    EXPECT_EQ((Time::us(3) + Time::ns(5)).count(), 3'005'000);
    EXPECT_EQ((Time::us(3) - Time::ns(5)).count(), 2'995'000);
    EXPECT_EQ((Time::ns(7) * 3).count(), 21'000);
    Time t = Time::ps(10);
    t += Time::ps(5);
    t -= Time::ps(3);
    EXPECT_EQ(t.count(), 12);
}

TEST(Time, SumBeyondTheRangeThrowsSayingTheLimit) {
    try {
        (void)(Time::max() + Time::ps(1));
        FAIL() << "expected TimeOverflow";
    } catch (const TimeOverflow& e) {
        EXPECT_THAT(std::string(e.what()), HasSubstr("at most 2^63-1 ps (about 106 days)"));
    }
    Time t = Time::max();
    EXPECT_THROW(t += Time::ps(1), TimeOverflow);
    EXPECT_EQ(t, Time::max());  // unchanged by the failed sum
}

TEST(Time, DifferenceBeyondTheRangeThrows) {
    const Time most_negative = Time::ps(std::numeric_limits<std::int64_t>::min());
    EXPECT_THROW((void)(most_negative - Time::ps(1)), TimeOverflow);
    Time t = most_negative;
    EXPECT_THROW(t -= Time::ps(1), TimeOverflow);
}

TEST(Time, ProductsAndUnitsBeyondTheRangeThrow) {
    EXPECT_THROW((void)(Time::us(1'000'000) * 10'000'000'000LL), TimeOverflow);
    EXPECT_THROW((void)Time::us(std::numeric_limits<std::int64_t>::max() / 1000), TimeOverflow);
    EXPECT_THROW((void)Time::ns(std::numeric_limits<std::int64_t>::max() / 10), TimeOverflow);
    EXPECT_EQ(Time::us(106LL * 24 * 3600 * 1'000'000).count(), 106LL * 24 * 3600 * 1'000'000'000'000LL);
}

// A duration beyond the type reads "never" (Time::max()); adding a start time to it then throws.
TEST(Time, HugeDurationsReadNeverAndCannotBeScheduled) {
    EXPECT_EQ(fromSeconds(1e30), Time::max());
    EXPECT_EQ(fromSeconds(std::numeric_limits<double>::infinity()), Time::max());
    EXPECT_THROW((void)(Time::us(1) + fromSeconds(1e30)), TimeOverflow);
}

TEST(Time, DurationThatIsNotANumberThrows) {
    EXPECT_THROW((void)fromSeconds(std::nan("")), std::domain_error);
    EXPECT_EQ(fromSeconds(-1.0), Time{});
    EXPECT_EQ(fromSeconds(1e-13).count(), 1);  // rounded up: positive work never takes zero time
}

}  // namespace
}  // namespace stepsim
