#include "sim/sweep/SeedClaims.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "sim/sweep/PointEvaluator.hpp"

namespace stepsim {

namespace {

// One claim: `key` from `from` to `to` changes `metric` by `claimed` (relative; NaN: the seed gives only the
// direction, its sign in `sign`). `extremes`: from the largest of the sweep's numeric values of `key` to the smallest.
// `micro_batch_rule` (S12): to the points with micro_batch = ceil(global_batch / data ranks), from the others of the
// same global batch (micro_batch and grad_accum change together).
struct Claim {
    const char* id;
    const char* text;
    const char* key;
    const char* from;
    const char* to;
    const char* metric;
    double claimed;
    double sign;
    bool extremes = false;
    bool micro_batch_rule = false;
};

// The numbers are the seed's (seed/DIGEST.md's table, column "the seed's claim").
const std::vector<Claim>& claims() {
    static const std::vector<Claim> c = {
        {"S1", "torch.compile cuts the step time 482 -> 317 ms", "compile.enabled", "false", "true", "step_time_ms",
         317.0 / 482.0 - 1.0, -1.0},
        {"S4", "idle at the accumulation boundary grows with grad_accum: 2 -> 8 steps, 1.8 -> 28.5 ms",
         "training.grad_accum", "2", "8", "idle_ms", 28.5 / 1.8 - 1.0, 1.0},
        {"S9", "all-reduce per module (small buckets) has less communication overhead than after the whole backward",
         "ddp.bucket_cap_mb", "", "", "exposed_comm_ms", std::nan(""), -1.0, true},
        {"S12", "micro_batch = ceil(global_batch / GPUs) raises samples/s 892 -> 1147", "training.micro_batch", "", "",
         "samples_per_s", 1147.0 / 892.0 - 1.0, 1.0, false, true},
        {"S12", "micro_batch = ceil(global_batch / GPUs) lowers peak memory 42.1 -> 31.6 GB", "training.micro_batch",
         "", "", "peak_memory_gib", 31.6 / 42.1 - 1.0, -1.0, false, true},
        {"S13", "FP8 raises throughput 1240 -> 2870 tokens/s", "fp8.enabled", "false", "true", "tokens_per_s",
         2870.0 / 1240.0 - 1.0, 1.0},
    };
    return c;
}

const std::string* settingOf(const PointRecord& r, const std::string& key) {
    for (const SweepSetting& s : r.settings)
        if (s.key == key) return &s.value;
    return nullptr;
}

// The record's other settings (all but `skip`), which a matched pair shares.
std::string restOf(const PointRecord& r, const std::vector<std::string>& skip) {
    std::string k;
    for (const SweepSetting& s : r.settings)
        if (std::find(skip.begin(), skip.end(), s.key) == skip.end()) k += s.key + "=" + s.value + " ";
    return k;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<ClaimVerdict> checkSeedClaims(const std::vector<PointRecord>& records, const SweepSpec& spec,
                                          const Scenario& base) {
    std::vector<ClaimVerdict> out;
    for (const Claim& c : claims()) {
        // Which records are on the claim's "from" and "to" side.
        std::string from = c.from, to = c.to;
        std::function<int(const PointRecord&)> side;  // 0 from, 1 to, -1 neither
        if (c.micro_batch_rule) {
            if (!spec.global_batch) continue;
            const long ranks = dataRanks(base);
            const std::string rule = std::to_string((*spec.global_batch + ranks - 1) / ranks);
            side = [rule](const PointRecord& r) {
                const std::string* v = settingOf(r, "training.micro_batch");
                return !v ? -1 : *v == rule ? 1 : 0;
            };
            to = rule;
        } else {
            std::vector<double> numeric;
            for (std::size_t i = 1; i < records.size(); ++i)
                if (const std::string* v = settingOf(records[i], c.key)) {
                    try {
                        numeric.push_back(std::stod(*v));
                    } catch (const std::exception&) {}
                }
            if (c.extremes) {
                if (numeric.size() < 2) continue;
                const auto [lo, hi] = std::minmax_element(numeric.begin(), numeric.end());
                if (*lo == *hi) continue;
                from = fmt::format("{}", *hi);
                to = fmt::format("{}", *lo);
                side = [&c, hi = *hi, lo = *lo](const PointRecord& r) {
                    const std::string* v = settingOf(r, c.key);
                    if (!v) return -1;
                    const double x = std::strtod(v->c_str(), nullptr);
                    return x == hi ? 0 : x == lo ? 1 : -1;
                };
            } else {
                side = [&c, from, to](const PointRecord& r) {
                    const std::string* v = settingOf(r, c.key);
                    return !v ? -1 : *v == from ? 0 : *v == to ? 1 : -1;
                };
            }
        }
        std::map<std::string, std::vector<const PointRecord*>> froms;
        std::map<std::string, const PointRecord*> tos;
        bool any_from = false, any_to = false;
        std::string infeasible;
        const std::vector<std::string> skip = c.micro_batch_rule
                                                  ? std::vector<std::string>{"training.micro_batch", "training.grad_accum"}
                                                  : std::vector<std::string>{c.key};
        for (std::size_t i = 1; i < records.size(); ++i) {
            const PointRecord& r = records[i];
            const int s = side(r);
            if (s < 0) continue;
            (s ? any_to : any_from) = true;
            if (!r.feasible || !r.value(c.metric)) {
                // The reason to show: one that names the claim's knob, else the first.
                if (!r.feasible && (infeasible.empty() || (infeasible.find(c.key) == std::string::npos &&
                                                           r.reason.find(c.key) != std::string::npos)))
                    infeasible = r.reason;
                continue;
            }
            if (s == 1) tos[restOf(r, skip)] = &r;
            else froms[restOf(r, skip)].push_back(&r);
        }
        if (!any_from || !any_to) continue;  // the sweep did not vary this knob across the claim's values
        ClaimVerdict v{c.id, c.text, c.metric, "untestable", "", std::nullopt, std::nullopt, 0};
        if (!std::isnan(c.claimed)) v.claimed_change = c.claimed;
        std::vector<double> changes, bands;
        for (const auto& [rest, fs] : froms)
            if (auto t = tos.find(rest); t != tos.end())
                for (const PointRecord* f : fs) {
                    changes.push_back(*t->second->value(c.metric) / *f->value(c.metric) - 1.0);
                    // The change's noise band where both points ran several samples (the step's noise_band_ms): the
                    // two bands added in quadrature, over the first point's step (common random numbers make the
                    // true band of a difference narrower: an upper bound).
                    const auto bt = t->second->value("noise_band_ms"), bf = f->value("noise_band_ms");
                    if (c.metric == "step_time_ms" && bt && bf)
                        bands.push_back(std::hypot(*bt, *bf) / *f->value(c.metric));
                }
        v.pairs = static_cast<int>(changes.size());
        const std::string change = fmt::format("{} {} -> {}", c.micro_batch_rule ? "training.micro_batch" : c.key,
                                               c.micro_batch_rule ? "others" : from, to);
        if (changes.empty()) {
            v.detail = fmt::format("{}: no pair of feasible points{}", change,
                                   infeasible.empty() ? std::string() : ": " + infeasible);
        } else {
            const double m = median(changes);
            v.predicted_change = m;
            v.verdict = (m * c.sign > 0 && std::abs(m) >= 0.01) ? "confirms" : "refutes";
            const std::string band =
                bands.size() == changes.size()
                    ? fmt::format(" ± {:.1f}% (the noise band, 95%)", 100.0 * median(bands))
                    : std::string(" (one sample per point: no noise band; sim.samples > 1 gives one)");
            v.detail = fmt::format("{}: {} {:+.1f}%{} (median of {} pairs), the seed says {}", change, c.metric,
                                   100.0 * m, c.metric == "step_time_ms" ? band : std::string(), changes.size(),
                                   std::isnan(c.claimed) ? std::string(c.sign < 0 ? "less" : "more")
                                                         : fmt::format("{:+.1f}%", 100.0 * c.claimed));
        }
        out.push_back(std::move(v));
    }
    return out;
}

}  // namespace stepsim
