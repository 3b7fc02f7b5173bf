#include "sim/fit/GemmAlignmentFit.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

struct AlignRecord {
    std::array<long, 3> dims;
    int pos = 0;     // the unaligned dimension: 0 m, 1 n, 2 k
    long pow2 = 0;   // the largest power of two dividing it
    double tflops = 0;
};

AlignRecord classify(const RawGemm& g) {
    AlignRecord r{{g.m, g.n, g.k}, 0, 0, g.tflops};
    for (int i = 0; i < 3; ++i) {
        const long p = r.dims[i] & -r.dims[i];
        if (r.pow2 == 0 || p < r.pow2) r.pos = i, r.pow2 = p;
    }
    return r;
}

}  // namespace

void fitGemmAlignment(FitState& s) {
    std::vector<AlignRecord> recs;
    for (const auto& g : s.raw.gemms)
        if (g.source == "pytorch-alignment" && g.dtype == "bf16" && g.m > 0 && g.n > 0 && g.k > 0)
            recs.push_back(classify(g));
    auto it = s.profile.gemm.find("bf16");
    if (recs.empty() || it == s.profile.gemm.end()) {
        s.kept.push_back("gemm.bf16.unaligned");
        return;
    }
    // A form: the unaligned position and the other two dimensions.
    auto form = [](const AlignRecord& r) {
        return std::tuple{r.pos, r.dims[(r.pos + 1) % 3], r.dims[(r.pos + 2) % 3]};
    };
    std::map<std::tuple<int, long, long>, double> fastest;
    for (const auto& r : recs) fastest[form(r)] = std::max(fastest[form(r)], r.tflops);
    long alignment = 0;
    std::map<long, std::array<std::vector<double>, 3>> slow;  // by power of two, by position
    for (const auto& r : recs)
        if (r.tflops < 0.5 * fastest[form(r)]) {
            alignment = std::max(alignment, 2 * r.pow2);
            slow[r.pow2][r.pos].push_back(r.tflops);
        }
    if (alignment == 0) {
        s.kept.push_back("gemm.bf16.unaligned");
        return;
    }
    GemmAlignment a;
    a.alignment = alignment;
    json rows = json::array();
    for (const auto& [p, byPos] : slow) {
        UnalignedRate row{p};
        double* rate[3] = {&row.m_tflops, &row.n_tflops, &row.k_tflops};
        for (int i = 0; i < 3; ++i)
            if (!byPos[i].empty()) *rate[i] = median(byPos[i]);
        a.rates.push_back(row);
        rows.push_back({{"multiple", p}, {"m_tflops", row.m_tflops}, {"n_tflops", row.n_tflops},
                        {"k_tflops", row.k_tflops},
                        {"records", byPos[0].size() + byPos[1].size() + byPos[2].size()}});
    }
    it->second.unaligned = a;
    s.report["gemm_alignment"] = {{"alignment", alignment}, {"records", recs.size()}, {"rates", rows},
                                  {"from", "gemm_alignment.py (source pytorch-alignment): records under half their "
                                           "form's fastest rate, median TFLOP/s by multiple and position"}};
}

}  // namespace stepsim
