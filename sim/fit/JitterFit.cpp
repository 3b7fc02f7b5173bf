#include "sim/fit/JitterFit.hpp"

#include <algorithm>
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

// One host_spread record split into the part of the processes' spread that lasts the run and the part that changes
// from window to window. With x[w][p] the log of process p's median step in window w and d[w][p] = x[w][p] less the
// window's mean over the processes (the machine's common swings cancel), each process's run mean m[p] = mean_w d[w][p]
// spreads by the lasting part plus the windows' noise in a mean of W windows: Σ_p m[p]² / (P − 1) estimates
// σ_run² + s² / W · (1 + ρ) / (1 − ρ), with s² the variance of d[w][p] − m[p] (per process, corrected for the window
// means' P − 1 degrees of freedom) and ρ its lag-1 autocorrelation (clamped to [0, 0.9]).
struct HostSplit {
    double run_var = 0;     // σ_run² estimate (may be < 0: the lasting part is within the windows' noise)
    double window_var = 0;  // s²
    double lag1 = 0;        // ρ
};
HostSplit splitHostSpread(const RawHostSpread& h) {
    const std::size_t W = h.windows.size(), P = h.windows.front().size();
    std::vector<std::vector<double>> d(W, std::vector<double>(P));
    for (std::size_t w = 0; w < W; ++w) {
        double mean = 0;
        for (double ms : h.windows[w]) mean += std::log(ms) / double(P);
        for (std::size_t p = 0; p < P; ++p) d[w][p] = std::log(h.windows[w][p]) - mean;
    }
    std::vector<double> m(P, 0.0);
    for (std::size_t p = 0; p < P; ++p)
        for (std::size_t w = 0; w < W; ++w) m[p] += d[w][p] / double(W);
    double between = 0, ss = 0, lag = 0;
    for (std::size_t p = 0; p < P; ++p) {
        between += m[p] * m[p] / double(P - 1);
        for (std::size_t w = 0; w < W; ++w) {
            const double e = d[w][p] - m[p];
            ss += e * e;
            if (w + 1 < W) lag += e * (d[w + 1][p] - m[p]);
        }
    }
    HostSplit out;
    out.window_var = ss / double((W - 1) * (P - 1));
    out.lag1 = ss > 0 ? std::clamp(lag / ss, 0.0, 0.9) : 0.0;
    out.run_var = between - out.window_var / double(W) * (1 + out.lag1) / (1 - out.lag1);
    return out;
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
    double run_var = 0, window_var = 0;
    std::size_t used = 0;
    nlohmann::json runs = nlohmann::json::array();
    for (const RawHostSpread& h : s.raw.host_spread) {
        if (h.windows.size() < 3 || h.windows.front().size() < 2) continue;
        const HostSplit x = splitHostSpread(h);
        run_var += x.run_var, window_var += x.window_var, ++used;
        runs.push_back({{"file", h.file},
                        {"processes", h.windows.front().size()},
                        {"windows", h.windows.size()},
                        {"run_variance", x.run_var},
                        {"window_cv", std::sqrt(x.window_var)},
                        {"window_lag1", x.lag1}});
    }
    if (used > 0) {
        s.profile.jitter.host_rank_cv = std::sqrt(std::max(0.0, run_var / double(used)));
        s.report["host_spread"] = {
            {"host_rank_cv", s.profile.jitter.host_rank_cv},
            {"window_cv", std::sqrt(window_var / double(used))},
            {"rule", "the lasting part: the processes' run means of their log step times (less each window's mean over "
                     "the processes), their variance less the windows' noise in a mean (lag-1 autocorrelated), "
                     "averaged over records, 0 where negative; window_cv: the part that changes between windows"},
            {"runs", runs}};
    } else {
        s.kept.push_back("jitter.host_rank_cv");
    }
}

}  // namespace stepsim
