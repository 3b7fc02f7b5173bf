#include "sim/engine/Streams.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "sim/engine/Collectives.hpp"
#include "sim/engine/GpuCompute.hpp"
#include "sim/engine/Hosts.hpp"
#include "sim/engine/PowerState.hpp"
#include "sim/engine/Transfers.hpp"

namespace stepsim {

Streams::Streams(EngineContext& ctx, Hosts& hosts, GpuCompute& gpus, Collectives& collectives, PowerState& power,
                 Transfers& transfers)
    : ctx_(ctx), hosts_(hosts), gpus_(gpus), collectives_(collectives), power_(power), transfers_(transfers) {
    const std::vector<Program>& programs = ctx.w.programs;
    event_done_.resize(programs.size());
    for (std::size_t r = 0; r < programs.size(); ++r) {
        base_.push_back(static_cast<std::uint32_t>(streams_.size()));
        for (std::size_t s = 0; s < programs[r].streams.size(); ++s) {
            Stream st;
            st.rank = static_cast<int>(r);
            st.index = static_cast<std::uint8_t>(s);
            streams_.push_back(std::move(st));
        }
        event_done_[r].assign(programs[r].events, 0);
    }
}

void Streams::enqueue(int rank, std::uint32_t op) {
    const Op& o = ctx_.w.programs[rank].ops[op];
    if (o.kind == OpKind::transfer) transfers_.issued(rank, op);
    if (o.kind == OpKind::step_end && o.step >= 0 && o.step < static_cast<int>(ctx_.tl.host_step_end[rank].size()))
        ctx_.tl.host_step_end[rank][o.step] = ctx_.now;
    const std::uint32_t slot = slotOf(rank, o.stream);
    streams_[slot].queue.push_back(op);
    tryStart(slot);
}

void Streams::tryStart(std::uint32_t slot) {
    Stream& st = streams_[slot];
    const Program& p = ctx_.w.programs[st.rank];
    while (!st.running && st.head < st.queue.size()) {
        const Op& op = p.ops[st.queue[st.head]];
        switch (op.kind) {
            case OpKind::record_event:
                ++st.head;
                completeEvent(st.rank, op.event);
                break;
            case OpKind::wait_event:
                if (!event_done_[st.rank][op.event]) {
                    st.blocked_on = op.event;
                    return;
                }
                st.blocked_on.reset();
                ++st.head;
                break;
            case OpKind::step_end:
                ++st.head;
                if (op.step >= 0 && op.step < static_cast<int>(ctx_.tl.step_end[st.rank].size())) {
                    ctx_.tl.step_end[st.rank][op.step] = ctx_.now;
                    power_.endStep(st.rank, op.step, gpus_.computing(st.rank));
                }
                break;
            case OpKind::kernel: gpus_.startKernel(slot, op); return;
            case OpKind::transfer: transfers_.start(slot, op); return;
            case OpKind::collective:
                // A compute kernel's CTAs hold the SMs: the NCCL kernel's blocks are placed once it ends.
                if (gpus_.computing(st.rank)) {
                    st.running = true;
                    st.op = st.queue[st.head];
                    gpus_.waitForSms(st.rank, slot);
                    return;
                }
                collectives_.arrive(slot, op);
                return;
            case OpKind::host_work:
            case OpKind::host_sync: ++st.head; break;  // never enqueued; skip defensively
        }
    }
}

void Streams::completeEvent(int rank, std::uint32_t event) {
    if (event_done_[rank][event]) return;
    event_done_[rank][event] = 1;
    const std::uint32_t base = base_[rank];
    const std::uint32_t n = static_cast<std::uint32_t>(ctx_.w.programs[rank].streams.size());
    // Streams waiting on the event resume after what runs now (kStreamWake at now, behind the events already due).
    for (std::uint32_t s = base; s < base + n; ++s)
        if (streams_[s].blocked_on == event) {
            streams_[s].blocked_on.reset();
            ctx_.queue.push(ctx_.now, kStreamWake, s);
        }
    hosts_.eventCompleted(rank, event);
}

void Streams::checkFinished() const {
    for (const Stream& st : streams_)
        if (st.head < st.queue.size() || st.running)
            throw std::logic_error(fmt::format("deadlock: rank {} stream {} stopped with {} ops left", st.rank,
                                               int(st.index), st.queue.size() - st.head));
}

}  // namespace stepsim
