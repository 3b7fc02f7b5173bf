#include "sim/run/RunWarnings.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/metrics/Metrics.hpp"
#include "sim/topology/Builders.hpp"
#include "sim/workload/CompileTransform.hpp"

namespace stepsim {

namespace {

// The host time per measured step (ms) of rank `r`'s data loader on the main thread (InputPipeline's host work named
// "loader: ...", data_loader.num_workers: 0): host time, but not spent issuing kernels.
double loaderHostMs(const Workload& wl, std::size_t r, const std::vector<double>& host_speed, int first) {
    if (r >= wl.programs.size()) return 0.0;
    first = std::clamp(first, 0, std::max(0, wl.steps - 1));  // the measured steps, as hostIssueMs
    const Program& p = wl.programs[r];
    double s = 0.0;
    for (const Op& op : p.ops)
        if (op.step >= first && op.kind == OpKind::host_work && p.names[op.name].rfind("loader:", 0) == 0)
            s += op.host_s;
    const double speed = r < host_speed.size() ? host_speed[r] : 1.0;
    return speed * s * 1e3 / double(std::max(1, wl.steps - first));
}

}  // namespace

HostShare hostShare(const Workload& workload, const Results& results, const std::vector<double>& host_speed) {
    const std::vector<double> host = hostIssueMs(workload, host_speed, results.measured_from_step);
    HostShare h;
    for (const RankResults& r : results.per_rank) {
        const std::size_t i = static_cast<std::size_t>(r.rank);
        if (i < host.size() && r.step_time_ms > 0 && host[i] / r.step_time_ms > h.share)
            h = {host[i] / r.step_time_ms, host[i], r.step_time_ms, i};
    }
    return h;
}

std::string outOfMemoryWarning(double peak_gib, const MemoryBreakdown& b, double gpu_gib) {
    struct Term {
        const char* name;
        double gib;
        const char* advice;
    };
    const Term terms[] = {
        {"params", b.params, "shard the parameters (parallel.data: fsdp2, fsdp1, zero3) or split the model (parallel.tp, parallel.pp)"},
        {"grads", b.grads, "shard the gradients (parallel.data: fsdp2, fsdp1, zero2, zero3) or split the model (parallel.tp, parallel.pp)"},
        {"optimizer", b.optimizer, "shard the optimizer state (parallel.data: fsdp2, fsdp1, zero1-3) or use an optimizer with less state"},
        {"activations", b.activations, "set training.activation_checkpointing or a smaller training.micro_batch"},
        {"buffers", b.buffers, "set ddp.gradient_as_bucket_view: true (no separate bucket copies)"}};
    const Term* largest = &terms[0];
    for (const Term& t : terms)
        if (t.gib > largest->gib) largest = &t;
    return fmt::format("out of memory: the estimated peak, {:.2f} GiB, exceeds the GPU's {:.2f} GiB by {:.2f} GiB; the "
                       "largest term is {}, {:.1f} GiB; to shrink it, {}",
                       peak_gib, gpu_gib, peak_gib - gpu_gib, largest->name, largest->gib, largest->advice);
}

std::string hostBoundWarning(const Workload& workload, const Results& results,
                             const std::optional<std::pair<double, double>>& range, const HostCostSpread& spread,
                             const std::vector<double>& host_speed, const std::string& advice) {
    const HostShare h = hostShare(workload, results, host_speed);
    if (h.share < kHostBoundShare) return {};
    const double loader_ms = loaderHostMs(workload, h.rank, host_speed, results.measured_from_step);
    const std::string between =
        range ? fmt::format(": with the host's cost per kernel {:.2f}x to {:.2f}x the calibrated one (the 10th and "
                            "90th percentile over the calibration's runs) the step takes {:.1f} to {:.1f} ms",
                            spread.p10, spread.p90, range->first, range->second)
              : std::string(" (on the validation's H200s most such configurations moved 10-67% between machine starts)");
    if (loader_ms > 0.0) {
        const std::string loader = fmt::format(
            "host-bound: the host spends {:.1f} ms of each {:.1f} ms step ({:.0f}%), {:.1f} ms of it issuing kernels "
            "and {:.1f} ms preparing batches on the main thread (data_loader.num_workers: 0), so the step follows the "
            "host's speed, which varies between machines and runs{}; loader workers (data_loader.num_workers > 0) "
            "would take the batches off the main thread",
            h.host_ms, h.step_ms, 100.0 * h.share, h.host_ms - loader_ms, loader_ms, between);
        return h.host_ms - loader_ms >= kHostBoundShare * h.step_ms ? loader + "; " + advice : loader;
    }
    return fmt::format("host-bound: the host spends {:.1f} ms of each {:.1f} ms step issuing kernels ({:.0f}%), so the "
                       "step follows the host's speed, which varies between machines and runs{}; {}",
                       h.host_ms, h.step_ms, 100.0 * h.share, between, advice);
}

std::string launchAdvice(const Scenario& sc) {
    if (!sc.compile.enabled) return "fewer launches (torch.compile, CUDA graphs, larger micro-batches) would shorten it";
    if (!usesCudaGraphs(sc.compile.mode))
        return "fewer launches (CUDA graphs: compile.mode reduce-overhead; larger micro-batches) would shorten it";
    return "the step is compiled under CUDA graphs already: larger micro-batches (more work per launch) would shorten "
           "it";
}

// A node runs on another GPU's profile only when the scenario names that profile (the loader refuses the built-in
// default where the node has none, NodeTemplate::default_profile); the result says so. An extrapolated profile says
// so too.
std::vector<std::string> profileWarnings(const Scenario& sc, const HardwareProfile& profile) {
    std::vector<std::string> out;
    if (const std::optional<NodeTemplate> node = builtinNode(sc.cluster.node);
        node && !node->gpu.empty() && profile.gpu.model.find(node->gpu) == std::string::npos)
        out.push_back(fmt::format("profile: {} has the rates of {} GPUs, not of the {}-class GPUs of {}; the step is "
                                  "that GPU's step on this node's topology",
                                  profile.name, profile.gpu.model, node->gpu, sc.cluster.node));
    if (profile.derivation.extrapolated)
        out.push_back(fmt::format("profile: {} is extrapolated from {} (another die; no measurement on these GPUs "
                                  "checked it: {})",
                                  profile.name, profile.derivation.from, profile.derivation.notes));
    return out;
}

}  // namespace stepsim
