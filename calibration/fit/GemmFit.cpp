#include "calibration/fit/GemmFit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/base/InputError.hpp"
#include "sim/base/Statistics.hpp"
#include "sim/cost/GemmModel.hpp"

namespace stepsim {
namespace {

double measuredSeconds(const GemmPoint& p) { return 2.0 * double(p.m) * double(p.n) * double(p.k) / (p.tflops * 1e12); }

}  // namespace

GemmEfficiency fitGemm(const std::vector<GemmPoint>& points, double peak_tflops, int sms) {
    if (points.size() < 3) throw InputError("GEMM fit: at least 3 measured shapes are needed, got " + std::to_string(points.size()));
    const double peak = peak_tflops * 1e12;
    std::vector<double> kHalves = {0.0};
    for (double k = 16; k <= 4096 * 1.001; k *= std::pow(2.0, 0.125)) kHalves.push_back(k);
    const int tiles[][2] = {{128, 128}, {128, 256}, {256, 128}, {64, 256}};
    GemmEfficiency best;
    double bestRss = std::numeric_limits<double>::infinity();
    for (const auto& tile : tiles)
        for (double kh : kHalves) {
            GemmEfficiency e;
            e.tile_m = tile[0];
            e.tile_n = tile[1];
            e.k_half = kh;
            e.max_efficiency = 1.0;
            e.overhead_us = 0.0;
            // x_i = model seconds at e_max = 1, no overhead; t_i ≈ o + x_i / e_max, rows scaled by 1/t_i.
            double s11 = 0, s12 = 0, s22 = 0, b1 = 0, b2 = 0;
            std::vector<double> x, t;
            for (const auto& p : points) {
                const double xi = gemmModelSeconds({p.m, p.n, p.k}, e, peak, sms);
                const double ti = measuredSeconds(p);
                x.push_back(xi);
                t.push_back(ti);
                const double u = 1.0 / ti, v = xi / ti;  // row [u, v] · [o, 1/e] ≈ 1
                s11 += u * u; s12 += u * v; s22 += v * v; b1 += u; b2 += v;
            }
            const double det = s11 * s22 - s12 * s12;
            double o = det != 0 ? (b1 * s22 - b2 * s12) / det : 0.0;
            double inv = det != 0 ? (s11 * b2 - s12 * b1) / det : 0.0;
            if (o < 0) {  // overhead ≥ 0: refit 1/e alone
                o = 0;
                inv = b2 / s22;
            }
            if (inv < 1.0) inv = 1.0;  // e_max ≤ 1
            double rss = 0;
            for (std::size_t i = 0; i < x.size(); ++i) {
                const double r = (o + x[i] * inv - t[i]) / t[i];
                rss += r * r;
            }
            if (rss < bestRss) {
                bestRss = rss;
                best = e;
                best.max_efficiency = 1.0 / inv;
                best.overhead_us = o * 1e6;
            }
        }
    best.points = points;
    best.rel_error = gemmModelError(points, best, peak_tflops, sms);
    return best;
}

double gemmModelError(const std::vector<GemmPoint>& points, const GemmEfficiency& e, double peak_tflops, int sms) {
    std::vector<double> r;
    for (const auto& p : points) {
        const double t = measuredSeconds(p);
        r.push_back(std::abs(gemmModelSeconds({p.m, p.n, p.k}, e, peak_tflops * 1e12, sms) - t) / t);
    }
    return median(r);
}

double gemmCorrectedError(const std::vector<GemmPoint>& points, const GemmEfficiency& e, double peak_tflops, int sms) {
    std::vector<double> r;
    for (const auto& p : points) {
        const double t = measuredSeconds(p);
        r.push_back(std::abs(gemmSeconds({p.m, p.n, p.k}, e, peak_tflops * 1e12, sms).seconds - t) / t);
    }
    return median(r);
}

}  // namespace stepsim
