#include "sim/engine/Transfers.hpp"

#include "sim/engine/Collectives.hpp"
#include "sim/engine/Streams.hpp"

namespace stepsim {

Transfers::Transfers(EngineContext& ctx, const Fabric& fabric, Streams& streams, Collectives& collectives)
    : ctx_(ctx), fabric_(fabric), streams_(streams), collectives_(collectives), routes_(ctx.w.programs.size()) {
    issued_.resize(ctx.w.programs.size());
    for (std::size_t r = 0; r < ctx.w.programs.size(); ++r)
        if (!ctx.w.programs[r].transfers.empty()) issued_[r].assign(ctx.w.programs[r].ops.size(), Time{});
}

const Route& Transfers::routeOf(int rank, TransferKind kind) {
    const std::size_t k = static_cast<std::size_t>(kind);
    std::optional<Route>& r = routes_[rank][k];
    if (!r) {
        if (kind == TransferKind::storage_write)
            r = fabric_.storage_route ? fabric_.storage_route(rank) : Route{};
        else
            r = fabric_.host_route ? fabric_.host_route(rank, kind == TransferKind::h2d) : Route{};
    }
    return *r;
}

void Transfers::start(std::uint32_t slot, const Op& op) {
    Streams::Stream& st = streams_.begin(slot);
    const TransferCall& call = ctx_.w.programs[st.rank].transfers[op.collective];
    std::uint32_t id;
    if (!free_.empty()) {
        id = free_.back();
        free_.pop_back();
    } else {
        id = static_cast<std::uint32_t>(active_.size());
        active_.emplace_back();
    }
    Active& a = active_[id];
    a.slot = slot;
    a.call = &call;
    a.alpha_paid = false;
    a.rec = TransferRecord{st.rank, op.collective, op.step, issued_[st.rank][st.op], ctx_.now, ctx_.now};
    if (call.kind == TransferKind::loader_work) {
        ctx_.queue.push(ctx_.now + fromSeconds(call.seconds), kTransferDone, id);
        return;
    }
    if (call.alpha_s > 0.0) {
        ctx_.queue.push(ctx_.now + fromSeconds(call.alpha_s), kTransferDone, id);
        return;
    }
    startFlow(id);
}

void Transfers::timerDone(std::uint32_t id) {
    Active& a = active_[id];
    if (a.call->kind == TransferKind::loader_work || a.alpha_paid) {
        finish(id);
        return;
    }
    a.alpha_paid = true;
    startFlow(id);
}

void Transfers::startFlow(std::uint32_t id) {
    Active& a = active_[id];
    a.alpha_paid = true;
    if (!(a.call->bytes > 0.0)) {
        finish(id);
        return;
    }
    collectives_.startTransferFlow(routeOf(a.rec.rank, a.call->kind), a.call->bytes, a.call->cap_Bps,
                                   std::uint32_t(a.rec.rank), id);
}

void Transfers::finish(std::uint32_t id) {
    Active& a = active_[id];
    a.rec.end = ctx_.now;
    ctx_.tl.transfers.push_back(a.rec);
    const std::uint32_t slot = a.slot;
    free_.push_back(id);
    streams_.end(slot);
    streams_.tryStart(slot);
}

}  // namespace stepsim
