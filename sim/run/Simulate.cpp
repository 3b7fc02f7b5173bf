#include "sim/run/Simulate.hpp"

#include <algorithm>
#include <array>
#include <random>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "sim/engine/Engine.hpp"
#include "sim/engine/Symmetry.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/metrics/Metrics.hpp"
#include "sim/metrics/OverlapWindows.hpp"
#include "sim/base/ParallelFor.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/scenario/ClusterBuild.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/topology/Builders.hpp"
#include "sim/workload/CompileTransform.hpp"

namespace stepsim {

namespace {

// The largest share of a step its rank's host spends issuing kernels, with that host time and step time (ms) and the
// rank.
struct HostShare {
    double share = 0.0, host_ms = 0.0, step_ms = 0.0;
    std::size_t rank = 0;
};

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

// The steps a run takes when `sc`'s steps ended with the host's head start still decaying and at most `more` steps
// would reach the steady state (Metrics.hpp's steadyWindow, an upper bound): sim.steps + more, but at most twice
// sim.steps (a run that still ends in the head start doubles again: the runs cost at most twice the last), within the
// loader's limits (kMaxSteps, kMaxHeldOps for the `ops` its workload holds now, kMaxRunSeconds for its `run_s`
// simulated seconds now).
int steadySteps(const Scenario& sc, int more, double ops, double run_s) {
    const double steps = sc.sim.steps;
    more = std::min(more, std::max(2, sc.sim.steps));
    double cap = kMaxSteps;
    if (ops > 0) cap = std::min(cap, std::floor(kMaxHeldOps / ops * steps));
    if (run_s > 0) cap = std::min(cap, std::floor(kMaxRunSeconds / run_s * steps));
    return static_cast<int>(std::clamp(steps + more, steps, std::max(steps, cap)));
}

double heldOps(const Workload& w) {
    double n = 0;
    for (const Program& p : w.programs) n += double(p.ops.size());
    return n;
}

double runSeconds(const Timeline& tl) {
    Time end;
    for (const auto& b : tl.step_end) end = std::max(end, b.back());
    return end.seconds();
}

// The workload of `sc` as simulated: expanded, and reduced by symmetry where that is exact.
Expansion runExpansion(const Scenario& sc, const CostModel& cost, const Fabric& fabric) {
    Expansion e = expand(sc, cost);
    Workload& w = e.workload;
    if (!w.representative.empty() || (symmetryApplies(sc) && reduceBySymmetry(w, fabric, sc.jitter.enabled).empty()))
        e.warnings.push_back(symmetryNote(w, sc.jitter.enabled));
    return e;
}

}  // namespace

MemoryBreakdown memoryBreakdown(const MemoryEstimate& m) {
    constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
    MemoryBreakdown b;
    b.params = (m.params + m.weight_cache + m.gathered) / GiB;
    b.grads = m.grads / GiB;
    b.optimizer = m.optimizer / GiB;
    b.activations = (m.activations + m.loss) / GiB;
    b.buffers = m.buckets / GiB;
    b.phase = m.phase;
    return b;
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

std::uint64_t sampleSeed(std::uint64_t seed, int sample) {
    if (sample == 0) return seed;
    std::seed_seq seq{std::uint32_t(seed), std::uint32_t(seed >> 32), std::uint32_t(sample), std::uint32_t(0x5a3b1e)};
    std::array<std::uint32_t, 2> out{};
    seq.generate(out.begin(), out.end());
    return (std::uint64_t(out[0]) << 32) | out[1];
}

Simulation simulate(const Scenario& sc, const HardwareProfile& profile, bool link_usage, int threads) {
    const CostModel cost = scenarioCostModel(sc, profile);
    return simulate(sc, profile, cost, scenarioFabric(sc), link_usage, threads);
}

CostModel scenarioCostModel(const Scenario& sc, const HardwareProfile& profile) {
    const bool nvswitch = nodeTemplate(sc.cluster.node, std::filesystem::path(sc.source).parent_path().string()).hasNvSwitch();
    return CostModel(profile, sc.nccl, nvswitch, sc.cluster.network);
}

Fabric scenarioFabric(const Scenario& sc) {
    return clusterFabric(sc.cluster, std::filesystem::path(sc.source).parent_path().string());
}

Simulation simulate(const Scenario& sc, const HardwareProfile& profile, const CostModel& cost, const Fabric& shared,
                    bool link_usage, int threads) {
    Simulation sim;
    // checkpoint.storage_GBps: each node's storage takes writes at that rate (CheckpointIo.hpp); the fabric a sweep
    // shares between points is copied only then.
    std::optional<Fabric> own;
    if (sc.checkpoint.storage_GBps) {
        own = shared;
        for (Link& l : own->links)
            if (l.kind == LinkKind::storage) l.capacity_Bps = *sc.checkpoint.storage_GBps * 1e9;
    }
    const Fabric& fabric = own ? *own : shared;
    // sim.symmetry: one simulated rank per class of identical ranks where exact or stated (sim/engine/Symmetry.hpp).
    // (The expansion reduces data-parallel replicas itself, Expand.cpp.)
    sim.expansion = runExpansion(sc, cost, fabric);
    const double peak = cost.peakFlops(sc.training.compute_dtype);
    // Each sample a whole simulation of its own seed, on the thread pool; kept by index, so the results do not depend
    // on the number of threads. Only the first keeps its timeline (for traces).
    const int n = sc.sim.samples;
    std::vector<Results> samples(static_cast<std::size_t>(n));
    std::vector<SyncObservation> syncs(static_cast<std::size_t>(n));
    std::vector<std::vector<std::string>> sample_warnings(static_cast<std::size_t>(n));
    std::vector<char> broken(static_cast<std::size_t>(n), 0);
    parallelFor(static_cast<std::size_t>(n), threads, [&](std::size_t i) {
        EngineConfig cfg = engineConfig(cost, sc.jitter.enabled, sampleSeed(sc.sim.seed, static_cast<int>(i)));
        cfg.stragglers = sc.jitter.stragglers;
        cfg.link_usage = link_usage && i == 0;  // the first sample's links, for the series and heat map
        Engine engine(sim.expansion.workload, cost, fabric, std::move(cfg));
        Timeline tl = engine.run();
        samples[i] = computeMetrics(tl, sim.expansion.workload, peak);
        for (const std::string& w : tl.warnings) samples[i].warnings.push_back(w);
        syncs[i] = observeSyncs(tl, sim.expansion.workload);
        broken[i] = tl.symmetry_broken;
        if (i == 0) sim.timeline = std::move(tl);
    });
    if (!sim.expansion.workload.representative.empty() && std::find(broken.begin(), broken.end(), 1) != broken.end()) {
        Scenario full = sc;  // a merged flow ran below its bound: the reduction is not exact here
        full.sim.symmetry = "off";
        return simulate(full, profile, cost, shared, link_usage, threads);
    }
    // The host's head start over the GPU still decaying at the last step (Metrics.hpp's steadyWindow): the run again
    // with the steps that reach the steady state, within the loader's limits.
    int more = 0;
    for (const Results& r : samples) more = std::max(more, r.steps_to_steady);
    if (more > 0) {
        Scenario longer = sc;
        longer.sim.steps = steadySteps(sc, more, heldOps(sim.expansion.workload), runSeconds(sim.timeline));
        if (longer.sim.steps > sc.sim.steps) return simulate(longer, profile, cost, shared, link_usage, threads);
    }
    sim.results = samples.size() == 1 ? samples.front() : aggregateSamples(samples);
    const Program& rank0 = sim.expansion.workload.programs.front();
    for (const Op& op : rank0.ops)
        if ((op.kind == OpKind::kernel || op.kind == OpKind::collective) && op.step == sc.sim.steps - 1)
            ++sim.results.kernels_per_step;
    if (sc.compile.enabled) {
        sim.results.compile_time_s = sim.expansion.compile_time_s;
        sim.results.compiled_graphs_per_step = sim.expansion.compiled_graphs_per_step;
    }
    // The overlap windows against the reference: the same workload without noise or stragglers.
    if (!syncs.front().syncs.empty()) {
        const bool noisy = sc.jitter.enabled || !sc.jitter.stragglers.empty();
        const SyncObservation reference =
            noisy ? observeSyncs(Engine(sim.expansion.workload, cost, fabric, engineConfig(cost, false, sc.sim.seed)).run(),
                                 sim.expansion.workload)
                  : syncs.front();
        sim.results.overlap_windows = overlapWindows(reference, syncs, sim.expansion.workload);
    }
    sim.results.accumulation_idle =
        accumulationIdle(syncs, sc.training.grad_accum, static_cast<int>(sim.expansion.workload.programs.size()));
    // The memory model prices the built-in transformer; an imported trace records no allocations, so its step has
    // no estimate (null in the JSON, n/a in the text).
    if (sc.model.type != "trace") {
        const MemoryEstimate& m = sim.expansion.memory;
        sim.results.peak_memory_gib = m.peak() / (1024.0 * 1024.0 * 1024.0);
        sim.results.memory_gib = memoryBreakdown(m);
        for (const MemoryEstimate& phase : m.phases) sim.results.memory_phases_gib.push_back(memoryBreakdown(phase));
    }
    std::vector<std::string> warnings = sc.warnings;  // the loader's: keys with no effect here
    for (const std::string& w : sim.expansion.warnings) warnings.push_back(w);
    for (const std::string& w : sim.results.warnings)
        if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    sim.gpu_memory_gib = profile.gpu.memory_gib;
    if (sim.results.peak_memory_gib && *sim.results.peak_memory_gib > profile.gpu.memory_gib)
        warnings.push_back(outOfMemoryWarning(*sim.results.peak_memory_gib, *sim.results.memory_gib,
                                              profile.gpu.memory_gib));
    // A node runs on another GPU's profile only when the scenario names that profile (the loader refuses the
    // built-in default where the node has none, NodeTemplate::default_profile); the result says so. An extrapolated
    // profile says so too.
    if (const std::optional<NodeTemplate> node = builtinNode(sc.cluster.node);
        node && !node->gpu.empty() && profile.gpu.model.find(node->gpu) == std::string::npos)
        warnings.push_back(fmt::format("profile: {} has the rates of {} GPUs, not of the {}-class GPUs of {}; the "
                                       "step is that GPU's step on this node's topology",
                                       profile.name, profile.gpu.model, node->gpu, sc.cluster.node));
    if (profile.derivation.extrapolated)
        warnings.push_back(fmt::format("profile: {} is extrapolated from {} (another die; no measurement on these GPUs "
                                       "checked it: {})",
                                       profile.name, profile.derivation.from, profile.derivation.notes));
    // A host-bound step again with every host cost at the profile's spread: the range a faster and a slower host give.
    const HostCostSpread& spread = profile.launch.host_cost_spread;
    // The slowest host's issue time decides (the ranks' hosts at the first sample's speeds).
    const std::vector<double>& host_speed = sim.timeline.host_speed;
    sim.host_bound = hostShare(sim.expansion.workload, sim.results, host_speed).share >= kHostBoundShare;
    if (sim.host_bound && (spread.p10 < 1.0 || spread.p90 > 1.0)) {
        // Each with the steps its own host's head start needs to decay (a faster host's decays more slowly).
        const auto at = [&](double factor) {
            const auto run = [&](Workload w) {
                for (Program& p : w.programs)
                    for (Op& op : p.ops) op.host_s *= factor;
                EngineConfig cfg = engineConfig(cost, sc.jitter.enabled, sc.sim.seed);
                cfg.stragglers = sc.jitter.stragglers;
                Engine engine(w, cost, fabric, std::move(cfg));
                const Timeline tl = engine.run();
                return std::pair{computeMetrics(tl, w, peak), runSeconds(tl)};
            };
            const auto [r, run_s] = run(sim.expansion.workload);
            Scenario longer = sc;
            if (r.steps_to_steady > 0)
                longer.sim.steps = steadySteps(sc, r.steps_to_steady, heldOps(sim.expansion.workload), run_s);
            if (longer.sim.steps == sc.sim.steps) return r.step_time_ms;
            return run(runExpansion(longer, cost, fabric).workload).first.step_time_ms;
        };
        // At factor 1 the step is the one above: the range holds it (a faster host that reads a few tenths of a
        // percent slower is the jitter's draws landing on other kernels, not a slower step).
        const double step = sim.results.step_time_ms;
        sim.host_range_ms = std::pair{std::min(step, at(spread.p10)), std::max(step, at(spread.p90))};
        sim.results.step_time_ms_host_range = sim.host_range_ms;
    }
    if (sim.results.steps_to_steady > 0)
        warnings.push_back(fmt::format(
            "the host's head start over the GPU was still decaying at the last of {} steps (no more fit the loader's "
            "limits): the step time may read short of the host's issue time, down to the GPU's own",
            sc.sim.steps));
    if (const std::string w =
            hostBoundWarning(sim.expansion.workload, sim.results, sim.host_range_ms, spread, host_speed,
                             launchAdvice(sc));
        !w.empty())
        warnings.push_back(w);
    sim.results.warnings = warnings;
    return sim;
}

}  // namespace stepsim
