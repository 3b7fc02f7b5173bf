#include "sim/fit/InterferenceFit.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "sim/fit/ByShape.hpp"
#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

// The bench's all-reduces start beside a GEMM that holds every SM and wait for it (a 64 MiB one took exactly one
// GEMM's period), a wait the engine models apart: where interference_training.py timed the all-reduce's own rate with
// its kernel resident before the compute (mode resident), that rate is the factor.
void fitResidentComm(FitState& s) {
    std::vector<double> all;
    json byClass = json::object(), recs = json::array();
    std::map<std::string, std::vector<double>> classes;
    for (const RawCommBeside& c : s.raw.comm_beside) {
        all.push_back(c.slowdown);
        classes[c.cls].push_back(c.slowdown);
        recs.push_back({{"class", c.cls}, {"op", c.op}, {"comm_bytes", c.comm_bytes},
                        {"comm_alone_us", c.comm_alone_us}, {"comm_slowdown", c.slowdown}});
    }
    for (const auto& [cls, v] : classes)
        byClass[cls] = {{"median", median(v)}, {"records", v.size()},
                        {"range", {*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())}}};
    s.profile.interference.comm_slowdown = std::max(1.0, median(all));
    json& ij = s.report["interference"];
    ij["comm_slowdown"] = s.profile.interference.comm_slowdown;
    ij["comm_rule"] = "median over the resident all-reduces beside compute (interference_training.py --modes resident)";
    ij["resident"] = {{"by_class", byClass}, {"records", recs}};
}

// The median slowdown per class of `recs` into `dst` (never below 1), and what went into it.
json slowdownByClass(const std::vector<const RawStepInterference*>& recs, ClassSlowdown& dst) {
    json out = json::object();
    for (auto [cls, field] : {std::pair{"gemm", &ClassSlowdown::gemm}, std::pair{"attention", &ClassSlowdown::attention},
                              std::pair{"memory", &ClassSlowdown::memory}}) {
        std::vector<double> v;
        for (const auto* r : recs)
            if (r->cls == cls) v.push_back(r->with_comm_us / r->alone_us);
        if (v.empty()) continue;
        dst.*field = std::max(1.0, median(v));
        out[cls] = {{"slowdown", dst.*field}, {"records", v.size()},
                    {"range", {*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())}}};
    }
    return out;
}

// Beside an NCCL kernel moving data (transfer) and one waiting for its peer (waiting), by class.
void fitBesideByMode(FitState& s, json& sj) {
    Interference& ir = s.profile.interference;
    for (auto [mode, dst] : {std::pair{"transfer", &ir.beside_transfer}, std::pair{"waiting", &ir.beside_waiting}}) {
        std::vector<const RawStepInterference*> recs;
        for (const auto& r : s.raw.step_interference)
            if (r.mode == mode) recs.push_back(&r);
        json fitted = slowdownByClass(recs, *dst);
        if (!fitted.empty()) sj[mode] = fitted;
    }
}

// Beside a moving all-reduce the slowdown grows with its size (more channels, more HBM traffic): with records at two
// sizes or more, the median per class at each size too.
void fitBesideBySize(FitState& s, json& sj) {
    std::map<double, std::vector<const RawStepInterference*>> sizes;
    for (const auto& r : s.raw.step_interference)
        if (r.mode == "transfer" && r.comm_bytes > 0) sizes[r.comm_bytes].push_back(&r);
    if (sizes.size() < 2) {
        s.kept.push_back("interference.beside_transfer_by_size");
        return;
    }
    std::vector<SizedSlowdown>& bySize = s.profile.interference.beside_transfer_by_size;
    bySize.clear();
    for (const auto& [bytes, recs] : sizes) {
        SizedSlowdown z;
        z.bytes = bytes;
        json sz = slowdownByClass(recs, z);
        sz["bytes"] = bytes;
        bySize.push_back(z);
        sj["transfer_by_size"].push_back(sz);
    }
}

// By GEMM shape: the waiting mode holds the NCCL kernel resident through every call, the state a step's GEMMs
// overlapped by a bucket's all-reduce are in (moving data or waiting: the two differ by about 0.01 in the median,
// calibration/profiles/h200x2/NOTES.md, Interference). The median per shape; every record also feeds the class
// medians above.
void fitGemmByShape(FitState& s, json& sj) {
    ByShape shapes;
    for (const auto& r : s.raw.step_interference)
        if (r.mode == "waiting" && r.m > 0) shapes[{r.m, r.n, r.k}].push_back(r.with_comm_us / r.alone_us);
    if (!shapes.empty()) {
        s.profile.interference.gemm_by_shape = medianByShape(shapes, 1.0);
        sj["gemm_by_shape"] = shapeReport(s.profile.interference.gemm_by_shape);
    } else {
        s.kept.push_back("interference.gemm_by_shape");
    }
}

// Bucketed records (each call followed by a bucket's all-reduce, as DDP issues them) are reported, not fitted: the
// all-reduce beside a long GEMM ran ~3.5x its time alone, beside short memory-bound kernels ~1.05x, where the
// profile's one comm_slowdown applies to every kernel (calibration/profiles/h200x2/NOTES.md, Interference).
void reportBucketed(FitState& s, json& sj) {
    for (const auto& r : s.raw.step_interference)
        if (r.mode == "bucketed")
            sj["bucketed"][r.cls].push_back({{"op", r.op}, {"compute_slowdown", r.with_comm_us / r.alone_us},
                                             {"comm_slowdown", r.comm_slowdown}});
}

}  // namespace

void fitInterference(FitState& s) {
    Interference& ir = s.profile.interference;
    json ij = json::array();
    std::vector<double> gs, cs;
    for (const auto& r : s.raw.interference) {
        const double g = r.gemm_with_comm_us / r.gemm_alone_us, c = r.comm_with_gemm_us / r.comm_alone_us;
        const bool used = r.comm_alone_us >= 0.5 * r.gemm_alone_us;
        ij.push_back({{"comm_bytes", r.comm_bytes}, {"device", r.device}, {"gemm_alone_us", r.gemm_alone_us},
                      {"comm_alone_us", r.comm_alone_us}, {"gemm_slowdown", g}, {"comm_slowdown", c}, {"used", used}});
        if (used) gs.push_back(g), cs.push_back(c);
    }
    if (!gs.empty()) {
        ir.compute_slowdown = std::max(1.0, median(gs));
        ir.comm_slowdown = std::max(1.0, median(cs));
    } else {
        s.kept.push_back("interference.compute_slowdown");
        if (s.raw.comm_beside.empty()) s.kept.push_back("interference.comm_slowdown");
    }
    s.report["interference"] = {{"compute_slowdown", ir.compute_slowdown},
                                {"comm_slowdown", ir.comm_slowdown},
                                {"rule", "median over records whose all-reduce alone lasts >= half the GEMM"},
                                {"records", ij}};
    if (!s.raw.comm_beside.empty()) fitResidentComm(s);
}

void fitTrainingInterference(FitState& s) {
    json sj = json::object();
    fitBesideByMode(s, sj);
    fitBesideBySize(s, sj);
    fitGemmByShape(s, sj);
    reportBucketed(s, sj);
    if (!sj.contains("transfer")) s.kept.push_back("interference.beside_transfer");
    if (!sj.contains("waiting")) s.kept.push_back("interference.beside_waiting");
    if (!sj.empty()) s.report["interference_training"] = sj;
    // The base profile's, from calibration/investigations/gemm_linger_probe.py, not fitted here.
    s.kept.push_back("interference.linger_tile_m");
    s.kept.push_back("interference.linger_tile_n");
}

}  // namespace stepsim
