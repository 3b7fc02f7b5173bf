#pragma once
// Transfers: data a rank moves between its GPU, its host's memory and its node's storage, and its DataLoader
// workers' CPU time (the transfer ops of InputPipeline.hpp and CheckpointIo.hpp).
//
// A transfer op starts at the head of its stream, like a kernel, and holds the stream until it ends. A copy or a
// write pays its fixed cost α, then moves its bytes as one flow on the engine's flow network (Collectives owns it)
// along the fabric's host route: host memory → PCIe → GPU for a host-to-device copy, back for device-to-host, host
// memory → storage for a write. The flow is bounded by the transfer's own rate alone (the profile's pinned or
// pageable copy rate, the storage write rate) and shares every link max-min fairly with NCCL's flows and the other
// transfers, so two copies on one PCIe link share it and a checkpoint's staging slows an inter-node collective that
// leaves through the same PCIe switch. Loader work holds its worker's stream for its CPU time and moves nothing.
// Whether the host waits for a transfer is the Program's business (a host_sync on an event recorded after it).
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/engine/EngineContext.hpp"
#include "sim/net/Fabric.hpp"

namespace stepsim {

class Collectives;
class Streams;

class Transfers {
public:
    Transfers(EngineContext& ctx, const Fabric& fabric, Streams& streams, Collectives& collectives);

    // The host launched transfer op `op` of `rank` (it joins its stream now).
    void issued(int rank, std::uint32_t op) { issued_[rank][op] = ctx_.now; }
    // The transfer op at the head of stream `slot` starts.
    void start(std::uint32_t slot, const Op& op);
    // kTransferDone: transfer `id` paid its α (its flow starts) or, loader work, ended.
    void timerDone(std::uint32_t id);
    // Its flow ended (Collectives::flowDone).
    void flowDone(std::uint32_t id) { finish(id); }

private:
    struct Active {
        std::uint32_t slot = 0;
        const TransferCall* call = nullptr;
        TransferRecord rec;
        bool alpha_paid = false;
    };
    const Route& routeOf(int rank, TransferKind kind);
    void startFlow(std::uint32_t id);
    void finish(std::uint32_t id);

    EngineContext& ctx_;
    const Fabric& fabric_;
    Streams& streams_;
    Collectives& collectives_;
    std::vector<std::vector<Time>> issued_;  // [rank][op]: when the host launched it (transfer ops only)
    std::vector<Active> active_;             // by transfer id, reused once finished
    std::vector<std::uint32_t> free_;
    std::vector<std::array<std::optional<Route>, 3>> routes_;  // [rank][h2d, d2h, storage_write]
};

}  // namespace stepsim
