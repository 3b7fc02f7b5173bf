#pragma once
// Hand-built Timelines and Workloads for the metrics and report tests (no engine needed).
// Times are in microseconds. Every rank gets two streams, "compute" (0) and "nccl" (1), and one group
// "world" of all ranks (group 0).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/engine/Timeline.hpp"
#include "sim/base/Program.hpp"

namespace stepsim::test {

class TestRun {
public:
    explicit TestRun(int ranks) {
        tl.ranks = ranks;
        tl.step_end.resize(static_cast<std::size_t>(ranks));
        wl.programs.resize(static_cast<std::size_t>(ranks));
        ProcessGroup world{"world", {}};
        for (int r = 0; r < ranks; ++r) {
            Program& p = wl.programs[static_cast<std::size_t>(r)];
            p.streams = {{StreamKind::compute, "compute"}, {StreamKind::comm, "nccl world"}};
            world.ranks.push_back(r);
        }
        wl.groups.push_back(world);
    }

    // A kernel on `rank` over [start, end) µs; returns its op index.
    std::uint32_t kernel(int rank, KernelClass cls, std::int64_t start, std::int64_t end, int step = 0,
                         const std::string& name = "kernel") {
        Program& p = wl.programs[static_cast<std::size_t>(rank)];
        Op op;
        op.kind = OpKind::kernel;
        op.cls = cls;
        op.stream = 0;
        op.name = p.intern(name);
        op.step = step;
        op.flops = 1e9;
        op.bytes = 1e6;
        p.ops.push_back(op);
        const auto idx = static_cast<std::uint32_t>(p.ops.size() - 1);
        tl.spans.push_back({rank, 0, cls, idx, Time::us(start), Time::us(end)});
        return idx;
    }

    // A comm span not tied to a collective record (only the interval matters).
    void comm(int rank, std::int64_t start, std::int64_t end, int step = 0) {
        Program& p = wl.programs[static_cast<std::size_t>(rank)];
        Op op;
        op.kind = OpKind::kernel;
        op.cls = KernelClass::comm;
        op.stream = 1;
        op.name = p.intern("comm");
        op.step = step;
        p.ops.push_back(op);
        tl.spans.push_back({rank, 1, KernelClass::comm, static_cast<std::uint32_t>(p.ops.size() - 1), Time::us(start),
                            Time::us(end)});
    }

    // One collective instance of `group` on every member: a collective op and span per rank, and its record.
    // arrivals[i]: when member i reached it (µs); it runs [max(arrivals), end).
    void collective(CollectiveKind kind, int group, double bytes, int step, const std::vector<std::int64_t>& arrivals,
                    std::int64_t end) {
        const auto& members = wl.groups[static_cast<std::size_t>(group)].ranks;
        std::int64_t first = arrivals.front(), last = arrivals.front();
        for (std::int64_t a : arrivals) {
            first = std::min(first, a);
            last = std::max(last, a);
        }
        for (int r : members) {
            Program& p = wl.programs[static_cast<std::size_t>(r)];
            p.collectives.push_back({kind, group, bytes, "bf16"});
            Op op;
            op.kind = OpKind::collective;
            op.cls = KernelClass::comm;
            op.stream = 1;
            op.collective = static_cast<std::uint32_t>(p.collectives.size() - 1);
            op.name = p.intern(kind == CollectiveKind::all_reduce ? "nccl:all_reduce" : "nccl:collective");
            op.step = step;
            op.bytes = bytes;
            p.ops.push_back(op);
            tl.spans.push_back({r, 1, KernelClass::comm, static_cast<std::uint32_t>(p.ops.size() - 1), Time::us(last),
                                Time::us(end)});
        }
        CollectiveRecord rec;
        rec.group = group;
        rec.seq = seq_[group]++;
        rec.kind = kind;
        rec.bytes = bytes;
        rec.step = step;
        rec.first_arrival = Time::us(first);
        rec.start = Time::us(last);
        rec.end = Time::us(end);
        rec.algo = "ring";
        rec.proto = "simple";
        tl.collectives.push_back(rec);
    }

    // Step ends in µs for one rank.
    void steps(int rank, const std::vector<std::int64_t>& ends) {
        auto& v = tl.step_end[static_cast<std::size_t>(rank)];
        v.clear();
        for (std::int64_t e : ends) v.push_back(Time::us(e));
    }

    Timeline tl;
    Workload wl;

private:
    std::map<int, std::uint32_t> seq_;
};

// 1 µs in ms
inline constexpr double kUs = 1e-3;

}  // namespace stepsim::test
