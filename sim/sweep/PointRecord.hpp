#pragma once
// What a sweep keeps of one point: its settings, whether it is feasible (and why not), and its results flattened
// to one level ("collectives.busbw_GBps"), with cost_per_token when the sweep has a GPU-hour price. A record is one
// JSON line of the journal (Journal.hpp) and one row of results.csv.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/SweepSpec.hpp"

namespace stepsim {

struct PointRecord {
    std::string key;
    std::vector<SweepSetting> settings;
    bool feasible = false;
    std::string reason;                 // why not feasible: the loader's refusal, a constraint, the engine's error
    nlohmann::ordered_json results;     // flat object: result key → number, bool or null (empty when not run)
    std::vector<std::string> warnings;

    // The result `name` as a number (a bool as 0/1), or nothing when absent or null.
    std::optional<double> value(const std::string& name) const;
};

nlohmann::ordered_json toJson(const PointRecord& r);
PointRecord recordFromJson(const nlohmann::ordered_json& j);  // throws nlohmann::json::exception on a malformed record

}  // namespace stepsim
