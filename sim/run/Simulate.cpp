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

namespace stepsim {

namespace {

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

namespace {

// The run's stages, in the order simulate calls them; each takes what it reads and returns what it makes.

// The fabric the run simulates: `shared`, or a copy with each node's storage at checkpoint.storage_GBps
// (CheckpointIo.hpp). A sweep shares its fabric between points; only then is it copied.
struct RunFabric {
    std::optional<Fabric> own;
    const Fabric* fabric = nullptr;
    const Fabric& get() const { return own ? *own : *fabric; }
};

RunFabric runFabric(const Scenario& sc, const Fabric& shared) {
    RunFabric f{std::nullopt, &shared};
    if (!sc.checkpoint.storage_GBps) return f;
    f.own = shared;
    for (Link& l : f.own->links)
        if (l.kind == LinkKind::storage) l.capacity_Bps = *sc.checkpoint.storage_GBps * 1e9;
    return f;
}

// The Monte-Carlo samples: each a whole simulation of its own seed, on the thread pool, kept by index (the results do
// not depend on the number of threads). Only the first keeps its timeline (for traces) and, with `link_usage`, its
// links' load.
struct SampleRuns {
    std::vector<Results> results;
    std::vector<SyncObservation> syncs;
    Timeline first;
    bool symmetry_broken = false;  // a merged flow ran below its bound in some sample (Symmetry.hpp)
    int steps_to_steady = 0;       // the most steps any sample's host head start needs to decay
};

SampleRuns runSamples(const Scenario& sc, const Workload& w, const CostModel& cost, const Fabric& fabric,
                      bool link_usage, int threads) {
    const double peak = cost.peakFlops(sc.training.compute_dtype);
    const std::size_t n = static_cast<std::size_t>(sc.sim.samples);
    SampleRuns runs;
    runs.results.resize(n);
    runs.syncs.resize(n);
    std::vector<char> broken(n, 0);
    parallelFor(n, threads, [&](std::size_t i) {
        EngineConfig cfg = engineConfig(cost, sc.jitter.enabled, sampleSeed(sc.sim.seed, static_cast<int>(i)));
        cfg.stragglers = sc.jitter.stragglers;
        cfg.link_usage = link_usage && i == 0;  // the first sample's links, for the series and heat map
        Engine engine(w, cost, fabric, std::move(cfg));
        Timeline tl = engine.run();
        runs.results[i] = computeMetrics(tl, w, peak);
        for (const std::string& warning : tl.warnings) runs.results[i].warnings.push_back(warning);
        runs.syncs[i] = observeSyncs(tl, w);
        broken[i] = tl.symmetry_broken;
        if (i == 0) runs.first = std::move(tl);
    });
    runs.symmetry_broken = !w.representative.empty() && std::find(broken.begin(), broken.end(), 1) != broken.end();
    for (const Results& r : runs.results) runs.steps_to_steady = std::max(runs.steps_to_steady, r.steps_to_steady);
    return runs;
}

// The scenario to simulate instead, when the samples say this run does not answer: every rank simulated where a
// merged flow ran below its bound (the reduction is not exact here), or more steps where the host's head start over
// the GPU still decayed at the last one (Metrics.hpp's steadyWindow), within the loader's limits.
std::optional<Scenario> rerunScenario(const Scenario& sc, const SampleRuns& runs, const Workload& w) {
    if (runs.symmetry_broken) {
        Scenario full = sc;
        full.sim.symmetry = "off";
        return full;
    }
    if (runs.steps_to_steady == 0) return std::nullopt;
    Scenario longer = sc;
    longer.sim.steps = steadySteps(sc, runs.steps_to_steady, heldOps(w), runSeconds(runs.first));
    if (longer.sim.steps > sc.sim.steps) return longer;
    return std::nullopt;
}

// What the expansion knows of the step: rank 0's kernels and collectives in the last step, the compile figures.
struct StepFigures {
    int kernels_per_step = 0;
    std::optional<double> compile_time_s;
    std::optional<int> compiled_graphs_per_step;
};

StepFigures stepFigures(const Scenario& sc, const Expansion& e) {
    StepFigures f;
    for (const Op& op : e.workload.programs.front().ops)
        if ((op.kind == OpKind::kernel || op.kind == OpKind::collective) && op.step == sc.sim.steps - 1)
            ++f.kernels_per_step;
    if (sc.compile.enabled) {
        f.compile_time_s = e.compile_time_s;
        f.compiled_graphs_per_step = e.compiled_graphs_per_step;
    }
    return f;
}

// The overlap windows against the reference (the same workload without noise or stragglers), and the idle at the
// gradient sync, from every sample's syncs.
struct SyncFigures {
    std::vector<OverlapWindow> overlap_windows;
    std::optional<AccumulationIdle> accumulation_idle;
};

SyncFigures syncFigures(const Scenario& sc, const Workload& w, const CostModel& cost, const Fabric& fabric,
                        const std::vector<SyncObservation>& syncs) {
    SyncFigures f;
    if (!syncs.front().syncs.empty()) {
        const bool noisy = sc.jitter.enabled || !sc.jitter.stragglers.empty();
        const SyncObservation reference =
            noisy ? observeSyncs(Engine(w, cost, fabric, engineConfig(cost, false, sc.sim.seed)).run(), w) : syncs.front();
        f.overlap_windows = overlapWindows(reference, syncs, w);
    }
    f.accumulation_idle = accumulationIdle(syncs, sc.training.grad_accum, static_cast<int>(w.programs.size()));
    return f;
}

// The memory model's estimate in GiB. It prices the built-in transformer; an imported trace records no allocations,
// so its step has no estimate (null in the JSON, n/a in the text).
struct MemoryFigures {
    std::optional<double> peak_gib;
    std::optional<MemoryBreakdown> breakdown;
    std::vector<MemoryBreakdown> phases;
};

MemoryFigures memoryFigures(const Scenario& sc, const MemoryEstimate& m) {
    MemoryFigures f;
    if (sc.model.type == "trace") return f;
    f.peak_gib = m.peak() / (1024.0 * 1024.0 * 1024.0);
    f.breakdown = memoryBreakdown(m);
    for (const MemoryEstimate& phase : m.phases) f.phases.push_back(memoryBreakdown(phase));
    return f;
}

// A host-bound step again with every host cost at the profile's spread (launch.host_cost_spread p10, p90): the range
// a faster and a slower host give, each with the steps its own host's head start needs to decay (a faster host's
// decays more slowly). At factor 1 the step is `step_ms`: the range holds it (a faster host that reads a few tenths
// of a percent slower is the jitter's draws landing on other kernels, not a slower step).
std::optional<std::pair<double, double>> hostRange(const Scenario& sc, const HostCostSpread& spread,
                                                   const Workload& workload, const CostModel& cost,
                                                   const Fabric& fabric, double step_ms) {
    if (!(spread.p10 < 1.0 || spread.p90 > 1.0)) return std::nullopt;
    const double peak = cost.peakFlops(sc.training.compute_dtype);
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
        const auto [r, run_s] = run(workload);
        Scenario longer = sc;
        if (r.steps_to_steady > 0) longer.sim.steps = steadySteps(sc, r.steps_to_steady, heldOps(workload), run_s);
        if (longer.sim.steps == sc.sim.steps) return r.step_time_ms;
        return run(runExpansion(longer, cost, fabric).workload).first.step_time_ms;
    };
    return std::pair{std::min(step_ms, at(spread.p10)), std::max(step_ms, at(spread.p90))};
}

// The run's warnings, in the order a reader meets them: the loader's (keys with no effect here), the expansion's,
// the samples' (each once), the memory that does not fit, the profile's, a head start still decaying, a host-bound
// step.
std::vector<std::string> runWarnings(const Scenario& sc, const HardwareProfile& profile, const Simulation& sim) {
    std::vector<std::string> out = sc.warnings;
    for (const std::string& w : sim.expansion.warnings) out.push_back(w);
    for (const std::string& w : sim.results.warnings)
        if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    if (!sim.fitsMemory())
        out.push_back(outOfMemoryWarning(*sim.results.peak_memory_gib, *sim.results.memory_gib, sim.gpu_memory_gib));
    for (std::string& w : profileWarnings(sc, profile)) out.push_back(std::move(w));
    if (sim.results.steps_to_steady > 0)
        out.push_back(fmt::format(
            "the host's head start over the GPU was still decaying at the last of {} steps (no more fit the loader's "
            "limits): the step time may read short of the host's issue time, down to the GPU's own",
            sc.sim.steps));
    if (std::string w = hostBoundWarning(sim.expansion.workload, sim.results, sim.host_range_ms,
                                         profile.launch.host_cost_spread, sim.timeline.host_speed, launchAdvice(sc));
        !w.empty())
        out.push_back(std::move(w));
    return out;
}

// The result of the run: the samples' aggregate with what the other stages measured beside it.
Results runResults(const SampleRuns& runs, StepFigures step, SyncFigures syncs, MemoryFigures memory) {
    Results r = runs.results.size() == 1 ? runs.results.front() : aggregateSamples(runs.results);
    r.kernels_per_step = step.kernels_per_step;
    r.compile_time_s = step.compile_time_s;
    r.compiled_graphs_per_step = step.compiled_graphs_per_step;
    r.overlap_windows = std::move(syncs.overlap_windows);
    r.accumulation_idle = syncs.accumulation_idle;
    r.peak_memory_gib = memory.peak_gib;
    r.memory_gib = memory.breakdown;
    r.memory_phases_gib = std::move(memory.phases);
    return r;
}

}  // namespace

// The pipeline: fabric → expansion → samples (or the run again where they say it does not answer) → the figures
// beside the samples → the host's range → the warnings.
Simulation simulate(const Scenario& sc, const HardwareProfile& profile, const CostModel& cost, const Fabric& shared,
                    bool link_usage, int threads) {
    const RunFabric own = runFabric(sc, shared);
    const Fabric& fabric = own.get();
    Simulation sim;
    sim.expansion = runExpansion(sc, cost, fabric);
    const Workload& w = sim.expansion.workload;
    SampleRuns runs = runSamples(sc, w, cost, fabric, link_usage, threads);
    if (const std::optional<Scenario> again = rerunScenario(sc, runs, w))
        return simulate(*again, profile, cost, shared, link_usage, threads);
    sim.results = runResults(runs, stepFigures(sc, sim.expansion), syncFigures(sc, w, cost, fabric, runs.syncs),
                             memoryFigures(sc, sim.expansion.memory));
    sim.timeline = std::move(runs.first);
    sim.gpu_memory_gib = profile.gpu.memory_gib;
    // The slowest host's issue time decides (the ranks' hosts at the first sample's speeds).
    sim.host_bound = hostShare(w, sim.results, sim.timeline.host_speed).share >= kHostBoundShare;
    if (sim.host_bound)
        sim.host_range_ms =
            hostRange(sc, profile.launch.host_cost_spread, w, cost, fabric, sim.results.step_time_ms);
    sim.results.step_time_ms_host_range = sim.host_range_ms;
    sim.results.warnings = runWarnings(sc, profile, sim);
    return sim;
}

}  // namespace stepsim
