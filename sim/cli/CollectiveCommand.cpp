#include "sim/cli/CollectiveCommand.hpp"

#include <cctype>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/engine/Engine.hpp"
#include "sim/base/InputError.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ClusterBuild.hpp"

namespace stepsim {

namespace {

// nccl-tests' size syntax: a number with an optional K, M or G suffix (powers of 1024).
double parseSize(const std::string& flag, const std::string& text) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        throw inputError("command line", 0, flag, fmt::format("expected a size like 8, 64K, 128M or 8G, got '{}'", text));
    }
    const std::string suffix = text.substr(used);
    double mult = 1;
    if (suffix == "K" || suffix == "k") mult = 1024.0;
    else if (suffix == "M" || suffix == "m") mult = 1024.0 * 1024;
    else if (suffix == "G" || suffix == "g") mult = 1024.0 * 1024 * 1024;
    else if (!suffix.empty())
        throw inputError("command line", 0, flag, fmt::format("unknown size suffix '{}' (expected K, M or G)", suffix));
    if (!(v > 0)) throw inputError("command line", 0, flag, fmt::format("expected a positive size, got '{}'", text));
    return v * mult;
}

CollectiveKind parseOp(const std::string& op) {
    for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                             CollectiveKind::alltoall, CollectiveKind::broadcast, CollectiveKind::sendrecv})
        if (op == collectiveKindName(k)) return k;
    throw inputError("command line", 0, "--op",
                     fmt::format("expected all_reduce, all_gather, reduce_scatter, alltoall, broadcast or sendrecv, "
                                 "got '{}'", op));
}

// One collective of `bytes` over every GPU of the fabric, run through the engine: α from the cost model, then
// the algorithm's flows on the cluster's links (NVLink, PCIe, NICs, leaves, spines), so the fabric's limits
// and the rail layout apply. Returns the collective's time from its start (all ranks present) to its end.
double engineSeconds(CollectiveKind kind, double bytes, const CostModel& cost, const Fabric& fabric, int ranks,
                     CollectiveEstimate& est) {
    Workload w;
    w.groups.push_back({"world", {}});
    for (int r = 0; r < ranks; ++r) {
        Program p;
        p.streams = {{StreamKind::comm, "nccl"}};
        Op op;
        op.kind = OpKind::collective;
        op.cls = KernelClass::comm;
        op.stream = 0;
        op.collective = 0;
        p.collectives.push_back({kind, 0, bytes, "bf16"});
        p.ops.push_back(op);
        Op end;
        end.kind = OpKind::step_end;
        end.stream = 0;
        p.ops.push_back(end);
        w.programs.push_back(std::move(p));
        w.groups[0].ranks.push_back(r);
    }
    EngineConfig cfg;
    cfg.jitter = false;
    const Timeline tl = Engine(w, cost, fabric, cfg).run();
    if (tl.collectives.size() != 1) throw std::logic_error("engine did not run exactly one collective");
    est.algo = tl.collectives[0].algo;
    est.proto = tl.collectives[0].proto;
    return (tl.collectives[0].end - tl.collectives[0].start).seconds();
}

}  // namespace

void addCollectiveCommand(CLI::App& app) {
    struct Opts {
        std::string op = "all_reduce", node = "hgx-h200", profile = "builtin", begin = "8", end = "8G", json;
        std::string algo = "auto", proto = "auto", nvls = "auto", dtype = "bf16";
        int gpus = 8, nodes = 1, nics = 8;
        double factor = 2, nic_gbps = 400, oversubscription = 1;
    };
    auto o = std::make_shared<Opts>();
    auto* cmd = app.add_subcommand("collective", "Predict one NCCL collective over a range of sizes, printed as "
                                                 "nccl-tests prints it");
    cmd->add_option("--op", o->op, "all_reduce | all_gather | reduce_scatter | alltoall | broadcast | sendrecv")
        ->capture_default_str();
    cmd->add_option("--gpus", o->gpus, "GPUs per node taking part")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--nodes", o->nodes, "Nodes")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--nics", o->nics, "NICs per node (multi-node)")->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd->add_option("--nic-gbps", o->nic_gbps, "NIC line rate, Gb/s")->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd->add_option("--oversubscription", o->oversubscription, "Leaf-to-spine oversubscription")
        ->capture_default_str()->check(CLI::Range(1.0, 1e3));
    cmd->add_option("--node", o->node, "Node type (hgx-h200, hgx-h100, ...)")->capture_default_str();
    cmd->add_option("--profile", o->profile, "builtin, a built-in profile name, or a profile YAML")->capture_default_str();
    cmd->add_option("-b,--minbytes", o->begin, "Smallest size (K/M/G suffixes, as nccl-tests)")->capture_default_str();
    cmd->add_option("-e,--maxbytes", o->end, "Largest size")->capture_default_str();
    cmd->add_option("-f,--stepfactor", o->factor, "Size multiplier between lines")->capture_default_str()
        ->check(CLI::Range(1.0001, 1e6));
    cmd->add_option("-d,--datatype", o->dtype, "Element type: bf16, fp16, fp32, fp8")->capture_default_str();
    cmd->add_option("--algo", o->algo, "Force NCCL's algorithm: auto | ring | tree | nvls")->capture_default_str();
    cmd->add_option("--proto", o->proto, "Force NCCL's protocol: auto | ll | ll128 | simple")->capture_default_str();
    cmd->add_option("--nvls", o->nvls, "NVLink SHARP: auto | on | off")->capture_default_str();
    cmd->add_option("--json", o->json, "Also write the table as JSON to this file");
    cmd->callback([o] {
        const CollectiveKind kind = parseOp(o->op);
        const double lo = parseSize("-b", o->begin), hi = parseSize("-e", o->end);
        if (hi < lo) throw inputError("command line", 0, "-e", "expected maxbytes ≥ minbytes");
        ClusterSpec cluster;
        cluster.node = o->node;
        cluster.nodes = o->nodes;
        cluster.gpus_per_node = o->gpus;
        cluster.profile = o->profile;
        cluster.network.nics_per_node = o->nics;
        cluster.network.nic_gbps = o->nic_gbps;
        cluster.network.oversubscription = o->oversubscription;
        const HardwareProfile profile = resolveProfile(cluster, "");
        NcclSpec nccl;
        const std::map<std::string, NcclAlgo> algos{{"auto", NcclAlgo::auto_}, {"ring", NcclAlgo::ring},
                                                    {"tree", NcclAlgo::tree}, {"nvls", NcclAlgo::nvls}};
        const std::map<std::string, NcclProto> protos{{"auto", NcclProto::auto_}, {"ll", NcclProto::ll},
                                                      {"ll128", NcclProto::ll128}, {"simple", NcclProto::simple}};
        const std::map<std::string, Switch> switches{{"auto", Switch::auto_}, {"on", Switch::on}, {"off", Switch::off}};
        const std::map<std::string, double> elt{{"bf16", 2}, {"fp16", 2}, {"fp32", 4}, {"fp8", 1}};
        auto pick = [](const auto& m, const std::string& key, const std::string& v) {
            auto it = m.find(v);
            if (it == m.end()) throw inputError("command line", 0, key, fmt::format("unknown value '{}'", v));
            return it->second;
        };
        nccl.algo = pick(algos, "--algo", o->algo);
        nccl.proto = pick(protos, "--proto", o->proto);
        nccl.nvls = pick(switches, "--nvls", o->nvls);
        const double esize = pick(elt, "-d", o->dtype);
        const CostModel cost(profile, nccl, nvSwitchNode(o->node), cluster.network);
        const int ranks = o->gpus * o->nodes;
        // One node: the closed form t = α + S·F/busbw is what the engine reproduces for a collective alone (its
        // flows are bounded to end together at S·F/busbw and no NVLink/NVSwitch link is slower than that).
        // Several nodes: the engine on the cluster topology, so NIC, leaf and spine limits apply.
        const bool use_engine = o->nodes > 1;
        std::optional<Fabric> fabric;
        if (use_engine) fabric = clusterFabric(cluster, "");

        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        std::cout << fmt::format("# stepsim prediction: {} on {} x {} GPUs ({}), profile {}{}\n", o->op, o->nodes,
                                 o->gpus, o->node, profile.name,
                                 use_engine ? fmt::format(", {} x {} Gb/s NICs per node, flows on the topology",
                                                          o->nics, o->nic_gbps)
                                            : std::string());
        std::cout << fmt::format("#{:>14} {:>13} {:>9} {:>6} {:>7} {:>10} {:>8} {:>8}  {}\n", "size", "count", "type",
                                 "redop", "root", "time", "algbw", "busbw", "algo/proto");
        std::cout << fmt::format("#{:>14} {:>13} {:>9} {:>6} {:>7} {:>10} {:>8} {:>8}\n", "(B)", "(elements)", "", "",
                                 "", "(us)", "(GB/s)", "(GB/s)");
        for (double s = lo; s <= hi * (1 + 1e-12); s *= o->factor) {
            const double bytes = std::floor(s / esize) * esize;
            CollectiveEstimate e = cost.collective(kind, ranks, o->nodes, bytes);
            const double t = use_engine ? engineSeconds(kind, bytes, cost, *fabric, ranks, e) : e.seconds(bytes);
            const double algbw = t > 0 ? bytes / t / 1e9 : 0.0;
            const double busbw = algbw * busBandwidthFactor(kind, ranks);
            std::cout << fmt::format("{:>15.0f} {:>13.0f} {:>9} {:>6} {:>7} {:>10.2f} {:>8.2f} {:>8.2f}  {}/{}{}\n",
                                     bytes, bytes / esize, o->dtype, kind == CollectiveKind::all_reduce ? "sum" : "none",
                                     -1, t * 1e6, algbw, busbw, e.algo, e.proto, e.in_domain ? "" : " (extrapolated)");
            rows.push_back({{"size_bytes", bytes}, {"count", bytes / esize}, {"type", o->dtype},
                            {"time_us", t * 1e6}, {"algbw_GBps", algbw}, {"busbw_GBps", busbw},
                            {"algo", e.algo}, {"proto", e.proto}, {"measured", e.measured},
                            {"in_domain", e.in_domain}});
        }
        if (!o->json.empty()) {
            std::ofstream os(o->json);
            if (!os) throw inputError(o->json, 0, "", "cannot open this file for writing");
            os << nlohmann::ordered_json{{"op", o->op}, {"ranks", ranks}, {"nodes", o->nodes}, {"node", o->node},
                                         {"profile", profile.name}, {"simulated_on_topology", use_engine},
                                         {"rows", rows}}.dump(2)
               << '\n';
        }
    });
}

}  // namespace stepsim
