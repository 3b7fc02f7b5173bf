#include "sim/run/CalibrateCheck.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "sim/fit/Manifest.hpp"
#include "sim/base/InputError.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/run/Calibrate.hpp"

namespace stepsim {
namespace {

namespace fs = std::filesystem;

// How far a class's median ratio may sit from 1 before the check says to recalibrate (docs/calibration.md, "Check a
// machine"): the kernel classes at 5% (the fit's own held-out error on the machine it was measured on is 2-4.5%:
// GEMMs 4.5%, collectives 2.1%), the host at 30% (the host's speed on the calibrated VM moves 0.57-1.93x between
// machine starts, the profile's spread; a fresh calibration would only sample that spread again).
constexpr double kKernelThreshold = 0.05, kHostThreshold = 0.30;

// The memory-bound ops of stepsim_torch_bench.py with an α-β rate of their own (sim/fit/MemoryFit.cpp).
const std::map<std::string, MemKind> kMemoryOps = {
    {"residual_add", MemKind::elementwise},           {"cast_bf16_to_fp32", MemKind::cast_up},
    {"cast_fp32_to_bf16", MemKind::cast_down},        {"residual_add_fp32_bf16", MemKind::residual_add},
    {"gelu_tanh", MemKind::gelu_forward},             {"log_softmax_fwd_bf16", MemKind::log_softmax_forward},
    {"log_softmax_bwd_bf16", MemKind::log_softmax_backward},
    {"log_softmax_fwd_fp32", MemKind::log_softmax_forward_fp32},
    {"log_softmax_bwd_fp32", MemKind::log_softmax_backward_fp32}};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

CheckClass summarize(const std::string& name, const std::vector<double>& ratios, double threshold) {
    CheckClass c{name, static_cast<int>(ratios.size()), median(ratios), 1.0, threshold};
    for (double r : ratios)
        if (std::abs(std::log(r)) > std::abs(std::log(c.worst_ratio))) c.worst_ratio = r;
    return c;
}

std::optional<CollectiveKind> collectiveKindOf(const std::string& op) {
    for (CollectiveKind k : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                             CollectiveKind::alltoall, CollectiveKind::broadcast, CollectiveKind::sendrecv})
        if (collectiveKindName(k) == op) return k;
    return std::nullopt;
}

}  // namespace

bool CheckClass::recalibrate() const { return std::abs(median_ratio - 1.0) > threshold; }

std::vector<CheckClass> checkProfile(const HardwareProfile& profile, const RawData& raw) {
    const CostModel cost(profile, NcclSpec{}, true);
    std::vector<double> gemm, attention, memory, host, nccl;
    for (const RawGemm& g : raw.gemms)
        if (g.source == "pytorch-step" && g.dtype == "bf16")
            gemm.push_back(g.time.median * 1e-6 / cost.gemmSeconds({g.m, g.n, g.k}, DType::bf16));
    for (const RawKernel& k : raw.kernels) {
        if (k.time.median <= 0) continue;
        if ((k.op == "sdpa_default_fwd" || k.op == "sdpa_default_bwd") && k.flops && k.causal) {
            const GemmShape shape{k.batch * k.heads, k.seq, k.head_dim};
            attention.push_back(k.time.median * 1e-6 /
                                cost.attentionSeconds(*k.flops, k.op == "sdpa_default_bwd", DType::bf16, shape));
        } else if (const auto it = kMemoryOps.find(k.op); it != kMemoryOps.end() && k.bytes && *k.bytes > 0) {
            memory.push_back(k.time.median * 1e-6 / cost.memorySeconds(*k.bytes, it->second));
        }
    }
    for (const RawDispatch& d : raw.dispatch)
        if (d.op == "eager_host" && profile.launch.eager_host.median_us > 0)
            host.push_back(d.time.median / profile.launch.eager_host.median_us);
    for (const RawCollective& c : raw.collectives) {
        const auto kind = collectiveKindOf(c.op);
        if (!kind || c.algo != "auto" || c.proto != "auto" || c.dtype != "bf16" || c.ranks < 2 || c.bytes <= 0) continue;
        nccl.push_back(c.time.median * 1e-6 / cost.collective(*kind, c.ranks, c.nodes, c.bytes).seconds(c.bytes));
    }
    std::vector<CheckClass> out;
    const std::pair<const char*, const std::vector<double>*> classes[] = {
        {"gemm", &gemm}, {"attention", &attention}, {"memory", &memory}, {"host", &host}, {"nccl", &nccl}};
    for (const auto& [name, v] : classes)
        if (!v->empty()) out.push_back(summarize(name, *v, std::string(name) == "host" ? kHostThreshold : kKernelThreshold));
    return out;
}

bool printCheck(const std::vector<CheckClass>& classes, const std::string& profileName, std::ostream& out) {
    out << fmt::format("this machine against profile {} (measured / predicted):\n", profileName);
    out << fmt::format("{:<10} {:>6} {:>8} {:>8} {:>9}  {}\n", "class", "points", "median", "worst", "threshold",
                       "verdict");
    bool any = false;
    for (const CheckClass& c : classes) {
        any = any || c.recalibrate();
        out << fmt::format("{:<10} {:>6} {:>+7.1f}% {:>+7.1f}% {:>8.0f}%  {}\n", c.name, c.points,
                           100 * (c.median_ratio - 1), 100 * (c.worst_ratio - 1), 100 * c.threshold,
                           c.recalibrate() ? (c.median_ratio > 1 ? "slower than the profile: recalibrate"
                                                                 : "faster than the profile: recalibrate")
                                           : "as the profile");
    }
    if (classes.empty()) out << "no point of a known class was measured\n";
    for (const char* name : {"gemm", "attention", "memory", "host", "nccl"})
        if (std::none_of(classes.begin(), classes.end(), [&](const CheckClass& c) { return c.name == name; }))
            out << fmt::format("{:<10} not measured{}\n", name,
                               std::string(name) == "nccl" ? " (needs two GPUs and the harness)" : "");
    out << (any ? "verdict: recalibrate (stepsim calibrate --out-dir DIR)\n"
                : "verdict: this machine runs as the profile says; no need to recalibrate\n");
    return any;
}

bool calibrateCheck(const CheckOptions& o, std::ostream& log) {
    const HardwareProfile profile = profileByNameOrFile(o.profile);
    std::vector<fs::path> files(o.raws.begin(), o.raws.end());
    if (files.empty()) {
        StageRun r;
        r.out_dir = o.out_dir;
        r.harness = o.harness;
        r.python = o.python;
        r.runner = o.runner;
        r.stages = "check.txt";  // beside the runner: calibration/bench/check.txt
        r.needs_harness = false;  // only the NCCL stage (two GPUs) uses it
        runStages(r, log);
        files = readManifest((fs::path(o.out_dir) / "inputs.txt").string());
    }
    return printCheck(checkProfile(profile, readRaw(files)), o.profile, log);
}

}  // namespace stepsim
