// Boost 1.74's adjacency-list edge iterator (boost/graph/detail/adj_list_edge_iterator.hpp, included through
// ClusterGraph.hpp) trips GCC 12's -Wmaybe-uninitialized when boykov_kolmogorov_max_flow walks edges(g): a
// false positive reported in a Boost header, silenced for this file.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "sim/topology/ClusterGraph.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#include <boost/graph/graphviz.hpp>
#include <fmt/format.h>

namespace stepsim {

namespace {

// Path cost = latency·kHopScale + hops: lexicographic (latency, hops) as one integer, exact for paths of
// fewer than kHopScale links.
constexpr std::int64_t kHopScale = 1024;
constexpr std::size_t kDistanceCacheBytes = std::size_t{256} << 20;
constexpr std::int64_t kUnreached = std::numeric_limits<std::int64_t>::max();
constexpr LinkId kAmbiguous = std::numeric_limits<LinkId>::max();

std::uint64_t vertexPair(VertexId from, VertexId to) {
    return (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint64_t>(to);
}

constexpr std::string_view kVertexKindNames[] = {"gpu", "nvswitch", "pcie_switch", "cpu",
                                                 "nic", "leaf",     "spine",       "storage"};
constexpr std::string_view kLinkKindNames[] = {"nvlink", "pcie", "nic", "network", "host_memory", "storage"};

}  // namespace

std::string_view toString(VertexKind kind) { return kVertexKindNames[static_cast<std::size_t>(kind)]; }
std::string_view toString(LinkKind kind) { return kLinkKindNames[static_cast<std::size_t>(kind)]; }

std::optional<VertexKind> vertexKindFromString(std::string_view name) {
    for (VertexKind k : kAllVertexKinds)
        if (toString(k) == name) return k;
    return std::nullopt;
}

std::optional<LinkKind> linkKindFromString(std::string_view name) {
    for (LinkKind k : kAllLinkKinds)
        if (toString(k) == name) return k;
    return std::nullopt;
}

struct ClusterGraph::Caches {
    std::mutex mutex;
    Reverse reverse;                                                     // built on first use
    std::unordered_map<VertexId, std::vector<std::int64_t>> dist;        // per destination vertex
    std::unordered_map<std::uint64_t, Route> route;                      // per (src, dst) rank pair
    std::unordered_map<std::uint64_t, std::vector<PathShare>> routes;    // per (src, dst) rank pair
    std::vector<std::int64_t> partial;                                   // distancesUntil's, kUnreached between uses
    std::vector<VertexId> touched;                                       // the entries of `partial` set
    // Shifted routes: the ECMP choices of each canonical pair's walk, and every link by its (from, to) vertices.
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> choices;
    std::unordered_map<std::uint64_t, LinkId> link_of;                   // kAmbiguous for parallel links
};

ClusterGraph::ClusterGraph() : caches_(std::make_unique<Caches>()) {}
ClusterGraph::ClusterGraph(ClusterGraph&&) noexcept = default;
ClusterGraph& ClusterGraph::operator=(ClusterGraph&&) noexcept = default;
ClusterGraph::~ClusterGraph() = default;

void ClusterGraph::invalidate() {
    std::lock_guard lock(caches_->mutex);
    caches_->reverse = Reverse{};
    caches_->dist.clear();
    caches_->route.clear();
    caches_->routes.clear();
    caches_->choices.clear();
    caches_->link_of.clear();
    tiling_ = ClusterTiling{};
    leaf_unit_.clear();
    leaf_rail_.clear();
}

VertexId ClusterGraph::addVertex(VertexKind kind, std::string name, std::optional<int> node) {
    VertexProps props;
    props.kind = kind;
    props.name = std::move(name);
    props.node = node;
    if (node) {
        if (*node < 0) throw std::invalid_argument("ClusterGraph::addVertex: negative node index");
        nodes_ = std::max(nodes_, *node + 1);
        if (gpus_per_node_.size() < static_cast<std::size_t>(nodes_)) gpus_per_node_.resize(nodes_, 0);
    }
    if (kind == VertexKind::gpu) {
        if (!node) throw std::invalid_argument("ClusterGraph::addVertex: a GPU needs a node index");
        props.gpu = gpuCount();
        props.local_gpu = gpus_per_node_[static_cast<std::size_t>(*node)]++;
    }
    const VertexId v = boost::add_vertex(std::move(props), g_);
    if (kind == VertexKind::gpu) {
        gpus_.push_back(v);
        nic_of_gpu_.emplace_back();
        nic_bw_of_gpu_.emplace_back();
    }
    invalidate();
    return v;
}

LinkId ClusterGraph::addLink(VertexId from, VertexId to, LinkKind kind, double capacity_Bps, Time latency) {
    if (from >= vertexCount() || to >= vertexCount() || from == to)
        throw std::invalid_argument("ClusterGraph::addLink: bad endpoints");
    if (!(capacity_Bps > 0.0)) throw std::invalid_argument("ClusterGraph::addLink: capacity must be positive");
    const auto id = static_cast<LinkId>(links_.size());
    links_.push_back(Link{g_[from].name + "->" + g_[to].name, kind, capacity_Bps, latency});
    ends_.emplace_back(from, to);
    boost::add_edge(from, to, EdgeProps{id}, g_);
    invalidate();
    return id;
}

std::pair<LinkId, LinkId> ClusterGraph::addDuplex(VertexId a, VertexId b, LinkKind kind, double capacity_Bps,
                                                  Time latency) {
    const LinkId ab = addLink(a, b, kind, capacity_Bps, latency);
    const LinkId ba = addLink(b, a, kind, capacity_Bps, latency);
    return {ab, ba};
}

void ClusterGraph::attachNic(VertexId nic, const std::vector<int>& ranks, double line_rate_Bps) {
    if (ranks.empty()) throw std::invalid_argument("ClusterGraph::attachNic: a NIC must serve a GPU");
    for (int r : ranks) {
        nic_of_gpu_.at(static_cast<std::size_t>(r)) = nic;
        nic_bw_of_gpu_.at(static_cast<std::size_t>(r)) = line_rate_Bps / static_cast<double>(ranks.size());
    }
}

std::optional<VertexId> ClusterGraph::findVertex(std::string_view name) const {
    for (VertexId v = 0; v < vertexCount(); ++v)
        if (g_[v].name == name) return v;
    return std::nullopt;
}

std::size_t ClusterGraph::countOf(VertexKind kind) const {
    std::size_t n = 0;
    for (VertexId v = 0; v < vertexCount(); ++v) n += g_[v].kind == kind ? 1 : 0;
    return n;
}

double ClusterGraph::nvlinkBandwidth(int rank) const {
    double sum = 0.0;
    for (auto e : boost::make_iterator_range(boost::out_edges(gpu(rank), g_))) {
        const Link& l = links_[g_[e].link];
        if (l.kind == LinkKind::nvlink) sum += l.capacity_Bps;
    }
    return sum;
}

std::optional<VertexId> ClusterGraph::nicOf(int rank) const { return nic_of_gpu_.at(static_cast<std::size_t>(rank)); }
std::optional<double> ClusterGraph::nicBandwidth(int rank) const {
    return nic_bw_of_gpu_.at(static_cast<std::size_t>(rank));
}

// ---------------------------------------------------------------------------------------------- routing

const ClusterGraph::Reverse& ClusterGraph::reverse() const {
    auto& rev = caches_->reverse;
    if (!rev.offsets.empty()) return rev;
    const std::size_t V = vertexCount();
    rev.offsets.assign(V + 1, 0);
    for (const auto& [from, to] : ends_) ++rev.offsets[to + 1];
    for (std::size_t v = 0; v < V; ++v) rev.offsets[v + 1] += rev.offsets[v];
    rev.from.resize(ends_.size());
    rev.cost.resize(ends_.size());
    std::vector<std::size_t> next(rev.offsets.begin(), rev.offsets.end() - 1);
    for (LinkId id = 0; id < ends_.size(); ++id) {  // in link order, so the layout is deterministic
        const std::size_t slot = next[ends_[id].second]++;
        rev.from[slot] = ends_[id].first;
        rev.cost[slot] = links_[id].latency.count() * kHopScale + 1;
    }
    rev.is_gpu.resize(V);
    for (std::size_t v = 0; v < V; ++v) rev.is_gpu[v] = g_[v].kind == VertexKind::gpu ? 1 : 0;
    return rev;
}

const std::vector<std::int64_t>& ClusterGraph::distancesTo(VertexId dst) const {
    auto it = caches_->dist.find(dst);
    if (it != caches_->dist.end()) return it->second;

    // Dijkstra from dst over the reversed edges: dist[v] = cost of the cheapest path v → dst that enters
    // no GPU but dst (a GPU other than dst gets its distance but is never expanded).
    const Reverse& rev = reverse();
    std::vector<std::int64_t> dist(vertexCount(), kUnreached);
    using Item = std::pair<std::int64_t, VertexId>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    dist[dst] = 0;
    heap.emplace(0, dst);
    while (!heap.empty()) {
        const auto [d, v] = heap.top();
        heap.pop();
        if (d != dist[v] || (rev.is_gpu[v] && v != dst)) continue;
        for (std::size_t i = rev.offsets[v]; i < rev.offsets[v + 1]; ++i) {
            const VertexId u = rev.from[i];
            const std::int64_t nd = d + rev.cost[i];
            if (nd < dist[u]) {
                dist[u] = nd;
                heap.emplace(nd, u);
            }
        }
    }
    // Bound the cache (a 1024-GPU cluster has ~4000 vertices: 32 KB per destination): past the budget,
    // start over. Results never depend on what is cached.
    if ((caches_->dist.size() + 1) * dist.size() * sizeof(std::int64_t) > kDistanceCacheBytes) caches_->dist.clear();
    return caches_->dist.emplace(dst, std::move(dist)).first->second;
}

const std::vector<std::int64_t>& ClusterGraph::distancesUntil(VertexId dst, VertexId src) const {
    auto it = caches_->dist.find(dst);
    if (it != caches_->dist.end()) return it->second;
    // The same Dijkstra as distancesTo, stopped when `src` is settled. Then every vertex closer to dst than src has
    // its exact distance, and walk() reads no other: a next hop y of a vertex `at` on the path is taken only when
    // dist[y] + cost(at → y) == dist[at] ≤ dist[src], i.e. y is closer than src; an unsettled vertex's tentative
    // distance is ≥ its true one, so it can match only where it is exact. The route is the one of the full search,
    // found in the ball around dst that reaches src (a node, a leaf's nodes) instead of the whole cluster.
    const Reverse& rev = reverse();
    auto& dist = caches_->partial;
    auto& touched = caches_->touched;
    for (VertexId v : touched) dist[v] = kUnreached;
    touched.clear();
    dist.resize(vertexCount(), kUnreached);
    using Item = std::pair<std::int64_t, VertexId>;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    dist[dst] = 0;
    touched.push_back(dst);
    heap.emplace(0, dst);
    while (!heap.empty()) {
        const auto [d, v] = heap.top();
        heap.pop();
        if (d != dist[v]) continue;
        if (v == src) break;
        if (rev.is_gpu[v] && v != dst) continue;
        for (std::size_t i = rev.offsets[v]; i < rev.offsets[v + 1]; ++i) {
            const VertexId u = rev.from[i];
            const std::int64_t nd = d + rev.cost[i];
            if (nd < dist[u]) {
                if (dist[u] == kUnreached) touched.push_back(u);
                dist[u] = nd;
                heap.emplace(nd, u);
            }
        }
    }
    return dist;
}

std::vector<PathShare> ClusterGraph::walk(VertexId from, VertexId to, std::uint64_t key, bool multipath) const {
    if (from >= vertexCount() || to >= vertexCount()) throw std::out_of_range("ClusterGraph: no such vertex");
    if (from == to) return {PathShare{}};
    return walk(distancesTo(to), from, to, key, multipath);
}

std::vector<PathShare> ClusterGraph::walk(const std::vector<std::int64_t>& dist, VertexId from, VertexId to,
                                          std::uint64_t key, bool multipath, std::vector<std::uint32_t>* choices) const {
    if (from == to) return {PathShare{}};
    if (dist[from] == kUnreached)
        throw std::runtime_error(fmt::format("no route from {} to {}", g_[from].name, g_[to].name));

    auto edgeCost = [&](Graph::edge_descriptor e) { return links_[g_[e].link].latency.count() * kHopScale + 1; };

    auto ownNic = [&](VertexId v) -> std::optional<VertexId> {
        if (const auto rank = g_[v].gpu) return nic_of_gpu_[static_cast<std::size_t>(*rank)];
        return std::nullopt;
    };
    const std::optional<VertexId> src_nic = ownNic(from), dst_nic = ownNic(to);

    std::vector<PathShare> out;
    std::vector<Graph::edge_descriptor> cand;
    // Depth-first over the chosen next hops; only NVSwitch splits branch, so this is one path otherwise.
    auto step = [&](auto&& self, VertexId at, Route route, double share) -> void {
        while (at != to) {
            cand.clear();
            for (auto e : boost::make_iterator_range(boost::out_edges(at, g_))) {
                const VertexId y = boost::target(e, g_);
                if (dist[y] == kUnreached || (g_[y].kind == VertexKind::gpu && y != to)) continue;
                if (edgeCost(e) + dist[y] == dist[at]) cand.push_back(e);
            }
            if (cand.empty()) throw std::logic_error("ClusterGraph: inconsistent shortest-path distances");
            // Rail alignment: when the source's or the destination's own NIC is among equal choices, take it.
            if (cand.size() > 1) {
                const auto own = std::find_if(cand.begin(), cand.end(), [&](auto e) {
                    const VertexId y = boost::target(e, g_);
                    return (src_nic && y == *src_nic) || (dst_nic && y == *dst_nic);
                });
                if (own != cand.end()) cand = {*own};
            }
            const bool split = multipath && cand.size() > 1 && std::all_of(cand.begin(), cand.end(), [&](auto e) {
                return g_[boost::target(e, g_)].kind == VertexKind::nvswitch &&
                       links_[g_[e].link].kind == LinkKind::nvlink;
            });
            if (split) {
                const auto branches = cand;  // `cand` is reused by the recursion
                double total = 0.0;
                for (auto e : branches) total += links_[g_[e].link].capacity_Bps;
                for (auto e : branches) {
                    Route r = route;
                    r.push_back(g_[e].link);
                    self(self, boost::target(e, g_), std::move(r), share * links_[g_[e].link].capacity_Bps / total);
                }
                return;
            }
            if (choices && cand.size() > 1) choices->push_back(static_cast<std::uint32_t>(cand.size()));
            const auto e = cand[key % cand.size()];
            route.push_back(g_[e].link);
            at = boost::target(e, g_);
        }
        out.push_back(PathShare{std::move(route), share});
    };
    step(step, from, Route{}, 1.0);
    return out;
}

const Route& ClusterGraph::route(int src_rank, int dst_rank) const {
    const VertexId s = gpu(src_rank), d = gpu(dst_rank);
    const std::uint64_t id = static_cast<std::uint64_t>(src_rank) * gpus_.size() + static_cast<std::uint64_t>(dst_rank);
    std::lock_guard lock(caches_->mutex);
    auto it = caches_->route.find(id);
    if (it != caches_->route.end()) return it->second;
    if (std::optional<Route> shifted = shiftedRoute(src_rank, dst_rank))
        return caches_->route.emplace(id, std::move(*shifted)).first->second;
    const std::uint64_t key = static_cast<std::uint64_t>(src_rank) + static_cast<std::uint64_t>(dst_rank);
    auto paths = walk(distancesUntil(d, s), s, d, key, /*multipath=*/false);
    return caches_->route.emplace(id, std::move(paths.front().route)).first->second;
}

void ClusterGraph::setTiling(ClusterTiling t) {
    std::lock_guard lock(caches_->mutex);
    tiling_ = ClusterTiling{};
    leaf_unit_.assign(vertexCount(), -1);
    leaf_rail_.assign(vertexCount(), -1);
    const std::size_t nodes = t.node_first.size();
    bool ok = t.nodes_per_unit > 0 && t.gpus_per_node > 0 && nodes == static_cast<std::size_t>(nodes_) &&
              gpus_.size() == nodes * static_cast<std::size_t>(t.gpus_per_node) &&
              t.leaf.size() == (nodes + t.nodes_per_unit - 1) / static_cast<std::size_t>(t.nodes_per_unit);
    for (std::size_t n = 0; ok && n < nodes; ++n)
        for (std::size_t o = 0; ok && o < t.node_vertices; ++o) {
            const VertexId v = t.node_first[n] + o, v0 = t.node_first[0] + o;
            ok = v < vertexCount() && g_[v].node == static_cast<int>(n) && g_[v].kind == g_[v0].kind &&
                 g_[v].local_gpu == g_[v0].local_gpu && boost::out_degree(v, g_) == boost::out_degree(v0, g_);
        }
    for (std::size_t u = 0; ok && u < t.leaf.size(); ++u)
        for (std::size_t k = 0; ok && k < t.leaf[u].size(); ++k) {
            const VertexId v = t.leaf[u][k];
            ok = v < vertexCount() && g_[v].kind == VertexKind::leaf && t.leaf[u].size() == t.leaf[0].size();
            if (ok) leaf_unit_[v] = static_cast<int>(u), leaf_rail_[v] = static_cast<int>(k);
        }
    if (!ok) {
        leaf_unit_.clear();
        leaf_rail_.clear();
        return;
    }
    tiling_ = std::move(t);
}

std::optional<Route> ClusterGraph::shiftedRoute(int src_rank, int dst_rank) const {
    const ClusterTiling& t = tiling_;
    if (t.nodes_per_unit == 0) return std::nullopt;
    const int G = t.gpus_per_node, per_unit = t.nodes_per_unit;
    const int A = src_rank / G, B = dst_rank / G, uA = A / per_unit, uB = B / per_unit;
    const int Ac = 0, Bc = A == B ? 0 : uA == uB ? 1 : per_unit, uAc = 0, uBc = Bc / per_unit;
    const int sc = Ac * G + src_rank % G, dc = Bc * G + dst_rank % G;
    if (sc == src_rank && dc == dst_rank) return std::nullopt;
    // The canonical pair's route and its ECMP choices (searched once).
    const std::uint64_t cid = static_cast<std::uint64_t>(sc) * gpus_.size() + static_cast<std::uint64_t>(dc);
    auto ch = caches_->choices.find(cid);
    if (ch == caches_->choices.end()) {
        std::vector<std::uint32_t> choices;
        const VertexId s = gpu(sc), d = gpu(dc);
        auto paths = walk(distancesUntil(d, s), s, d, static_cast<std::uint64_t>(sc + dc), false, &choices);
        caches_->route.emplace(cid, std::move(paths.front().route));
        ch = caches_->choices.emplace(cid, std::move(choices)).first;
    }
    const std::int64_t dkey = std::int64_t{src_rank} + dst_rank - sc - dc;
    for (std::uint32_t c : ch->second)
        if (dkey % static_cast<std::int64_t>(c) != 0) return std::nullopt;
    if (caches_->link_of.empty())
        for (LinkId id = 0; id < ends_.size(); ++id) {
            auto [it, fresh] = caches_->link_of.emplace(vertexPair(ends_[id].first, ends_[id].second), id);
            if (!fresh) it->second = kAmbiguous;
        }
    // canonical → actual: node Ac's block onto A's, Bc's onto B's, unit uAc's leaves onto uA's, uBc's onto uB's.
    auto image = [&](VertexId v) -> std::optional<VertexId> {
        const VertexProps& p = g_[v];
        if (p.node) {
            if (*p.node == Ac) return t.node_first[A] + (v - t.node_first[Ac]);
            if (*p.node == Bc) return t.node_first[B] + (v - t.node_first[Bc]);
            return std::nullopt;
        }
        if (p.kind == VertexKind::leaf) {
            const int u = leaf_unit_[v], k = leaf_rail_[v];
            if (u == uAc) return t.leaf[uA][k];
            if (u == uBc) return t.leaf[uB][k];
            return std::nullopt;
        }
        return v;  // a spine
    };
    const Route& canonical = caches_->route.at(cid);
    Route out;
    out.reserve(canonical.size());
    for (LinkId l : canonical) {
        const auto from = image(ends_[l].first), to = image(ends_[l].second);
        if (!from || !to) return std::nullopt;
        const auto it = caches_->link_of.find(vertexPair(*from, *to));
        if (it == caches_->link_of.end() || it->second == kAmbiguous) return std::nullopt;
        out.push_back(it->second);
    }
    return out;
}

const std::vector<PathShare>& ClusterGraph::routes(int src_rank, int dst_rank) const {
    const VertexId s = gpu(src_rank), d = gpu(dst_rank);
    const std::uint64_t id = static_cast<std::uint64_t>(src_rank) * gpus_.size() + static_cast<std::uint64_t>(dst_rank);
    std::lock_guard lock(caches_->mutex);
    auto it = caches_->routes.find(id);
    if (it != caches_->routes.end()) return it->second;
    const std::uint64_t key = static_cast<std::uint64_t>(src_rank) + static_cast<std::uint64_t>(dst_rank);
    return caches_->routes.emplace(id, walk(distancesUntil(d, s), s, d, key, /*multipath=*/true)).first->second;
}

Route ClusterGraph::route(VertexId from, VertexId to) const {
    std::lock_guard lock(caches_->mutex);
    return std::move(walk(from, to, static_cast<std::uint64_t>(from + to), false).front().route);
}

std::vector<PathShare> ClusterGraph::routes(VertexId from, VertexId to) const {
    std::lock_guard lock(caches_->mutex);
    return walk(from, to, static_cast<std::uint64_t>(from + to), true);
}

Time ClusterGraph::latency(const Route& r) const {
    Time t;
    for (LinkId id : r) t += links_.at(id).latency;
    return t;
}

double ClusterGraph::bottleneck_Bps(const Route& r) const {
    if (r.empty()) return 0.0;
    double b = std::numeric_limits<double>::infinity();
    for (LinkId id : r) b = std::min(b, links_.at(id).capacity_Bps);
    return b;
}

std::optional<VertexId> ClusterGraph::nearestOfKind(int rank, VertexKind kind) const {
    const VertexId g = gpu(rank);
    const int node = nodeOf(rank);
    std::optional<VertexId> best;
    std::int64_t best_cost = kUnreached;
    std::lock_guard lock(caches_->mutex);
    for (VertexId v = 0; v < vertexCount(); ++v) {
        if (g_[v].kind != kind || g_[v].node != node) continue;
        const std::int64_t c = distancesTo(v)[g];
        if (c < best_cost) best = v, best_cost = c;  // ties: the lowest vertex id
    }
    return best;
}

std::optional<VertexId> ClusterGraph::hostCpu(int rank) const { return nearestOfKind(rank, VertexKind::cpu); }
std::optional<VertexId> ClusterGraph::storageOf(int rank) const { return nearestOfKind(rank, VertexKind::storage); }

// ------------------------------------------------------------------------------------ whole-graph figures

std::optional<double> ClusterGraph::bisectionBandwidth() const {
    const int n = gpuCount();
    if (n < 2) return std::nullopt;
    using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
    using FlowGraph = boost::adjacency_list<
        boost::vecS, boost::vecS, boost::directedS,
        boost::property<boost::vertex_color_t, boost::default_color_type,
                        boost::property<boost::vertex_distance_t, long,
                                        boost::property<boost::vertex_predecessor_t, Traits::edge_descriptor>>>,
        boost::property<boost::edge_capacity_t, std::int64_t,
                        boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
    const auto V = vertexCount();
    FlowGraph fg(V + 2);
    const auto source = V, sink = V + 1;
    auto capacity = boost::get(boost::edge_capacity, fg);
    auto reverse = boost::get(boost::edge_reverse, fg);
    auto addArc = [&](std::size_t u, std::size_t v, std::int64_t cap) {
        auto e = boost::add_edge(u, v, fg).first;
        auto r = boost::add_edge(v, u, fg).first;
        capacity[e] = cap;
        capacity[r] = 0;
        reverse[e] = r;
        reverse[r] = e;
    };
    std::int64_t total = 0;
    for (LinkId id = 0; id < links_.size(); ++id) {
        const auto cap = static_cast<std::int64_t>(std::llround(links_[id].capacity_Bps));
        total += cap;
        addArc(ends_[id].first, ends_[id].second, cap);
    }
    const std::int64_t unlimited = total + 1;
    for (int r = 0; r < n; ++r) {
        if (r < n / 2) addArc(source, gpus_[static_cast<std::size_t>(r)], unlimited);
        else addArc(gpus_[static_cast<std::size_t>(r)], sink, unlimited);
    }
    const std::int64_t flow = boost::boykov_kolmogorov_max_flow(fg, source, sink);
    return static_cast<double>(flow);
}

std::string ClusterGraph::toDot() const {
    std::ostringstream os;
    auto vertexWriter = [this](std::ostream& out, VertexId v) {
        const char* shape = "ellipse";
        switch (g_[v].kind) {
            case VertexKind::gpu: shape = "box"; break;
            case VertexKind::nvswitch:
            case VertexKind::pcie_switch:
            case VertexKind::leaf:
            case VertexKind::spine: shape = "diamond"; break;
            case VertexKind::cpu: shape = "octagon"; break;
            case VertexKind::nic: shape = "hexagon"; break;
            case VertexKind::storage: shape = "cylinder"; break;
        }
        out << fmt::format("[label=\"{}\", shape={}, kind={}]", g_[v].name, shape, toString(g_[v].kind));
    };
    auto edgeWriter = [this](std::ostream& out, Graph::edge_descriptor e) {
        const Link& l = links_[g_[e].link];
        out << fmt::format("[label=\"{:.1f} GB/s\", kind={}, latency_us={:.3f}]", l.capacity_Bps / 1e9,
                           toString(l.kind), l.latency.micros());
    };
    auto graphWriter = [this](std::ostream& out) {
        out << fmt::format("label=\"{}\";\n", name_);
    };
    boost::write_graphviz(os, g_, vertexWriter, edgeWriter, graphWriter);
    return os.str();
}

}  // namespace stepsim
