#pragma once
// The engine's view of a cluster's interconnect: the links, and the route between any two GPUs.
// topology/ builds it (ClusterGraph); a single NVSwitch node can be made directly with `switchNode`.
#include <functional>
#include <string>
#include <vector>

#include "sim/base/Link.hpp"

namespace stepsim {

struct Fabric {
    std::vector<Link> links;
    int gpus = 0;
    int gpus_per_node = 0;
    bool nvls_capable = false;  // NVSwitch with in-network reduction (NCCL's NVLS)
    std::function<Route(int src_gpu, int dst_gpu)> route;
    // Host side (checkpoint and input copies, Transfers.hpp): between a GPU and its host CPU's memory over PCIe
    // (`to_gpu`: host to device), and from that host memory to the node's storage. Unset: no such links (a
    // transfer then moves at its own rate alone).
    std::function<Route(int gpu, bool to_gpu)> host_route;
    std::function<Route(int gpu)> storage_route;

    int nodeOf(int gpu) const { return gpus_per_node > 0 ? gpu / gpus_per_node : 0; }
};

// `gpus` GPUs joined through one non-blocking switch: GPU g has an uplink (id 2g) and a downlink (2g+1)
// of `gbps_per_direction` GB/s each; a GPU-to-GPU route is uplink(src), downlink(dst).
Fabric switchNode(int gpus, double gbps_per_direction, double latency_us, bool nvls_capable);

}  // namespace stepsim
