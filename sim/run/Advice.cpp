#include "sim/run/Advice.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/base/InputError.hpp"
#include "sim/base/ParallelFor.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {
namespace {

bool sharded(const Scenario& sc) {
    const DataParallel d = sc.parallel.data;
    return d == DataParallel::fsdp1 || d == DataParallel::fsdp2 || d == DataParallel::hsdp;
}

// The knobs that act on one breakdown part (Advice.hpp's list), those already at the value left out.
std::vector<std::vector<std::string>> knobsFor(const std::string& part, const Scenario& sc) {
    std::vector<std::vector<std::string>> k;
    const bool ddp = sc.parallel.data == DataParallel::ddp;
    if (part.rfind("comm.", 0) == 0 && part != "comm.pp") {
        if (part == "comm.tp") {
            if (!sc.parallel.async_tp) k.push_back({"parallel.async_tp=true", "parallel.sequence_parallel=true"});
            return k;
        }
        if (ddp) {
            if (sc.ddp.bucket_cap_mb != 100.0) k.push_back({"ddp.bucket_cap_mb=100"});
            if (sc.ddp.bucket_cap_mb != 10.0) k.push_back({"ddp.bucket_cap_mb=10"});
            if (!sc.compile.enabled || sc.compile.comm_fusion_depth < 2)
                k.push_back({"compile.comm_fusion_depth=2", "compile.enabled=true"});
        }
        if (sharded(sc)) {
            if (!sc.fsdp.forward_prefetch) k.push_back({"fsdp.forward_prefetch=true"});
            if (sc.fsdp.reshard_after_forward.on) k.push_back({"fsdp.reshard_after_forward=false"});
        }
        return k;
    }
    if (part == "host_bound") {
        if (!sc.compile.enabled) k.push_back({"compile.enabled=true"});
        if (sc.compile.mode != CompileMode::reduce_overhead)
            k.push_back({"compile.mode=reduce-overhead", "compile.enabled=true"});
        k.push_back({fmt::format("training.micro_batch={}", 2 * sc.training.micro_batch)});
        return k;
    }
    if (part == "pipeline_bubble" || part == "comm.pp") {
        k.push_back({fmt::format("training.grad_accum={}", 2 * sc.training.grad_accum)});
        if (sc.parallel.pp_schedule != PipelineSchedule::interleaved)
            k.push_back({"parallel.pp_schedule=interleaved", "parallel.pp_virtual_stages=2"});
        if (sc.parallel.pp_schedule != PipelineSchedule::zero_bubble) k.push_back({"parallel.pp_schedule=zero_bubble"});
        return k;
    }
    if (part == "loader") {
        if (sc.data_loader.num_workers < 4) k.push_back({"data_loader.num_workers=4"});
        if (!sc.data_loader.pin_memory) k.push_back({"data_loader.pin_memory=true"});
        return k;
    }
    if (part == "checkpoint") {
        if (sc.checkpoint.mode != CheckpointMode::async) k.push_back({"checkpoint.mode=async"});
        if (!sc.checkpoint.pinned_staging) k.push_back({"checkpoint.pinned_staging=true", "checkpoint.mode=async"});
        return k;
    }
    if (part == "compute.optimizer" && sc.training.optimizer_impl != OptimizerImpl::fused)
        k.push_back({"training.optimizer_impl=fused"});
    if (part == "compute.memory" && !sc.compile.enabled) k.push_back({"compile.enabled=true"});
    return k;
}

std::string keyOf(const std::string& set) { return set.substr(0, set.find('=')); }
std::string valueOf(const std::string& set) {
    const std::size_t eq = set.find('=');
    return eq == std::string::npos ? std::string() : set.substr(eq + 1);
}

// What a knob costs beyond its time: memory, compile time, tokens per step.
std::string costOf(const AdviceItem& a, const Results& given, const Results& r) {
    std::vector<std::string> parts;
    if (a.memory_delta_gib && a.peak_memory_gib && (std::abs(*a.memory_delta_gib) >= 0.005 || !a.fits_memory))
        parts.push_back(fmt::format("peak memory {:+.2f} GiB ({:.2f} GiB{})", *a.memory_delta_gib, *a.peak_memory_gib,
                                    a.fits_memory ? "" : ", does not fit"));
    if (a.compile_time_s && !given.compile_time_s)
        parts.push_back(fmt::format("compile {:.0f} s once", *a.compile_time_s));
    if (given.tokens_per_s > 0 && given.step_time_ms > 0 && r.step_time_ms > 0) {
        const double tokens = (r.tokens_per_s * r.step_time_ms) / (given.tokens_per_s * given.step_time_ms);
        if (std::abs(tokens - 1.0) > 1e-9) parts.push_back(fmt::format("{:.3g}x the tokens per step", tokens));
    }
    return parts.empty() ? std::string("no other cost") : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::vector<AdviceCandidate> adviceCandidates(const Scenario& sc, const Results& r, double gpu_memory_gib) {
    std::vector<BreakdownPart> parts;
    for (const BreakdownPart& p : r.breakdown_ms)
        if (r.step_time_ms > 0 && p.ms >= kAdviceMinShare * r.step_time_ms) parts.push_back(p);
    std::stable_sort(parts.begin(), parts.end(), [](const BreakdownPart& a, const BreakdownPart& b) { return a.ms > b.ms; });
    std::vector<AdviceCandidate> out;
    const auto add = [&](std::vector<std::string> sets, const std::string& reason) {
        for (const AdviceCandidate& c : out)
            if (c.sets == sets) return;
        out.push_back({std::move(sets), reason});
    };
    if (r.peak_memory_gib && *r.peak_memory_gib > gpu_memory_gib) {
        if (sc.parallel.data != DataParallel::fsdp2 && sc.parallel.tp == 1 && sc.parallel.pp == 1)
            add({"parallel.data=fsdp2"}, "memory");
        if (sc.training.activation_checkpointing != Checkpointing::selective)
            add({"training.activation_checkpointing=selective"}, "memory");
        if (sc.training.activation_checkpointing != Checkpointing::full)
            add({"training.activation_checkpointing=full"}, "memory");
    }
    for (const BreakdownPart& p : parts)
        for (std::vector<std::string>& sets : knobsFor(p.part, sc)) add(std::move(sets), p.part);
    return out;
}

std::vector<AdviceItem> advise(const std::string& file, const std::vector<std::string>& sets, const Results& given_in,
                               const HardwareProfile& profile, int threads) {
    Scenario sc = loadScenario(file, sets);
    const HardwareProfile& p = profile;
    // The scenario as given, run once as the candidates are.
    Results given = given_in;
    if (sc.sim.samples > 1) {
        Scenario once = sc;
        once.sim.samples = 1;
        given = simulate(once, p, false, 1).results;
    }
    const std::vector<AdviceCandidate> cands = adviceCandidates(sc, given, p.gpu.memory_gib);
    std::vector<std::optional<AdviceItem>> tried(cands.size());
    parallelFor(cands.size(), threads, [&](std::size_t i) {
        std::vector<std::string> all = sets;
        all.insert(all.end(), cands[i].sets.begin(), cands[i].sets.end());
        try {
            Scenario what_if = loadScenario(file, all);
            what_if.sim.samples = 1;
            const Simulation sim = simulate(what_if, p, false, 1);
            AdviceItem a;
            a.sets = cands[i].sets;
            a.key = keyOf(cands[i].sets.front());
            a.value = valueOf(cands[i].sets.front());
            a.reason = cands[i].reason;
            a.step_time_ms = sim.results.step_time_ms;
            a.gain_pct = given.tokens_per_s > 0 ? 100.0 * (sim.results.tokens_per_s / given.tokens_per_s - 1.0) : 0.0;
            a.peak_memory_gib = sim.results.peak_memory_gib;
            if (sim.results.peak_memory_gib && given.peak_memory_gib)
                a.memory_delta_gib = *sim.results.peak_memory_gib - *given.peak_memory_gib;
            a.compile_time_s = sim.results.compile_time_s;
            a.fits_memory = sim.fitsMemory();
            a.cost = costOf(a, given, sim.results);
            tried[i] = std::move(a);
        } catch (const InputError&) {
            // A combination the loader refuses (or that the model does not cover) is not advice.
        }
    });
    const bool given_fits = !given.peak_memory_gib || *given.peak_memory_gib <= p.gpu.memory_gib;
    std::vector<AdviceItem> out;
    for (auto& a : tried)
        if (a && (a->gain_pct > 0.0 || (!given_fits && a->fits_memory))) out.push_back(std::move(*a));
    std::stable_sort(out.begin(), out.end(), [](const AdviceItem& a, const AdviceItem& b) {
        if (a.fits_memory != b.fits_memory) return a.fits_memory;
        return a.gain_pct > b.gain_pct;
    });
    if (out.size() > std::size_t(kAdviceItems)) out.resize(std::size_t(kAdviceItems));
    return out;
}

}  // namespace stepsim
