#include "sim/cli/CollectiveCommand.hpp"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "sim/base/Files.hpp"
#include "sim/cli/NumberRange.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/base/InputError.hpp"
#include "sim/run/CollectivePrediction.hpp"
#include "sim/scenario/ClusterBuild.hpp"
#include "sim/topology/Builders.hpp"

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

// Limits checked before anything is built: sizes the time type holds at any link's rate (1 TiB at 1 GB/s is 18
// minutes; time is picoseconds in 64 bits), a table of at most kMaxRows lines, and the GPUs the node has.
constexpr double kMaxBytes = 1024.0 * 1024 * 1024 * 1024;
constexpr int kMaxRows = 1000;
constexpr int kMaxNodes = 1024;

void checkLimits(const CollectiveQuery& q) {
    auto fail = [](const std::string& flag, const std::string& what) { throw inputError("command line", 0, flag, what); };
    if (q.min_bytes > kMaxBytes) fail("-b", fmt::format("expected at most 1024G (2^40 bytes), got {:.4g} bytes", q.min_bytes));
    if (q.max_bytes > kMaxBytes) fail("-e", fmt::format("expected at most 1024G (2^40 bytes), got {:.4g} bytes", q.max_bytes));
    if (q.max_bytes < q.min_bytes) fail("-e", "expected maxbytes >= minbytes");
    if (const double rows = std::floor(std::log(q.max_bytes / q.min_bytes) / std::log(q.factor)) + 1; rows > kMaxRows)
        fail("-f", fmt::format("expected at most {} sizes from -b to -e, got {:.0f} at this factor", kMaxRows, rows));
    if (q.cluster.nodes > kMaxNodes) fail("--nodes", fmt::format("expected at most {}, got {}", kMaxNodes, q.cluster.nodes));
    const std::string ext = std::filesystem::path(q.cluster.node).extension().string();
    if (!builtinNode(q.cluster.node) && ext != ".yaml" && ext != ".yml") {
        std::string names;
        for (const auto& n : builtinNodeNames()) names += (names.empty() ? "" : ", ") + n;
        fail("--node", fmt::format("expected one of {} or a topology YAML file, got '{}'", names, q.cluster.node));
    }
    const NodeTemplate node = nodeTemplate(q.cluster.node, "");
    if (q.cluster.gpus_per_node > node.gpuCount())
        fail("--gpus", fmt::format("expected at most {} (the GPUs of a {} node), got {}", node.gpuCount(), node.name,
                                   q.cluster.gpus_per_node));
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
    cmd->add_option("--nics", o->nics, "NICs per node (multi-node)")->capture_default_str()->check(numberRange(1, 64));
    cmd->add_option("--nic-gbps", o->nic_gbps, "NIC line rate, Gb/s")->capture_default_str()->check(numberRange(1, 1e5));
    cmd->add_option("--oversubscription", o->oversubscription, "Leaf-to-spine oversubscription")
        ->capture_default_str()->check(numberRange(1.0, 1e3));
    cmd->add_option("--node", o->node, "Node type (hgx-h200, hgx-h100, ...)")->capture_default_str();
    cmd->add_option("--profile", o->profile, "builtin, a built-in profile name, or a profile YAML")->capture_default_str();
    cmd->add_option("-b,--minbytes", o->begin, "Smallest size (K/M/G suffixes, as nccl-tests)")->capture_default_str();
    cmd->add_option("-e,--maxbytes", o->end, "Largest size")->capture_default_str();
    cmd->add_option("-f,--stepfactor", o->factor, "Size multiplier between lines")->capture_default_str()
        ->check(numberRange(1.0001, 1e6));
    cmd->add_option("-d,--datatype", o->dtype, "Element type: bf16, fp16, fp32, fp8")->capture_default_str();
    cmd->add_option("--algo", o->algo, "Force NCCL's algorithm: auto | ring | tree | nvls")->capture_default_str();
    cmd->add_option("--proto", o->proto, "Force NCCL's protocol: auto | ll | ll128 | simple")->capture_default_str();
    cmd->add_option("--nvls", o->nvls, "NVLink SHARP: auto | on | off")->capture_default_str();
    cmd->add_option("--json", o->json, "Also write the table as JSON to this file");
    cmd->callback([o] {
        CollectiveQuery q;
        q.kind = parseOp(o->op);
        q.min_bytes = parseSize("-b", o->begin);
        q.max_bytes = parseSize("-e", o->end);
        q.factor = o->factor;
        q.dtype = o->dtype;
        q.cluster.node = o->node;
        q.cluster.nodes = o->nodes;
        q.cluster.gpus_per_node = o->gpus;
        q.cluster.profile = o->profile;
        q.cluster.network.nics_per_node = o->nics;
        q.cluster.network.nic_gbps = o->nic_gbps;
        q.cluster.network.oversubscription = o->oversubscription;
        const std::map<std::string, NcclAlgo> algos{{"auto", NcclAlgo::auto_}, {"ring", NcclAlgo::ring},
                                                    {"tree", NcclAlgo::tree}, {"nvls", NcclAlgo::nvls}};
        const std::map<std::string, NcclProto> protos{{"auto", NcclProto::auto_}, {"ll", NcclProto::ll},
                                                      {"ll128", NcclProto::ll128}, {"simple", NcclProto::simple}};
        const std::map<std::string, Switch> switches{{"auto", Switch::auto_}, {"on", Switch::on}, {"off", Switch::off}};
        auto pick = [](const auto& m, const std::string& key, const std::string& v) {
            auto it = m.find(v);
            if (it == m.end()) throw inputError("command line", 0, key, fmt::format("unknown value '{}'", v));
            return it->second;
        };
        q.nccl.algo = pick(algos, "--algo", o->algo);
        q.nccl.proto = pick(protos, "--proto", o->proto);
        q.nccl.nvls = pick(switches, "--nvls", o->nvls);
        // NVLink SHARP runs in NVSwitch chips: a built-in node without them (pcie-8gpu) cannot run it.
        const auto node = builtinNode(o->node);
        if (node && !node->hasNvSwitch() && (q.nccl.nvls == Switch::on || q.nccl.algo == NcclAlgo::nvls))
            throw inputError("command line", 0, q.nccl.nvls == Switch::on ? "--nvls" : "--algo",
                             fmt::format("NVLS runs in NVSwitch chips, and a {} node has none", o->node));
        checkLimits(q);
        const CollectivePrediction p = predictCollective(q);
        std::cout << toNcclTestsTable(p);
        if (!o->json.empty()) writeOutputFile(o->json, toJson(p).dump(2) + "\n", {o->profile});
    });
}

}  // namespace stepsim
