#include "sim/engine/Collectives.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/GpuCompute.hpp"
#include "sim/engine/Jitter.hpp"
#include "sim/engine/LinkUsage.hpp"
#include "sim/engine/Streams.hpp"
#include "sim/engine/Transfers.hpp"
#include "sim/net/CollectiveAlgorithms.hpp"

namespace stepsim {

Collectives::Collectives(EngineContext& ctx, const CostModel& cost, const Fabric& fabric, const EngineConfig& cfg,
                         Streams& streams, GpuCompute& gpus, Jitter& jitter, Transfers& transfers, LinkUsage* usage)
    : ctx_(ctx),
      cost_(cost),
      fabric_(fabric),
      cfg_(cfg),
      streams_(streams),
      gpus_(gpus),
      jitter_(jitter),
      transfers_(transfers),
      usage_(usage),
      net_(fabric.links),
      gpu_flows_(ctx.w.programs.size()) {
    const int ranks = ctx.w.ranks();
    const int simulated = static_cast<int>(ctx.w.programs.size());
    const std::vector<ProcessGroup>& groups = ctx.w.groups;
    group_pos_.resize(groups.size());
    group_next_seq_.resize(groups.size());
    group_instances_.resize(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
        group_pos_[g].assign(ranks, -1);
        for (std::size_t i = 0; i < groups[g].ranks.size(); ++i) group_pos_[g][groups[g].ranks[i]] = int(i);
        group_next_seq_[g].assign(groups[g].ranks.size(), 0);
        std::vector<int> node_ids;
        for (int r : groups[g].ranks) node_ids.push_back(fabric.nodeOf(r));
        std::sort(node_ids.begin(), node_ids.end());
        group_nodes_.push_back(static_cast<int>(std::unique(node_ids.begin(), node_ids.end()) - node_ids.begin()));
        group_simulated_.push_back(
            static_cast<int>(std::count_if(groups[g].ranks.begin(), groups[g].ranks.end(), [&](int r) { return r < simulated; })));
    }
}

std::uint32_t Collectives::instanceFor(int group, int pos, const CollectiveCall& call, int step) {
    const std::uint32_t seq = group_next_seq_[group][pos]++;
    auto& list = group_instances_[group];
    if (list.size() <= seq) list.resize(seq + 1, UINT32_MAX);
    if (list[seq] == UINT32_MAX) {
        list[seq] = static_cast<std::uint32_t>(instances_.size());
        Instance in;
        in.group = group;
        in.seq = seq;
        in.member_slot.assign(ctx_.w.groups[group].ranks.size(), UINT32_MAX);
        in.first_arrival = ctx_.now;
        in.call = &call;
        in.step = step;
        instances_.push_back(std::move(in));
    }
    return list[seq];
}

void Collectives::arrive(std::uint32_t slot, const Op& op) {
    const Streams::Stream& st = streams_.begin(slot);
    const CollectiveCall& call = ctx_.w.programs[st.rank].collectives[op.collective];
    const int g = call.group;
    const int pos = group_pos_[g][st.rank];
    if (pos < 0)
        throw std::logic_error(fmt::format("rank {} issued a collective on group {} it is not in", st.rank, g));
    const std::uint32_t id = instanceFor(g, pos, call, op.step);
    Instance& in = instances_[id];
    in.member_slot[pos] = slot;
    ++in.arrived;
    // The NCCL kernel is now resident on this GPU, slowing its compute kernels: waiting for its peers until the
    // last one arrives, then moving data.
    // A point-to-point transfer (a sendrecv of two ranks: a pipeline's send or receive) is not counted as a resident
    // kernel waiting for its peer: NCCL runs it on few channels, and the profiles' waiting slowdowns were measured
    // beside all-reduces (an assumption without a measurement of its own; docs/parallelism.md).
    const bool p2p = call.kind == CollectiveKind::sendrecv && in.member_slot.size() == 2;
    if (in.arrived < group_simulated_[g]) {
        if (!p2p) gpus_.ncclWaits(st.rank);
        return;
    }
    in.transfer = transferSlowdown(cfg_, in.call->bytes);
    for (const std::uint32_t member : in.member_slot)
        if (member != UINT32_MAX) gpus_.ncclMoves(streams_[member].rank, id, in.transfer, member != slot && !p2p);
    in.start = ctx_.now;
    in.est = cost_.collective(in.call->kind, static_cast<int>(ctx_.w.groups[g].ranks.size()), group_nodes_[g],
                              in.call->bytes);
    ctx_.queue.push(ctx_.now + fromSeconds(in.est.alpha_s), kAlphaDone, id);
}

double Collectives::flowCap(double base_Bps, int gpu, int step) {
    return base_Bps / (gpus_.computing(gpu) ? cfg_.comm_slowdown : 1.0) / jitter_.linkFactor(gpu, step);
}

void Collectives::startFlows(std::uint32_t id) {
    Instance& in = instances_[id];
    const auto specs = [&] {
        return collectiveFlows(in.call->kind, in.est.algo, ctx_.w.groups[in.group].ranks, fabric_, in.call->bytes,
                               in.est.busbw_Bps, in.est.factor);
    };
    if (!ctx_.w.representative.empty()) {
        // The same call on the same group lays out the same flows: merged once (a merged route is O(GPUs) long).
        const MergedKey key{in.group, int(in.call->kind), in.est.algo, in.call->bytes, in.est.busbw_Bps, in.est.factor};
        auto it = merged_.find(key);
        if (it == merged_.end()) it = merged_.emplace(key, mergeMirrors(specs())).first;
        const std::vector<Merged>& merged = it->second;
        if (merged.empty()) return finish(id);
        in.flows_left = static_cast<int>(merged.size());
        for (const Merged& m : merged) addFlow(id, m.src, m.route, m.bytes, m.cap_Bps);
        return;
    }
    const std::vector<FlowSpec> all = specs();
    if (all.empty()) return finish(id);
    in.flows_left = static_cast<int>(all.size());
    for (const FlowSpec& s : all) addFlow(id, s.src, fabric_.route(s.src, s.dst), s.bytes, s.cap_Bps);
}

void Collectives::addFlow(std::uint32_t id, int src, const Route& route, double bytes, double cap_Bps) {
    const FlowId f = net_.add(ctx_.now, route, bytes, flowCap(cap_Bps, src, instances_[id].step), std::uint32_t(src));
    if (flow_inst_.size() <= f) flow_inst_.resize(f + 1), flow_base_cap_.resize(f + 1);
    flow_inst_[f] = id;
    flow_base_cap_[f] = cap_Bps;
    gpu_flows_[src].push_back(f);
    rescheduleFlows();
}

std::vector<Collectives::Merged> Collectives::mergeMirrors(const std::vector<FlowSpec>& specs) const {
    std::vector<Merged> out;
    for (const FlowSpec& s : specs) {
        const int rep = ctx_.w.representative[static_cast<std::size_t>(s.src)];
        auto it = std::find_if(out.begin(), out.end(), [&](const Merged& m) {
            return m.src == rep && m.bytes == s.bytes && m.cap_Bps == s.cap_Bps;
        });
        if (it == out.end()) it = out.insert(out.end(), Merged{rep, s.bytes, s.cap_Bps, {}});
        const Route& r = fabric_.route(s.src, s.dst);
        it->route.insert(it->route.end(), r.begin(), r.end());
    }
    return out;
}

void Collectives::rescheduleFlows() {
    if (usage_) usage_->record(ctx_.now, net_, net_.changed());
    for (FlowId f : net_.changed()) {
        // A reduced run's merged flow below its bound: its members need not share one rate in the full network.
        if (!ctx_.w.representative.empty() && net_.rate(f) < net_.cap(f)) ctx_.tl.symmetry_broken = true;
        const Time t = net_.completion(f);
        if (t != Time::max()) ctx_.queue.push(t, kFlowDone, f, net_.version(f));
    }
}

void Collectives::refreshFlowCaps(int gpu) {
    for (FlowId f : gpu_flows_[gpu]) {
        net_.setCap(ctx_.now, f, flowCap(flow_base_cap_[f], gpu, instances_[flow_inst_[f]].step));
        rescheduleFlows();
    }
}

void Collectives::startTransferFlow(const Route& route, double bytes, double cap_Bps, std::uint32_t rank,
                                    std::uint32_t id) {
    const FlowId f = net_.add(ctx_.now, route, bytes, cap_Bps, rank);
    if (flow_inst_.size() <= f) flow_inst_.resize(f + 1), flow_base_cap_.resize(f + 1);
    flow_inst_[f] = kTransferFlow | id;
    flow_base_cap_[f] = cap_Bps;
    rescheduleFlows();
}

void Collectives::flowDone(FlowId f) {
    const std::uint32_t id = flow_inst_[f];
    if (id & kTransferFlow) {
        const Route left = usage_ ? net_.route(f) : Route{};
        net_.remove(ctx_.now, f);
        if (usage_) usage_->record(ctx_.now, net_, {}, left);
        rescheduleFlows();
        transfers_.flowDone(id & ~kTransferFlow);
        return;
    }
    if (usage_) {
        const Route left = net_.route(f);
        auto& fl = gpu_flows_[net_.owner(f)];
        fl.erase(std::find(fl.begin(), fl.end(), f));
        net_.remove(ctx_.now, f);
        usage_->record(ctx_.now, net_, {}, left);
        rescheduleFlows();
        if (--instances_[id].flows_left == 0) finish(id);
        return;
    }
    auto& fl = gpu_flows_[net_.owner(f)];
    fl.erase(std::find(fl.begin(), fl.end(), f));
    net_.remove(ctx_.now, f);
    rescheduleFlows();
    if (--instances_[id].flows_left == 0) finish(id);
}

void Collectives::finish(std::uint32_t id) {
    const Instance& in = instances_[id];
    Timeline& tl = ctx_.tl;
    tl.collectives.push_back(CollectiveRecord{in.group, in.seq, in.call->kind, in.call->bytes, in.step,
                                              in.first_arrival, in.start, ctx_.now, in.est.algo, in.est.proto});
    if (in.est.measured && !in.est.in_domain && tl.warnings.size() < 64)
        tl.warnings.push_back(fmt::format("{} of {} bytes on {} ranks is outside the profile's measured sizes",
                                          collectiveKindName(in.call->kind), in.call->bytes, in.member_slot.size()));
    for (std::uint32_t slot : in.member_slot) {
        if (slot == UINT32_MAX) continue;  // a rank the symmetry reduction does not simulate
        const Streams::Stream& st = streams_[slot];
        tl.spans.push_back(Span{st.rank, st.index, KernelClass::comm, st.op, st.start, ctx_.now});
        streams_.end(slot);
        gpus_.ncclLeaves(st.rank, id);
    }
    for (std::uint32_t slot : in.member_slot)
        if (slot != UINT32_MAX) streams_.tryStart(slot);
}

}  // namespace stepsim
