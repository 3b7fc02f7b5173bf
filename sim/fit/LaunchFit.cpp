#include "sim/fit/LaunchFit.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "sim/fit/ByShape.hpp"
#include "sim/fit/HostFit.hpp"
#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

Distribution dist(const RawTimes& t) { return {t.median, std::max(t.p99, t.median)}; }

// The classes of operation a step's gaps are measured before, and their StepGaps fields.
constexpr std::pair<const char*, double StepGaps::*> kClasses[] = {
    {"gemm", &StepGaps::gemm_us},           {"attention", &StepGaps::attention_us},
    {"memory", &StepGaps::memory_us},       {"optimizer", &StepGaps::optimizer_us},
    {"copy", &StepGaps::copy_us}};

// Gaps inside a training step's mix (kernel_gaps.py, its gaps beside NCCL not fitted): before each class of
// operation, the median over runs of each run's mean gap (the simulator sums them; the mean is what adds up).
void fitClassGaps(FitState& s, json& lj) {
    StepGaps& gaps = s.profile.launch.step_gap_us;
    json gj = json::object();
    for (const auto& [cls, field] : kClasses) {
        std::vector<double> means;
        for (const auto& l : s.raw.launches)
            if (l.op == std::string("step_gap_") + cls) means.push_back(l.time.mean);
        if (means.empty()) {
            s.kept.push_back(std::string("launch.step_gap_us.") + cls);
            continue;
        }
        gaps.*field = median(means);
        gj[cls] = {{"mean_us", gaps.*field}, {"runs", means}};
    }
    if (!gj.empty()) lj["step_gap_us"] = gj;
}

// Before a GEMM, by its shape (gemm_gaps.py): the median over runs of each run's mean gap.
void fitGemmGapByShape(FitState& s, json& lj) {
    ByShape gaps;
    for (const auto& l : s.raw.launches)
        if (l.op == "step_gap_gemm_shape") gaps[{l.m, l.n, l.k}].push_back(l.time.mean);
    if (!gaps.empty()) {
        s.profile.launch.gemm_gap_by_shape = medianByShape(gaps, 0.0);
        lj["gemm_gap_by_shape"] = shapeReport(s.profile.launch.gemm_gap_by_shape);
    } else {
        s.kept.push_back("launch.gemm_gap_by_shape");
    }
}

// The record alone that a record beside NCCL (`b`) is compared with: of `op`, the same file and rank, and mode alone
// (per class) or the same form and shape (per GEMM shape).
const RawLaunch* aloneOf(const RawData& raw, const RawLaunch& b, const std::string& op) {
    for (const auto& a : raw.launches)
        if (a.op == op && a.file == b.file && a.rank == b.rank &&
            (op.starts_with("step_gap_unit_") ? a.mode == "alone" : a.form == b.form && a.m == b.m && a.n == b.n && a.k == b.k))
            return &a;
    return nullptr;
}

// Beside a resident NCCL kernel, moving data or waiting for its peer (gemm_gaps.py --beside): each class's ratio of the
// mean gap beside to the mean alone over the units of one run and rank, the median over runs and ranks, times the gap
// alone above. A class the units lack (attention, the optimizer): 0, the gap alone.
void fitClassGapsBeside(FitState& s, json& lj) {
    LaunchRates& launch = s.profile.launch;
    for (const auto& [mode, gapsBeside] : {std::pair{std::string("transfer"), &launch.step_gap_beside_transfer_us},
                                          std::pair{std::string("waiting"), &launch.step_gap_beside_waiting_us}}) {
        const std::string key = "step_gap_beside_" + mode + "_us";
        json bj = json::object();
        for (const auto& [cls, field] : kClasses) {
            const std::string op = std::string("step_gap_unit_") + cls;
            std::vector<double> ratios;
            for (const auto& b : s.raw.launches)
                if (b.op == op && b.mode == mode)
                    if (const RawLaunch* a = aloneOf(s.raw, b, op); a && a->time.mean > 0) ratios.push_back(b.time.mean / a->time.mean);
            if (ratios.empty() || !(launch.step_gap_us.*field > 0)) {
                s.kept.push_back("launch." + key + "." + cls);
                continue;
            }
            (*gapsBeside).*field = launch.step_gap_us.*field * median(ratios);
            bj[cls] = {{"mean_us", (*gapsBeside).*field}, {"ratios", ratios}};
        }
        if (!bj.empty()) lj[key] = bj;
    }
}

// By GEMM shape beside an NCCL kernel moving data: each shape's ratio beside to alone within a run, rank and form, the
// median over them, times the shape's gap alone (gemm_gap_by_shape).
void fitGemmGapBesideByShape(FitState& s, json& lj) {
    ByShape ratios;
    for (const auto& b : s.raw.launches)
        if (b.op == "step_gap_gemm_shape_beside_nccl" && b.mode == "transfer")
            if (const RawLaunch* a = aloneOf(s.raw, b, "step_gap_gemm_shape"); a && a->time.mean > 0)
                ratios[{b.m, b.n, b.k}].push_back(b.time.mean / a->time.mean);
    std::vector<GemmShapeValue> beside;
    for (const GemmShapeValue& g : s.profile.launch.gemm_gap_by_shape)
        if (auto it = ratios.find({g.m, g.n, g.k}); it != ratios.end())
            beside.push_back({g.m, g.n, g.k, g.value * median(it->second)});
    if (!beside.empty()) {
        s.profile.launch.gemm_gap_beside_transfer_by_shape = std::move(beside);
        lj["gemm_gap_beside_transfer_by_shape"] = shapeReport(s.profile.launch.gemm_gap_beside_transfer_by_shape);
    } else {
        s.kept.push_back("launch.gemm_gap_beside_transfer_by_shape");
    }
}

}  // namespace

void fitStepGaps(FitState& s, json& lj) {
    fitClassGaps(s, lj);
    fitGemmGapByShape(s, lj);
    fitClassGapsBeside(s, lj);
    fitGemmGapBesideByShape(s, lj);
}

void fitLaunch(FitState& s) {
    LaunchRates& launch = s.profile.launch;
    json lj = json::object();
    std::set<std::string> got;
    for (const auto& l : s.raw.launches) {
        lj[l.op] = {{"median_us", l.time.median}, {"p10_us", l.time.p10}, {"p90_us", l.time.p90}, {"p99_us", l.time.p99}};
        if (l.op == "device_gap") launch.device_gap = dist(l.time), got.insert("device_gap");
        if (l.op == "graph_host_launch") {
            // cudaGraphLaunch of the harness's 100-kernel graph: host cost per kernel.
            RawTimes t = l.time;
            t.median /= 100.0;
            t.p99 /= 100.0;
            launch.graph_host = dist(t);
            got.insert("graph_host");
        }
    }
    fitStepGaps(s, lj);
    for (const auto& d : s.raw.dispatch) {
        lj["pytorch_" + d.op] = {{"median_us", d.time.median}, {"p99_us", d.time.p99}};
        if (d.op == "eager_host") launch.eager_host = dist(d.time), got.insert("eager_host");
    }
    fitHostCosts(s, lj, got);
    for (const std::string f : {"device_gap", "graph_host", "eager_host", "forward_host", "forward_host_ddp",
                                "backward_host", "optimizer_host_per_tensor_us", "ddp_hook_host_us", "ddp_find_unused_host_us", "nccl_host",
                                "grad_accumulate_host_us", "checkpoint_host_us", "host_cost_spread"})
        if (!got.count(f)) s.kept.push_back("launch." + f);
    s.kept.push_back("launch.compiled_host");
    s.report["launch"] = lj;
}

}  // namespace stepsim
