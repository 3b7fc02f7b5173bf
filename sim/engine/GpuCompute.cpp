#include "sim/engine/GpuCompute.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/engine/Collectives.hpp"
#include "sim/engine/Jitter.hpp"
#include "sim/engine/PowerState.hpp"
#include "sim/engine/Streams.hpp"

namespace stepsim {

GpuCompute::GpuCompute(EngineContext& ctx, const EngineConfig& cfg, Streams& streams, Collectives& collectives,
                       PowerState& power, Jitter& jitter, std::vector<std::array<double, kKernelClasses>> speed)
    : ctx_(ctx),
      cfg_(cfg),
      streams_(streams),
      collectives_(collectives),
      power_(power),
      jitter_(jitter),
      speed_(std::move(speed)),
      gpus_(ctx.w.programs.size()) {
    for (std::size_t k = 0; k < kKernelClasses; ++k) device_gap_[k] = fromSeconds(cfg.device_gap_s[k]);
    std::size_t slots = 0;
    for (const Program& p : ctx.w.programs) slots += p.streams.size();
    kernels_.resize(slots);
}

void GpuCompute::startKernel(std::uint32_t slot, const Op& op) {
    const Streams::Stream& st = streams_.begin(slot);
    const Time now = ctx_.now;
    const int rank = st.rank;
    Kernel& k = kernels_[slot];
    k.op = &op;
    k.index = st.op;
    k.rank = rank;
    k.stream = st.index;
    k.start = now;
    k.last = now;
    k.remaining = op.work_s * jitter_.kernelFactor(rank, st.op, op.step) * speed_[rank][std::size_t(op.cls)];
    k.remaining = power_.kernelStarts(rank, op, k.remaining);
    k.rate = 0.0;
    Gpu& g = gpus_[rank];
    k.beside = !g.moving.empty() ? Beside::moving : g.comm_waiting > 0 ? Beside::waiting : Beside::none;
    k.work = k.remaining;
    k.wave_s = 0.0;
    k.held_slow = 1.0;
    if (op.cls == KernelClass::gemm && k.beside != Beside::none && cfg_.linger_tile_m > 0) {
        const double tiles =
            std::ceil(double(op.gemm.m) / cfg_.linger_tile_m) * std::ceil(double(op.gemm.n) / cfg_.linger_tile_n);
        k.wave_s = k.work / std::max(1.0, std::ceil(tiles / cfg_.sms));
    }
    const bool was_idle = g.computing.empty();
    if (was_idle) power_.gpuBusy(rank, now);
    g.computing.push_back(slot);
    rerate(rank);
    if (was_idle) collectives_.computeChanged(rank);
}

void GpuCompute::rerate(int gpu) {
    Gpu& g = gpus_[gpu];
    const double share = 1.0 / static_cast<double>(g.computing.size());
    const bool waiting = g.comm_waiting > 0;
    const bool resident = waiting || !g.moving.empty();
    const Time now = ctx_.now;
    for (std::uint32_t slot : g.computing) {
        Kernel& k = kernels_[slot];
        const Op& op = *k.op;
        const std::size_t cls = std::size_t(op.cls);
        const double by_class = std::max(waiting ? cfg_.slowdown_waiting[cls] : 1.0, g.transfer[cls]);
        const double slow = !resident ? 1.0 : op.beside_nccl > 0 ? double(op.beside_nccl) : by_class;
        bool lagged = false;
        if (resident) {
            if (k.wave_s > 0) k.held_slow = slow;
        } else if (k.wave_s > 0) {
            // The NCCL kernel that held SMs from the GEMM's launch has left, `held` into it: the lag rule.
            const double held = (now - k.start).seconds();
            const double left = std::max(0.0, k.remaining - k.rate * (now - k.last).seconds());
            const double end = std::min(k.work + std::min(held, k.wave_s), k.work * k.held_slow);
            k.remaining = std::max(left, end - held);
            k.last = now;
            k.wave_s = 0.0;
            lagged = true;
        }
        const double rate = share / slow;
        if (k.rate == rate && !lagged) continue;
        k.remaining = std::max(0.0, k.remaining - k.rate * (now - k.last).seconds());
        k.last = now;
        k.rate = rate;
        ++k.version;
        ctx_.queue.push(now + fromSeconds(k.remaining / rate), kKernelDone, slot, k.version);
    }
}

// The factor of the largest collective moving data on this GPU (1 when none is).
void GpuCompute::refreshTransfer(int gpu) {
    Gpu& g = gpus_[gpu];
    g.transfer.fill(1.0);
    for (const Moving& m : g.moving)
        for (std::size_t c = 0; c < kKernelClasses; ++c) g.transfer[c] = std::max(g.transfer[c], m.transfer[c]);
}

void GpuCompute::finishKernel(std::uint32_t slot) {
    Kernel& k = kernels_[slot];
    const int rank = k.rank;
    const Op& op = *k.op;
    const Time now = ctx_.now;
    // The launch gap at the start of its period: its class's, or the GEMM's own; longer beside NCCL.
    const std::size_t cls = std::size_t(op.cls);
    Time gap = op.gap_s > 0 ? fromSeconds(op.gap_s) : device_gap_[cls];
    if (k.beside == Beside::moving)
        gap = op.gap_transfer_s > 0 ? fromSeconds(op.gap_transfer_s) : fromSeconds(gap.seconds() * cfg_.gap_beside_transfer[cls]);
    else if (k.beside == Beside::waiting)
        gap = fromSeconds(gap.seconds() * cfg_.gap_beside_waiting[cls]);
    const Time busy_from = std::min(k.start + gap, now);
    ctx_.tl.spans.push_back(Span{rank, k.stream, op.cls, k.index, busy_from, now});
    k.rate = 0.0;
    ++k.version;
    streams_.end(slot);
    Gpu& g = gpus_[rank];
    g.computing.erase(std::find(g.computing.begin(), g.computing.end(), slot));
    if (g.computing.empty()) power_.gpuIdle(rank, now);
    // NCCL kernels that waited for SMs take them now, before this stream's next kernel.
    if (!g.sm_wait.empty()) {
        const std::vector<Op>& ops = ctx_.w.programs[rank].ops;
        for (const std::uint32_t c : std::exchange(g.sm_wait, {})) collectives_.arrive(c, ops[streams_[c].op]);
    }
    refresh(rank);
    if (g.computing.empty()) collectives_.computeChanged(rank);
    streams_.tryStart(slot);
}

void GpuCompute::ncclWaits(int gpu) {
    ++gpus_[gpu].comm_waiting;
    refresh(gpu);
}

void GpuCompute::ncclMoves(int gpu, std::uint32_t id, const std::array<double, kKernelClasses>& transfer,
                           bool was_waiting) {
    Gpu& g = gpus_[gpu];
    if (was_waiting) --g.comm_waiting;
    g.moving.push_back(Moving{id, transfer});
    refreshTransfer(gpu);
    refresh(gpu);
}

void GpuCompute::ncclLeaves(int gpu, std::uint32_t id) {
    Gpu& g = gpus_[gpu];
    g.moving.erase(std::find_if(g.moving.begin(), g.moving.end(), [id](const Moving& m) { return m.id == id; }));
    refreshTransfer(gpu);
    refresh(gpu);
}

}  // namespace stepsim
