#include "sim/cost/GemmModel.hpp"

#include <algorithm>
#include <cmath>

namespace stepsim {

double gemmModelSeconds(const GemmShape& s, const GemmEfficiency& e, double peak_flops, int sms) {
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    const double tiles = std::ceil(double(s.m) / e.tile_m) * std::ceil(double(s.n) / e.tile_n);
    const double waves = std::ceil(tiles / sms);
    const double e_wave = tiles / (waves * sms);
    const double e_k = double(s.k) / (double(s.k) + e.k_half);
    return e.overhead_us * 1e-6 + flops / (peak_flops * e.max_efficiency * e_wave * e_k);
}

namespace {

// The model without its wave term: what a measured point's correction is carried across shapes by.
double gemmSecondsNoWaves(const GemmShape& s, const GemmEfficiency& e, double peak_flops) {
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    const double e_k = double(s.k) / (double(s.k) + e.k_half);
    return e.overhead_us * 1e-6 + flops / (peak_flops * e.max_efficiency * e_k);
}

}  // namespace

double unalignedGemmSeconds(const GemmShape& s, const GemmAlignment& a) {
    if (a.alignment <= 1 || a.rates.empty()) return 0.0;
    double rate = 0.0;  // TFLOP/s of the slowest unaligned dimension
    for (const auto& [x, member] : {std::pair{s.m, &UnalignedRate::m_tflops}, std::pair{s.n, &UnalignedRate::n_tflops},
                                    std::pair{s.k, &UnalignedRate::k_tflops}}) {
        if (x <= 0 || x % a.alignment == 0) continue;
        const long pow2 = x & -x;  // the largest power of two dividing x
        const UnalignedRate* row = &a.rates.front();
        for (const UnalignedRate& r : a.rates)
            if (r.multiple <= pow2) row = &r;
        double r = row->*member;
        if (!(r > 0)) {
            r = 0.0;
            for (const double v : {row->m_tflops, row->n_tflops, row->k_tflops})
                if (v > 0 && (r == 0.0 || v < r)) r = v;
        }
        if (r > 0 && (rate == 0.0 || r < rate)) rate = r;
    }
    if (!(rate > 0)) return 0.0;
    return 2.0 * double(s.m) * double(s.n) * double(s.k) / (rate * 1e12);
}

GemmEstimate gemmSeconds(const GemmShape& s, const GemmEfficiency& e, double peak_flops, int sms) {
    GemmEstimate out = alignedGemmSeconds(s, e, peak_flops, sms);
    out.seconds = std::max(out.seconds, unalignedGemmSeconds(s, e.unaligned));
    return out;
}

GemmEstimate alignedGemmSeconds(const GemmShape& s, const GemmEfficiency& e, double peak_flops, int sms) {
    GemmEstimate out{gemmModelSeconds(s, e, peak_flops, sms), e.points.empty()};
    if (e.points.empty()) return out;
    const GemmPoint* best = nearestShape(e.points, s);
    if (!best) {
        out.in_domain = false;
        return out;
    }
    const GemmShape ps{best->m, best->n, best->k};
    const double measured = 2.0 * double(ps.m) * double(ps.n) * double(ps.k) / (best->tflops * 1e12);
    out.seconds = gemmSecondsNoWaves(s, e, peak_flops) * measured / gemmSecondsNoWaves(ps, e, peak_flops);
    // Never faster than the fastest GEMM measured.
    double fastest = 0.0;
    for (const GemmPoint& p : e.points) fastest = std::max(fastest, p.tflops);
    out.seconds = std::max(out.seconds, 2.0 * double(s.m) * double(s.n) * double(s.k) / (fastest * 1e12));
    out.in_domain = true;
    return out;
}

}  // namespace stepsim
