#include "sim/cli/TopoCommand.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "sim/base/Files.hpp"
#include "sim/cli/NumberRange.hpp"
#include "sim/base/InputError.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/topology/Builders.hpp"
#include "sim/scenario/ClusterBuild.hpp"

namespace stepsim {

namespace {

// Min and max over GPUs of a per-GPU figure; none when some GPU lacks it.
struct Range {
    std::optional<double> min, max;
};
template <class F>
Range overGpus(const ClusterGraph& g, F figure) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
    for (int r = 0; r < g.gpuCount(); ++r) {
        const std::optional<double> v = figure(r);
        if (!v) return {};
        lo = std::min(lo, *v);
        hi = std::max(hi, *v);
    }
    if (g.gpuCount() == 0) return {};
    return {lo, hi};
}

nlohmann::json orNull(std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::string gbps(const nlohmann::json& v) { return v.is_null() ? "none" : fmt::format("{:.1f} GB/s", v.get<double>()); }

}  // namespace

nlohmann::json topoSummary(const ClusterGraph& g) {
    nlohmann::json j;
    j["name"] = g.name();
    j["nodes"] = g.nodeCount();
    j["gpus"] = g.gpuCount();
    j["gpus_per_node"] = g.nodeCount() > 0 ? g.gpuCount() / g.nodeCount() : 0;
    nlohmann::json vertices = nlohmann::json::object();
    for (VertexKind k : kAllVertexKinds) vertices[std::string(toString(k))] = g.countOf(k);
    j["vertices"] = vertices;
    j["vertex_count"] = g.vertexCount();
    nlohmann::json links = nlohmann::json::object();
    for (LinkKind k : kAllLinkKinds) links[std::string(toString(k))] = 0;
    for (const Link& l : g.links()) links[std::string(toString(l.kind))] = links[std::string(toString(l.kind))].get<int>() + 1;
    j["links"] = links;
    j["link_count"] = g.links().size();

    const Range nvlink = overGpus(g, [&](int r) { return std::optional<double>(g.nvlinkBandwidth(r) / 1e9); });
    j["nvlink_GBps_per_gpu"] = orNull(nvlink.min);
    j["nvlink_GBps_per_gpu_max"] = orNull(nvlink.max);
    const Range nic = overGpus(g, [&](int r) -> std::optional<double> {
        if (auto b = g.nicBandwidth(r)) return *b / 1e9;
        return std::nullopt;
    });
    j["nic_GBps_per_gpu"] = orNull(nic.min);
    const Range host = overGpus(g, [&](int r) -> std::optional<double> {
        const auto cpu = g.hostCpu(r);
        if (!cpu) return std::nullopt;
        return g.bottleneck_Bps(g.route(g.gpu(r), *cpu)) / 1e9;
    });
    j["host_pcie_GBps_per_gpu"] = orNull(host.min);
    const auto bisection = g.bisectionBandwidth();
    j["bisection_GBps"] = bisection ? nlohmann::json(*bisection / 1e9) : nlohmann::json(nullptr);
    return j;
}

std::string topoText(const nlohmann::json& s) {
    std::string out = fmt::format("topology: {} ({} node{}, {} GPUs)\n", s["name"].get<std::string>(),
                                  s["nodes"].get<int>(), s["nodes"].get<int>() == 1 ? "" : "s", s["gpus"].get<int>());
    std::string parts;
    for (const auto& [kind, count] : s["vertices"].items())
        if (count.get<int>() > 0) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", kind, count.get<int>());
    out += fmt::format("vertices: {} ({})\n", s["vertex_count"].get<int>(), parts);
    parts.clear();
    for (const auto& [kind, count] : s["links"].items())
        if (count.get<int>() > 0) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", kind, count.get<int>());
    out += fmt::format("links: {} directed ({})\n", s["link_count"].get<int>(), parts);
    std::string nvlink = gbps(s["nvlink_GBps_per_gpu"]);
    if (!s["nvlink_GBps_per_gpu"].is_null() && s["nvlink_GBps_per_gpu_max"] != s["nvlink_GBps_per_gpu"])
        nvlink = fmt::format("{:.1f} to {}", s["nvlink_GBps_per_gpu"].get<double>(), gbps(s["nvlink_GBps_per_gpu_max"]));
    out += fmt::format("per GPU, per direction: NVLink {}, NIC {}, host PCIe {}\n", nvlink, gbps(s["nic_GBps_per_gpu"]),
                       gbps(s["host_pcie_GBps_per_gpu"]));
    const int n = s["gpus"].get<int>();
    if (s["bisection_GBps"].is_null()) {
        out += "bisection bandwidth: none (fewer than two GPUs)\n";
    } else {
        out += fmt::format("bisection bandwidth: {} (GPUs 0-{} to {}-{}, max-flow, one direction)\n",
                           gbps(s["bisection_GBps"]), n / 2 - 1, n / 2, n - 1);
    }
    return out;
}

void runTopo(const TopoOptions& o, std::ostream& out) {
    const NodeTemplate node = nodeTemplate(o.node, "");
    NetworkSpec network;
    network.nic_gbps = o.nic_gbps;
    network.oversubscription = o.oversubscription;
    network.nics_per_node = o.nics_per_node.value_or(node.gpuCount());
    const ClusterGraph g = cluster(node, o.nodes, network, o.gpus_per_node);
    const nlohmann::json summary = topoSummary(g);
    out << topoText(summary);
    if (!o.json_out.empty()) writeOutputFile(o.json_out, summary.dump(2) + "\n", {o.node});
    if (!o.dot_out.empty()) writeOutputFile(o.dot_out, g.toDot(), {o.node});
}

void addTopoCommand(CLI::App& app) {
    auto* cmd = app.add_subcommand("topo", "Summarize a cluster topology: device and link counts, per-GPU NVLink/NIC "
                                           "bandwidth, bisection bandwidth; --json, --dot for Graphviz");
    auto o = std::make_shared<TopoOptions>();
    auto gpus = std::make_shared<int>(0);
    auto nics = std::make_shared<int>(0);
    std::string names;
    for (const auto& n : builtinNodeNames()) names += (names.empty() ? "" : ", ") + n;
    cmd->add_option("NODE", o->node, "Built-in node type (" + names + ") or a topology YAML file")->required();
    cmd->add_option("--nodes", o->nodes, "Number of nodes (default 1)")->check(numberRange(1, 4096));
    auto* gpus_opt = cmd->add_option("--gpus-per-node", *gpus, "GPUs used per node (default: all of the node's)")
                         ->check(numberRange(1, 1024));
    auto* nics_opt = cmd->add_option("--nics-per-node", *nics, "NICs per node (default: one per GPU)")
                         ->check(numberRange(1, 64));
    cmd->add_option("--nic-gbps", o->nic_gbps, "NIC line rate in Gb/s (default 400)")->check(numberRange(1, 1e5));
    cmd->add_option("--oversubscription", o->oversubscription,
                    "Leaf downlink/uplink ratio of the fat tree (default 1)")
        ->check(numberRange(1, 1e3));
    cmd->add_option("--json", o->json_out, "Write the summary as JSON to this file");
    cmd->add_option("--dot", o->dot_out, "Write the graph as Graphviz DOT to this file");
    cmd->callback([o, gpus, nics, gpus_opt, nics_opt] {
        TopoOptions options = *o;
        if (gpus_opt->count() > 0) options.gpus_per_node = *gpus;
        if (nics_opt->count() > 0) options.nics_per_node = *nics;
        runTopo(options, std::cout);
    });
}

}  // namespace stepsim
