#pragma once
// What every part of the engine shares: the workload it runs, the simulated clock, the future event list and the
// timeline it writes. The loop (Engine::run) advances `now`; the parts schedule events and append to `tl`.
#include <cstdint>

#include "sim/base/Program.hpp"
#include "sim/base/Time.hpp"
#include "sim/engine/EventQueue.hpp"
#include "sim/engine/Timeline.hpp"

namespace stepsim {

// The kinds of event the loop dispatches; an event's `target` indexes the storage of the part that handles it.
enum EventKind : std::uint32_t {
    kHostWake,    // target: rank (Hosts)
    kKernelDone,  // target: stream slot, version: its kernel's (GpuCompute)
    kAlphaDone,   // target: collective instance, its latency paid (Collectives)
    kFlowDone,    // target: flow, version: the flow's (Collectives)
    kStreamWake,  // target: stream slot (Streams)
    kTransferDone,  // target: transfer id, its α paid or its loader work done (Transfers)
};

struct EngineContext {
    const Workload& w;
    Time now;
    EventQueue queue;
    Timeline tl;
};

}  // namespace stepsim
