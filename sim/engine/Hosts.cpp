#include "sim/engine/Hosts.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "sim/engine/Streams.hpp"

namespace stepsim {

Hosts::Hosts(EngineContext& ctx, Streams& streams, Jitter& jitter, std::vector<double> speed)
    : ctx_(ctx), streams_(streams), jitter_(jitter), speed_(std::move(speed)), hosts_(ctx.w.programs.size()) {
    ctx_.tl.host_op_end.resize(ctx.w.programs.size());
    for (std::size_t r = 0; r < ctx.w.programs.size(); ++r) ctx_.tl.host_op_end[r].resize(ctx.w.programs[r].ops.size());
}

void Hosts::wake(int rank) {
    Host& h = hosts_[rank];
    const Program& p = ctx_.w.programs[rank];
    Time* done = ctx_.tl.host_op_end[std::size_t(rank)].data();
    if (h.pending) {
        const std::uint32_t op = *h.pending;
        h.pending.reset();
        streams_.enqueue(rank, op);
    }
    while (h.next < p.ops.size() && !h.pending) {
        const std::uint32_t i = h.next;
        const Op& op = p.ops[i];
        if (op.kind == OpKind::host_work) {
            ++h.next;
            const Time end = ctx_.now + fromSeconds(hostSeconds(rank, i, op.step, op.host_s, false));
            done[i] = end;
            ctx_.queue.push(end, kHostWake, std::uint32_t(rank));
            return;
        }
        if (op.kind == OpKind::host_sync) {
            if (!streams_.eventDone(rank, op.event)) {
                h.blocked_on = op.event;
                return;
            }
            done[i] = ctx_.now;
            ++h.next;
            continue;
        }
        ++h.next;
        const Time d = fromSeconds(hostSeconds(rank, i, op.step, op.host_s, true));
        done[i] = ctx_.now + d;
        if (d == Time{}) {
            streams_.enqueue(rank, i);
            continue;
        }
        h.pending = i;
        ctx_.queue.push(ctx_.now + d, kHostWake, std::uint32_t(rank));
    }
}

void Hosts::checkFinished() const {
    for (std::size_t r = 0; r < hosts_.size(); ++r)
        if (hosts_[r].next < ctx_.w.programs[r].ops.size())
            throw std::logic_error(fmt::format("deadlock: rank {} host stopped at op {}", r, hosts_[r].next));
}

}  // namespace stepsim
