#include "sim/report/TraceReport.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/metrics/Breakdown.hpp"
#include "sim/report/EnumNames.hpp"

namespace stepsim {
namespace {

// A JSON string literal, escaped.
std::string jsonString(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

// Exact µs from integer ps: "12.345678".
std::string micros(Time t) {
    const std::int64_t ps = t.count();
    const std::int64_t a = ps < 0 ? -ps : ps;
    return fmt::format("{}{}.{:06}", ps < 0 ? "-" : "", a / 1'000'000, a % 1'000'000);
}

// A finite double in shortest round-trip form, otherwise null.
std::string number(double x) { return std::isfinite(x) ? fmt::format("{}", x) : std::string("null"); }

const Op& opOf(const Workload& wl, const Span& s) {
    if (s.rank < 0 || static_cast<std::size_t>(s.rank) >= wl.programs.size())
        throw std::invalid_argument(fmt::format("writeTrace: a span on rank {}, the workload has {} programs", s.rank,
                                                wl.programs.size()));
    const Program& p = wl.programs[static_cast<std::size_t>(s.rank)];
    if (s.op >= p.ops.size())
        throw std::invalid_argument(fmt::format("writeTrace: span op {} on rank {} of {} ops", s.op, s.rank, p.ops.size()));
    return p.ops[s.op];
}

const CollectiveCall* callOf(const Workload& wl, const Span& s, const Op& op) {
    if (op.kind != OpKind::collective) return nullptr;
    const Program& p = wl.programs[static_cast<std::size_t>(s.rank)];
    return op.collective < p.collectives.size() ? &p.collectives[op.collective] : nullptr;
}

// Which record each collective span ran, and which spans each record links.
struct Links {
    std::vector<std::optional<std::size_t>> record_of_span;
    std::vector<std::vector<std::size_t>> spans_of_record;  // ordered by the group's rank order
};

Links link(const Timeline& tl, const Workload& wl) {
    Links L;
    L.record_of_span.resize(tl.spans.size());
    L.spans_of_record.resize(tl.collectives.size());

    std::map<std::pair<int, int>, std::vector<std::size_t>> by_rank_group;  // (rank, group) → spans
    for (std::size_t i = 0; i < tl.spans.size(); ++i) {
        const Span& s = tl.spans[i];
        const Op& op = opOf(wl, s);
        if (const CollectiveCall* c = callOf(wl, s, op)) by_rank_group[{s.rank, c->group}].push_back(i);
    }
    for (auto& [key, v] : by_rank_group)
        std::sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) { return tl.spans[a].op < tl.spans[b].op; });

    std::map<int, std::vector<std::size_t>> by_group;  // group → records by seq
    for (std::size_t i = 0; i < tl.collectives.size(); ++i) by_group[tl.collectives[i].group].push_back(i);
    for (auto& [g, v] : by_group) {
        std::stable_sort(v.begin(), v.end(),
                         [&](std::size_t a, std::size_t b) { return tl.collectives[a].seq < tl.collectives[b].seq; });
        if (g < 0 || static_cast<std::size_t>(g) >= wl.groups.size()) continue;
        for (std::size_t k = 0; k < v.size(); ++k) {
            const CollectiveRecord& rec = tl.collectives[v[k]];
            for (int r : wl.groups[static_cast<std::size_t>(g)].ranks) {
                const auto it = by_rank_group.find({r, g});
                if (it == by_rank_group.end() || k >= it->second.size()) continue;
                const std::size_t si = it->second[k];
                const Span& s = tl.spans[si];
                if (callOf(wl, s, opOf(wl, s))->kind != rec.kind) continue;
                L.record_of_span[si] = v[k];
                L.spans_of_record[v[k]].push_back(si);
            }
        }
    }
    return L;
}

class EventWriter {
public:
    explicit EventWriter(std::ostream& os) : os_(os) {}
    void operator()(const std::string& event) {
        os_ << (first_ ? "\n" : ",\n") << event;
        first_ = false;
    }

private:
    std::ostream& os_;
    bool first_ = true;
};

// The host thread's track: after the rank's streams (tid = stream index); the breakdown's track after it.
std::size_t hostTid(const Program& p) { return p.streams.size(); }

// What the host's time on an op is called, as the PyTorch profiler's CPU track names the runtime calls.
std::string hostCallName(const Program& p, const Op& op) {
    const std::string name = op.name < p.names.size() ? p.names[op.name] : std::string();
    switch (op.kind) {
        case OpKind::kernel:
        case OpKind::collective: return "cudaLaunchKernel";
        case OpKind::transfer: return "cudaMemcpyAsync";
        case OpKind::record_event: return "cudaEventRecord";
        case OpKind::wait_event: return "cudaStreamWaitEvent";
        case OpKind::host_sync: return "cudaEventSynchronize";
        case OpKind::host_work: return name.empty() ? std::string("host work") : name;
        case OpKind::step_end: return "step end";
    }
    return "host";
}

// Each rank's host thread: its time on each op (Timeline::host_op_end), a launch linked to its kernel by a flow ("ac2g",
// as the profiler links them).
void writeHostTracks(EventWriter& emit, const Timeline& tl, const Workload& wl) {
    std::vector<std::vector<std::optional<Time>>> gpu_start(tl.host_op_end.size());
    for (std::size_t r = 0; r < tl.host_op_end.size(); ++r) gpu_start[r].resize(tl.host_op_end[r].size());
    for (const Span& s : tl.spans)
        if (std::size_t(s.rank) < gpu_start.size() && s.op < gpu_start[std::size_t(s.rank)].size())
            gpu_start[std::size_t(s.rank)][s.op] = s.start;
    std::uint64_t flow = 0;
    for (std::size_t r = 0; r < tl.host_op_end.size() && r < wl.programs.size(); ++r) {
        const Program& p = wl.programs[r];
        const std::size_t tid = hostTid(p);
        emit(fmt::format(R"~({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"host (Python thread)"}}}})~", r, tid));
        emit(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":-1}}}})", r, tid));
        const std::vector<Time>& end = tl.host_op_end[r];
        for (std::size_t i = 0; i < end.size() && i < p.ops.size(); ++i) {
            const struct {
                Time start, end;
            } h{i == 0 ? Time{} : end[i - 1], end[i]};  // the host takes op i up when done with op i − 1
            if (h.end <= h.start) continue;
            const Op& op = p.ops[i];
            const std::string kernel = op.name < p.names.size() ? p.names[op.name] : std::string();
            const char* cat = op.kind == OpKind::host_sync ? "host_sync" : op.kind == OpKind::host_work ? "host_work" : "launch";
            emit(fmt::format(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"op":{},"name":{},"step":{}}}}})",
                             jsonString(hostCallName(p, op)), cat, r, tid, micros(h.start), micros(h.end - h.start), i,
                             jsonString(kernel), op.step));
            if ((op.kind == OpKind::kernel || op.kind == OpKind::collective) && gpu_start[r][i]) {
                emit(fmt::format(R"({{"ph":"s","id":{},"cat":"ac2g","name":"ac2g","pid":{},"tid":{},"ts":{}}})", flow, r,
                                 tid, micros(h.start)));
                emit(fmt::format(R"({{"ph":"f","id":{},"cat":"ac2g","name":"ac2g","pid":{},"tid":{},"ts":{},"bp":"e"}})",
                                 flow, r, int(op.stream), micros(*gpu_start[r][i])));
                ++flow;
            }
        }
    }
}

// The step breakdown's attribution (Breakdown.hpp) of every rank's windows, its parts other than compute, as slices of
// a "breakdown" track.
void writeBreakdownTracks(EventWriter& emit, const Timeline& tl, const Workload& wl) {
    for (std::size_t r = 0; r < std::size_t(std::max(0, tl.ranks)) && r < wl.programs.size(); ++r)
        emit(fmt::format(R"~({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"breakdown (not compute)"}}}})~",
                         r, hostTid(wl.programs[r]) + 1));
    for (const AttributedInterval& a : attributeWindows(tl, wl)) {
        if (std::size_t(a.rank) >= wl.programs.size()) continue;
        emit(fmt::format(R"({{"ph":"X","name":{},"cat":"breakdown","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"step":{}}}}})",
                         jsonString(a.part), a.rank, hostTid(wl.programs[std::size_t(a.rank)]) + 1, micros(a.start),
                         micros(a.end - a.start), a.step));
    }
}

// The memory model's terms at each phase of each step, as a counter per rank (GiB; args one series per term).
void writeMemoryCounters(EventWriter& emit, const Timeline& tl, const Workload& wl,
                         const std::vector<MemoryBreakdown>& phases) {
    if (phases.size() != 4) return;
    // [rank][step]: the first backward kernel's start, the first backward GEMM's end (the LM head's), the last backward
    // kernel's end, the first optimizer kernel's start.
    struct Marks {
        std::optional<Time> bwd_start, gemm_start, bwd_first_end, bwd_end, opt_start;
    };
    std::vector<std::vector<Marks>> marks(wl.programs.size(), std::vector<Marks>(std::size_t(std::max(1, wl.steps))));
    for (const Span& s : tl.spans) {
        if (std::size_t(s.rank) >= wl.programs.size()) continue;
        const Op& op = wl.programs[std::size_t(s.rank)].ops[s.op];
        if (op.kind != OpKind::kernel || op.step < 0 || op.step >= wl.steps) continue;
        Marks& m = marks[std::size_t(s.rank)][std::size_t(op.step)];
        if (op.phase == Phase::backward) {
            if (!m.bwd_start || s.start < *m.bwd_start) m.bwd_start = s.start;
            if (s.cls == KernelClass::gemm && (!m.gemm_start || s.start < *m.gemm_start))
                m.gemm_start = s.start, m.bwd_first_end = s.end;
            if (!m.bwd_end || s.end > *m.bwd_end) m.bwd_end = s.end;
        }
        if (op.phase == Phase::optimizer && (!m.opt_start || s.start < *m.opt_start)) m.opt_start = s.start;
    }
    for (std::size_t r = 0; r < marks.size(); ++r)
        for (const Marks& m : marks[r]) {
            const std::optional<Time> at[4] = {m.bwd_start, m.bwd_first_end, m.bwd_end, m.opt_start};
            for (std::size_t k = 0; k < 4; ++k) {
                if (!at[k]) continue;
                const MemoryBreakdown& b = phases[k];
                emit(fmt::format(R"~({{"ph":"C","name":"memory (GiB)","pid":{},"ts":{},"args":{{"params":{},"grads":{},"optimizer":{},"activations":{},"buffers":{}}}}})~",
                                 r, micros(*at[k]), number(b.params), number(b.grads), number(b.optimizer),
                                 number(b.activations), number(b.buffers)));
            }
        }
}

}  // namespace

void writeTrace(std::ostream& os, const Timeline& tl, const Workload& wl, const std::vector<MemoryBreakdown>& memory_phases) {
    const Links L = link(tl, wl);
    os << R"({"displayTimeUnit":"ns","otherData":{"generator":"stepsim"},"traceEvents":[)";
    EventWriter emit(os);

    for (int r = 0; r < tl.ranks; ++r) {
        emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"rank {}"}}}})", r, r));
        emit(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})", r, r));
        if (static_cast<std::size_t>(r) >= wl.programs.size()) continue;
        const auto& streams = wl.programs[static_cast<std::size_t>(r)].streams;
        for (std::size_t t = 0; t < streams.size(); ++t) {
            emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", r, t,
                             jsonString(streams[t].name)));
            emit(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                             r, t, t));
        }
    }

    for (std::size_t i = 0; i < tl.spans.size(); ++i) {
        const Span& s = tl.spans[i];
        const Op& op = opOf(wl, s);
        const Program& p = wl.programs[static_cast<std::size_t>(s.rank)];
        const std::string name = op.name < p.names.size() ? p.names[op.name] : fmt::format("op {}", s.op);
        const std::string_view cls = kernelClassName(s.cls);
        std::string args = fmt::format(R"("op":{},"class":"{}","step":{},"flops":{},"bytes":{})", s.op, cls, op.step,
                                       number(op.flops), number(op.bytes));
        if (s.cls == KernelClass::gemm) args += fmt::format(R"(,"m":{},"n":{},"k":{})", op.gemm.m, op.gemm.n, op.gemm.k);
        if (const CollectiveCall* c = callOf(wl, s, op)) {
            const std::string gname = c->group >= 0 && static_cast<std::size_t>(c->group) < wl.groups.size()
                                          ? wl.groups[static_cast<std::size_t>(c->group)].name
                                          : std::string();
            args += fmt::format(R"(,"collective":"{}","group":{},"group_name":{},"dtype":{})",
                                collectiveKindName(c->kind), c->group, jsonString(gname), jsonString(c->dtype));
            if (const auto rec = L.record_of_span[i]) {
                const CollectiveRecord& cr = tl.collectives[*rec];
                args += fmt::format(R"(,"seq":{},"algo":{},"proto":{},"barrier_wait_us":{})", cr.seq, jsonString(cr.algo),
                                    jsonString(cr.proto), micros(cr.start - cr.first_arrival));
            }
        }
        emit(fmt::format(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{{}}}}})",
                         jsonString(name), cls, s.rank, static_cast<int>(s.stream), micros(s.start),
                         micros(s.end - s.start), args));
    }

    for (std::size_t r = 0; r < tl.step_end.size(); ++r)
        for (std::size_t k = 0; k < tl.step_end[r].size(); ++k)
            emit(fmt::format(R"({{"ph":"i","s":"p","name":"step {} end","pid":{},"tid":0,"ts":{}}})", k, r,
                             micros(tl.step_end[r][k])));

    for (std::size_t c = 0; c < tl.collectives.size(); ++c) {
        const auto& members = L.spans_of_record[c];
        if (members.size() < 2) continue;
        const CollectiveRecord& rec = tl.collectives[c];
        const std::string fname = fmt::format("{} g{} #{}", collectiveKindName(rec.kind), rec.group, rec.seq);
        for (std::size_t m = 0; m < members.size(); ++m) {
            const Span& s = tl.spans[members[m]];
            const char* ph = m == 0 ? "s" : (m + 1 == members.size() ? "f" : "t");
            const Time mid = s.start + Time::ps((s.end - s.start).count() / 2);
            emit(fmt::format(R"({{"ph":"{}","id":{},"cat":"collective","name":{},"pid":{},"tid":{},"ts":{},"bp":"e"}})",
                             ph, c, jsonString(fname), s.rank, static_cast<int>(s.stream), micros(mid)));
        }
    }
    // Transfers (host copies, storage writes, loader work) as slices on their streams.
    for (const TransferRecord& t : tl.transfers) {
        const Program& p = wl.programs[static_cast<std::size_t>(t.rank)];
        const TransferCall& c = p.transfers[t.call];
        std::uint8_t stream = 0;
        for (const Op& op : p.ops)
            if (op.kind == OpKind::transfer && op.collective == t.call) {
                stream = op.stream;
                break;
            }
        emit(fmt::format(R"({{"ph":"X","name":"{}","cat":"transfer","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"bytes":{},"pinned":{},"checkpoint":{},"step":{}}}}})",
                         transferKindName(c.kind), t.rank, int(stream), micros(t.start), micros(t.end - t.start),
                         number(c.bytes), c.pinned ? "true" : "false", c.checkpoint, t.step));
    }

    writeHostTracks(emit, tl, wl);
    writeBreakdownTracks(emit, tl, wl);
    writeMemoryCounters(emit, tl, wl, memory_phases);

    // Link utilization as counter tracks (one process "links", a counter per link), when recorded.
    if (!tl.link_samples.empty()) {
        const int pid = tl.ranks;
        emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"links"}}}})", pid));
        for (const LinkSample& s : tl.link_samples) {
            const Link& l = tl.links[s.link];
            emit(fmt::format(R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{"util_pct":{}}}}})", jsonString(l.name),
                             pid, micros(s.t), number(l.capacity_Bps > 0 ? 100.0 * s.Bps / l.capacity_Bps : 0.0)));
        }
    }
    os << "\n]}\n";
}

}  // namespace stepsim
