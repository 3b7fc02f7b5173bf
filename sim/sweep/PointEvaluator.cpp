#include "sim/sweep/PointEvaluator.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "sim/base/Files.hpp"
#include "sim/base/InputError.hpp"
#include "sim/base/ParallelDims.hpp"
#include "sim/base/Time.hpp"
#include "sim/report/JsonReport.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/EnumNames.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"

namespace stepsim {

namespace {

// The overrides of a point under the given key prefixes, as one string: the part of the point a shared object
// depends on.
std::string keyOf(const SweepPoint& p, std::initializer_list<std::string_view> prefixes) {
    std::string k;
    for (const SweepSetting& s : p.settings)
        for (std::string_view pre : prefixes)
            if (s.key.starts_with(pre)) k += s.key + "=" + s.value + "\n";
    return k;
}

// The report's JSON flattened to one level: nested objects' keys joined with '.', lists and names left out.
void flatten(const nlohmann::ordered_json& j, const std::string& prefix, nlohmann::ordered_json& out) {
    for (const auto& [k, v] : j.items()) {
        if (prefix.empty() && (k == "name" || k == "warnings")) continue;
        if (v.is_object()) flatten(v, prefix + k + ".", out);
        else if (!v.is_array()) out[prefix + k] = v;
    }
}

}  // namespace

long dataRanks(const Scenario& sc) {
    return parallelDims(sc).dp;
}

PointEvaluator::PointEvaluator(const std::filesystem::path& file, std::vector<std::string> overrides,
                               const SweepSpec& spec)
    : source_(file.string()), overrides_(std::move(overrides)), spec_(spec) {
    text_ = readInputFile(file, "the sweep file", kMaxScenarioBytes);
    base_ = parseScenario(text_, source_, overrides_);
}

PointEvaluator::Shared PointEvaluator::shared(const Scenario& sc, const SweepPoint& point) const {
    const std::string cluster = keyOf(point, {"cluster."});
    const std::string cost = keyOf(point, {"cluster.", "nccl."});
    Shared s;
    {
        // The profile and fabric of a cluster are built once, under the lock, and kept for the evaluator's life: a
        // cost model keeps a reference to its profile, so it must be built from the one kept.
        const std::lock_guard lock(mutex_);
        std::shared_ptr<const HardwareProfile>& profile = profiles_[cluster];
        if (!profile) profile = std::make_shared<const HardwareProfile>(resolveProfile(sc.cluster, source_));
        std::shared_ptr<const Fabric>& fabric = fabrics_[cluster];
        if (!fabric) fabric = std::make_shared<const Fabric>(scenarioFabric(sc));
        s.profile = profile;
        s.fabric = fabric;
        s.cost = costs_[{std::this_thread::get_id(), cost}];
    }
    if (s.cost) return s;
    s.cost = std::make_shared<const CostModel>(scenarioCostModel(sc, *s.profile));
    const std::lock_guard lock(mutex_);
    costs_[{std::this_thread::get_id(), cost}] = s.cost;
    return s;
}

PointRecord PointEvaluator::evaluate(const SweepPoint& point) const {
    PointRecord r;
    r.key = point.key;
    r.settings = point.settings;
    std::vector<std::string> o = overrides_;
    // A point of another strategy than the scenario's: the sections that strategy does not read back at their
    // defaults (the scenario's own ddp settings change nothing under fsdp2, and the loader would refuse them there).
    std::string_view strategy = toString(base_.parallel.data);
    for (const SweepSetting& s : point.settings)
        if (s.key == "parallel.data") strategy = s.value;
    if (strategy != toString(base_.parallel.data))
        for (std::string_view section : kStrategySections) {
            const std::vector<std::string_view> reading = strategiesReading(std::string(section) + ".");
            if (std::find(reading.begin(), reading.end(), strategy) == reading.end())
                o.push_back(std::string(section) + "={}");
        }
    for (const SweepSetting& s : point.settings)
        if (s.value != kNotApplicable) o.push_back(s.key + "=" + s.value);
    try {
        const Scenario sc = parseScenario(text_, source_, o);
        if (spec_.global_batch) {
            const long gb = static_cast<long>(sc.training.micro_batch) * sc.training.grad_accum * dataRanks(sc);
            if (gb != *spec_.global_batch) {
                r.reason = fmt::format("global batch {} (micro_batch {} x grad_accum {} x {} data ranks), not the "
                                       "constraint's {}",
                                       gb, sc.training.micro_batch, sc.training.grad_accum, dataRanks(sc),
                                       *spec_.global_batch);
                return r;
            }
        }
        const Shared sh = shared(sc, point);
        // The points already share the cores, so a point's samples run on its own thread.
        const Simulation sim = simulate(sc, *sh.profile, *sh.cost, *sh.fabric, /*link_usage=*/false, /*threads=*/1);
        r.results = nlohmann::ordered_json::object();
        flatten(toJson(sim.results, sc.name, sim.gpu_memory_gib), "", r.results);
        if (spec_.gpu_hour_usd && sim.results.tokens_per_s > 0)
            r.results["cost_per_token"] = *spec_.gpu_hour_usd * static_cast<double>(sc.cluster.nodes) *
                                          sc.cluster.gpus_per_node / 3600.0 / sim.results.tokens_per_s;
        r.warnings = sim.results.warnings;
        r.feasible = true;
        if (spec_.fits_memory && !sim.fitsMemory()) {
            r.feasible = false;
            r.reason = fmt::format("does not fit: peak memory {:.2f} GiB, the GPU has {:.2f} GiB",
                                   sim.results.peak_memory_gib.value_or(0.0), sim.gpu_memory_gib);
        }
    } catch (const InputError& e) {
        r.feasible = false;
        r.results = nlohmann::ordered_json::object();
        r.reason = e.what();
    } catch (const TimeOverflow& e) {  // a point whose run outlasts the simulator's time: infeasible, as too large
        r.feasible = false;
        r.results = nlohmann::ordered_json::object();
        r.reason = e.what();
    }
    return r;
}

}  // namespace stepsim
