#pragma once
// The host threads: one per rank, issuing its Program in order.
//
// A launch takes the op's host time, a calibrated mean (the profile's `launch` costs, from
// calibration/pytorch/host_overhead.py, priced onto each op by the workload) at the rank's host speed with lognormal
// jitter of mean 1 (Jitter::launch); then the op joins its stream (Streams::enqueue). `host_work` keeps the host busy
// for its time; `host_sync` blocks it until its event has completed (a `.item()`). Each rank's host keeps its cost per
// launch, fixed for the run, at the expected order statistics of the profile's spread between concurrent processes
// (hostSpeedFactors): a training loop never waits for its GPU, so a faster rank's host runs ahead of the slowest one's
// and its GPU, paced by the all-reduces, waits for the slowest in NCCL; a host-bound data-parallel step goes at its
// slowest host.
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/engine/EngineContext.hpp"
#include "sim/engine/Jitter.hpp"

namespace stepsim {

class Streams;

class Hosts {
public:
    // `speed`: each rank's factor on its host costs.
    Hosts(EngineContext& ctx, Streams& streams, Jitter& jitter, std::vector<double> speed);

    // kHostWake: the rank's host goes on issuing its Program until it launches an op, works or blocks.
    void wake(int rank);
    // `event` completed on `rank`: a host blocked on it wakes now.
    void eventCompleted(int rank, std::uint32_t event) {
        Host& h = hosts_[rank];
        if (h.blocked_on == event) {
            h.blocked_on.reset();
            ctx_.queue.push(ctx_.now, kHostWake, std::uint32_t(rank));
        }
    }
    const std::vector<double>& speeds() const { return speed_; }
    // Throws if a host stopped before the end of its Program.
    void checkFinished() const;

private:
    struct Host {
        std::uint32_t next = 0;                    // the next op to issue
        std::optional<std::uint32_t> pending;      // op launched, joining its stream when the host wakes
        std::optional<std::uint32_t> blocked_on;   // event the host waits for
    };
    // A launch's host time: the op's mean host cost at the rank's host speed, with its jitter.
    double launchSeconds(int rank, int step, double mean_s) {
        if (mean_s <= 0.0) return 0.0;
        return jitter_.launch(rank, step, mean_s * speed_[std::size_t(rank)]);
    }

    EngineContext& ctx_;
    Streams& streams_;
    Jitter& jitter_;
    std::vector<double> speed_;  // [rank]: hostSpeedFactors
    std::vector<Host> hosts_;
};

}  // namespace stepsim
