#include "sim/fit/AlphaBetaFit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Dense>

#include "sim/base/InputError.hpp"
#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

double rssOf(const std::vector<SizeTime>& pts, std::size_t b, std::size_t e, double a, double c) {
    double s = 0;
    for (std::size_t i = b; i < e; ++i) {
        const double r = (a + c * pts[i].bytes - pts[i].us) / pts[i].us;
        s += r * r;
    }
    return s;
}

// Relative-error LS on pts[b, e).
AlphaBetaLine fitRange(const std::vector<SizeTime>& pts, std::size_t b, std::size_t e, double c_min) {
    const auto n = static_cast<Eigen::Index>(e - b);
    // Rows scaled by 1/t_i: [1/t_i, S_i/t_i] · [α, c] ≈ 1.
    Eigen::MatrixXd A(n, 2);
    Eigen::VectorXd y = Eigen::VectorXd::Ones(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const auto& p = pts[b + static_cast<std::size_t>(i)];
        A(i, 0) = 1.0 / p.us;
        A(i, 1) = p.bytes / p.us;
    }
    // Scale columns for conditioning (sizes span 9 decades).
    const double s0 = A.col(0).norm(), s1 = A.col(1).norm();
    Eigen::MatrixXd As = A;
    As.col(0) /= s0;
    As.col(1) /= s1;
    Eigen::Vector2d x = As.colPivHouseholderQr().solve(y);
    double a = x(0) / s0, c = x(1) / s1;
    auto onlyAlpha = [&](double cFixed) {  // minimise Σ((a + cS − t)/t)² over a
        double num = 0, den = 0;
        for (std::size_t i = b; i < e; ++i) {
            const double w = 1.0 / (pts[i].us * pts[i].us);
            num += w * (pts[i].us - cFixed * pts[i].bytes);
            den += w;
        }
        return std::max(0.0, num / den);
    };
    auto onlySlope = [&](double aFixed) {
        double num = 0, den = 0;
        for (std::size_t i = b; i < e; ++i) {
            const double w = 1.0 / (pts[i].us * pts[i].us);
            num += w * pts[i].bytes * (pts[i].us - aFixed);
            den += w * pts[i].bytes * pts[i].bytes;
        }
        return std::max(c_min, num / den);
    };
    if (c < c_min) {
        c = c_min;
        a = onlyAlpha(c);
    }
    if (a < 0) {
        a = 0;
        c = onlySlope(0);
    }
    return {a, c, rssOf(pts, b, e, a, c)};
}

}  // namespace

double ncclBusFactor(const std::string& op, int n) {
    if (n < 2) return 1.0;
    if (op == "all_reduce") return 2.0 * (n - 1) / n;
    if (op == "all_gather" || op == "reduce_scatter" || op == "alltoall") return double(n - 1) / n;
    return 1.0;
}

AlphaBetaLine fitLine(const std::vector<SizeTime>& pts, double bus_factor, const SegmentFitOptions& opt) {
    if (pts.size() < 2) throw InputError("fitLine: need at least two points");
    return fitRange(pts, 0, pts.size(), bus_factor / (opt.max_busbw_gbps * 1e3));
}

void fitSegments(const std::vector<SizeTime>& pts, double bus_factor, CollectiveFit& fit, const SegmentFitOptions& opt) {
    const std::size_t n = pts.size();
    const std::size_t minPts = static_cast<std::size_t>(std::max(2, opt.min_points));
    if (n < minPts)
        throw InputError(fit.op + " (" + fit.dtype + ", " + fit.algo + "/" + fit.proto + "): " + std::to_string(n) +
                         " sizes measured, the fit needs at least " + std::to_string(minPts));
    for (std::size_t i = 1; i < n; ++i)
        if (!(pts[i].bytes > pts[i - 1].bytes)) throw InputError(fit.op + ": sizes must be strictly increasing");
    const double c_min = bus_factor / (opt.max_busbw_gbps * 1e3);

    // cost[b][e]: RSS of one line on [b, e).
    std::vector<std::vector<double>> cost(n + 1, std::vector<double>(n + 1, std::numeric_limits<double>::infinity()));
    for (std::size_t b = 0; b < n; ++b)
        for (std::size_t e = b + minPts; e <= n; ++e) cost[b][e] = fitRange(pts, b, e, c_min).rss;

    const int maxK = std::max(1, std::min(opt.max_segments, static_cast<int>(n / minPts)));
    const double inf = std::numeric_limits<double>::infinity();
    // best[k][e]: least RSS covering [0, e) with k segments; from[k][e]: start of the last one.
    std::vector<std::vector<double>> best(maxK + 1, std::vector<double>(n + 1, inf));
    std::vector<std::vector<std::size_t>> from(maxK + 1, std::vector<std::size_t>(n + 1, 0));
    best[0][0] = 0;
    for (int k = 1; k <= maxK; ++k)
        for (std::size_t e = minPts; e <= n; ++e)
            for (std::size_t b = 0; b + minPts <= e; ++b) {
                if (best[k - 1][b] == inf || cost[b][e] == inf) continue;
                const double v = best[k - 1][b] + cost[b][e];
                if (v < best[k][e]) best[k][e] = v, from[k][e] = b;
            }
    int bestK = 1;
    double bestScore = inf;
    for (int k = 1; k <= maxK; ++k) {
        if (best[k][n] == inf) continue;
        const double rss = std::max(best[k][n], 1e-12 * double(n));
        const double score = double(n) * std::log(rss / double(n)) + (3.0 * k - 1.0) * std::log(double(n));
        if (score < bestScore) bestScore = score, bestK = k;
    }
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    for (std::size_t e = n, k = static_cast<std::size_t>(bestK); k > 0; --k) {
        const std::size_t b = from[k][e];
        ranges.emplace_back(b, e);
        e = b;
    }
    std::reverse(ranges.begin(), ranges.end());

    fit.segments.clear();
    std::vector<double> all;
    for (std::size_t j = 0; j < ranges.size(); ++j) {
        const auto [b, e] = ranges[j];
        const AlphaBetaLine line = fitRange(pts, b, e, c_min);
        CollectiveSegment s;
        s.lo_bytes = pts[b].bytes;
        s.hi_bytes = j + 1 < ranges.size() ? pts[ranges[j + 1].first].bytes : pts[n - 1].bytes;
        s.alpha_us = line.alpha_us;
        s.busbw_gbps = bus_factor / (line.us_per_byte * 1e3);
        std::vector<double> r;
        for (std::size_t i = b; i < e; ++i) r.push_back(std::abs(line.predict(pts[i].bytes) - pts[i].us) / pts[i].us);
        s.rel_error = median(r);
        all.insert(all.end(), r.begin(), r.end());
        fit.segments.push_back(s);
    }
    fit.rel_error = median(all);
}

double predictMicros(const CollectiveFit& fit, double bus_factor, double bytes) {
    if (fit.segments.empty()) throw InputError(fit.op + ": no segments");
    const CollectiveSegment* seg = &fit.segments.front();
    for (const auto& s : fit.segments)
        if (bytes >= s.lo_bytes) seg = &s;
    return seg->alpha_us + bytes * bus_factor / (seg->busbw_gbps * 1e3);
}

}  // namespace stepsim
