#include "sim/fit/CollectiveFit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "sim/fit/AlphaBetaFit.hpp"
#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

json segmentsJson(const CollectiveFit& f) {
    json a = json::array();
    for (const auto& s : f.segments)
        a.push_back({{"lo_bytes", s.lo_bytes}, {"hi_bytes", s.hi_bytes}, {"alpha_us", s.alpha_us},
                     {"busbw_gbps", s.busbw_gbps}, {"rel_error", s.rel_error}});
    return a;
}

// Order of the profile's collective list: NCCL's own choice before forced variants, bf16 before other dtypes
// (CostModel takes the first fit matching op/ranks/nodes/algo/proto).
int dtypeRank(const std::string& d) { return d == "bf16" ? 0 : d == "fp32" ? 1 : 2; }

struct SeriesKey {
    std::string op;
    int ranks, nodes;
    std::string algo, proto, dtype;
    auto tie() const {
        return std::make_tuple(op, ranks, nodes, algo == "auto" ? 0 : 1, algo, proto, dtypeRank(dtype), dtype);
    }
    bool operator<(const SeriesKey& o) const { return tie() < o.tie(); }
};

// One series' fit on its points (sorted by size, one per size), its report entry, and its held-out relative
// errors appended to `heldAll`.
CollectiveFit fitSeries(const SeriesKey& key, const std::vector<SizeTime>& pts, json& entry,
                        std::vector<double>& heldAll) {
    const double factor = ncclBusFactor(key.op, key.ranks);
    CollectiveFit f;
    f.op = key.op;
    f.ranks = key.ranks;
    f.nodes = key.nodes;
    f.algo = key.algo;
    f.proto = key.proto;
    f.dtype = key.dtype;
    // Held-out check first: fit on 3 of 4 sizes, predict the 4th.
    std::vector<SizeTime> train, test;
    for (std::size_t i = 0; i < pts.size(); ++i) (heldOut(i) ? test : train).push_back(pts[i]);
    CollectiveFit trial = f;
    fitSegments(train, factor, trial);
    std::vector<double> held;
    for (const auto& t : test) held.push_back(std::abs(predictMicros(trial, factor, t.bytes) - t.us) / t.us);
    heldAll.insert(heldAll.end(), held.begin(), held.end());
    fitSegments(pts, factor, f);
    entry = {{"op", f.op}, {"ranks", f.ranks}, {"nodes", f.nodes}, {"algo", f.algo}, {"proto", f.proto},
             {"dtype", f.dtype}, {"points", pts.size()}, {"domain_bytes", {pts.front().bytes, pts.back().bytes}},
             {"rel_error", f.rel_error}, {"heldout_rel_error", median(held)}, {"segments", segmentsJson(f)}};
    return f;
}

}  // namespace

double fitCollectives(FitState& s) {
    HardwareProfile& p = s.profile;
    std::map<SeriesKey, std::vector<SizeTime>> series;
    for (const auto& c : s.raw.collectives)
        series[{c.op, c.ranks, c.nodes, c.algo, c.proto, c.dtype}].push_back({c.bytes, c.time.median});
    p.collectives.clear();
    json cj = json::array();
    std::vector<double> heldAll;
    for (auto& [key, pts] : series) {
        std::sort(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.bytes < b.bytes; });
        pts.erase(std::unique(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.bytes == b.bytes; }), pts.end());
        if (pts.size() < 8) continue;
        json entry;
        p.collectives.push_back(fitSeries(key, pts, entry, heldAll));
        cj.push_back(entry);
    }
    const double heldout = median(heldAll);
    s.report["collectives"] = cj;
    s.report["collectives_heldout_median_rel_error"] = heldout;
    s.report["collectives_heldout_points"] = heldAll.size();
    if (p.collectives.empty()) s.kept.push_back("collectives");
    return heldout;
}

}  // namespace stepsim
