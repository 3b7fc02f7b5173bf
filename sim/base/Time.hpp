#pragma once
// Simulated time: an integer count of picoseconds.
//
// Integer time keeps event order exact and runs bit-identical: a 1 KB message on NVLink takes ~2 ns,
// so picoseconds resolve every transfer, and int64 spans ~106 days. Doubles are used for rates only;
// `fromSeconds` is the one function that turns a double duration into Time (rounded up, so a positive
// amount of work never takes zero time).
//
// Arithmetic is checked: a sum, difference or product that leaves the int64 range throws TimeOverflow (its message
// states the limit) instead of wrapping to a negative time. The scenario loader keeps a run's simulated time far
// below the limit (docs/scenario.md, Limits), so reaching it is a bug, reported as an internal error.
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace stepsim {

class TimeOverflow : public std::overflow_error {
public:
    explicit TimeOverflow(const char* op)
        : std::overflow_error(std::string("simulated time overflowed in ") + op +
                              ": the time type holds at most 2^63-1 ps (about 106 days)") {}
};

class Time {
public:
    constexpr Time() = default;
    static constexpr Time ps(std::int64_t v) { return Time(v); }
    static constexpr Time ns(std::int64_t v) { return Time(mul(v, 1000, "Time::ns")); }
    static constexpr Time us(std::int64_t v) { return Time(mul(v, 1000'000, "Time::us")); }
    static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

    constexpr std::int64_t count() const { return ps_; }
    constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
    constexpr double micros() const { return static_cast<double>(ps_) * 1e-6; }
    constexpr double millis() const { return static_cast<double>(ps_) * 1e-9; }

    constexpr Time operator+(Time o) const { return Time(add(ps_, o.ps_)); }
    constexpr Time operator-(Time o) const { return Time(sub(ps_, o.ps_)); }
    constexpr Time& operator+=(Time o) { ps_ = add(ps_, o.ps_); return *this; }
    constexpr Time& operator-=(Time o) { ps_ = sub(ps_, o.ps_); return *this; }
    // `n` times this duration (a count of steps, of micro-batches, of repeats).
    constexpr Time operator*(std::int64_t n) const { return Time(mul(ps_, n, "Time * n")); }
    constexpr auto operator<=>(const Time&) const = default;

private:
    constexpr explicit Time(std::int64_t v) : ps_(v) {}
    static constexpr std::int64_t add(std::int64_t a, std::int64_t b) {
        std::int64_t r = 0;
        if (__builtin_add_overflow(a, b, &r)) throw TimeOverflow("a sum");
        return r;
    }
    static constexpr std::int64_t sub(std::int64_t a, std::int64_t b) {
        std::int64_t r = 0;
        if (__builtin_sub_overflow(a, b, &r)) throw TimeOverflow("a difference");
        return r;
    }
    static constexpr std::int64_t mul(std::int64_t a, std::int64_t b, const char* op) {
        std::int64_t r = 0;
        if (__builtin_mul_overflow(a, b, &r)) throw TimeOverflow(op);
        return r;
    }
    std::int64_t ps_ = 0;
};

// The single conversion from a double duration in seconds to Time, rounding up to whole picoseconds. A duration
// beyond what the type holds (a rate of zero, or near it) reads Time::max(): "never"; adding anything to it throws.
// A duration that is not a number (0/0 somewhere upstream) is a bug, never a zero time.
inline Time fromSeconds(double s) {
    if (std::isnan(s)) throw std::domain_error("a simulated duration is not a number (NaN seconds)");
    if (!(s > 0.0)) return Time{};
    const double ps = std::ceil(s * 1e12);
    if (ps >= 9.2e18) return Time::max();
    return Time::ps(static_cast<std::int64_t>(ps));
}
inline Time fromMicros(double us) { return fromSeconds(us * 1e-6); }

}  // namespace stepsim
