#include "sim/net/Fabric.hpp"

#include <fmt/format.h>

namespace stepsim {

Fabric switchNode(int gpus, double gbps_per_direction, double latency_us, bool nvls_capable) {
    Fabric f;
    f.gpus = gpus;
    f.gpus_per_node = gpus;
    f.nvls_capable = nvls_capable;
    for (int g = 0; g < gpus; ++g) {
        f.links.push_back({fmt::format("gpu{}->switch", g), LinkKind::nvlink, gbps_per_direction * 1e9,
                           fromMicros(latency_us / 2)});
        f.links.push_back({fmt::format("switch->gpu{}", g), LinkKind::nvlink, gbps_per_direction * 1e9,
                           fromMicros(latency_us / 2)});
    }
    f.route = [](int src, int dst) {
        if (src == dst) return Route{};
        return Route{LinkId(2 * src), LinkId(2 * dst + 1)};
    };
    return f;
}

}  // namespace stepsim
