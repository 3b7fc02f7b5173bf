#include "sim/metrics/LinkUtilization.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace stepsim {

UtilClass utilizationClass(double util) {
    if (util < 0.30) return UtilClass::cold;
    if (util < 0.60) return UtilClass::warm;
    if (util < 0.85) return UtilClass::hot;
    return UtilClass::saturated;
}

std::string_view utilizationClassName(UtilClass c) {
    switch (c) {
        case UtilClass::cold: return "cold";
        case UtilClass::warm: return "warm";
        case UtilClass::hot: return "hot";
        case UtilClass::saturated: return "saturated";
    }
    return "cold";
}

namespace {
std::string kindName(LinkKind k) {
    switch (k) {
        case LinkKind::nvlink: return "nvlink";
        case LinkKind::pcie: return "pcie";
        case LinkKind::nic: return "nic";
        case LinkKind::network: return "network";
        case LinkKind::host_memory: return "host_memory";
        case LinkKind::storage: return "storage";
    }
    return "nvlink";
}
}  // namespace

std::optional<LinkUtilization> linkUtilization(const Timeline& tl, int bins) {
    if (tl.links.empty() || tl.step_end.empty() || bins < 1) return std::nullopt;
    Time end{};
    for (const auto& ends : tl.step_end) end = std::max(end, ends.back());
    if (end <= Time{}) return std::nullopt;
    LinkUtilization out;
    out.bins = bins;
    out.bin_ms = end.millis() / bins;
    const double bin_s = end.seconds() / bins;
    // Σ load·seconds per link and bin, from each sample to the link's next one (or `end`).
    std::vector<std::vector<double>> area(tl.links.size());
    std::vector<Time> since(tl.links.size());
    std::vector<double> load(tl.links.size(), 0.0);
    auto spread = [&](LinkId l, Time a, Time b) {
        if (load[l] <= 0.0 || b <= a) return;
        if (area[l].empty()) area[l].assign(bins, 0.0);
        const double s0 = a.seconds(), s1 = std::min(b, end).seconds();
        for (int i = std::max(0, int(s0 / bin_s)); i < bins && i * bin_s < s1; ++i) {
            const double lo = std::max(s0, i * bin_s), hi = std::min(s1, (i + 1) * bin_s);
            if (hi > lo) area[l][i] += load[l] * (hi - lo);
        }
    };
    for (const LinkSample& s : tl.link_samples) {
        spread(s.link, since[s.link], s.t);
        since[s.link] = s.t;
        load[s.link] = s.Bps;
    }
    for (LinkId l = 0; l < tl.links.size(); ++l) spread(l, since[l], end);
    for (LinkId l = 0; l < tl.links.size(); ++l) {
        const Link& k = tl.links[l];
        if (k.kind != LinkKind::host_memory) ++out.links_total;
        if (area[l].empty() || !(k.capacity_Bps > 0)) continue;
        LinkSeries s{k.name, kindName(k.kind), k.capacity_Bps / 1e9, 0.0, {}};
        for (double a : area[l]) {
            s.util.push_back(std::min(1.0, a / (k.capacity_Bps * bin_s)));
            s.peak = std::max(s.peak, s.util.back());
        }
        out.links.push_back(std::move(s));
    }
    return out;
}

}  // namespace stepsim
