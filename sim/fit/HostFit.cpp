#include "sim/fit/HostFit.hpp"

#include <algorithm>
#include <optional>

#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

// A DDP run that timed the backward with and without gradient sync alternately: the extra per parameter tensor, and
// its no_sync cost per kernel (its kernel count from the one-GPU run before it in the file).
struct Alternate {
    double extra_per_tensor;
    std::optional<double> nosync_per_kernel;
};

// host_overhead.py's runs, by what they give.
struct HostRuns {
    std::vector<double> fwd, bwd, opt;  // one-GPU runs: cost per kernel, per parameter tensor
    std::vector<double> fwdDdp, nccl;   // DDP runs: forward per kernel, all-reduce issue
    std::vector<double> fwdRatio;       // DDP forward / the one-GPU forward before it in its file
    std::vector<double> hook;           // DDP backward's growth per parameter tensor over that one-GPU run
    std::vector<Alternate> alternates;
};

// Eager PyTorch's host cost per kernel (host_overhead.py): forward, backward and optimizer from the one-GPU runs, the
// forward under DDP from its ratio to the one-GPU forward. DDP's hook per parameter tensor from runs that timed the
// backward with and without gradient sync alternately, (sync − no_sync) per layer and tensor, put in the profile's
// units (× the profile's backward cost per kernel / the run's no_sync cost per kernel, its kernel count from the
// one-GPU run before it in the file: the host's speed moved ~2× between and within machine starts); without such
// runs, from the backward's growth between a DDP run and the one-GPU run before it in the same file, the noisier way.
HostRuns hostRuns(const RawData& raw) {
    HostRuns r;
    const RawHostOverhead* single = nullptr;
    for (const auto& h : raw.host) {
        if (!h.ddp) {
            r.fwd.push_back(h.forward_us_per_kernel);
            r.bwd.push_back(h.backward_us_per_kernel);
            r.opt.push_back(h.optimizer_us_per_param_tensor);
            single = &h;
            continue;
        }
        r.fwdDdp.push_back(h.forward_us_per_kernel);
        if (h.allreduce_issue_us) r.nccl.push_back(*h.allreduce_issue_us);
        const bool paired = single && single->file == h.file;
        if (paired && single->forward_us_per_kernel > 0)
            r.fwdRatio.push_back(h.forward_us_per_kernel / single->forward_us_per_kernel);
        if (h.backward_sync_us_per_layer && h.param_tensors_per_layer > 0) {
            Alternate a{(*h.backward_sync_us_per_layer - *h.backward_nosync_us_per_layer) / h.param_tensors_per_layer,
                        std::nullopt};
            if (paired && single->backward_us_per_kernel > 0 && single->backward_us_per_layer > 0)
                a.nosync_per_kernel = *h.backward_nosync_us_per_layer /
                                      (single->backward_us_per_layer / single->backward_us_per_kernel);
            r.alternates.push_back(a);
        }
        if (paired && h.param_tensors_per_layer > 0)
            r.hook.push_back((h.backward_us_per_layer - single->backward_us_per_layer) / h.param_tensors_per_layer);
        single = nullptr;
    }
    return r;
}

// `d` ← the median of the runs `v` (none: unchanged), its p99 at the base's spread.
void setMedian(json& lj, std::set<std::string>& got, const char* name, Distribution& d, const std::vector<double>& v) {
    if (v.empty()) return;
    const double spread = d.median_us > 0 ? d.p99_us / d.median_us : 1.0;
    d.median_us = median(v);
    d.p99_us = d.median_us * spread;
    lj[name] = {{"median_us", d.median_us}, {"p99_us", d.p99_us}, {"runs", v.size()}, {"from", "host_overhead"}};
    got.insert(name);
}

// Activation checkpointing per checkpointed layer (checkpoint_host records): the extra host time less the recomputed
// kernels' launches at the rounds' forward cost per kernel (the simulator prices them apart, at the forward's rate),
// in the profile's units (× the profile's forward cost per kernel / the rounds'), the median over runs.
void fitCheckpointHost(FitState& s, json& lj, std::set<std::string>& got) {
    if (s.raw.checkpoint_host.empty()) return;
    LaunchRates& launch = s.profile.launch;
    std::vector<double> sf, sb, ff, fb;
    for (const RawCheckpointHost& c : s.raw.checkpoint_host) {
        const double plain = c.plain_forward_us_per_kernel;
        const double scale = launch.forward_host.median_us / plain;
        auto bwd = [&](const RawCheckpointHost::Mode& m) {
            return std::max(0.0, (m.backward_extra_us - m.recomputed_kernels * plain) * scale);
        };
        sf.push_back(std::max(0.0, c.selective.forward_extra_us * scale));
        sb.push_back(bwd(c.selective));
        ff.push_back(std::max(0.0, c.full.forward_extra_us * scale));
        fb.push_back(bwd(c.full));
    }
    launch.checkpoint_host_us = {median(sf), median(sb), median(ff), median(fb)};
    lj["checkpoint_host_us"] = {{"selective_forward", sf}, {"selective_backward", sb},
                                {"full_forward", ff}, {"full_backward", fb}};
    got.insert("checkpoint_host_us");
}

// AccumulateGrad's add per parameter tensor: the runs' median ratio to their own backward cost per kernel, times the
// profile's (the host's speed moves both; the ratio carries across machine starts).
void fitAccumulateHost(FitState& s, json& lj, std::set<std::string>& got) {
    if (s.raw.accumulate_host.empty()) return;
    LaunchRates& launch = s.profile.launch;
    std::vector<double> ratio, us;
    for (const RawAccumulateHost& a : s.raw.accumulate_host)
        ratio.push_back(a.over_backward_kernel), us.push_back(a.us_per_param_tensor);
    launch.grad_accumulate_host_us = median(ratio) * launch.backward_host.median_us;
    lj["grad_accumulate_host_us"] = {{"value", launch.grad_accumulate_host_us},
                                     {"over_backward_kernel", ratio}, {"us_per_param_tensor", us}};
    got.insert("grad_accumulate_host_us");
}

// The forward under DDP: the profile's forward cost per kernel times the median ratio of a DDP forward to the one-GPU
// forward timed beside it (a DDP run and the one-GPU run before it in its file; ddp_host.py's validation models, plain
// and under DDP in turn), as the host's speed moves ~2x between runs; the median of the DDP runs' own costs only
// without such pairs.
void fitForwardDdp(FitState& s, HostRuns& runs, json& lj, std::set<std::string>& got) {
    LaunchRates& launch = s.profile.launch;
    for (const RawDdpHost& d : s.raw.ddp_host) runs.fwdRatio.push_back(d.ddp.forward_us / d.plain.forward_us);
    if (runs.fwdRatio.empty() || !(launch.forward_host.median_us > 0)) {
        setMedian(lj, got, "forward_host_ddp", launch.forward_host_ddp, runs.fwdDdp);
        return;
    }
    Distribution& d = launch.forward_host_ddp;
    const double spread = d.median_us > 0 ? d.p99_us / d.median_us : 1.0;
    d.median_us = launch.forward_host.median_us * median(runs.fwdRatio);
    d.p99_us = d.median_us * spread;
    lj["forward_host_ddp"] = {{"median_us", d.median_us}, {"p99_us", d.p99_us},
                              {"from", "forward_host times the paired ratios' median"},
                              {"ratios", runs.fwdRatio}, {"unpaired_runs", runs.fwdDdp}};
    got.insert("forward_host_ddp");
}

// The spread of the host's speed: each run's cost per kernel over the median of its kind (forward, backward, DDP
// forward), pooled; its 10th and 90th percentile, from 8 ratios on.
void fitHostCostSpread(FitState& s, const HostRuns& runs, json& lj, std::set<std::string>& got) {
    std::vector<double> ratios;
    for (const auto* v : {&runs.fwd, &runs.bwd, &runs.fwdDdp})
        if (const double m = median(*v); m > 0)
            for (double x : *v) ratios.push_back(x / m);
    if (ratios.size() < 8) return;
    HostCostSpread& spread = s.profile.launch.host_cost_spread;
    spread = {std::min(1.0, quantile(ratios, 0.1)), std::max(1.0, quantile(ratios, 0.9))};
    lj["host_cost_spread"] = {{"p10", spread.p10}, {"p90", spread.p90}, {"ratios", ratios}};
    got.insert("host_cost_spread");
}

// The hook from the validation's own models where ddp_host.py timed them (what DDP adds to the backward per parameter
// tensor, in the profile's units: × the profile's backward cost per kernel / the record's plain one; less the copy
// back, one eager op unless the gradients are the buckets' views, and the tensor's share of its buckets' all-reduce
// issue, which the model prices apart), the median over the records; else from the tiny model's runs that timed the
// backward with and without gradient sync alternately (less the copy back, one eager op); else from its paired runs.
void fitDdpHook(FitState& s, const HostRuns& runs, json& lj, std::set<std::string>& got) {
    LaunchRates& launch = s.profile.launch;
    std::vector<double> hookAlternate, hookModels;
    for (const Alternate& a : runs.alternates) {
        const double scale = a.nosync_per_kernel && *a.nosync_per_kernel > 0
                                 ? launch.backward_host.median_us / *a.nosync_per_kernel
                                 : 1.0;
        hookAlternate.push_back(a.extra_per_tensor * scale - launch.eager_host.median_us);
    }
    json models = json::array();
    for (const RawDdpHost& d : s.raw.ddp_host) {
        const double plain_per_launch = d.plain.backward_us / d.plain.backward_launches;
        const double scale = launch.backward_host.median_us / plain_per_launch;
        const double per_tensor = (d.ddp.backward_us - d.plain.backward_us) / d.param_tensors * scale;
        const double apart = (d.gradient_as_bucket_view ? 0.0 : launch.eager_host.median_us) +
                             launch.nccl_host.median_us * d.buckets / d.param_tensors;
        hookModels.push_back(per_tensor - apart);
        models.push_back({{"id", d.id}, {"us_per_tensor", per_tensor}, {"hook_us", hookModels.back()}});
    }
    if (!hookModels.empty()) {
        launch.ddp_hook_host_us = std::max(0.0, median(hookModels));
        lj["ddp_hook_host_us"] = {{"value", launch.ddp_hook_host_us},
                                  {"from", "ddp_host: the validation's models, plain and under DDP in turn"},
                                  {"records", models}, {"tiny_model_sync_vs_no_sync_not_used", hookAlternate},
                                  {"pairs_not_used", runs.hook}};
    } else if (!hookAlternate.empty()) {
        launch.ddp_hook_host_us = std::max(0.0, median(hookAlternate));
        lj["ddp_hook_host_us"] = {{"value", launch.ddp_hook_host_us}, {"from", "sync vs no_sync"},
                                  {"runs", hookAlternate}, {"pairs_not_used", runs.hook}};
    } else if (!runs.hook.empty()) {
        launch.ddp_hook_host_us = std::max(0.0, median(runs.hook));
        lj["ddp_hook_host_us"] = {{"value", launch.ddp_hook_host_us}, {"from", "paired runs"}, {"pairs", runs.hook}};
    } else {
        return;
    }
    got.insert("ddp_hook_host_us");
}

// find_unused_parameters' graph walk per parameter tensor: the forward's extra host time under it over the parameter
// tensors, less the _DDPSink clone's launch (one forward kernel under DDP, launch.forward_host_ddp, which the model
// prices apart); the median over the records (memory_check.py's ddp_find_unused).
void fitDdpFindUnused(FitState& s, json& lj, std::set<std::string>& got) {
    if (s.raw.ddp_find_unused.empty()) return;
    LaunchRates& launch = s.profile.launch;
    std::vector<double> per_tensor;
    json records = json::array();
    for (const RawDdpFindUnused& f : s.raw.ddp_find_unused) {
        per_tensor.push_back((f.find_unused_us - f.ddp_us - launch.forward_host_ddp.median_us) / f.param_tensors);
        records.push_back({{"layers", f.layers}, {"param_tensors", f.param_tensors}, {"ddp_us", f.ddp_us},
                           {"find_unused_us", f.find_unused_us}, {"us_per_tensor", per_tensor.back()}});
    }
    launch.ddp_find_unused_host_us = std::max(0.0, median(per_tensor));
    lj["ddp_find_unused_host_us"] = {{"value", launch.ddp_find_unused_host_us}, {"records", records}};
    got.insert("ddp_find_unused_host_us");
}

}  // namespace

void fitHostCosts(FitState& s, json& lj, std::set<std::string>& got) {
    LaunchRates& launch = s.profile.launch;
    HostRuns runs = hostRuns(s.raw);
    setMedian(lj, got, "forward_host", launch.forward_host, runs.fwd);
    fitCheckpointHost(s, lj, got);  // at the forward cost just fitted
    setMedian(lj, got, "backward_host", launch.backward_host, runs.bwd);
    fitAccumulateHost(s, lj, got);  // at the backward cost just fitted
    fitForwardDdp(s, runs, lj, got);
    setMedian(lj, got, "nccl_host", launch.nccl_host, runs.nccl);
    if (!runs.opt.empty()) {
        launch.optimizer_host_per_tensor_us = median(runs.opt);
        lj["optimizer_host_per_tensor_us"] = launch.optimizer_host_per_tensor_us;
        got.insert("optimizer_host_per_tensor_us");
    }
    fitHostCostSpread(s, runs, lj, got);
    fitDdpHook(s, runs, lj, got);  // at the backward, eager and NCCL costs above
    fitDdpFindUnused(s, lj, got);  // at the DDP forward's cost above
}

}  // namespace stepsim
