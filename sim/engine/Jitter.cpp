#include "sim/engine/Jitter.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include <boost/math/distributions/normal.hpp>

namespace stepsim {

namespace {
double lognormalSigmaFromCv(double cv) { return std::sqrt(std::log1p(cv * cv)); }

// The expected normal order statistics of `ranks` draws (Blom: Φ⁻¹((i − 3/8) / (ranks + 1/4))), dealt to the
// ranks in a shuffle seeded by (seed, salt): each kind of spread deals its own.
std::vector<double> orderScores(int ranks, std::uint64_t seed, std::uint64_t salt) {
    const boost::math::normal_distribution<double> unit;
    std::vector<double> z(std::size_t(std::max(0, ranks)));
    for (std::size_t i = 0; i < z.size(); ++i)
        z[i] = boost::math::quantile(unit, (double(i + 1) - 0.375) / (double(ranks) + 0.25));
    // Fisher–Yates with our own draws: std::shuffle's order differs between standard libraries.
    std::seed_seq seq{std::uint64_t(seed), salt};
    std::mt19937_64 rng(seq);
    for (std::size_t i = z.size(); i > 1; --i) std::swap(z[i - 1], z[rng() % i]);
    return z;
}
}  // namespace

std::vector<std::array<double, kKernelClasses>> deviceSpeedFactors(int ranks, double compute_cv, double memory_cv,
                                                                   std::uint64_t seed) {
    const std::vector<double> z = orderScores(ranks, seed, 0xde51ce);
    std::vector<std::array<double, kKernelClasses>> out(z.size(), EngineConfig::filled(1.0));
    for (std::size_t r = 0; r < z.size(); ++r) {
        for (KernelClass k : {KernelClass::gemm, KernelClass::attention})
            out[r][std::size_t(k)] = std::exp(compute_cv * z[r]);
        for (KernelClass k : {KernelClass::memory, KernelClass::optimizer, KernelClass::copy})
            out[r][std::size_t(k)] = std::exp(memory_cv * z[r]);
    }
    return out;
}

std::vector<double> hostSpeedFactors(int ranks, double cv, std::uint64_t seed) {
    std::vector<double> out = orderScores(ranks, seed, 0x4057);
    for (double& f : out) f = std::exp(cv * f);
    return out;
}

namespace crn {
double normal(std::uint64_t key) {
    constexpr double kUnit = 1.0 / 9007199254740992.0;  // 2^-53
    const double u1 = double((mix(key) >> 11) + 1) * kUnit;  // (0, 1]
    const double u2 = double(mix(key ^ 0x6a09e667f3bcc909ULL) >> 11) * kUnit;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}
}  // namespace crn

std::vector<std::uint64_t> opIdentities(const Program& p) {
    std::vector<std::uint64_t> name_hash(p.names.size());
    for (std::size_t i = 0; i < p.names.size(); ++i) {
        std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
        for (unsigned char c : p.names[i]) h = (h ^ c) * 0x100000001b3ULL;
        name_hash[i] = h;
    }
    std::vector<std::uint64_t> ids(p.ops.size());
    std::unordered_map<std::uint64_t, std::uint32_t> seen;  // (name, step) → ops of that name so far
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        const std::uint64_t at = (std::uint64_t(op.name) << 32) | std::uint32_t(op.step);
        const std::uint32_t n = seen[at]++;
        // A Program built without names (tests) identifies its ops by their name index alone.
        const std::uint64_t name = op.name < name_hash.size() ? name_hash[op.name] : crn::mix(op.name);
        ids[i] = crn::mix(name ^ crn::mix((std::uint64_t(std::uint32_t(op.step)) << 32) | n));
    }
    return ids;
}

Jitter::Jitter(const Workload& w, const EngineConfig& cfg)
    : enabled_(cfg.jitter),
      host_sigma_(cfg.host_sigma),
      kernel_sigma_(lognormalSigmaFromCv(cfg.kernel_cv)),
      straggler_sigma_(lognormalSigmaFromCv(cfg.straggler_cv)),
      step_factor_(w.programs.size()),
      has_stragglers_(!cfg.stragglers.empty()),
      ranks_(static_cast<int>(w.programs.size())),
      seed_(cfg.seed),
      stragglers_(cfg.stragglers),
      straggler_steps_(cfg.stragglers.size()) {
    if (!enabled_) return;
    ids_.reserve(w.programs.size());
    for (const Program& p : w.programs) ids_.push_back(opIdentities(p));
    if (!w.representative.empty()) {
        members_.resize(w.programs.size());
        for (std::size_t r = 0; r < w.representative.size(); ++r)
            members_[std::size_t(w.representative[r])].push_back(static_cast<int>(r));
        const auto speed = deviceSpeedFactors(w.ranks(), cfg.device_compute_cv, cfg.device_memory_cv, cfg.seed);
        member_speed_.resize(speed.size());
        for (std::size_t r = 0; r < speed.size(); ++r) member_speed_[r] = speed[r][std::size_t(KernelClass::gemm)];
    }
}

double Jitter::stepFactor(int rank, int step) {
    step = std::max(0, step);
    std::vector<double>& st = step_factor_[std::size_t(rank)];
    const double ss = straggler_sigma_;
    const auto own = [&](int r, int k) {
        return crn::normal(crn::key(seed_, kStep, std::uint64_t(r), std::uint64_t(std::uint32_t(k))));
    };
    while (static_cast<int>(st.size()) <= step) {
        const int k = static_cast<int>(st.size());
        if (ss <= 0) {
            st.push_back(1.0);
        } else if (members_.empty()) {
            st.push_back(std::exp(ss * own(rank, k) - 0.5 * ss * ss));
        } else {
            // The slowest member's GPU for the step, against the class's slowest GPU the simulated rank runs at.
            double slowest = 0.0, fixed = 0.0;
            for (int m : members_[std::size_t(rank)]) {
                const double v = member_speed_[std::size_t(m)];
                slowest = std::max(slowest, v * std::exp(ss * own(m, k) - 0.5 * ss * ss));
                fixed = std::max(fixed, v);
            }
            st.push_back(slowest / fixed);
        }
    }
    return st[std::size_t(step)];
}

const std::vector<double>& Jitter::stragglerStep(std::size_t i, int step) {
    auto& steps = straggler_steps_[i];
    while (static_cast<int>(steps.size()) <= step) {
        const StragglerSpec& g = stragglers_[i];
        const auto k = static_cast<std::uint64_t>(steps.size());
        std::seed_seq seq{std::uint64_t(seed_), std::uint64_t(0x57a6), std::uint64_t(i), k};
        std::mt19937_64 rng(seq);
        std::vector<int> who = g.ranks;
        if (g.random > 0) {  // n of the ranks without replacement: a partial Fisher–Yates with our own draws
            std::vector<int> all(static_cast<std::size_t>(ranks_));
            for (int r = 0; r < ranks_; ++r) all[std::size_t(r)] = r;
            for (int j = 0; j < g.random && j < ranks_; ++j)
                std::swap(all[std::size_t(j)], all[std::size_t(j) + rng() % std::size_t(ranks_ - j)]);
            who.assign(all.begin(), all.begin() + std::min(g.random, ranks_));
        }
        std::vector<double> f(std::size_t(ranks_), 1.0);
        const double sigma = lognormalSigmaFromCv(g.cv);
        std::normal_distribution<double> unit(0.0, 1.0);
        for (int r : who)
            if (r >= 0 && r < ranks_)
                f[std::size_t(r)] *= sigma > 0 ? g.factor * std::exp(sigma * unit(rng) - 0.5 * sigma * sigma) : g.factor;
        steps.push_back(std::move(f));
    }
    return steps[std::size_t(step)];
}

double Jitter::stragglerFactor(int rank, int step, Slow what) {
    double f = 1.0;
    for (std::size_t i = 0; i < stragglers_.size(); ++i) {
        const StragglerTarget t = stragglers_[i].target;
        const bool applies = what == Slow::gpu    ? (t == StragglerTarget::gpu || t == StragglerTarget::rank)
                             : what == Slow::host ? (t == StragglerTarget::host || t == StragglerTarget::rank)
                                                  : t == StragglerTarget::link;
        if (applies) f *= stragglerStep(i, std::max(0, step))[std::size_t(rank)];
    }
    return f;
}

}  // namespace stepsim
