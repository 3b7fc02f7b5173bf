// The power model's fit from power_duty.py's records (sim/fit/ProfileFit.hpp, PowerModel in
// sim/cost/HardwareProfile.hpp): the clock line through the loads held at the power limit, with memory-bound time
// counted as memory_busy_tflops of load, and attention's clock exponents by head_dim. The records are written as
// JSON Lines and read back through readRaw, so their reading is covered too.
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/fit/ProfileFit.hpp"
#include "sim/fit/RawData.hpp"
#include "sim/base/InputError.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

constexpr double kRested = 1980.0;
constexpr double kMemoryBusy = 150.0, kIntercept = 2300.0, kSlope = -1.3, kHeadroom = 900.0;

// A load held at the limit: E = load + 150 · memory fraction (per second of the cycle) over its busy share, and the
// headroom its idle share leaves.
double clockOf(double load, double memoryFraction, double busy = 1.0) {
    return kIntercept + kSlope * (load + kMemoryBusy * memoryFraction) / busy + kHeadroom * (1.0 - busy) / busy;
}

std::filesystem::path writeLines(const std::string& name, const std::vector<json>& lines) {
    const auto p = std::filesystem::temp_directory_path() / name;
    std::ofstream out(p);
    for (const json& j : lines) out << j.dump() << "\n";
    return p;
}

// A mix as power_duty.py's first form wrote it (raw/power_duty-1.jsonl): no busy or memory share, only the
// compute-bound fraction.
json duty(double load, double computeFraction, double clock, double power, double idleMs = 0.0, int memoryCalls = 4) {
    return {{"kind", "power_duty"}, {"rank", 0}, {"mix", "m"},
            {"counts", {{"gemm", 4}, {"attention", 0}, {"memory", memoryCalls}, {"idle_ms", idleMs}}},
            {"reference_clock", {{"gemm", {{"sm_clock_mhz", 1965.0}}}, {"memory", {{"sm_clock_mhz", kRested}}}}},
            {"sustained", {{"load_tflops", load}, {"compute_fraction", computeFraction}, {"sm_clock_mhz", clock},
                           {"power_w", power}}}};
}

// A mix with the host sleeping part of each cycle, as power_duty.py --mixes idle writes it
// (raw/power_duty-2.jsonl).
json idleDuty(double load, double memoryFraction, double busy, double clock, double power) {
    json j = duty(load, busy - memoryFraction, clock, power, 1.0);
    j["sustained"]["memory_fraction"] = memoryFraction;
    j["sustained"]["busy_fraction"] = busy;
    return j;
}

json loadedGemm(double load, double memoryFraction, double clock, double power) {
    return {{"kind", "power_loaded"}, {"rank", 0}, {"load", "mid"}, {"class", "gemm"}, {"form", "forward"},
            {"m", 8192}, {"n", 8192}, {"k", 2048}, {"time_us", 50.0}, {"burst_us", 45.0},
            {"burst_clock", {{"sm_clock_mhz", kRested}}}, {"load_tflops", load}, {"memory_fraction", memoryFraction},
            {"sm_clock_mhz", clock}, {"power_w", power}};
}

json loadedAttention(const std::string& load, long headDim, long batch, const std::string& pass, double timeUs,
                     double burstUs, double clock) {
    return {{"kind", "power_loaded"}, {"rank", 0}, {"load", load}, {"class", "attention"}, {"batch", batch},
            {"heads", 16}, {"kv_heads", 16}, {"seq", 2048}, {"head_dim", headDim}, {"pass", pass},
            {"time_us", timeUs}, {"burst_us", burstUs}, {"burst_clock", {{"sm_clock_mhz", kRested}}},
            {"load_tflops", 300.0}, {"memory_fraction", 0.4}, {"sm_clock_mhz", clock}, {"power_w", 600.0}};
}

// Loads busy throughout held at the limit (700 W) on clockOf, from mixes and from GEMMs under a background load,
// memory fractions not tied to the load. Beside them, points the rule leaves out, each far off the line: one under
// 97% of the highest power, one within 20 MHz of the rested clock (1980, the highest reference clock; power_loaded's
// burst clock also counts).
std::vector<json> clockLineRecords() {
    std::vector<json> lines;
    const double loads[] = {250, 330, 410, 480, 560, 620};
    const double memory[] = {0.45, 0.1, 0.6, 0.3, 0.05, 0.2};
    for (int i = 0; i < 6; ++i) {
        lines.push_back(duty(loads[i], 1.0 - memory[i], clockOf(loads[i], memory[i]), 700.0));
        const double l = loads[i] - 40.0, m = memory[(i + 2) % 6];
        lines.push_back(loadedGemm(l, m, clockOf(l, m), 695.0));
    }
    lines.push_back(duty(100, 0.15, 1300.0, 670.0));  // 670 W < 0.97 × 700 W
    lines.push_back(duty(90, 0.1, 1965.0, 700.0));    // 15 MHz under the rested clock
    return lines;
}

// With three loads at the limit that sat idle 10-30% of their cycle the headroom is fitted beside the line.
TEST(PowerFit, ClockLineAndIdleHeadroomRecoveredFromTheHeldLoadsAtTheLimit) {
    std::vector<json> lines = clockLineRecords();
    for (const auto [load, memory, busy] : {std::array{540.0, 0.0, 0.9}, {380.0, 0.3, 0.8}, {420.0, 0.1, 0.7}})
        lines.push_back(idleDuty(load, memory, busy, clockOf(load, memory, busy), 698.0));
    const RawData raw = readRaw({writeLines("stepsim_power_line.jsonl", lines)});
    ASSERT_EQ(raw.power.size(), 17u);
    EXPECT_DOUBLE_EQ(raw.power.back().busy_fraction, 0.7);
    EXPECT_DOUBLE_EQ(raw.power.back().memory_fraction, 0.1);
    EXPECT_DOUBLE_EQ(raw.power.front().busy_fraction, 1.0);  // busy throughout: memory share 1 − compute_fraction
    EXPECT_DOUBLE_EQ(raw.power.front().memory_fraction, 0.45);
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const PowerModel& pm = r.profile.power;
    EXPECT_TRUE(pm.modelled);
    EXPECT_DOUBLE_EQ(pm.clock_max_mhz, kRested);
    EXPECT_DOUBLE_EQ(pm.memory_busy_tflops, kMemoryBusy);
    EXPECT_NEAR(pm.clock_intercept_mhz, kIntercept, 1e-6);
    EXPECT_NEAR(pm.clock_mhz_per_tflops, kSlope, 1e-9);
    EXPECT_NEAR(pm.idle_headroom_mhz, kHeadroom, 1e-6);
    const json& pj = r.report.at("power");
    EXPECT_NEAR(pj.at("rms_mhz").get<double>(), 0.0, 1e-6);
    EXPECT_EQ(pj.at("points").get<int>(), 17);
    EXPECT_EQ(pj.at("capped_points").get<int>(), 15);
    EXPECT_EQ(pj.at("idle_capped_points").get<int>(), 3);
    EXPECT_TRUE(pm.attention.empty());  // no attention records: attention keeps its rate at every clock
    EXPECT_DOUBLE_EQ(pm.attention_reference_mhz, kRested);
    EXPECT_DOUBLE_EQ(pm.attentionFactor(128, false, 1500.0), 1.0);
    // The model gives the fitted points back: a second of the third idle load, 0.7 s of it busy.
    EXPECT_NEAR(pm.clockAt(420e12, 0.1, 0.7, 0.7, 1.0), clockOf(420, 0.1, 0.7), 1e-6);
}

// Without an idle load at the limit the headroom cannot be told from the line: it is 0 and the idle mixes (here a
// GEMM-only one in power_duty.py's first form, busy for its compute fraction) are left out of the line; one idle
// under 3% of its cycle stays in it.
TEST(PowerFit, WithoutAnIdleLoadAtTheLimitNoHeadroom) {
    std::vector<json> lines = clockLineRecords();
    lines.push_back(duty(350, 0.5, 1980.0, 530.0, 1.5, 0));
    // idle 3% of its cycle only: not an idle load, and on the line through its load over the busy time
    lines.push_back(duty(600, 0.97, kIntercept + kSlope * 600 / 0.97, 700.0, 0.1, 0));
    const RawData raw = readRaw({writeLines("stepsim_power_noidle.jsonl", lines)});
    ASSERT_EQ(raw.power.size(), 16u);
    EXPECT_DOUBLE_EQ(raw.power[14].busy_fraction, 0.5);
    EXPECT_DOUBLE_EQ(raw.power[14].memory_fraction, 0.0);
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const PowerModel& pm = r.profile.power;
    EXPECT_DOUBLE_EQ(pm.idle_headroom_mhz, 0.0);
    EXPECT_NEAR(pm.clock_intercept_mhz, kIntercept, 1e-6);
    EXPECT_NEAR(pm.clock_mhz_per_tflops, kSlope, 1e-9);
    EXPECT_EQ(r.report.at("power").at("capped_points").get<int>(), 13);
    EXPECT_EQ(r.report.at("power").at("idle_capped_points").get<int>(), 0);
}

// Attention at two head_dims, three held loads each: the forward's time goes as (1980 / clock)^e_f; the
// forward_backward record holds its forward (the forward record's time) plus a backward at its own, different clock,
// (1980 / clock)^e_b. A load only 15 MHz under the burst clock is left out (its times are far off).
TEST(PowerFit, AttentionExponentsByHeadDimFromForwardAndForwardBackward) {
    struct Dim {
        long head_dim;
        double forward, backward;
    };
    const Dim dims[] = {{128, 0.75, 0.7}, {64, 0.9, 0.82}};
    struct Load {
        const char* name;
        double forwardClock, fbClock;
    };
    const Load loads[] = {{"low", 1890, 1920}, {"mid", 1785, 1740}, {"high", 1620, 1650}, {"rest", 1965, 1965}};
    std::vector<json> lines = clockLineRecords();
    for (const Dim& d : dims)
        for (long batch : {2, 4}) {
            const double fBurst = 40.0 * batch, bBurst = 95.0 * batch;
            for (const Load& l : loads) {
                const bool off = std::string(l.name) == "rest";
                const double f = fBurst * std::pow(kRested / l.forwardClock, d.forward) * (off ? 3.0 : 1.0);
                const double b = bBurst * std::pow(kRested / l.fbClock, d.backward) * (off ? 3.0 : 1.0);
                lines.push_back(loadedAttention(l.name, d.head_dim, batch, "forward", f, fBurst, l.forwardClock));
                lines.push_back(loadedAttention(l.name, d.head_dim, batch, "forward_backward", f + b, fBurst + bBurst,
                                                l.fbClock));
            }
        }
    const RawData raw = readRaw({writeLines("stepsim_power_attention.jsonl", lines)});
    ASSERT_EQ(raw.attention_clock.size(), 32u);
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const PowerModel& pm = r.profile.power;
    ASSERT_TRUE(pm.modelled);
    EXPECT_DOUBLE_EQ(pm.attention_reference_mhz, kRested);
    ASSERT_EQ(pm.attention.size(), 2u);
    EXPECT_EQ(pm.attention[0].head_dim, 64);  // ascending head_dim
    EXPECT_NEAR(pm.attention[0].forward, 0.9, 1e-9);
    EXPECT_NEAR(pm.attention[0].backward, 0.82, 1e-9);
    EXPECT_EQ(pm.attention[1].head_dim, 128);
    EXPECT_NEAR(pm.attention[1].forward, 0.75, 1e-9);
    EXPECT_NEAR(pm.attention[1].backward, 0.7, 1e-9);
    const json& a = r.report.at("power").at("attention");
    EXPECT_EQ(a.at(0).at("forward_records").get<int>(), 6);   // 2 shapes × 3 loads; the rested load left out
    EXPECT_EQ(a.at(0).at("backward_records").get<int>(), 6);
    // The loaded GEMMs' and attention's points join the clock line's points; the line itself is unchanged.
    EXPECT_NEAR(pm.clock_mhz_per_tflops, kSlope, 1e-9);
}

TEST(PowerFit, PowerDutyWithoutItsClockIsAnInputErrorNamingKeyAndLine) {
    std::vector<json> lines = clockLineRecords();
    json bad = duty(300, 0.6, 1700.0, 700.0);
    bad["sustained"].erase("sm_clock_mhz");
    lines.insert(lines.begin() + 2, bad);  // line 3
    const auto p = writeLines("stepsim_power_bad.jsonl", lines);
    try {
        readRaw({p});
        FAIL() << "no InputError";
    } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(p.string() + ":3: sustained.sm_clock_mhz"), std::string::npos) << what;
    }
}

TEST(PowerFit, IdleMixWithMemoryKernelsNeedsItsShares) {
    std::vector<json> lines = clockLineRecords();
    lines.push_back(duty(300, 0.4, 1800.0, 700.0, 1.0));  // line 15: idle, 4 memory calls, no busy_fraction
    const auto p = writeLines("stepsim_power_noshares.jsonl", lines);
    try {
        readRaw({p});
        FAIL() << "no InputError";
    } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(p.string() + ":15: sustained.busy_fraction"), std::string::npos) << what;
    }
}

TEST(PowerFit, WithoutPowerRecordsNoPowerModel) {
    HardwareProfile base;
    base.power.modelled = true;
    base.power.clock_max_mhz = 1234.0;
    const ProfileFitResult r = fitProfile(RawData{}, base, "t", "test");
    EXPECT_FALSE(r.profile.power.modelled);
    EXPECT_FALSE(r.report.contains("power"));
}

}  // namespace
}  // namespace stepsim
