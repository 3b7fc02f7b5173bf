#include "sim/topology/Builders.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"

namespace stepsim {

namespace {

// One-way latencies per link (Builders.hpp, "Figures").
const Time kNvlinkHop = Time::ns(350);
const Time kPcieHop = Time::ns(300);
const Time kRootComplexHop = Time::ns(500);
const Time kInterSocketHop = Time::ns(500);
const Time kNetworkHop = Time::ns(300);
const Time kStorageHop = Time::us(10);

// A cluster-level error: names the scenario key (the file is the scenario's, which the caller knows).
InputError clusterError(const std::string& key, const std::string& what) {
    return InputError(fmt::format("{}: {}", key, what));
}

// 8 GPUs on NVSwitch chips, GPU i having `groups[k]` links of `link_Bps` to chip k; DGX-style host side.
NodeTemplate hgx(std::string name, const std::vector<int>& groups, double link_Bps) {
    NodeTemplate t;
    t.name = std::move(name);
    constexpr int kGpus = 8;
    std::array<int, kGpus> gpu{}, pcie{};
    std::vector<int> sw(groups.size());
    for (int i = 0; i < kGpus; ++i) gpu[i] = t.add(VertexKind::gpu, fmt::format("gpu{}", i));
    for (std::size_t k = 0; k < groups.size(); ++k) sw[k] = t.add(VertexKind::nvswitch, fmt::format("nvsw{}", k));
    for (int i = 0; i < kGpus; ++i) pcie[i] = t.add(VertexKind::pcie_switch, fmt::format("pcie{}", i));
    const int cpu0 = t.add(VertexKind::cpu, "cpu0");
    const int cpu1 = t.add(VertexKind::cpu, "cpu1");
    const int storage = t.add(VertexKind::storage, "storage");
    for (int i = 0; i < kGpus; ++i)
        for (std::size_t k = 0; k < groups.size(); ++k)
            t.link(gpu[i], sw[k], LinkKind::nvlink, groups[k] * link_Bps, kNvlinkHop);
    for (int i = 0; i < kGpus; ++i) {
        t.link(gpu[i], pcie[i], LinkKind::pcie, kPcieGen5x16Bps, kPcieHop);
        t.link(pcie[i], i < kGpus / 2 ? cpu0 : cpu1, LinkKind::pcie, kPcieGen5x16Bps, kRootComplexHop);
        t.vertices[gpu[i]].nic_port = pcie[i];
    }
    t.link(cpu0, cpu1, LinkKind::host_memory, kInterSocketBps, kInterSocketHop);
    t.link(cpu0, storage, LinkKind::storage, kStorageBps, kStorageHop);
    return t;
}

}  // namespace

// A node's GPUs and the built-in profile of its `cluster.profile: builtin` (calibration/profiles): H200 the one
// measured on H200s, H100 the one derived from it (same die); B200 none (its profile is an extrapolation a scenario
// names knowingly).
static NodeTemplate withGpu(NodeTemplate t, std::string gpu, std::string default_profile) {
    t.gpu = std::move(gpu);
    t.default_profile = std::move(default_profile);
    return t;
}

NodeTemplate hgxH100Node() { return withGpu(hgx("hgx-h100", {5, 4, 4, 5}, kNvlink4LinkBps), "H100", "h100-sxm-derived"); }
NodeTemplate hgxH200Node() { return withGpu(hgx("hgx-h200", {5, 4, 4, 5}, kNvlink4LinkBps), "H200", "h200x2"); }
NodeTemplate hgxB200Node() { return withGpu(hgx("hgx-b200", {9, 9}, kNvlink5LinkBps), "B200", ""); }

NodeTemplate pcieNodeTemplate(int gpus) {
    if (gpus < 2 || gpus % 2 != 0)
        throw std::invalid_argument(fmt::format("pcieNodeTemplate: expected an even GPU count >= 2, got {}", gpus));
    NodeTemplate t;
    t.name = gpus == 8 ? "pcie-8gpu" : fmt::format("pcie-{}gpu", gpus);
    std::vector<int> gpu(static_cast<std::size_t>(gpus));
    for (int i = 0; i < gpus; ++i) gpu[i] = t.add(VertexKind::gpu, fmt::format("gpu{}", i));
    const int sw0 = t.add(VertexKind::pcie_switch, "pcie0");
    const int sw1 = t.add(VertexKind::pcie_switch, "pcie1");
    const int cpu0 = t.add(VertexKind::cpu, "cpu0");
    const int cpu1 = t.add(VertexKind::cpu, "cpu1");
    const int storage = t.add(VertexKind::storage, "storage");
    for (int i = 0; i < gpus; ++i) {
        const int sw = i < gpus / 2 ? sw0 : sw1;
        t.link(gpu[i], sw, LinkKind::pcie, kPcieGen5x16Bps, kPcieHop);
        t.vertices[gpu[i]].nic_port = sw;
    }
    t.link(sw0, cpu0, LinkKind::pcie, kPcieGen5x16Bps, kRootComplexHop);
    t.link(sw1, cpu1, LinkKind::pcie, kPcieGen5x16Bps, kRootComplexHop);
    t.link(cpu0, cpu1, LinkKind::host_memory, kInterSocketBps, kInterSocketHop);
    t.link(cpu0, storage, LinkKind::storage, kStorageBps, kStorageHop);
    t.default_profile = "h200x2";  // GPUs not stated: the measured profile, as for a node file
    return t;
}

NodeTemplate nvl72Node() {
    constexpr int kGpus = 72, kSwitches = 18, kGpusPerTray = 4, kGpusPerCpu = 2;
    NodeTemplate t;
    t.name = "nvl72";
    std::vector<int> gpu(kGpus), sw(kSwitches), pcie(kGpus), cpu(kGpus / kGpusPerCpu),
        storage(kGpus / kGpusPerTray);
    for (int i = 0; i < kGpus; ++i) gpu[i] = t.add(VertexKind::gpu, fmt::format("gpu{}", i));
    for (int k = 0; k < kSwitches; ++k) sw[k] = t.add(VertexKind::nvswitch, fmt::format("nvsw{}", k));
    for (int i = 0; i < kGpus; ++i) pcie[i] = t.add(VertexKind::pcie_switch, fmt::format("pcie{}", i));
    for (std::size_t c = 0; c < cpu.size(); ++c) cpu[c] = t.add(VertexKind::cpu, fmt::format("cpu{}", c));
    for (std::size_t s = 0; s < storage.size(); ++s)
        storage[s] = t.add(VertexKind::storage, fmt::format("storage{}", s));
    for (int i = 0; i < kGpus; ++i)
        for (int k = 0; k < kSwitches; ++k) t.link(gpu[i], sw[k], LinkKind::nvlink, kNvlink5LinkBps, kNvlinkHop);
    for (int i = 0; i < kGpus; ++i) {
        t.link(gpu[i], pcie[i], LinkKind::pcie, kPcieGen5x16Bps, kPcieHop);
        t.link(pcie[i], cpu[i / kGpusPerCpu], LinkKind::pcie, kPcieGen5x16Bps, kRootComplexHop);
        t.vertices[gpu[i]].nic_port = pcie[i];
    }
    for (std::size_t s = 0; s < storage.size(); ++s)
        for (int c = 0; c < kGpusPerTray / kGpusPerCpu; ++c)
            t.link(cpu[s * 2 + c], storage[s], LinkKind::storage, kStorageBps, kStorageHop);
    t.gpu = "B200";  // GB200 NVL72: Blackwell GPUs; no built-in profile of its own
    return t;
}

NodeTemplate mergedNvSwitches(const NodeTemplate& node) {
    NodeTemplate t;
    t.name = node.name;
    t.source = node.source;
    t.gpu = node.gpu;
    t.default_profile = node.default_profile;
    std::vector<std::optional<int>> index(node.vertices.size());  // old vertex → new vertex
    std::optional<int> merged;
    for (std::size_t i = 0; i < node.vertices.size(); ++i) {
        const auto& v = node.vertices[i];
        if (v.kind == VertexKind::nvswitch) {
            if (!merged) {
                merged = static_cast<int>(t.vertices.size());
                t.vertices.push_back(NodeTemplate::Vertex{VertexKind::nvswitch, "nvswitch", std::nullopt, v.line});
            }
            index[i] = merged;
            continue;
        }
        index[i] = static_cast<int>(t.vertices.size());
        t.vertices.push_back(v);
    }
    for (auto& v : t.vertices)
        if (v.nic_port) v.nic_port = index[static_cast<std::size_t>(*v.nic_port)];
    for (const auto& l : node.links) {
        NodeTemplate::Duplex d = l;
        d.a = *index[l.a];
        d.b = *index[l.b];
        const bool to_switch = merged && (d.a == *merged || d.b == *merged);
        if (to_switch && d.kind == LinkKind::nvlink) {
            const int other = d.a == *merged ? d.b : d.a;
            const auto same = std::find_if(t.links.begin(), t.links.end(), [&](const NodeTemplate::Duplex& x) {
                return x.kind == LinkKind::nvlink && ((x.a == *merged && x.b == other) || (x.b == *merged && x.a == other));
            });
            if (same != t.links.end()) {
                same->capacity_Bps += d.capacity_Bps;
                continue;
            }
        }
        t.links.push_back(d);
    }
    return t;
}

ClusterGraph cluster(const NodeTemplate& node, int nodes, const NetworkSpec& network,
                     std::optional<int> gpus_per_node) {
    const int full = node.gpuCount();
    if (full < 1) throw clusterError("cluster.node", fmt::format("node type {} has no GPU", node.name));
    if (nodes < 1) throw clusterError("cluster.nodes", fmt::format("expected a positive integer, got {}", nodes));
    const int used = gpus_per_node.value_or(full);
    if (used < 1 || used > full)
        throw clusterError("cluster.gpus_per_node",
                           fmt::format("expected 1 to {} (the GPUs of a {} node), got {}", full, node.name, used));
    const int nics = network.nics_per_node;
    // A lone node needs no NIC: one whose NIC count does not fit its GPUs (a 4-GPU topology file under the default
    // 8 NICs) gets none.
    const bool nics_fit = nics >= 1 && nics <= full && full % nics == 0;
    if (!nics_fit && nodes > 1)
        throw clusterError("cluster.network.nics_per_node",
                           fmt::format("expected a divisor of {} (the GPUs of a {} node), got {}", full, node.name, nics));
    if (!(network.nic_gbps > 0.0))
        throw clusterError("cluster.network.nic_gbps", fmt::format("expected a positive number, got {}", network.nic_gbps));
    if (nodes > 1 && network.fabric != "rail-fat-tree")
        throw clusterError("cluster.network.fabric", fmt::format("expected rail-fat-tree, got \"{}\"", network.fabric));
    if (!(network.oversubscription > 0.0))
        throw clusterError("cluster.network.oversubscription",
                           fmt::format("expected a positive number, got {}", network.oversubscription));

    const double nic_Bps = network.nic_gbps * 1e9 / 8.0;
    const int gpus_per_nic = nics_fit ? full / nics : full;
    const int rails = nics_fit ? (used + gpus_per_nic - 1) / gpus_per_nic : 0;

    ClusterGraph g;
    std::string name = nodes == 1 ? node.name : fmt::format("{} x {}", node.name, nodes);
    if (used < full) name += fmt::format(" ({} of {} GPUs per node)", used, full);
    g.setName(std::move(name));

    std::vector<int> gpu_vertex;  // template index of each local GPU
    for (std::size_t i = 0; i < node.vertices.size(); ++i)
        if (node.vertices[i].kind == VertexKind::gpu) gpu_vertex.push_back(static_cast<int>(i));

    std::vector<std::vector<VertexId>> nic_of(static_cast<std::size_t>(nodes));  // [node][rail]
    ClusterTiling tiling;
    for (int n = 0; n < nodes; ++n) {
        tiling.node_first.push_back(static_cast<VertexId>(g.vertexCount()));
        std::vector<std::optional<VertexId>> placed(node.vertices.size());
        int local = 0;
        for (std::size_t i = 0; i < node.vertices.size(); ++i) {
            const auto& v = node.vertices[i];
            if (v.kind == VertexKind::gpu && local++ >= used) continue;
            placed[i] = g.addVertex(v.kind, fmt::format("n{}.{}", n, v.name), n);
        }
        for (const auto& l : node.links) {
            if (!placed[l.a] || !placed[l.b]) continue;
            g.addDuplex(*placed[l.a], *placed[l.b], l.kind, l.capacity_Bps, l.latency);
        }
        const int first_rank = n * used;
        for (int k = 0; k < rails; ++k) {
            const int first = k * gpus_per_nic;
            const auto port = node.nicPort(gpu_vertex[first]);
            if (!port || !placed[*port]) {
                if (nodes == 1) continue;  // a lone node needs no NIC
                throw clusterError("cluster.node",
                                   fmt::format("{}:{}: {} has no PCIe link for its NIC (set its nic_port)", node.source,
                                               node.vertices[gpu_vertex[first]].line,
                                               node.vertices[gpu_vertex[first]].name));
            }
            std::vector<int> ranks;
            for (int l = first; l < std::min(first + gpus_per_nic, used); ++l) ranks.push_back(first_rank + l);
            const VertexId nic = g.addVertex(VertexKind::nic, fmt::format("n{}.nic{}", n, k), n);
            g.addDuplex(nic, *placed[*port], LinkKind::pcie, kPcieGen5x16Bps, kPcieHop);
            g.attachNic(nic, ranks, nic_Bps);
            nic_of[n].push_back(nic);
        }
    }
    if (nodes == 1) return g;
    tiling.node_vertices = g.vertexCount() / static_cast<std::size_t>(nodes);

    // Rail-optimized two-level fat tree.
    const int units = (nodes + kNodesPerScalableUnit - 1) / kNodesPerScalableUnit;
    std::vector<std::vector<VertexId>> leaf(static_cast<std::size_t>(units));
    for (int u = 0; u < units; ++u)
        for (int k = 0; k < rails; ++k) leaf[u].push_back(g.addVertex(VertexKind::leaf, fmt::format("leaf{}.{}", u, k), {}));
    for (int n = 0; n < nodes; ++n)
        for (int k = 0; k < rails; ++k)
            g.addDuplex(nic_of[n][k], leaf[n / kNodesPerScalableUnit][k], LinkKind::nic, nic_Bps, kNetworkHop);
    if (units * rails > 1) {
        const int spines = rails;
        std::vector<VertexId> spine;
        for (int s = 0; s < spines; ++s) spine.push_back(g.addVertex(VertexKind::spine, fmt::format("spine{}", s), {}));
        for (int u = 0; u < units; ++u) {
            const int in_unit = std::min(kNodesPerScalableUnit, nodes - u * kNodesPerScalableUnit);
            const double uplink_Bps = in_unit * nic_Bps / network.oversubscription / spines;
            for (int k = 0; k < rails; ++k)
                for (int s = 0; s < spines; ++s)
                    g.addDuplex(leaf[u][k], spine[s], LinkKind::network, uplink_Bps, kNetworkHop);
        }
    }
    // Every node a copy of the first, units alike: routes repeat (ClusterGraph.hpp, "Shifted routes").
    tiling.nodes_per_unit = kNodesPerScalableUnit;
    tiling.gpus_per_node = used;
    tiling.leaf = std::move(leaf);
    g.setTiling(std::move(tiling));
    return g;
}

ClusterGraph hgxH100() { return cluster(hgxH100Node(), 1); }
ClusterGraph hgxH200() { return cluster(hgxH200Node(), 1); }
ClusterGraph hgxB200() { return cluster(hgxB200Node(), 1); }
ClusterGraph pcieNode(int gpus) { return cluster(pcieNodeTemplate(gpus), 1, NetworkSpec{.nics_per_node = gpus}); }
ClusterGraph nvl72() { return cluster(nvl72Node(), 1, NetworkSpec{.nics_per_node = 72}); }

std::vector<std::string> builtinNodeNames() { return {"hgx-h100", "hgx-h200", "hgx-b200", "pcie-8gpu", "nvl72"}; }

std::optional<NodeTemplate> builtinNode(const std::string& name) {
    if (name == "hgx-h100") return hgxH100Node();
    if (name == "hgx-h200") return hgxH200Node();
    if (name == "hgx-b200") return hgxB200Node();
    if (name == "pcie-8gpu") return pcieNodeTemplate(8);
    if (name == "nvl72") return nvl72Node();
    return std::nullopt;
}

}  // namespace stepsim
