#include "sim/net/CollectiveAlgorithms.hpp"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace stepsim {

namespace {

// Adds the flows of one hop a → b carrying `bytes`: one flow inside a node, split over the rails between nodes.
void addHop(std::vector<FlowSpec>& out, const Fabric& fabric, const std::unordered_set<int>& members, int a, int b,
            double bytes, double seconds) {
    if (a == b || bytes <= 0.0) return;
    const int na = fabric.nodeOf(a), nb = fabric.nodeOf(b);
    if (na != nb && fabric.gpus_per_node > 0) {
        std::vector<std::pair<int, int>> rails;
        for (int j = 0; j < fabric.gpus_per_node; ++j) {
            const int s = na * fabric.gpus_per_node + j, d = nb * fabric.gpus_per_node + j;
            if (members.count(s) && members.count(d)) rails.emplace_back(s, d);
        }
        if (!rails.empty()) {
            const double each = bytes / static_cast<double>(rails.size());
            for (const auto& [s, d] : rails) out.push_back({s, d, each, each / seconds});
            return;
        }
    }
    out.push_back({a, b, bytes, bytes / seconds});
}

// A point-to-point transfer a → b with PXN (NCCL_P2P_PXN_LEVEL default, src/graph/paths.cc): between nodes, when
// b's local index differs from a's, the data first crosses a's NVLink to the GPU of a's node on b's rail, then
// that rail; two concurrent flows of `bytes` (pipelined). Otherwise one flow.
void addP2p(std::vector<FlowSpec>& out, const Fabric& fabric, int a, int b, double bytes, double seconds) {
    if (a == b || bytes <= 0.0) return;
    const int g = fabric.gpus_per_node;
    if (g > 0 && fabric.nodeOf(a) != fabric.nodeOf(b) && a % g != b % g) {
        const int proxy = fabric.nodeOf(a) * g + b % g;
        out.push_back({a, proxy, bytes, bytes / seconds});
        out.push_back({proxy, b, bytes, bytes / seconds});
        return;
    }
    out.push_back({a, b, bytes, bytes / seconds});
}

std::unordered_set<int> memberSet(const std::vector<int>& ranks) { return {ranks.begin(), ranks.end()}; }

// NCCL's ncclGetBtree (src/graph/trees.cc): the parent of `r` in a binary tree over 0..n−1 rooted at 0, or −1.
int btreeParent(int n, int r) {
    if (r == 0) return -1;
    int bit = 1;
    while (!(bit & r)) bit <<= 1;
    int up = (r ^ bit) | (bit << 1);
    if (up >= n) up = r ^ bit;
    return up;
}

// ncclGetDtree: tree 1 mirrors tree 0 for an even n and shifts it by one for an odd n.
int dtreeParent(int n, int tree, int r) {
    if (tree == 0) return btreeParent(n, r);
    if (n % 2 == 0) {
        const int p = btreeParent(n, n - 1 - r);
        return p < 0 ? -1 : n - 1 - p;
    }
    const int p = btreeParent(n, (r - 1 + n) % n);
    return p < 0 ? -1 : (p + 1) % n;
}

// The group's ranks by node, nodes in order of first appearance, ranks in group order.
std::vector<std::vector<int>> byNode(const std::vector<int>& ranks, const Fabric& fabric) {
    std::vector<std::vector<int>> nodes;
    std::map<int, std::size_t> index;
    for (int r : ranks) {
        auto [it, fresh] = index.emplace(fabric.nodeOf(r), nodes.size());
        if (fresh) nodes.emplace_back();
        nodes[it->second].push_back(r);
    }
    return nodes;
}

}  // namespace

std::vector<FlowSpec> ringFlows(const std::vector<int>& ranks, const Fabric& fabric, double per_rank_bytes,
                                double seconds, bool closed) {
    std::vector<FlowSpec> flows;
    const int n = static_cast<int>(ranks.size());
    if (n <= 1 || per_rank_bytes <= 0.0 || !(seconds > 0.0)) return flows;
    const auto members = memberSet(ranks);
    flows.reserve(n + fabric.gpus_per_node);
    for (int i = 0; i < (closed ? n : n - 1); ++i)
        addHop(flows, fabric, members, ranks[i], ranks[(i + 1) % n], per_rank_bytes, seconds);
    return flows;
}

std::vector<FlowSpec> broadcastFlows(const std::vector<int>& ranks, const Fabric& fabric, double bytes,
                                     double seconds) {
    return ringFlows(ranks, fabric, bytes, seconds, false);
}

std::vector<FlowSpec> treeFlows(const std::vector<int>& ranks, const Fabric& fabric, double bytes, double seconds) {
    std::vector<FlowSpec> flows;
    if (ranks.size() <= 1 || bytes <= 0.0 || !(seconds > 0.0)) return flows;
    const auto members = memberSet(ranks);
    const auto nodes = byNode(ranks, fabric);
    for (const auto& local : nodes)
        for (std::size_t i = 0; i + 1 < local.size(); ++i) {
            addHop(flows, fabric, members, local[i + 1], local[i], bytes, seconds);
            addHop(flows, fabric, members, local[i], local[i + 1], bytes, seconds);
        }
    const int m = static_cast<int>(nodes.size());
    for (int tree = 0; tree < 2; ++tree)
        for (int child = 0; child < m; ++child) {
            const int parent = dtreeParent(m, tree, child);
            if (parent < 0) continue;
            const int c = nodes[child].front(), p = nodes[parent].front();
            addHop(flows, fabric, members, c, p, bytes / 2, seconds);
            addHop(flows, fabric, members, p, c, bytes / 2, seconds);
        }
    return flows;
}

std::vector<FlowSpec> nvlsFlows(const std::vector<int>& ranks, double bytes, double seconds) {
    std::vector<FlowSpec> flows;
    const int n = static_cast<int>(ranks.size());
    if (n <= 1 || bytes <= 0.0 || !(seconds > 0.0)) return flows;
    const double each = bytes * (n + 1) / n;
    for (int i = 0; i < n; ++i) flows.push_back({ranks[i], ranks[(i + 1) % n], each, each / seconds});
    return flows;
}

std::vector<FlowSpec> hierarchicalFlows(const std::vector<int>& ranks, const Fabric& fabric, double bytes,
                                        double seconds) {
    std::vector<FlowSpec> flows;
    if (ranks.size() <= 1 || bytes <= 0.0 || !(seconds > 0.0)) return flows;
    const auto nodes = byNode(ranks, fabric);
    const int m = static_cast<int>(nodes.size());
    const int g = static_cast<int>(nodes.front().size());
    bool aligned = m > 1 && fabric.gpus_per_node > 0;
    for (const auto& local : nodes) {
        if (static_cast<int>(local.size()) != g) aligned = false;
        for (int j = 0; aligned && j < g; ++j)
            if (local[j] % fabric.gpus_per_node != nodes.front()[j] % fabric.gpus_per_node) aligned = false;
    }
    if (!aligned) {
        const int n = static_cast<int>(ranks.size());
        return ringFlows(ranks, fabric, bytes * 2.0 * (n - 1) / n, seconds);
    }
    const auto members = memberSet(ranks);
    const double intra = 2.0 * bytes * (g - 1) / g;
    const double inter = 2.0 * (bytes / g) * (m - 1) / m;
    for (const auto& local : nodes)
        for (int i = 0; g > 1 && i < g; ++i) addHop(flows, fabric, members, local[i], local[(i + 1) % g], intra, seconds);
    for (int j = 0; j < g; ++j)
        for (int k = 0; k < m; ++k)
            flows.push_back({nodes[k][j], nodes[(k + 1) % m][j], inter, inter / seconds});
    return flows;
}

std::vector<FlowSpec> allToAllFlows(const std::vector<int>& ranks, const Fabric& fabric, double bytes,
                                    double seconds) {
    std::vector<FlowSpec> flows;
    const int n = static_cast<int>(ranks.size());
    if (n <= 1 || bytes <= 0.0 || !(seconds > 0.0)) return flows;
    const double each = bytes / n;
    flows.reserve(static_cast<std::size_t>(n) * (n - 1));
    for (int a : ranks)
        for (int b : ranks)
            if (a != b) addP2p(flows, fabric, a, b, each, seconds);
    return flows;
}

std::vector<FlowSpec> sendRecvFlows(const std::vector<int>& ranks, const Fabric& fabric, double bytes,
                                    double seconds) {
    std::vector<FlowSpec> flows;
    const int n = static_cast<int>(ranks.size());
    if (n <= 1 || bytes <= 0.0 || !(seconds > 0.0)) return flows;
    if (n == 2) {
        addP2p(flows, fabric, ranks[0], ranks[1], bytes, seconds);
        return flows;
    }
    for (int i = 0; i < n; ++i) addP2p(flows, fabric, ranks[i], ranks[(i + 1) % n], bytes, seconds);
    return flows;
}

std::vector<FlowSpec> collectiveFlows(CollectiveKind kind, const std::string& algo, const std::vector<int>& ranks,
                                      const Fabric& fabric, double bytes, double busbw_Bps, double factor) {
    const int n = static_cast<int>(ranks.size());
    if (n <= 1 || bytes <= 0.0 || busbw_Bps <= 0.0 || factor <= 0.0) return {};
    const double seconds = bytes * factor / busbw_Bps;
    const bool reduces_all = kind == CollectiveKind::all_reduce;
    if (algo == "NVLS" && reduces_all) return nvlsFlows(ranks, bytes, seconds);
    if (algo == "Tree" && reduces_all) return treeFlows(ranks, fabric, bytes, seconds);
    if (algo == "Hierarchical" && reduces_all) return hierarchicalFlows(ranks, fabric, bytes, seconds);
    switch (kind) {
        case CollectiveKind::alltoall: return allToAllFlows(ranks, fabric, bytes, seconds);
        case CollectiveKind::sendrecv: return sendRecvFlows(ranks, fabric, bytes, seconds);
        case CollectiveKind::broadcast: return broadcastFlows(ranks, fabric, bytes, seconds);
        default: return ringFlows(ranks, fabric, bytes * factor, seconds);
    }
}

}  // namespace stepsim
