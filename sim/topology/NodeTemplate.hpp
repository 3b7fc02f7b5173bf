#pragma once
// NodeTemplate: one node's devices and links as plain data, before it is placed in a cluster.
//
// The built-in node types (Builders.hpp) and custom topology YAML files (sim/scenario/TopologyYaml.hpp)
// both produce a NodeTemplate; `cluster()` instantiates it once per node, keeps only the first
// gpus_per_node GPUs, and adds what joins nodes: one NIC per rail and the fabric. So a template has
// no NIC, leaf or spine vertices; it says instead, per GPU, where that GPU's NIC attaches (`nic_port`,
// by default the GPU's first PCIe neighbour).
#include <optional>
#include <string>
#include <vector>

#include "sim/base/Time.hpp"
#include "sim/base/Link.hpp"
#include "sim/topology/ClusterGraph.hpp"

namespace stepsim {

struct NodeTemplate {
    struct Vertex {
        VertexKind kind = VertexKind::gpu;
        std::string name;              // unique within the node, e.g. "gpu3"
        std::optional<int> nic_port;   // GPUs: index of the vertex its NIC attaches to
        int line = 0;                  // where it was read (0: built in)
    };
    // A physical link: two directed edges, `capacity_Bps` and `latency` each way.
    struct Duplex {
        int a = 0, b = 0;              // vertex indices
        LinkKind kind = LinkKind::nvlink;
        double capacity_Bps = 0.0;
        Time latency;
        int line = 0;
    };

    std::string name;                  // "hgx-h200", or the YAML file's `name`
    std::string source = "builtin";    // or the YAML file's path
    // The GPUs it holds, as a profile's gpu.model names them ("H100", "B200"; empty: not stated), and the built-in
    // profile `cluster.profile: builtin` picks for it (empty: none measured or derived for these GPUs; a scenario
    // then names its profile).
    std::string gpu;
    std::string default_profile;
    std::vector<Vertex> vertices;      // GPUs take their local index from their order here
    std::vector<Duplex> links;

    int add(VertexKind kind, std::string vertex_name) {
        vertices.push_back(Vertex{kind, std::move(vertex_name), std::nullopt, 0});
        return static_cast<int>(vertices.size()) - 1;
    }
    void link(int a, int b, LinkKind kind, double capacity_Bps, Time latency) {
        links.push_back(Duplex{a, b, kind, capacity_Bps, latency, 0});
    }
    // NVLink SHARP (NVLS) needs the GPUs' NVLink to meet in NVSwitch chips: a node with an nvswitch vertex.
    bool hasNvSwitch() const {
        for (const auto& v : vertices)
            if (v.kind == VertexKind::nvswitch) return true;
        return false;
    }
    int gpuCount() const {
        int n = 0;
        for (const auto& v : vertices) n += v.kind == VertexKind::gpu ? 1 : 0;
        return n;
    }
    // The vertex a GPU's NIC attaches to: its `nic_port`, else its first PCIe neighbour.
    std::optional<int> nicPort(int vertex) const {
        if (vertices.at(static_cast<std::size_t>(vertex)).nic_port) return vertices[vertex].nic_port;
        for (const auto& l : links) {
            if (l.kind != LinkKind::pcie) continue;
            if (l.a == vertex) return l.b;
            if (l.b == vertex) return l.a;
        }
        return std::nullopt;
    }
};

}  // namespace stepsim
