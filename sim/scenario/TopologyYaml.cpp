#include "sim/scenario/TopologyYaml.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "sim/base/Files.hpp"
#include "sim/base/InputError.hpp"
#include "sim/scenario/YamlReader.hpp"

namespace stepsim {

namespace {

class TopologyReader {
public:
    explicit TopologyReader(std::string source) : source_(std::move(source)) {}

    [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& what) const {
        const auto mark = at.Mark();
        throw inputError(source_, mark.line >= 0 ? mark.line + 1 : 0, key, what);
    }

    // Fails on keys of `map` not in `allowed`.
    void onlyKeys(const YAML::Node& map, const std::string& path, std::initializer_list<std::string_view> allowed) const {
        for (const auto& kv : map) {
            const std::string key = kv.first.Scalar();
            bool known = false;
            std::string list;
            for (auto a : allowed) {
                known = known || a == key;
                list += (list.empty() ? "" : ", ") + std::string(a);
            }
            if (!known) fail(kv.first, join(path, key), fmt::format("unknown key; expected one of {}", list));
        }
    }

    YAML::Node require(const YAML::Node& map, const std::string& path, const std::string& key) const {
        const YAML::Node n = map[key];
        if (!n.IsDefined()) fail(map, join(path, key), "missing (required)");
        return n;
    }

    std::string text(const YAML::Node& n, const std::string& key) const {
        if (!n.IsScalar() || n.Scalar().empty()) fail(n, key, "expected a non-empty string, got " + describe(n));
        return n.Scalar();
    }

    double number(const YAML::Node& n, const std::string& key) const {
        if (n.IsScalar()) {
            try {
                const double v = n.as<double>();
                if (std::isfinite(v)) return v;
            } catch (const YAML::BadConversion&) {
            }
        }
        fail(n, key, "expected a number, got " + describe(n));
    }

    int integer(const YAML::Node& n, const std::string& key) const {
        if (n.IsScalar()) {
            try {
                return n.as<int>();
            } catch (const YAML::BadConversion&) {
            }
        }
        fail(n, key, "expected an integer, got " + describe(n));
    }

    static std::string join(const std::string& path, const std::string& key) {
        return path.empty() ? key : path + "." + key;
    }
    static std::string describe(const YAML::Node& n) {
        if (n.IsMap()) return "a mapping";
        if (n.IsSequence()) return "a list";
        if (n.IsNull()) return "nothing";
        return "\"" + n.Scalar() + "\"";
    }

private:
    std::string source_;
};

std::string kindList(bool vertices) {
    std::string s;
    if (vertices) {
        for (VertexKind k : kAllVertexKinds) {
            if (k == VertexKind::nic || k == VertexKind::leaf || k == VertexKind::spine) continue;
            s += (s.empty() ? "" : " | ") + std::string(toString(k));
        }
    } else {
        for (LinkKind k : kAllLinkKinds) s += (s.empty() ? "" : " | ") + std::string(toString(k));
    }
    return s;
}

// The index of the vertex node `n` names (at `key`), refused when there is none.
int vertexIndex(TopologyReader& r, const std::map<std::string, int>& index, const YAML::Node& n, const std::string& key) {
    const std::string name = r.text(n, key);
    const auto it = index.find(name);
    if (it == index.end()) r.fail(n, key, fmt::format("no vertex named \"{}\"", name));
    return it->second;
}

// The vertices (name, kind, a GPU's nic_port), each name's index in t.vertices.
std::map<std::string, int> parseVertices(TopologyReader& r, const YAML::Node& vertices, NodeTemplate& t) {
    if (!vertices.IsSequence() || vertices.size() == 0)
        r.fail(vertices, "vertices", "expected a non-empty list of {name, kind}");
    std::map<std::string, int> index;
    struct PortRef {
        int gpu;
        YAML::Node node;
        std::string key;
    };
    std::vector<PortRef> nic_ports;  // resolved once every vertex is known
    for (std::size_t i = 0; i < vertices.size(); ++i) {
        const auto v = vertices[i];
        const std::string path = fmt::format("vertices[{}]", i);
        if (!v.IsMap()) r.fail(v, path, "expected a mapping {name, kind}, got " + TopologyReader::describe(v));
        r.onlyKeys(v, path, {"name", "kind", "nic_port"});
        NodeTemplate::Vertex vertex;
        vertex.line = v.Mark().line + 1;
        vertex.name = r.text(r.require(v, path, "name"), path + ".name");
        const auto kind_node = r.require(v, path, "kind");
        const auto kind = vertexKindFromString(r.text(kind_node, path + ".kind"));
        if (!kind || *kind == VertexKind::nic || *kind == VertexKind::leaf || *kind == VertexKind::spine)
            r.fail(kind_node, path + ".kind",
                   fmt::format("expected one of {} (NICs and the fabric come from cluster.network), got {}",
                               kindList(true), TopologyReader::describe(kind_node)));
        vertex.kind = *kind;
        if (index.count(vertex.name))
            r.fail(v["name"], path + ".name", fmt::format("duplicate vertex name \"{}\"", vertex.name));
        if (const auto port = v["nic_port"]; port.IsDefined()) {
            if (vertex.kind != VertexKind::gpu) r.fail(port, path + ".nic_port", "only a GPU has a nic_port");
            nic_ports.push_back(PortRef{static_cast<int>(t.vertices.size()), port, path + ".nic_port"});
        }
        index[vertex.name] = static_cast<int>(t.vertices.size());
        t.vertices.push_back(std::move(vertex));
    }
    if (t.gpuCount() == 0) r.fail(vertices, "vertices", "expected at least one vertex of kind gpu");
    for (const auto& ref : nic_ports) {
        const int port = vertexIndex(r, index, ref.node, ref.key);
        if (t.vertices[port].kind == VertexKind::gpu) r.fail(ref.node, ref.key, "expected a switch or CPU, not a GPU");
        t.vertices[static_cast<std::size_t>(ref.gpu)].nic_port = port;
    }
    return index;
}

// The links (from, to, kind, bandwidth per direction, count, latency) between the vertices of `index`.
void parseLinks(TopologyReader& r, const YAML::Node& links, const std::map<std::string, int>& index, NodeTemplate& t) {
    if (!links.IsSequence()) r.fail(links, "links", "expected a list of {from, to, kind, bandwidth_GBps, latency_us}");
    for (std::size_t i = 0; i < links.size(); ++i) {
        const auto l = links[i];
        const std::string path = fmt::format("links[{}]", i);
        if (!l.IsMap()) r.fail(l, path, "expected a mapping, got " + TopologyReader::describe(l));
        r.onlyKeys(l, path, {"from", "to", "kind", "bandwidth_GBps", "count", "latency_us"});
        NodeTemplate::Duplex d;
        d.line = l.Mark().line + 1;
        d.a = vertexIndex(r, index, r.require(l, path, "from"), path + ".from");
        const auto to_node = r.require(l, path, "to");
        d.b = vertexIndex(r, index, to_node, path + ".to");
        if (d.a == d.b) r.fail(to_node, path + ".to", "a link needs two different vertices");
        const auto kind_node = r.require(l, path, "kind");
        const auto kind = linkKindFromString(r.text(kind_node, path + ".kind"));
        if (!kind)
            r.fail(kind_node, path + ".kind",
                   fmt::format("expected one of {}, got {}", kindList(false), TopologyReader::describe(kind_node)));
        d.kind = *kind;
        const auto bw_node = r.require(l, path, "bandwidth_GBps");
        const double bw = r.number(bw_node, path + ".bandwidth_GBps");
        // Bounds far past any link (NVLink 5 moves 900 GB/s a direction; a latency of a second is no link's).
        if (!(bw > 0.0 && bw <= 1e5))
            r.fail(bw_node, path + ".bandwidth_GBps",
                   fmt::format("expected a positive number of GB/s per direction, at most 1e5, got {}", bw));
        int count = 1;
        if (const auto c = l["count"]; c.IsDefined()) {
            count = r.integer(c, path + ".count");
            if (count < 1 || count > 1024)
                r.fail(c, path + ".count", fmt::format("expected a positive integer up to 1024, got {}", count));
        }
        d.capacity_Bps = bw * 1e9 * count;
        const auto lat_node = r.require(l, path, "latency_us");
        const double lat = r.number(lat_node, path + ".latency_us");
        if (!(lat >= 0.0 && lat <= 1e6))
            r.fail(lat_node, path + ".latency_us", fmt::format("expected a non-negative number of µs up to 1e6, got {}", lat));
        d.latency = fromMicros(lat);
        t.links.push_back(d);
    }
}

// Every GPU reaches every other (a collective's flows need a route) and the host (copies): each GPU has a link,
// and the links join all the GPUs into one component.
void checkConnected(TopologyReader& r, const YAML::Node& vertices, const YAML::Node& links, const NodeTemplate& t) {
    if (t.links.empty())
        r.fail(links, "links", "expected at least one link: the GPUs need links to reach each other and the host");
    std::vector<int> component(t.vertices.size());
    for (std::size_t i = 0; i < component.size(); ++i) component[i] = static_cast<int>(i);
    const auto find = [&](int v) {
        while (component[v] != v) v = component[v] = component[component[v]];
        return v;
    };
    for (const auto& l : t.links) component[find(l.a)] = find(l.b);
    std::optional<int> first_gpu;
    for (std::size_t i = 0; i < t.vertices.size(); ++i) {
        const auto& v = t.vertices[i];
        if (v.kind != VertexKind::gpu) continue;
        const bool linked = std::any_of(t.links.begin(), t.links.end(), [&](const NodeTemplate::Duplex& l) {
            return l.a == static_cast<int>(i) || l.b == static_cast<int>(i);
        });
        const std::string path = fmt::format("vertices[{}]", i);
        if (!linked) r.fail(vertices[i], path, fmt::format("GPU \"{}\" has no link (every GPU needs one)", v.name));
        if (!first_gpu) first_gpu = static_cast<int>(i);
        else if (find(static_cast<int>(i)) != find(*first_gpu))
            r.fail(vertices[i], path,
                   fmt::format("GPU \"{}\" has no path to GPU \"{}\" over the links (every GPU must reach every other)",
                               v.name, t.vertices[static_cast<std::size_t>(*first_gpu)].name));
    }
}


NodeTemplate parse(const YAML::Node& root, const std::string& source) {
    TopologyReader r(source);
    if (!root.IsMap()) r.fail(root, "", "expected a topology mapping (stepsim_topology: 1, name, vertices, links)");
    r.onlyKeys(root, "", {"stepsim_topology", "name", "description", "vertices", "links"});
    {
        const auto v = r.require(root, "", "stepsim_topology");
        if (r.integer(v, "stepsim_topology") != 1) r.fail(v, "stepsim_topology", "expected 1 (the schema version)");
    }
    NodeTemplate t;
    t.source = source;
    t.name = r.text(r.require(root, "", "name"), "name");

    const auto vertices = r.require(root, "", "vertices");
    const std::map<std::string, int> index = parseVertices(r, vertices, t);
    const auto links = r.require(root, "", "links");
    parseLinks(r, links, index, t);
    checkConnected(r, vertices, links, t);
    return t;
}

}  // namespace

NodeTemplate parseTopologyYaml(const std::string& text, const std::string& source) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
        throw inputError(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "invalid YAML: " + e.msg);
    }
    requireQuotesClosedOnTheirLine(YamlReader(source, YamlReader::Missing::keep_default), root, text);
    return parse(root, source);
}

NodeTemplate readTopologyYaml(const std::string& path) {
    return parseTopologyYaml(readInputFile(path, "the topology file", kMaxScenarioBytes), path);
}

}  // namespace stepsim
