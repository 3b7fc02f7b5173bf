#pragma once
// The discrete-event engine: replays every rank's Program over hosts, CUDA streams, GPUs and links
// (DESIGN.md, "The engine's model").
//
// The loop (run) pops an event, checks time is monotonic, advances the clock and dispatches on a switch to the part
// that owns the event's target; no virtual call and no allocation per event beyond amortised vector growth. The
// parts, each with its own state, and the model each implements:
//   Hosts        one host thread per rank issuing its Program: launch costs, host speeds, syncs     (Hosts.hpp)
//   Streams      FIFO CUDA streams and the events linking them; step ends                            (Streams.hpp)
//   GpuCompute   kernels sharing a GPU's SMs, slowed beside NCCL kernels; the lag rule; launch gaps  (GpuCompute.hpp)
//   Collectives  the barrier of member ranks, latency α, then flows on the FlowNetwork               (Collectives.hpp)
//   PowerState   each step's clock under the power limit, from the previous step's load           (PowerState.hpp)
//   Jitter       the seeded per-rank draws; GPU and host speeds fixed for the run                     (Jitter.hpp)
//   Transfers    host↔GPU copies, storage writes and loader work, as flows beside NCCL's          (Transfers.hpp)
// They share the clock, the event queue and the timeline (EngineContext.hpp) and call each other directly.
// The profile reaches the engine through the CostModel alone: it prices collectives, and engineConfig reads the
// engine's parameters from its profile (EngineConfig.hpp).
#include <optional>

#include "sim/base/Program.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/engine/Collectives.hpp"
#include "sim/engine/EngineConfig.hpp"
#include "sim/engine/EngineContext.hpp"
#include "sim/engine/GpuCompute.hpp"
#include "sim/engine/Hosts.hpp"
#include "sim/engine/Jitter.hpp"
#include "sim/engine/LinkUsage.hpp"
#include "sim/engine/PowerState.hpp"
#include "sim/engine/Streams.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/engine/Transfers.hpp"
#include "sim/net/Fabric.hpp"

namespace stepsim {

class Engine {
public:
    Engine(const Workload& w, const CostModel& cost, const Fabric& fabric, EngineConfig cfg);
    Timeline run();

private:
    EngineConfig cfg_;
    EngineContext ctx_;
    Jitter jitter_;
    PowerState power_;
    // The parts below refer to each other; each is constructed with references to the others, used once all exist.
    Hosts hosts_;
    Streams streams_;
    GpuCompute gpus_;
    std::optional<LinkUsage> usage_;  // when cfg.link_usage
    Collectives collectives_;
    Transfers transfers_;
    std::size_t total_ops_ = 1;  // every simulated rank's kernels and collectives: the progress line's whole
};

}  // namespace stepsim
