#include "sim/fit/RateLine.hpp"

#include <algorithm>
#include <cmath>

#include "sim/base/Statistics.hpp"

namespace stepsim {

RateLine fitRate(std::vector<SizeTime> pts) {
    RateLine r;
    std::sort(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.bytes < b.bytes; });
    if (pts.size() < 2) return r;
    const AlphaBetaLine l = fitLine(pts, 1.0);
    r.alpha_us = l.alpha_us;
    r.gbps = 1.0 / (l.us_per_byte * 1e3);
    std::vector<double> e;
    for (const auto& p : pts) e.push_back(std::abs(l.predict(p.bytes) - p.us) / p.us);
    r.rel_error = median(e);
    r.lo = pts.front().bytes;
    r.hi = pts.back().bytes;
    r.n = static_cast<int>(pts.size());
    return r;
}

nlohmann::json lineJson(const RateLine& l) {
    return {{"alpha_us", l.alpha_us}, {"GBps", l.gbps}, {"rel_error", l.rel_error}, {"domain_bytes", {l.lo, l.hi}}, {"n", l.n}};
}

}  // namespace stepsim
