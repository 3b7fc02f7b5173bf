#include "sim/run/CollectivePrediction.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/base/BusBandwidth.hpp"
#include "sim/base/InputError.hpp"
#include "sim/engine/Engine.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/scenario/ClusterBuild.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/workload/LoneCollective.hpp"

namespace stepsim {

namespace {

double elementBytes(const std::string& dtype) {
    static const std::map<std::string, double> bytes{{"bf16", 2}, {"fp16", 2}, {"fp32", 4}, {"fp8", 1}};
    const auto it = bytes.find(dtype);
    if (it == bytes.end()) throw inputError("command line", 0, "-d", fmt::format("unknown value '{}'", dtype));
    return it->second;
}

// The collective alone through the engine on `fabric`; fills the estimate's algorithm and protocol as the engine
// chose them and returns the time from its start to its end, seconds.
double engineSeconds(CollectiveKind kind, double bytes, const CostModel& cost, const Fabric& fabric, int ranks,
                     CollectiveEstimate& est) {
    const Workload w = loneCollective(kind, ranks, bytes);
    EngineConfig cfg;
    cfg.jitter = false;
    const Timeline tl = Engine(w, cost, fabric, cfg).run();
    if (tl.collectives.size() != 1) throw std::logic_error("engine did not run exactly one collective");
    est.algo = tl.collectives[0].algo;
    est.proto = tl.collectives[0].proto;
    return (tl.collectives[0].end - tl.collectives[0].start).seconds();
}

}  // namespace

CollectivePrediction predictCollective(const CollectiveQuery& q) {
    if (q.max_bytes < q.min_bytes) throw inputError("command line", 0, "-e", "expected maxbytes ≥ minbytes");
    const double esize = elementBytes(q.dtype);
    const HardwareProfile profile = resolveProfile(q.cluster, "");
    const CostModel cost(profile, q.nccl, nodeTemplate(q.cluster.node, "").hasNvSwitch(), q.cluster.network);
    CollectivePrediction p{q, profile.name, q.cluster.gpus_per_node * q.cluster.nodes, q.cluster.nodes > 1, {}};
    std::optional<Fabric> fabric;
    if (p.on_topology) fabric = clusterFabric(q.cluster, "");
    for (double s = q.min_bytes; s <= q.max_bytes * (1 + 1e-12); s *= q.factor) {
        CollectiveRow row;
        row.bytes = std::floor(s / esize) * esize;
        row.estimate = cost.collective(q.kind, p.ranks, q.cluster.nodes, row.bytes);
        row.seconds = p.on_topology ? engineSeconds(q.kind, row.bytes, cost, *fabric, p.ranks, row.estimate)
                                    : row.estimate.seconds(row.bytes);
        p.rows.push_back(row);
    }
    return p;
}

std::string toNcclTestsTable(const CollectivePrediction& p) {
    const CollectiveQuery& q = p.query;
    const std::string op(collectiveKindName(q.kind));
    std::string s = fmt::format(
        "# stepsim prediction: {} on {} x {} GPUs ({}), profile {}{}\n", op, q.cluster.nodes,
        q.cluster.gpus_per_node, q.cluster.node, p.profile,
        p.on_topology ? fmt::format(", {} x {} Gb/s NICs per node, flows on the topology", q.cluster.network.nics_per_node,
                                    q.cluster.network.nic_gbps)
                      : std::string());
    s += fmt::format("#{:>14} {:>13} {:>9} {:>6} {:>7} {:>10} {:>8} {:>8}  {}\n", "size", "count", "type", "redop",
                     "root", "time", "algbw", "busbw", "algo/proto");
    s += fmt::format("#{:>14} {:>13} {:>9} {:>6} {:>7} {:>10} {:>8} {:>8}\n", "(B)", "(elements)", "", "", "", "(us)",
                     "(GB/s)", "(GB/s)");
    const double esize = elementBytes(q.dtype);
    for (const CollectiveRow& r : p.rows) {
        const double algbw = r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0.0;
        const double busbw = algbw * busBandwidthFactor(q.kind, p.ranks);
        s += fmt::format("{:>15.0f} {:>13.0f} {:>9} {:>6} {:>7} {:>10.2f} {:>8.2f} {:>8.2f}  {}/{}{}\n", r.bytes,
                         r.bytes / esize, q.dtype, q.kind == CollectiveKind::all_reduce ? "sum" : "none", -1,
                         r.seconds * 1e6, algbw, busbw, r.estimate.algo, r.estimate.proto,
                         r.estimate.in_domain ? "" : " (extrapolated)");
    }
    return s;
}

nlohmann::ordered_json toJson(const CollectivePrediction& p) {
    const CollectiveQuery& q = p.query;
    const double esize = elementBytes(q.dtype);
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const CollectiveRow& r : p.rows) {
        const double algbw = r.seconds > 0 ? r.bytes / r.seconds / 1e9 : 0.0;
        rows.push_back({{"size_bytes", r.bytes}, {"count", r.bytes / esize}, {"type", q.dtype},
                        {"time_us", r.seconds * 1e6}, {"algbw_GBps", algbw},
                        {"busbw_GBps", algbw * busBandwidthFactor(q.kind, p.ranks)}, {"algo", r.estimate.algo},
                        {"proto", r.estimate.proto}, {"measured", r.estimate.measured},
                        {"in_domain", r.estimate.in_domain}});
    }
    return {{"op", std::string(collectiveKindName(q.kind))}, {"ranks", p.ranks}, {"nodes", q.cluster.nodes}, {"node", q.cluster.node},
            {"profile", p.profile}, {"simulated_on_topology", p.on_topology}, {"rows", rows}};
}

}  // namespace stepsim
