#include "sim/fit/PowerFit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include <Eigen/Dense>

#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

// The clock line through the loads held at the power limit: capped points draw at least 97% of the highest power
// seen and hold the clock more than 20 MHz under the rested one. For each whole memory_busy_tflops W in 0..400, an
// ordinary least-squares fit of clock = intercept + slope · E / u + idle_headroom · (1 − u) / u, where E = load + W ·
// memory_fraction (per second of the cycle) and u its busy fraction: the load over the busy time, and the headroom
// idle time leaves. The W of least squared error is kept. Without a capped point idle for at least 3% of its cycle
// the headroom cannot be told from the line: the idle mixes are left out, the line is fitted through E alone (u = 1)
// and idle_headroom is 0 (PowerModel: the load is then taken over the whole step).
struct ClockLine {
    double intercept = 0, slope = 0, memory_busy = 0, idle_headroom = 0, rms = 0;
    std::size_t points = 0, idle_points = 0;
};

std::optional<ClockLine> fitClockLine(const std::vector<RawPowerPoint>& pts, double clockMax) {
    double powerMax = 0;
    for (const RawPowerPoint& q : pts) powerMax = std::max(powerMax, q.power_w);
    std::vector<const RawPowerPoint*> capped;
    std::size_t idle = 0;
    for (const RawPowerPoint& q : pts)
        if (q.power_w >= 0.97 * powerMax && q.clock_mhz < clockMax - 20.0) {
            capped.push_back(&q);
            idle += q.busy_fraction < 0.97;
        }
    if (idle == 0) std::erase_if(capped, [](const RawPowerPoint* q) { return q->busy_fraction < 0.97; });
    const auto cols = static_cast<Eigen::Index>(idle > 0 ? 3 : 2);
    if (capped.size() < std::size_t(cols) + 1) return std::nullopt;
    const auto n = static_cast<Eigen::Index>(capped.size());
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) y(i) = capped[std::size_t(i)]->clock_mhz;
    std::optional<ClockLine> best;
    for (int memE = 0; memE <= 400; ++memE) {
        Eigen::MatrixXd A(n, cols);
        for (Eigen::Index i = 0; i < n; ++i) {
            const RawPowerPoint& q = *capped[std::size_t(i)];
            A(i, 0) = 1.0;
            A(i, 1) = (q.load_tflops + memE * q.memory_fraction) / q.busy_fraction;
            if (cols == 3) A(i, 2) = (1.0 - q.busy_fraction) / q.busy_fraction;
        }
        const Eigen::VectorXd c = A.colPivHouseholderQr().solve(y);
        const double rms = std::sqrt((A * c - y).squaredNorm() / double(n));
        if (!std::isfinite(rms) || !(c(1) < 0.0)) continue;
        if (!best || rms < best->rms)
            best = ClockLine{c(0), c(1), double(memE), cols == 3 ? c(2) : 0.0, rms, capped.size(), idle};
    }
    return best;
}

// Attention's clock exponent by head_dim: s = loaded time / burst time, x = ln(burst clock / loaded clock), the
// least-squares slope through the origin of ln s on x (Σ x ln s / Σ x²) over the records at least 30 MHz under their
// burst clock. The forward from "forward" records; the backward from each "forward_backward" record less the forward
// of the same file, rank, load and shape (both times), at the forward_backward record's clocks. A pass with no usable
// record takes the other pass's exponent.
json fitAttentionExponents(const std::vector<RawAttentionClock>& recs, std::vector<AttentionClockExponent>& out) {
    struct Sums { double xs = 0, xx = 0; int n = 0; };
    std::map<long, std::array<Sums, 2>> byDim;  // [0] forward, [1] backward
    const auto add = [&](long headDim, int pass, double time, double burst, double clock, double burstClock) {
        if (!(time > 0) || !(burst > 0) || !(burstClock - clock >= 30.0)) return;
        const double x = std::log(burstClock / clock);
        Sums& s = byDim[headDim][pass];
        s.xs += x * std::log(time / burst), s.xx += x * x, ++s.n;
    };
    using Shape = std::tuple<std::string, int, std::string, long, long, long, long, long>;
    const auto shape = [](const RawAttentionClock& a) {
        return Shape{a.file, a.rank, a.load, a.batch, a.heads, a.kv_heads, a.seq, a.head_dim};
    };
    std::map<Shape, const RawAttentionClock*> forwards;
    for (const RawAttentionClock& a : recs)
        if (!a.forward_backward) {
            forwards[shape(a)] = &a;
            add(a.head_dim, 0, a.time_us, a.burst_us, a.clock_mhz, a.burst_clock_mhz);
        }
    for (const RawAttentionClock& a : recs)
        if (auto it = forwards.find(shape(a)); a.forward_backward && it != forwards.end())
            add(a.head_dim, 1, a.time_us - it->second->time_us, a.burst_us - it->second->burst_us, a.clock_mhz, a.burst_clock_mhz);
    out.clear();
    json j = json::array();
    for (const auto& [headDim, s] : byDim) {
        if (s[0].n == 0 && s[1].n == 0) continue;
        AttentionClockExponent e{headDim, s[0].n ? s[0].xs / s[0].xx : s[1].xs / s[1].xx,
                                 s[1].n ? s[1].xs / s[1].xx : s[0].xs / s[0].xx};
        out.push_back(e);
        j.push_back({{"head_dim", headDim}, {"forward", e.forward}, {"backward", e.backward},
                     {"forward_records", s[0].n}, {"backward_records", s[1].n}});
    }
    return j;
}

// The report's entry for a fitted clock line, and the rule it follows.
void reportClockLine(json& pj, const PowerModel& pm, const ClockLine& line, std::size_t attentionRecords) {
    pj["clock_intercept_mhz"] = pm.clock_intercept_mhz;
    pj["clock_mhz_per_tflops"] = pm.clock_mhz_per_tflops;
    pj["memory_busy_tflops"] = pm.memory_busy_tflops;
    pj["idle_headroom_mhz"] = pm.idle_headroom_mhz;
    pj["rms_mhz"] = line.rms;
    pj["capped_points"] = line.points;
    pj["idle_capped_points"] = line.idle_points;
    pj["attention_reference_mhz"] = pm.attention_reference_mhz;
    pj["attention_records"] = attentionRecords;
    pj["rule"] = "clock = intercept + slope * (load + memory_busy * memory_fraction) / busy + idle_headroom * "
                 "(1 - busy) / busy, least squares over the loads at >= 97% of the highest power and > 20 MHz "
                 "under the rested clock (without an idle one among them: idle_headroom 0, the idle mixes left "
                 "out)";
}

}  // namespace

// The rested clock is the highest read beside a rested time; the clock line through the held loads that reached the
// limit (fitClockLine); attention's exponents by head_dim (fitAttentionExponents) against the median burst clock of
// its records.
void fitPower(FitState& s) {
    const RawData& raw = s.raw;
    PowerModel& pm = s.profile.power;
    if (raw.power.empty()) {
        pm.modelled = false;
        return;
    }
    pm.clock_max_mhz = 0;
    for (const RawPowerPoint& q : raw.power) pm.clock_max_mhz = std::max(pm.clock_max_mhz, q.rested_clock_mhz);
    json pj = {{"points", raw.power.size()}, {"clock_max_mhz", pm.clock_max_mhz}};
    if (const std::optional<ClockLine> line = fitClockLine(raw.power, pm.clock_max_mhz)) {
        pm.clock_intercept_mhz = line->intercept;
        pm.clock_mhz_per_tflops = line->slope;
        pm.memory_busy_tflops = line->memory_busy;
        pm.idle_headroom_mhz = line->idle_headroom;
        // Without attention records the clock is still reported; attention keeps its calibrated rate.
        std::vector<double> burst;
        for (const RawAttentionClock& a : raw.attention_clock) burst.push_back(a.burst_clock_mhz);
        pm.attention_reference_mhz = burst.empty() ? pm.clock_max_mhz : median(burst);
        pj["attention"] = fitAttentionExponents(raw.attention_clock, pm.attention);
        pm.modelled = true;
        reportClockLine(pj, pm, *line, raw.attention_clock.size());
    } else {
        pm.modelled = false;
        pj["not_fitted"] = "fewer than 3 held loads at the power limit (>= 97% of the highest power, > 20 MHz "
                           "under the rested clock)";
    }
    pj["modelled"] = pm.modelled;
    s.report["power"] = pj;
}

}  // namespace stepsim
