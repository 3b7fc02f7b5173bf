#include "sim/sweep/PointRecord.hpp"

namespace stepsim {

std::optional<double> PointRecord::value(const std::string& name) const {
    const auto it = results.find(name);
    if (it == results.end() || it->is_null()) return std::nullopt;
    if (it->is_boolean()) return it->get<bool>() ? 1.0 : 0.0;
    if (!it->is_number()) return std::nullopt;
    return it->get<double>();
}

nlohmann::ordered_json toJson(const PointRecord& r) {
    nlohmann::ordered_json j;
    j["key"] = r.key;
    nlohmann::ordered_json settings = nlohmann::ordered_json::object();
    for (const SweepSetting& s : r.settings) settings[s.key] = s.value;
    j["settings"] = settings;
    j["feasible"] = r.feasible;
    j["reason"] = r.reason;
    j["results"] = r.results.is_null() ? nlohmann::ordered_json::object() : r.results;
    j["warnings"] = r.warnings;
    return j;
}

PointRecord recordFromJson(const nlohmann::ordered_json& j) {
    PointRecord r;
    r.key = j.at("key").get<std::string>();
    for (const auto& [k, v] : j.at("settings").items()) r.settings.push_back({k, v.get<std::string>()});
    r.feasible = j.at("feasible").get<bool>();
    r.reason = j.at("reason").get<std::string>();
    r.results = j.at("results");
    r.warnings = j.at("warnings").get<std::vector<std::string>>();
    return r;
}

}  // namespace stepsim
