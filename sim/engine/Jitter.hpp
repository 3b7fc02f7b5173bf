#pragma once
// Jitter: what varies between runs and ranks, drawn from the profile's distributions with an explicit seed.
//
// Common random numbers: every draw is a function of (seed, rank, the op's identity, what is drawn), never of the
// order in which the run asks for it. An op's identity is its name and its occurrence among the ops of that name
// in its step (opIdentity), so an op added or removed elsewhere (a one-key what-if) leaves every other op's draws as
// they were, and two runs that differ in one key differ by what the key changed, not by a reshuffled stream. The draw
// is a counter-based generator: SplitMix64's finalizer chained over the key's words, two 53-bit uniforms turned into a
// standard normal Z by Box–Muller.
//
// Per op: a kernel launch's host cost is its mean times exp(σZ − σ²/2), σ from the profile's eager launch median and
// p99 (host work, a loader's batch or a Python walk, is CPU time at the host's speed, not a launch: no launch jitter);
// a kernel's duration is its own times the rank's factor for the step times exp(σZ − σ²/2), each
// σ = √log(1 + cv²) from its coefficient of variation (kernel_cv per kernel, straggler_cv per rank and step):
// lognormal factors of mean 1.
//
// Fixed for the run, by the expected normal order statistics of the ranks, dealt to them in a seeded shuffle: each
// GPU's speed (deviceSpeedFactors; the slowest of N GPUs is as slow as the slowest of N usually is) and each rank's
// host's cost per launch (hostSpeedFactors). The spreads are the profile's `jitter` section, fitted from
// calibration/pytorch/device_speed.py's and host_spread.py's records (JitterFit.hpp: host_rank_cv is the part of the
// hosts' spread that lasts a run).
//
// The symmetry reduction (Symmetry.hpp): a simulated rank that stands for a class of ranks draws its own per-kernel
// and per-launch noise (the draws of the job's rank it is), and its factor for each step is the slowest member's:
// the largest over the class of (the member's GPU speed × its factor for the step), over the class's slowest GPU
// speed, which the rank runs at. Each member's factor is the one the full run draws for it, so the reduced rank's
// step goes as the slowest member's GPU does in the full run.
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
#include <string>
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

// The counter-based draws: a standard normal that is a function of its key alone.
namespace crn {
constexpr std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
constexpr std::uint64_t key(std::uint64_t seed, std::uint64_t what, std::uint64_t a, std::uint64_t b) {
    return mix(mix(mix(seed ^ (what << 56)) ^ a) ^ b);
}
// N(0, 1) from a key (Box–Muller on two 53-bit uniforms in (0, 1]).
double normal(std::uint64_t key);
}  // namespace crn

// Each op's identity in `p`: a hash of its name (FNV-1a, the same on every platform) and its occurrence among the
// ops of that name in its step. The same op keeps it when ops of other names come or go.
std::vector<std::uint64_t> opIdentities(const Program& p);

// The per-rank random draws of a run.
class Jitter {
public:
    Jitter(const Workload& w, const EngineConfig& cfg);

    // A host launch of op `op` of `rank` costing `seconds` (the mean at the rank's host speed), with its jitter and
    // host stragglers; host work (`launch` false) takes the stragglers only.
    double launch(int rank, std::uint32_t op, int step, double seconds, bool launch = true) {
        if (has_stragglers_) seconds *= stragglerFactor(rank, step, Slow::host);
        if (!launch || !enabled_ || host_sigma_ <= 0.0) return seconds;
        const double hs = host_sigma_;
        return seconds * std::exp(hs * draw(rank, op, kLaunch) - 0.5 * hs * hs);
    }
    // The factor on the time the NCCL flows `rank` sends in `step` take (link stragglers; 1 without).
    double linkFactor(int rank, int step) { return has_stragglers_ ? stragglerFactor(rank, step, Slow::link) : 1.0; }
    // The factor on the duration of kernel `op` of `rank` in `step`: the rank's factor for the step times the
    // kernel's own.
    double kernelFactor(int rank, std::uint32_t op, int step) {
        const double slow = has_stragglers_ ? stragglerFactor(rank, step, Slow::gpu) : 1.0;
        if (!enabled_) return slow;
        const double st = stepFactor(rank, step);
        const double ks = kernel_sigma_;
        return slow * (ks > 0 ? st * std::exp(ks * draw(rank, op, kKernel) - 0.5 * ks * ks) : st);
    }

private:
    enum class Slow { gpu, host, link };
    static constexpr std::uint64_t kLaunch = 1, kKernel = 2, kStep = 3;
    double draw(int rank, std::uint32_t op, std::uint64_t what) const {
        return crn::normal(crn::key(seed_, what, std::uint64_t(rank), ids_[std::size_t(rank)][op]));
    }
    // Rank `rank`'s factor for `step` (the slowest member's where it stands for a class), drawn on first use.
    double stepFactor(int rank, int step);
    // The product of the factors of the stragglers of kind `what` on `rank` in `step` (draws cached per step).
    double stragglerFactor(int rank, int step, Slow what);
    // Straggler i's factor on each rank in `step` (1 where it is not), drawn on first use.
    const std::vector<double>& stragglerStep(std::size_t i, int step);

    bool enabled_ = true;
    double host_sigma_ = 0.0, kernel_sigma_ = 0.0, straggler_sigma_ = 0.0;  // lognormal σ
    std::vector<std::vector<std::uint64_t>> ids_;  // [simulated rank][op]: opIdentities
    // The symmetry reduction: each simulated rank's class members (empty: every rank simulated) and each job rank's
    // GPU speed on compute kernels (deviceSpeedFactors).
    std::vector<std::vector<int>> members_;
    std::vector<double> member_speed_;
    std::vector<std::vector<double>> step_factor_;  // [rank][step]
    bool has_stragglers_ = false;
    int ranks_ = 0;
    std::uint64_t seed_ = 1;
    std::vector<StragglerSpec> stragglers_;
    std::vector<std::vector<std::vector<double>>> straggler_steps_;  // [straggler][step][rank]
};

}  // namespace stepsim
