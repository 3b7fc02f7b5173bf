#pragma once
// Jitter: what varies between runs and ranks, drawn from the profile's distributions with an explicit seed.
//
// Per op, from per-rank generators seeded from (seed, rank), so the same inputs and seed give the same run bit for
// bit: a host launch's cost is its mean times exp(σZ − σ²/2), σ from the profile's eager launch median and p99; a
// kernel's duration is its own times the rank's straggler factor for the step (drawn in step order, when the rank
// first starts a kernel of that step or a later one) times exp(σZ − σ²/2), each σ = √log(1 + cv²) from its
// coefficient of variation: lognormal factors of mean 1. A rank's draws come in the order its host and its kernels
// ask for them.
//
// Fixed for the run, by the expected normal order statistics of the ranks, dealt to them in a seeded shuffle: each
// GPU's speed (deviceSpeedFactors; the slowest of N GPUs is as slow as the slowest of N usually is) and each rank's
// host's cost per launch (hostSpeedFactors). The spreads are the profile's `jitter` section, fitted from
// calibration/pytorch/device_speed.py's and host_spread.py's records.
//
// The scenario's stragglers (jitter.stragglers, StragglerSpec) multiply on top, per rank and step: a gpu straggler's
// factor on its rank's kernel durations, a host straggler's on its launch costs, a rank straggler's on both, a link
// straggler's on the time its rank's NCCL flows take (their rate ÷ factor). A factor with cv > 0 is drawn per step and
// rank, lognormal with mean `factor`: factor · exp(σZ − σ²/2), σ = √log(1 + cv²); ranks given by `random: n` are n
// drawn per step without replacement. These draws come from generators of their own, seeded from (seed, straggler,
// step), so a straggler leaves every other draw of the run as it was. Stragglers apply with jitter.enabled false too.
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/engine/EngineConfig.hpp"

namespace stepsim {

// Each rank's kernel time factors by KernelClass for GPUs whose speeds spread with the given cvs: exp(cv·z) with z
// the expected normal order statistics of `ranks` draws (Blom: Φ⁻¹((i − 3/8) / (ranks + 1/4))), dealt to the
// ranks in a seeded shuffle. One GPU gets 1; the slowest of 2 is 0.59 cv slower than the median, of 1024 3.2 cv.
// The same GPU is slow for both kinds of kernel (one z per rank). Communication is left alone.
std::vector<std::array<double, kKernelClasses>> deviceSpeedFactors(int ranks, double compute_cv, double memory_cv,
                                                                   std::uint64_t seed);

// Each rank's factor on its host costs for hosts whose speeds spread with `cv`: exp(cv·z) with z the expected normal
// order statistics of `ranks` draws, dealt in a seeded shuffle of its own (a slow host is not tied to a slow GPU).
// One rank gets 1; of 2, the slower host's costs are exp(1.18 cv) the faster one's.
std::vector<double> hostSpeedFactors(int ranks, double cv, std::uint64_t seed);

// The per-rank random draws of a run.
class Jitter {
public:
    Jitter(int ranks, const EngineConfig& cfg);

    // A host launch of `seconds` (the mean at the rank's host speed) in `step`, with its jitter and host stragglers.
    double launch(int rank, int step, double seconds) {
        if (has_stragglers_) seconds *= stragglerFactor(rank, step, Slow::host);
        if (!enabled_ || host_sigma_ <= 0.0) return seconds;
        const double hs = host_sigma_;
        return seconds * std::exp(hs * gaussian(rank) - 0.5 * hs * hs);
    }
    // The factor on the time the NCCL flows `rank` sends in `step` take (link stragglers; 1 without).
    double linkFactor(int rank, int step) { return has_stragglers_ ? stragglerFactor(rank, step, Slow::link) : 1.0; }
    // The factor on the duration of a kernel of `step`: the rank's straggler factor for the step times the kernel's
    // own.
    double kernelFactor(int rank, int step) {
        const double slow = has_stragglers_ ? stragglerFactor(rank, step, Slow::gpu) : 1.0;
        if (!enabled_) return slow;
        auto& st = straggler_[rank];
        // Lognormal factors with mean 1: exp(σZ − σ²/2).
        const double ss = straggler_sigma_;
        while (static_cast<int>(st.size()) <= step)
            st.push_back(ss > 0 ? std::exp(ss * gaussian(rank) - 0.5 * ss * ss) : 1.0);
        const double ks = kernel_sigma_;
        return slow * (ks > 0 ? st[step] * std::exp(ks * gaussian(rank) - 0.5 * ks * ks) : st[step]);
    }

private:
    enum class Slow { gpu, host, link };
    // The product of the factors of the stragglers of kind `what` on `rank` in `step` (draws cached per step).
    double stragglerFactor(int rank, int step, Slow what);
    // Straggler i's factor on each rank in `step` (1 where it is not), drawn on first use.
    const std::vector<double>& stragglerStep(std::size_t i, int step);

    double gaussian(int rank) { return normal_[rank](rng_[rank]); }

    bool enabled_ = true;
    double host_sigma_ = 0.0, kernel_sigma_ = 0.0, straggler_sigma_ = 0.0;  // lognormal σ
    std::vector<std::mt19937_64> rng_;
    std::vector<std::normal_distribution<double>> normal_;  // N(0, 1) per rank (keeps its spare draw)
    std::vector<std::vector<double>> straggler_;            // [rank][step]
    bool has_stragglers_ = false;
    int ranks_ = 0;
    std::uint64_t seed_ = 1;
    std::vector<StragglerSpec> stragglers_;
    std::vector<std::vector<std::vector<double>>> straggler_steps_;  // [straggler][step][rank]
};

}  // namespace stepsim
