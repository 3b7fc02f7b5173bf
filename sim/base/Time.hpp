#pragma once
// Simulated time: an integer count of picoseconds.
//
// Integer time keeps event order exact and runs bit-identical: a 1 KB message on NVLink takes ~2 ns,
// so picoseconds resolve every transfer, and int64 spans ~106 days. Doubles are used for rates only;
// `fromSeconds` is the one function that turns a double duration into Time (rounded up, so a positive
// amount of work never takes zero time).
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace stepsim {

class Time {
public:
    constexpr Time() = default;
    static constexpr Time ps(std::int64_t v) { return Time(v); }
    static constexpr Time ns(std::int64_t v) { return Time(v * 1000); }
    static constexpr Time us(std::int64_t v) { return Time(v * 1000'000); }
    static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

    constexpr std::int64_t count() const { return ps_; }
    constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
    constexpr double micros() const { return static_cast<double>(ps_) * 1e-6; }
    constexpr double millis() const { return static_cast<double>(ps_) * 1e-9; }

    constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
    constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
    constexpr Time& operator+=(Time o) { ps_ += o.ps_; return *this; }
    constexpr Time& operator-=(Time o) { ps_ -= o.ps_; return *this; }
    constexpr auto operator<=>(const Time&) const = default;

private:
    constexpr explicit Time(std::int64_t v) : ps_(v) {}
    std::int64_t ps_ = 0;
};

// The single conversion from a double duration in seconds to Time, rounding up to whole picoseconds.
inline Time fromSeconds(double s) {
    if (!(s > 0.0)) return Time{};
    const double ps = std::ceil(s * 1e12);
    if (ps >= 9.2e18) return Time::max();
    return Time::ps(static_cast<std::int64_t>(ps));
}
inline Time fromMicros(double us) { return fromSeconds(us * 1e-6); }

}  // namespace stepsim
