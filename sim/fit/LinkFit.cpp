#include "sim/fit/LinkFit.hpp"

#include <map>

#include "sim/fit/RateLine.hpp"

namespace stepsim {

void fitLinks(FitState& s) {
    HardwareProfile& p = s.profile;
    nlohmann::json tj = nlohmann::json::object();
    std::map<std::string, std::vector<SizeTime>> byOp;
    for (const auto& t : s.raw.transfers) byOp[t.op].push_back({t.bytes_moved, t.time.median});
    for (auto& [op, pts] : byOp)
        if (pts.size() >= 2) tj[op] = lineJson(fitRate(pts));
    auto rate = [&](const std::string& op, double& field, const std::string& name) {
        if (byOp.count(op) && byOp[op].size() >= 2) field = fitRate(byOp[op]).gbps;
        else s.kept.push_back(name);
    };
    rate("peer_ce", p.links.nvlink_gbps, "links.nvlink_gbps");
    rate("h2d_pinned", p.links.pcie_h2d_gbps, "links.pcie_h2d_gbps");
    rate("h2d_pageable", p.links.pcie_pageable_gbps, "links.pcie_pageable_gbps");
    s.kept.push_back("links.nvlink_latency_us");
    s.kept.push_back("links.nic_gbps");
    s.kept.push_back("links.storage_gbps");
    s.report["links"] = tj;
}

}  // namespace stepsim
