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

GemmEstimate gemmSeconds(const GemmShape& s, const GemmEfficiency& e, double peak_flops, int sms) {
    GemmEstimate out{gemmModelSeconds(s, e, peak_flops, sms), e.points.empty()};
    if (e.points.empty()) return out;
    const GemmPoint* best = nullptr;
    double best_d = 0.0;
    for (const GemmPoint& p : e.points) {
        const double dm = std::log2(double(s.m) / p.m), dn = std::log2(double(s.n) / p.n),
                     dk = std::log2(double(s.k) / p.k);
        if (std::max({std::abs(dm), std::abs(dn), std::abs(dk)}) > 1.0) continue;
        const double d = dm * dm + dn * dn + dk * dk;
        if (!best || d < best_d) best = &p, best_d = d;
    }
    if (!best) {
        out.in_domain = false;
        return out;
    }
    const GemmShape ps{best->m, best->n, best->k};
    const double measured = 2.0 * double(ps.m) * double(ps.n) * double(ps.k) / (best->tflops * 1e12);
    out.seconds *= measured / gemmModelSeconds(ps, e, peak_flops, sms);
    out.in_domain = true;
    return out;
}

}  // namespace stepsim
