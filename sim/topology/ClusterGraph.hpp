#pragma once
// ClusterGraph: the physical cluster as a directed Boost.Graph, and the routes flows take through it.
//
// Vertices are devices (GPU, NVSwitch chip, PCIe switch, host CPU with its memory, NIC, leaf and spine
// switch, storage); every physical link is two directed edges, one per direction, each carrying the id of
// a `Link` (sim/net/Link.hpp) with its own capacity and latency. `links()` is what the flow network shares
// max-min fairly; a `Route` is the ordered list of link ids one transfer crosses.
//
// Routing (`route`):
//   cost(path) = (Σ latency, hops), compared lexicographically: the lowest-latency path, then the one with
//   the fewest links. GPUs are endpoints only: no path passes *through* a GPU (staging through a peer GPU,
//   as NCCL's PXN does, is the collective layer's decision, made by composing two routes).
//   Among equal-cost next hops (ECMP), the choice is deterministic: candidates are the out-edges in
//   insertion order and the one taken at every hop is index key mod (number of candidates), with
//   key = src + dst (GPU ranks for the rank overloads, vertex ids for the vertex overloads), so that pairs
//   of different rails spread over the spines of a fat tree, and the same inputs always give the same route.
//   Rail alignment: when the source GPU's own NIC (or the destination GPU's) is one of the equal-cost next
//   hops, it is taken, so a GPU's inter-node traffic leaves and arrives through its own NIC.
//   Shortest-path distances to each destination come from Dijkstra over the reversed edges kept in
//   compressed rows, cached per destination (bounded to 256 MiB); routes between GPU ranks are cached per
//   pair. On a 1024-GPU cluster (4008 vertices, 17408 links) one destination costs ~0.8 ms (it was ~2 ms with
//   boost::dijkstra_shortest_paths on a reverse_graph), a cached route() ~10-20 ns (shared 2-core machine).
//   The caches are guarded by a mutex, so one graph may be shared by threads; a returned reference stays
//   valid until the graph is next modified.
//   Shifted routes (ClusterTiling, set by the fat-tree builder): the cluster repeats one node's vertex block, and
//   every permutation of the nodes of a scalable unit, or of units, maps the graph's costs onto themselves. So the
//   route between GPU (node A, local i) and (node B, local j) is, link for link, the image of one canonical pair's:
//   (node 0, i) → (node 0, j) within a node, → (node 1, j) within a unit, → (the second unit's first node, j) across
//   units; a route crosses no third node (leaf to NIC and NIC to port are fixed hops, 1.2 µs both ways against a
//   spine's 0.6) and no third unit. The image is the search's own route when the ECMP choices agree: the canonical
//   walk records the number of candidates at each hop where there was a choice, and the image is taken only where
//   the two keys differ by a multiple of each (on HGX nodes of 8 GPUs, 8 spines: always); otherwise, or where a
//   link has no image, the pair is searched. So the searches are at most three per ordered pair of local indices,
//   not one per destination (Ecmp.ShiftedRoutesAreTheSearchsRoutes checks every pair against the search).
//
// NVSwitch fabrics (`routes`, multipath). A GPU stripes its NVLink traffic over all its links, and on an
// HGX board those links go to several NVSwitch chips (H100/H200: 5+4+4+5 of 18 links over 4 chips; B200:
// 9+9 over 2). The graph keeps one vertex per chip with one edge per GPU↔chip link group (capacity = links
// × per-link bandwidth), so no chip is pretended to be bigger than it is. A GPU→GPU transfer is then split
// over the paths that differ only in the NVSwitch chip they cross, in proportion to the capacity of the
// GPU's link group to that chip (5/18, 4/18, 4/18, 5/18 on H100): alone, every part finishes at the same
// time and the transfer sees the GPU's full 18-link bandwidth. Every other ECMP choice (leaf→spine) is a
// single hashed path, as in a real fabric. `route()` is the single path of that rule (one chip chosen by
// the hash), right for latency and for flows that may only take one path; a flow that should see the whole
// NVLink bandwidth must be split along `routes()`.
//
// Bisection bandwidth (`bisectionBandwidth`):
//   with the GPUs in rank order split into A = [0, ⌊n/2⌋) and B = [⌊n/2⌋, n) (with an even number of nodes,
//   the first half of the nodes against the second half), it is the maximum flow in bytes/s from A to B, one
//   direction, over every link of the graph (NVLink, PCIe and the inter-socket link, NICs and the fabric):
//   by max-flow/min-cut it equals the smallest total capacity of links whose removal separates A from B.
//   Computed with boost::boykov_kolmogorov_max_flow on integer capacities (bytes/s, rounded).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sim/base/Time.hpp"
#include "sim/base/Link.hpp"

namespace stepsim {

enum class VertexKind : std::uint8_t { gpu, nvswitch, pcie_switch, cpu, nic, leaf, spine, storage };

inline constexpr VertexKind kAllVertexKinds[] = {VertexKind::gpu,  VertexKind::nvswitch, VertexKind::pcie_switch,
                                                 VertexKind::cpu,  VertexKind::nic,      VertexKind::leaf,
                                                 VertexKind::spine, VertexKind::storage};
inline constexpr LinkKind kAllLinkKinds[] = {LinkKind::nvlink,  LinkKind::pcie,        LinkKind::nic,
                                             LinkKind::network, LinkKind::host_memory, LinkKind::storage};

// "gpu", "nvswitch", "pcie_switch", "cpu", "nic", "leaf", "spine", "storage".
std::string_view toString(VertexKind kind);
std::optional<VertexKind> vertexKindFromString(std::string_view name);
// "nvlink", "pcie", "nic", "network", "host_memory", "storage".
std::string_view toString(LinkKind kind);
std::optional<LinkKind> linkKindFromString(std::string_view name);

struct VertexProps {
    VertexKind kind = VertexKind::gpu;
    std::string name;               // unique, e.g. "n1.gpu3", "leaf0.2", "spine5"
    std::optional<int> node;        // the node it belongs to (none for leaf and spine switches)
    std::optional<int> gpu;         // GPUs only: global rank
    std::optional<int> local_gpu;   // GPUs only: index within its node
};

struct EdgeProps {
    LinkId link = 0;  // index into ClusterGraph::links()
};

// vecS/vecS; bidirectionalS is a directed graph that also stores in-edges (for reverse Dijkstra).
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexProps, EdgeProps>;
using VertexId = Graph::vertex_descriptor;

// The repetition of a fat-tree cluster (see "Shifted routes" above): ranks are node-major, `gpus_per_node` each;
// node n's vertices are node_first[n] .. node_first[n] + node_vertices − 1, in the same order as node 0's; nodes
// are grouped in units of `nodes_per_unit`, unit u's leaf of rail k is leaf[u][k]; every other vertex is a spine.
struct ClusterTiling {
    int nodes_per_unit = 0;  // 0: none (every pair searched)
    int gpus_per_node = 0;
    std::vector<VertexId> node_first;
    std::size_t node_vertices = 0;
    std::vector<std::vector<VertexId>> leaf;
};

// One part of a multipath transfer: the route and the fraction of the bytes sent along it.
struct PathShare {
    Route route;
    double share = 1.0;
};

class ClusterGraph {
public:
    ClusterGraph();
    ClusterGraph(ClusterGraph&&) noexcept;
    ClusterGraph& operator=(ClusterGraph&&) noexcept;
    ClusterGraph(const ClusterGraph&) = delete;
    ClusterGraph& operator=(const ClusterGraph&) = delete;
    ~ClusterGraph();

    // --- building (builders and the YAML reader use these; routing caches are cleared) ---
    // A GPU gets the next global rank and its index within `node`.
    VertexId addVertex(VertexKind kind, std::string name, std::optional<int> node);
    // One direction of a link; the Link is named "from->to".
    LinkId addLink(VertexId from, VertexId to, LinkKind kind, double capacity_Bps, Time latency);
    // A physical link: two directed edges (a→b first), same capacity and latency each way.
    std::pair<LinkId, LinkId> addDuplex(VertexId a, VertexId b, LinkKind kind, double capacity_Bps, Time latency);
    // `nic` (line rate `line_rate_Bps`, one direction) serves the GPUs `ranks`.
    void attachNic(VertexId nic, const std::vector<int>& ranks, double line_rate_Bps);
    // The cluster's repetition (the builder's, last: any later change to the graph clears it). A tiling that does not
    // match the graph (a block that is not node 0's) is not kept.
    void setTiling(ClusterTiling tiling);
    bool tiled() const { return tiling_.nodes_per_unit > 0; }
    // A name for the whole graph ("hgx-h200 x 2"), shown by `stepsim topo`.
    void setName(std::string name) { name_ = std::move(name); }

    // --- structure ---
    const std::string& name() const { return name_; }
    const Graph& graph() const { return g_; }
    std::size_t vertexCount() const { return boost::num_vertices(g_); }
    const VertexProps& vertex(VertexId v) const { return g_[v]; }
    std::optional<VertexId> findVertex(std::string_view name) const;
    std::size_t countOf(VertexKind kind) const;
    const std::vector<Link>& links() const { return links_; }
    VertexId linkSource(LinkId id) const { return ends_.at(id).first; }
    VertexId linkTarget(LinkId id) const { return ends_.at(id).second; }

    int gpuCount() const { return static_cast<int>(gpus_.size()); }
    int nodeCount() const { return nodes_; }
    VertexId gpu(int rank) const { return gpus_.at(static_cast<std::size_t>(rank)); }
    int nodeOf(int rank) const { return *g_[gpu(rank)].node; }
    int localRank(int rank) const { return *g_[gpu(rank)].local_gpu; }

    // Sum of the capacities of the GPU's outgoing NVLink edges, bytes/s per direction (0 without NVLink).
    double nvlinkBandwidth(int rank) const;
    // The NIC that serves this GPU, and its line rate divided among the GPUs it serves (bytes/s).
    std::optional<VertexId> nicOf(int rank) const;
    std::optional<double> nicBandwidth(int rank) const;
    // The host CPU (and its memory) closest to the GPU by route latency, among the CPUs of its node.
    std::optional<VertexId> hostCpu(int rank) const;
    // The storage vertex closest to the GPU by route latency, among those of its node.
    std::optional<VertexId> storageOf(int rank) const;

    // --- routing ---
    // Single path between two GPU ranks (cached; empty when src == dst). Throws std::runtime_error when
    // there is no path.
    const Route& route(int src_rank, int dst_rank) const;
    // The multipath split of a GPU-to-GPU transfer (cached): see the header comment; shares sum to 1.
    const std::vector<PathShare>& routes(int src_rank, int dst_rank) const;
    // Between any two vertices (e.g. a GPU and its host CPU or storage); not cached, distances are.
    Route route(VertexId from, VertexId to) const;
    std::vector<PathShare> routes(VertexId from, VertexId to) const;

    Time latency(const Route& r) const;
    double bottleneck_Bps(const Route& r) const;  // smallest capacity on the route (0 for an empty route)

    // --- whole-graph figures ---
    // Max-flow bisection in bytes/s (see the header comment); none with fewer than two GPUs.
    std::optional<double> bisectionBandwidth() const;
    // Graphviz text (boost::write_graphviz): every vertex labelled with its name, every edge with GB/s.
    std::string toDot() const;

private:
    struct Caches;
    // The edges by target vertex (compressed rows): source and cost of every edge into v.
    struct Reverse {
        std::vector<std::size_t> offsets;
        std::vector<VertexId> from;
        std::vector<std::int64_t> cost;
        std::vector<std::uint8_t> is_gpu;
    };
    const Reverse& reverse() const;                                     // caller holds the cache lock
    const std::vector<std::int64_t>& distancesTo(VertexId dst) const;  // caller holds the cache lock
    // Distances to `dst`, exact for every vertex closer than `src` (a search stopped there; valid until the next call).
    const std::vector<std::int64_t>& distancesUntil(VertexId dst, VertexId src) const;  // caller holds the cache lock
    std::vector<PathShare> walk(VertexId from, VertexId to, std::uint64_t key, bool multipath) const;
    // `choices`, when given, receives the number of candidates at each hop where the key chose among several.
    std::vector<PathShare> walk(const std::vector<std::int64_t>& dist, VertexId from, VertexId to, std::uint64_t key,
                                bool multipath, std::vector<std::uint32_t>* choices = nullptr) const;
    // The route of a pair as the image of its canonical pair's (see "Shifted routes"); none where it may not be
    // (no tiling, the pair is canonical, the ECMP choices could differ, a link without image). Caller holds the lock.
    std::optional<Route> shiftedRoute(int src_rank, int dst_rank) const;
    std::optional<VertexId> nearestOfKind(int rank, VertexKind kind) const;
    void invalidate();

    std::string name_;
    Graph g_;
    std::vector<Link> links_;
    std::vector<std::pair<VertexId, VertexId>> ends_;
    std::vector<VertexId> gpus_;
    std::vector<int> gpus_per_node_;
    int nodes_ = 0;
    std::vector<std::optional<VertexId>> nic_of_gpu_;
    std::vector<std::optional<double>> nic_bw_of_gpu_;  // the NIC's line rate / GPUs it serves
    ClusterTiling tiling_;
    std::vector<int> leaf_unit_, leaf_rail_;  // per vertex: a leaf's unit and rail (−1 elsewhere), from the tiling
    std::unique_ptr<Caches> caches_;
};

}  // namespace stepsim
