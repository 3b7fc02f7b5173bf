#include "sim/net/CollectiveAlgorithms.hpp"

namespace stepsim {

std::vector<FlowSpec> collectiveFlows(CollectiveKind /*kind*/, const std::string& /*algo*/,
                                      const std::vector<int>& ranks, const Fabric& /*fabric*/, double bytes,
                                      double busbw_Bps, double factor) {
    std::vector<FlowSpec> flows;
    const int n = static_cast<int>(ranks.size());
    const double per_rank = bytes * factor;
    if (n <= 1 || per_rank <= 0.0 || busbw_Bps <= 0.0) return flows;
    flows.reserve(n);
    for (int i = 0; i < n; ++i) flows.push_back({ranks[i], ranks[(i + 1) % n], per_rank, busbw_Bps});
    return flows;
}

}  // namespace stepsim
