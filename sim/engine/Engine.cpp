#include "sim/engine/Engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/Symmetry.hpp"

namespace stepsim {

namespace {
const Workload& fitting(const Workload& w, const Fabric& fabric) {
    const int ranks = w.ranks();
    if (ranks > fabric.gpus)
        throw std::invalid_argument(fmt::format("workload has {} ranks but the fabric {} GPUs", ranks, fabric.gpus));
    return w;
}

// Progress on a terminal for runs past two seconds: stderr only, and only when it is a tty (never in files, pipes or
// tests). Checked every 2^16 events; the share done is the kernels and collectives ended over all of them (the hosts
// run ahead: what they issued overstates it), and the time left the time so far × (1 − done) / done. The line is cleared when the run ends.
class Progress {
public:
    Progress() : on_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}
    template <class Done>
    void tick(std::uint64_t events, Time now, Done done) {
        if (!on_ || (events & 0xffff) != 0) return;
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        if (s < 2.0) return;
        const double f = std::clamp(done(), 1e-6, 1.0);
        std::fprintf(stderr, "\rstepsim: %3.0f%% done, %.0f s left (%.1f s so far, simulated %.3f s)   ", 100.0 * f,
                     s * (1.0 - f) / f, s, now.seconds());
        shown_ = true;
    }
    ~Progress() {
        if (shown_) std::fprintf(stderr, "\r%60s\r", "");
    }

private:
    bool on_, shown_ = false;
    std::chrono::steady_clock::time_point start_;
};
}  // namespace

Engine::Engine(const Workload& w, const CostModel& cost, const Fabric& fabric, EngineConfig cfg)
    : cfg_(std::move(cfg)),
      ctx_{fitting(w, fabric), Time{}, EventQueue{}, Timeline{}},
      jitter_(w, cfg_),
      power_(ctx_, cfg_.power),
      hosts_(ctx_, streams_, jitter_,
             cfg_.jitter ? slowestOfClass(w, hostSpeedFactors(w.ranks(), cfg_.host_rank_cv, cfg_.seed))
                         : std::vector(w.programs.size(), 1.0)),
      streams_(ctx_, hosts_, gpus_, collectives_, power_, transfers_),
      gpus_(ctx_, cfg_, streams_, collectives_, power_, jitter_,
            cfg_.jitter ? slowestOfClass(w, deviceSpeedFactors(w.ranks(), cfg_.device_compute_cv,
                                                               cfg_.device_memory_cv, cfg_.seed))
                        : std::vector(w.programs.size(), EngineConfig::filled(1.0))),
      usage_(cfg_.link_usage ? std::optional<LinkUsage>(std::in_place, ctx_.tl, fabric.links) : std::nullopt),
      collectives_(ctx_, cost, fabric, cfg_, streams_, gpus_, jitter_, transfers_, usage_ ? &*usage_ : nullptr),
      transfers_(ctx_, fabric, streams_, collectives_) {
    const int ranks = static_cast<int>(w.programs.size());
    Timeline& tl = ctx_.tl;
    tl.host_speed = hosts_.speeds();
    tl.ranks = ranks;
    tl.step_end.assign(ranks, std::vector<Time>(std::max(1, w.steps)));
    tl.host_step_end.assign(ranks, std::vector<Time>(std::max(1, w.steps)));
    tl.clock_mhz.assign(ranks, std::vector<double>(std::max(1, w.steps), 0.0));
    std::size_t total_ops = 0;
    std::size_t timed = 0;  // the ops that end as a span: kernels and collectives
    for (const Program& p : w.programs) {
        total_ops += p.ops.size();
        for (const Op& op : p.ops) timed += op.kind == OpKind::kernel || op.kind == OpKind::collective;
    }
    total_ops_ = std::max<std::size_t>(1, timed);
    tl.spans.reserve(total_ops);
    ctx_.queue.reserve(1024);
}

Timeline Engine::run() {
    for (std::uint32_t r = 0; r < ctx_.w.programs.size(); ++r) ctx_.queue.push(Time{}, kHostWake, r);
    Progress progress;
    while (!ctx_.queue.empty()) {
        const Event e = ctx_.queue.pop();
        assert(e.time >= ctx_.now);
        ctx_.now = e.time;
        progress.tick(++ctx_.tl.events, ctx_.now, [&] { return double(ctx_.tl.spans.size()) / double(total_ops_); });
        switch (e.type) {
            case kHostWake: hosts_.wake(int(e.target)); break;
            case kKernelDone:
                if (gpus_.current(e.target, e.version)) gpus_.finishKernel(e.target);
                break;
            case kAlphaDone: collectives_.startFlows(e.target); break;
            case kStreamWake: streams_.tryStart(e.target); break;
            case kTransferDone: transfers_.timerDone(e.target); break;
            case kFlowDone:
                if (collectives_.current(e.target, e.version)) collectives_.flowDone(e.target);
                break;
        }
    }
    streams_.checkFinished();
    hosts_.checkFinished();
    return std::move(ctx_.tl);
}

}  // namespace stepsim
