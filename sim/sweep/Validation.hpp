#pragma once
// Predictions against real training runs: the validation table (issue "Prove the predictions").
//
// Input: JSON Lines of measured runs (calibration/validation/sweep.py → results/validation/measured/
// measured.jsonl), one record per configuration with `id`, `step_time_ms.median` and, from the PyTorch
// profiler on rank 0, `profile.primary` {exposed_comm_ms, overlap_ratio, comm_ms, span_ms}; and a folder
// with one scenario `<id>.yaml` per configuration. Each scenario is simulated (with an optional profile
// override) and compared:
//   step error    = (predicted − measured) / measured;
//   exposed comm  = |T_comm \ T_comp|, compared only where the profiled step is within 10% of the timed one
//                   (the profiler's CPU overhead stretches host-bound steps and inflates their comm times).
// The table reports each error, their median and the worst, over all configurations.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace stepsim {

struct ValidationRow {
    std::string id;
    int gpus = 1;
    double measured_ms = 0.0, predicted_ms = 0.0, error_pct = 0.0;
    std::vector<double> repeat_ms;               // the same configuration measured again (another machine start)
    bool comm_trusted = false;                   // profiled step within 10% of the timed step
    std::optional<double> measured_exposed_ms, predicted_exposed_ms;
    std::optional<double> measured_overlap, predicted_overlap;
};

struct ValidationTable {
    std::string profile;  // the profile the predictions used
    std::vector<ValidationRow> rows;
    double median_abs_error_pct = 0.0;
    double worst_abs_error_pct = 0.0;
    std::string worst_id;
};

// `profile`: "" for each scenario's own cluster.profile, else a built-in name or a profile YAML path.
ValidationTable validate(const std::filesystem::path& measured_jsonl, const std::filesystem::path& scenario_dir,
                         const std::string& profile = "");

std::string toMarkdown(const ValidationTable& t);
nlohmann::ordered_json toJson(const ValidationTable& t);

}  // namespace stepsim
