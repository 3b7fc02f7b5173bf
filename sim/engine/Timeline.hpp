#pragma once
// What a simulation run produced: every span of GPU activity, per rank and stream, plus the collectives
// and step boundaries. The engine writes it; metrics/ and report/ only read it.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/Time.hpp"
#include "sim/base/Link.hpp"
#include "sim/base/Program.hpp"

namespace stepsim {

// One op's execution on a stream, [start, end).
struct Span {
    std::int32_t rank = 0;
    std::uint8_t stream = 0;
    KernelClass cls = KernelClass::other;
    std::uint32_t op = 0;  // index into the rank's Program::ops
    Time start, end;
};

// One collective instance as all member ranks ran it.
struct CollectiveRecord {
    int group = 0;
    std::uint32_t seq = 0;     // per-group sequence number
    CollectiveKind kind = CollectiveKind::all_reduce;
    double bytes = 0.0;
    int step = 0;
    Time first_arrival;        // first member rank reached it
    Time start;                // last member arrived: the collective starts
    Time end;
    std::string algo, proto;   // what the cost model chose
};

// One transfer op (Program::transfers) as it ran: issued by the host, started at its stream's head, ended.
struct TransferRecord {
    std::int32_t rank = 0;
    std::uint32_t call = 0;  // index into the rank's Program::transfers
    int step = 0;
    Time issued, start, end;
};

// The load on one link of the flow network from `t` until its next sample (bytes/s); recorded only when asked
// (EngineConfig::link_usage).
struct LinkSample {
    Time t;
    LinkId link = 0;
    double Bps = 0.0;
};

struct Timeline {
    int ranks = 0;
    std::vector<Span> spans;                   // in completion order
    std::vector<CollectiveRecord> collectives; // in completion order
    std::vector<std::vector<Time>> step_end;   // [rank][step]: when the step's last GPU op finished
    // [rank][step]: when the rank's host issued the step's end marker (its last op joined a stream); the GPU's lag
    // behind its host, step_end − host_step_end, is what metrics' measured window reads (Metrics.hpp)
    std::vector<std::vector<Time>> host_step_end;
    std::vector<std::vector<double>> clock_mhz;  // [rank][step]: the SM clock it ran at (0: power not modelled)
    std::vector<double> host_speed;              // [rank]: the factor on its host costs (Engine's hostSpeedFactors)
    std::vector<TransferRecord> transfers;     // in completion order
    // [rank][op]: when the rank's host was done with each op of its Program (Hosts.hpp): its launch's end (the op then
    // joined its stream), its host work's end, or for a host_sync the end of its wait. The host takes each op up when
    // it is done with the one before, so op i held it over [end[i−1], end[i]) (from 0 for the first): the host track of
    // a trace, and the issue times the step breakdown's host-bound part reads (Breakdown.hpp). Empty for a hand-built
    // timeline.
    std::vector<std::vector<Time>> host_op_end;
    std::vector<LinkSample> link_samples;      // in time order (EngineConfig::link_usage)
    std::vector<Link> links;                   // the flow network's links, when link_samples were recorded
    std::vector<std::string> warnings;
    std::uint64_t events = 0;                  // events processed by the engine
    // A reduced run (Symmetry.hpp) in which a merged flow ran below its bound: its answer is not exact.
    bool symmetry_broken = false;
};

}  // namespace stepsim
