#include "sim/cost/ProfileDerive.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"

namespace stepsim {

namespace {

// The fixed cost (µs) a norm grid's pass falls back to: the kind's own, else its base kind's (CostModel.cpp).
double normFixedUs(const MemoryRates& m, bool rms, const char* pass) {
    const std::string own = fmt::format("{}_{}", rms ? "rms" : "norm", pass);
    const std::string base = fmt::format("norm_{}", std::string(pass) == "weight_grad" ? "backward" : pass);
    for (const std::string& k : {own, base})
        if (const auto it = m.kernels.find(k); it != m.kernels.end()) return it->second.fixed_us;
    return 0.0;
}

// t' = f + (t − f) · ratio, f capped at t: the bandwidth-bound part of a measured time moves, its fixed part stays.
void scaleGrid(std::vector<NormPoint>& grid, const MemoryRates& m, bool rms, double time_ratio) {
    const auto move = [&](double& us, const char* pass) {
        const double f = std::min(us, normFixedUs(m, rms, pass));
        us = f + (us - f) * time_ratio;
    };
    for (NormPoint& p : grid) {
        move(p.forward_us, "forward");
        move(p.backward_us, "backward");
        move(p.weight_grad_us, "weight_grad");
    }
}

double peakOf(const GpuRates& g, const std::string& dtype) {
    if (dtype.rfind("fp8", 0) == 0) return g.peak_tflops_fp8;
    if (dtype == "fp32") return g.peak_tflops_fp32;
    if (dtype == "fp16") return g.peak_tflops_fp16;
    return g.peak_tflops_bf16;
}

// Every GEMM rate of the profile by the power model's ρ; returns the median factor of the BF16 points (or of the
// BF16 asymptote when none were measured).
double scaleGemms(HardwareProfile& p, double rho) {
    std::vector<double> bf16;
    for (auto& [dtype, e] : p.gemm) {
        // A dtype's load draws as the BF16 load at the same fraction of its peak.
        const double to_bf16 = p.gpu.peak_tflops_bf16 / peakOf(p.gpu, dtype);
        for (GemmPoint& q : e.points) {
            const double f = gemmClockFactor(p.power, q.tflops * to_bf16, rho);
            q.tflops *= f;
            if (dtype == "bf16") bf16.push_back(f);
        }
        const double f = gemmClockFactor(p.power, e.max_efficiency * p.gpu.peak_tflops_bf16, rho);
        e.max_efficiency *= f;
        if (dtype == "bf16" && e.points.empty()) bf16.push_back(f);
        for (UnalignedRate& u : e.unaligned.rates)
            for (double* t : {&u.m_tflops, &u.n_tflops, &u.k_tflops})
                if (*t > 0) *t *= gemmClockFactor(p.power, *t * to_bf16, rho);
    }
    if (bf16.empty()) return 1.0;
    std::sort(bf16.begin(), bf16.end());
    return bf16[bf16.size() / 2];
}

void record(HardwareProfile& p, std::string what, double factor, double a, double b, std::string why) {
    p.derivation.steps.push_back(
        DerivationStep{std::move(what), factor, std::min({a, b, factor}), std::max({a, b, factor}), std::move(why)});
}

// Another die: rates by the ratio of dense peaks (the same fraction of peak), links by the NVLink ratio.
void extrapolate(HardwareProfile& p, const DatasheetDelta& d) {
    const GpuRates from = p.gpu;
    if (d.sms > 0) p.gpu.sms = d.sms;
    for (auto [dst, src] : {std::pair{&p.gpu.peak_tflops_bf16, d.peak_tflops_bf16},
                            std::pair{&p.gpu.peak_tflops_fp16, d.peak_tflops_fp16},
                            std::pair{&p.gpu.peak_tflops_fp8, d.peak_tflops_fp8},
                            std::pair{&p.gpu.peak_tflops_fp32, d.peak_tflops_fp32}})
        if (src > 0) *dst = src;
    const double u = d.extrapolation_uncertainty;
    for (auto& [dtype, e] : p.gemm) {
        const double r = peakOf(p.gpu, dtype) / peakOf(from, dtype);
        for (GemmPoint& q : e.points) q.tflops *= r;
        for (UnalignedRate& a : e.unaligned.rates)
            for (double* t : {&a.m_tflops, &a.n_tflops, &a.k_tflops}) *t *= r;
        if (dtype == "bf16")
            record(p, fmt::format("gemm rates ({}: peak {:.0f} -> {:.0f} TFLOP/s)", dtype, peakOf(from, dtype),
                                  peakOf(p.gpu, dtype)),
                   r, r * (1 - u), r * (1 + u), "the same fraction of the dense peak as measured (extrapolated)");
    }
    const double ra = p.gpu.peak_tflops_bf16 / from.peak_tflops_bf16;
    for (AttentionPoint& a : p.attention.points) {
        a.fwd_tflops *= ra;
        a.bwd_tflops *= ra;
    }
    record(p, "attention rates", ra, ra * (1 - u), ra * (1 + u),
           "the same fraction of the BF16 peak as measured (extrapolated)");
    if (d.nvlink_gbps > 0) {
        // The datasheets' ratio (the measured GPU's own datasheet figure, else its measured link rate) carries the
        // measured rates: what the measured GPU reached of its NVLink, the target reaches of its own.
        const double from_gbps = p.gpu.nvlink_gbps > 0 ? p.gpu.nvlink_gbps : p.links.nvlink_gbps;
        const double rn = d.nvlink_gbps / from_gbps;
        p.links.nvlink_gbps *= rn;
        p.gpu.nvlink_gbps = d.nvlink_gbps;
        p.nccl.ring_busbw_gbps *= rn;
        p.nccl.nvls_busbw_gbps *= rn;
        for (CollectiveFit& c : p.collectives)
            for (CollectiveSegment& s : c.segments) s.busbw_gbps *= rn;
        record(p, "NVLink and collectives' bus bandwidth", rn, rn * (1 - u), rn * (1 + u),
               "the NVLink ratio; the α (latency) terms as measured (extrapolated)");
    }
    // The clock line's shape is the measured die's; on another die only its cap is known: the power state is not
    // carried (every kernel at its rate at the limit, attention at its rested rate).
    p.power.modelled = false;
    if (d.clock_max_mhz > 0) p.power.clock_max_mhz = d.clock_max_mhz;
    record(p, "power model", 1.0, 1.0 - u, 1.0,
           "not carried to another die: kernels at their rates at the limit, attention at its rested rate");
}

// A delta that is not extrapolated describes the same die: SMs, peaks and NVLink must be the measured GPU's.
void requireSameDie(const HardwareProfile& p, const DatasheetDelta& d) {
    for (const auto& [key, want, have] :
         {std::tuple{"target.sms", double(d.sms), double(p.gpu.sms)},
          std::tuple{"target.peak_tflops_bf16", d.peak_tflops_bf16, p.gpu.peak_tflops_bf16},
          std::tuple{"target.peak_tflops_fp16", d.peak_tflops_fp16, p.gpu.peak_tflops_fp16},
          std::tuple{"target.peak_tflops_fp8", d.peak_tflops_fp8, p.gpu.peak_tflops_fp8},
          std::tuple{"target.peak_tflops_fp32", d.peak_tflops_fp32, p.gpu.peak_tflops_fp32},
          std::tuple{"target.nvlink_gbps", d.nvlink_gbps, p.links.nvlink_gbps},
          std::tuple{"target.clock_max_mhz", d.clock_max_mhz, p.power.clock_max_mhz}})
        if (want > 0 && want != have)
            throw InputError(fmt::format("{}: {} differs from the measured GPU's {} ({}); another die is an "
                                         "extrapolation: set extrapolated: true",
                                         key, want, p.name, have));
}

}  // namespace

double gemmClockFactor(const PowerModel& pw, double tflops, double rho) {
    if (!pw.modelled || !(tflops > 0) || !(rho > 0)) return 1.0;
    const double I = pw.clock_intercept_mhz, s = pw.clock_mhz_per_tflops, cap = pw.clock_max_mhz;
    const double f = std::min(cap, I + s * tflops);
    if (!(f > 0)) return 1.0;
    const double f2 = std::min(cap, I / (1.0 - (s / rho) * tflops / f));
    return f2 / f;
}

void scaleHbmBandwidth(HardwareProfile& p, double hbm_gbps) {
    if (!(hbm_gbps > 0) || hbm_gbps == p.gpu.hbm_gbps) return;
    const double from = p.gpu.hbm_gbps, time_ratio = from / hbm_gbps;
    NormGrid& g = p.memory.norms;
    scaleGrid(g.layer_fp32, p.memory, false, time_ratio);
    scaleGrid(g.layer_bf16, p.memory, false, time_ratio);
    scaleGrid(g.rms_fp32, p.memory, true, time_ratio);
    scaleGrid(g.rms_bf16, p.memory, true, time_ratio);
    p.power.memory_busy_tflops *= hbm_gbps / from;
    p.gpu.hbm_gbps = hbm_gbps;
    // The split is the fit's: a kernel's efficiency may itself move with the memory (HBM2e against HBM3e's
    // controllers): ±10% on the bandwidth term, a guess the notes carry.
    const double r = hbm_gbps / from;
    record(p, fmt::format("memory-bound kernels' bandwidth term (HBM {:.0f} -> {:.0f} GB/s)", from, hbm_gbps), r,
           0.9 * r, 1.1 * r,
           "t = fixed + bytes / (HBM · efficiency): fixed and efficiency as fitted; the norms' grid split by its "
           "kinds' fixed costs; memory_busy_tflops by the same ratio");
}

void setHbmCapacity(HardwareProfile& p, double gib) {
    if (!(gib > 0) || gib == p.gpu.memory_gib) return;
    record(p, fmt::format("HBM capacity ({:.1f} -> {:.1f} GiB)", p.gpu.memory_gib, gib), gib / p.gpu.memory_gib,
           gib / p.gpu.memory_gib, gib / p.gpu.memory_gib, "the datasheet's");
    p.gpu.memory_gib = gib;
}

void scalePowerLimit(HardwareProfile& p, double watts, double fixed_low_w, double fixed_high_w, const std::string& key) {
    PowerModel& pw = p.power;
    if (!(watts > 0) || watts == pw.limit_w) return;
    if (!(pw.limit_w > 0))
        throw InputError(fmt::format("{}: profile {} does not record the power limit its rates were measured at "
                                     "(power.limit_w), so they cannot be carried to {} W",
                                     key, p.name, watts));
    if (!pw.modelled)
        throw InputError(fmt::format("{}: profile {} has no fitted power model (power.modelled false), so its rates "
                                     "cannot be carried from {} W to {} W",
                                     key, p.name, pw.limit_w, watts));
    const double F = pw.fixed_w;
    if (!(watts > F) || !(fixed_high_w < watts))
        throw InputError(fmt::format("{}: expected a limit above the board's load-independent draw ({} W, up to {} W), "
                                     "got {}",
                                     key, F, fixed_high_w, watts));
    const auto rhoAt = [&](double fixed) { return (watts - fixed) / (pw.limit_w - fixed); };
    const double rho = rhoAt(F);
    // The uncertainty: the whole derivation again at each end of the fixed draw's range (a copy, so the profile
    // moves once).
    const auto medianAt = [&](double fixed) {
        HardwareProfile q = p;
        return scaleGemms(q, rhoAt(fixed));
    };
    const double lo = medianAt(fixed_high_w), hi = medianAt(fixed_low_w);
    const double f = scaleGemms(p, rho);
    pw.clock_mhz_per_tflops /= rho;
    record(p, fmt::format("GEMM rates (power limit {:.0f} -> {:.0f} W; median over the points)", pw.limit_w, watts), f,
           lo, hi,
           fmt::format("the clock line's load at each clock × ρ = (P' − F) / (P − F) = {:.3f}, F = {:.0f} W ({:.0f}-{:.0f}); "
                       "clock slope {:.3f} MHz per TFLOP/s",
                       rho, F, fixed_low_w, fixed_high_w, pw.clock_mhz_per_tflops));
    pw.limit_w = watts;
}

HardwareProfile deriveProfile(const HardwareProfile& measured, const DatasheetDelta& d) {
    HardwareProfile p = measured;
    p.name = d.name;
    p.source = fmt::format("stepsim profile derive from {}{}", measured.name, d.extrapolated ? " (extrapolated)" : "");
    p.file.clear();
    p.builtin = false;
    // A profile derived from a derived one keeps the measured origin and the steps that led to it.
    const ProfileDerivation& before = measured.derivation;
    p.derivation = ProfileDerivation{before.from.empty() ? measured.name : before.from,
                                     d.extrapolated || before.extrapolated, d.notes.empty() ? before.notes : d.notes,
                                     before.steps};
    if (!d.model.empty()) p.gpu.model = d.model;
    if (d.source_limit_w > 0) p.power.limit_w = d.source_limit_w;
    if (d.fixed_w > 0) p.power.fixed_w = d.fixed_w;
    if (d.fixed_w_low > 0) p.power.fixed_w_low = d.fixed_w_low;
    if (d.fixed_w_high > 0) p.power.fixed_w_high = d.fixed_w_high;
    if (d.extrapolated) extrapolate(p, d);
    else requireSameDie(measured, d);
    if (d.power_limit_w > 0 && p.power.modelled)
        scalePowerLimit(p, d.power_limit_w, p.power.fixed_w_low > 0 ? p.power.fixed_w_low : p.power.fixed_w,
                        p.power.fixed_w_high > 0 ? p.power.fixed_w_high : p.power.fixed_w, "target.power_limit_w");
    else if (d.power_limit_w > 0)
        p.power.limit_w = d.power_limit_w;
    scaleHbmBandwidth(p, d.hbm_gbps);
    setHbmCapacity(p, d.memory_gib);
    return p;
}

}  // namespace stepsim
