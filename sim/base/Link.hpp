#pragma once
// A directed link of the flow network: what topology/ hands to the engine (the seam between them).
//
// A link has a capacity in bytes per second shared max-min fairly among the flows crossing it
// (FlowNetwork.hpp), and a latency paid once per message. A route is the ordered list of link ids a
// transfer crosses from its source device to its destination device.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/Time.hpp"

namespace stepsim {

using LinkId = std::uint32_t;

enum class LinkKind : std::uint8_t { nvlink, pcie, nic, network, host_memory, storage };

struct Link {
    std::string name;           // e.g. "gpu3->nvswitch", "leaf0->spine1"
    LinkKind kind = LinkKind::nvlink;
    double capacity_Bps = 0.0;  // bytes per second, one direction
    Time latency;
};

using Route = std::vector<LinkId>;

}  // namespace stepsim
