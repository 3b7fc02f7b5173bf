#include "sim/fit/JitterFit.hpp"

#include <cmath>
#include <map>

#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

// The sample variance of the log of `rate` over the ranks of one set.
double logVariance(const std::vector<const RawDeviceSpeed*>& v, double RawDeviceSpeed::*rate) {
    double mean = 0, ss = 0;
    for (const auto* s : v) mean += std::log(s->*rate) / double(v.size());
    for (const auto* s : v) ss += std::pow(std::log(s->*rate) - mean, 2);
    return ss / double(v.size() - 1);
}

// The sum over a record's windows of the sample variance of the processes' log step times.
double windowLogVariances(const RawHostSpread& h) {
    double run_ss = 0;
    for (const std::vector<double>& w : h.windows) {
        double mean = 0, v = 0;
        for (double ms : w) mean += std::log(ms) / double(w.size());
        for (double ms : w) v += std::pow(std::log(ms) - mean, 2) / double(w.size() - 1);
        run_ss += v;
    }
    return run_ss;
}

}  // namespace

void fitKernelJitter(FitState& s) {
    std::vector<double> cv;
    for (const auto& g : s.raw.gemms)
        if (g.source == "stepsim-bench" && g.dtype == "bf16" && g.time.median > 200 && g.cv > 0) cv.push_back(g.cv);
    if (!cv.empty()) {
        s.profile.jitter.kernel_cv = median(cv);
        s.report["jitter"] = {{"kernel_cv", s.profile.jitter.kernel_cv}, {"from", "median CV of BF16 GEMMs > 200 us"},
                              {"n", cv.size()}};
    } else {
        s.kept.push_back("jitter.kernel_cv");
    }
    s.kept.push_back("jitter.straggler_cv");
}

void fitDeviceSpeedSpread(FitState& s) {
    JitterRates& jitter = s.profile.jitter;
    std::map<std::string, std::vector<const RawDeviceSpeed*>> sets;
    for (const auto& d : s.raw.device_speed) sets[d.set].push_back(&d);
    double vc = 0, vm = 0;
    int used = 0;
    nlohmann::json sj = nlohmann::json::array();
    for (const auto& [name, v] : sets) {
        if (v.size() < 2) continue;
        const double c = logVariance(v, &RawDeviceSpeed::gemm_tflops), m = logVariance(v, &RawDeviceSpeed::memory_gbps);
        vc += c, vm += m, ++used;
        sj.push_back({{"set", name}, {"gpus", v.size()}, {"gemm_cv", std::sqrt(c)}, {"memory_cv", std::sqrt(m)}});
    }
    if (used > 0) {
        jitter.device_compute_cv = std::sqrt(vc / used);
        jitter.device_memory_cv = std::sqrt(vm / used);
        s.report["device_speed"] = {{"device_compute_cv", jitter.device_compute_cv},
                                    {"device_memory_cv", jitter.device_memory_cv},
                                    {"rule", "root mean over sets of the sample variance of the ranks' log rates"},
                                    {"sets", sj}};
    } else {
        s.kept.push_back("jitter.device_compute_cv");
        s.kept.push_back("jitter.device_memory_cv");
    }
}

void fitHostSpread(FitState& s) {
    double ss = 0;
    std::size_t windows = 0;
    nlohmann::json runs = nlohmann::json::array();
    for (const RawHostSpread& h : s.raw.host_spread) {
        const double run_ss = windowLogVariances(h);
        ss += run_ss;
        windows += h.windows.size();
        runs.push_back({{"file", h.file},
                        {"processes", h.windows.front().size()},
                        {"windows", h.windows.size()},
                        {"cv", std::sqrt(run_ss / double(h.windows.size()))}});
    }
    if (windows > 0) {
        s.profile.jitter.host_rank_cv = std::sqrt(ss / double(windows));
        s.report["host_spread"] = {
            {"host_rank_cv", s.profile.jitter.host_rank_cv},
            {"rule", "root mean over windows of the sample variance of the processes' log step times"},
            {"runs", runs}};
    } else {
        s.kept.push_back("jitter.host_rank_cv");
    }
}

}  // namespace stepsim
