#pragma once
// Predictions against real training runs: the validation table (issue "Prove the predictions").
//
// Input: JSON Lines of measured runs (calibration/validation/collect.py → results/validation/measured/
// measured.jsonl), one record per configuration with `id`, `step_time_ms.median` and, from the PyTorch
// profiler on rank 0, `profile.primary` {exposed_comm_ms, overlap_ratio, comm_ms, span_ms}, plus
// `step_time_ms_repeats` (the same configuration run again, with its own profile); and a folder with one
// scenario `<id>.yaml` per configuration. Each scenario is simulated (with an optional profile override):
//   measured step = median over the runs of each run's median step (machines differ: up to 25% between runs);
//   step error    = (predicted − measured) / measured;
//   exposed comm  = |T_comm \ T_comp| from a profile whose step is within 10% of its run's timed step (the
//                   profiler's per-op overhead stretches host-bound steps and inflates their comm times);
//                   CUDA-only profiles are preferred. Rows without such a profile are shown but not scored.
// What a user asks the simulator most, which setting makes a step faster, is checked apart: every two measured
// configurations whose scenarios differ in exactly one setting (`stepsim explain`'s keys, every default filled
// in), or in the micro-batch and the accumulation steps alone with the same product (one global batch split two
// ways), are a what-if pair, and the measured change of the step from one to the other is set against the predicted
// change: the error is how far the predicted ratio of the two steps lies from the measured ratio (for a change of a
// few percent, about the points between the two changes; a micro-batch 2 → 8, +235%, is not scored by its points),
// and the direction counts where the measured change is at least 1%.
// The table reports each error, their median and the worst, over all configurations, and apart over the
// configurations whose runs reproduce (their median steps within 10% of each other: max − min ≤ 10% of the median;
// GPU-bound steps repeat within 1–3%) and over the others (host-bound on a host whose speed moves between machine
// starts: a model of the median cannot be nearer than the measurement itself holds still).
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
    std::vector<double> run_ms;                  // each run's median step, first run first
    double run_spread_pct = 0.0;                 // (max − min) / median of run_ms, 0 with one run
    bool reproducible = false;                   // two runs or more, within kReproducibleSpreadPct
    bool comm_trusted = false;                   // the comm figures come from a profile within 10% of its step
    bool host_bound = false;                     // the simulation warned its step host-bound (Simulate.hpp)
    // and, so, the step at a faster and a slower host (Simulation::host_range_ms), where the profile has a spread
    std::optional<std::pair<double, double>> host_range_ms;
    int steady_runs = 0;                         // or, when > 0, the median over this many steady-state profiles
    std::optional<double> measured_exposed_ms, predicted_exposed_ms;
    std::optional<double> measured_overlap, predicted_overlap;
};

inline constexpr double kReproducibleSpreadPct = 10.0;

// Median and worst |step error| over a set of rows, and how its rows with trusted comm figures score.
struct StepErrors {
    int rows = 0;
    double median_abs_error_pct = 0.0;
    double worst_abs_error_pct = 0.0;
    std::string worst_id;
    int exposed_scored = 0, exposed_within_20pct = 0;
    double exposed_median_abs_error_ms = 0.0;
};

// Two measured configurations that differ in one setting, or split one global batch two ways: the step's change
// from `base` to `other`.
struct KnobEffect {
    std::string setting;           // the scenario key, e.g. "training.activation_checkpointing", or for a split
                                   // "training.micro_batch × grad_accum"
    std::string from, to;          // its value in base and in other ("2 × 2", "4 × 1" for a split)
    std::string base_id, other_id;
    double measured_pct = 0.0, predicted_pct = 0.0;  // (other − base) / base, measured and predicted
    bool reproducible = false;     // both rows' runs reproduce
    // The predicted ratio of the two steps over the measured ratio, − 1, in percent.
    double errorPct() const { return 100.0 * ((100.0 + predicted_pct) / (100.0 + measured_pct) - 1.0); }
};

// How well a set of pairs' changes are predicted.
struct EffectErrors {
    int pairs = 0;
    double median_abs_error_pct = 0.0, worst_abs_error_pct = 0.0;  // KnobEffect::errorPct
    std::string worst;             // "base_id → other_id"
    int directed = 0;              // pairs whose measured change is at least kDirectedChangePct
    int direction_right = 0;       // of those, the predicted change has the same sign
};

inline constexpr double kDirectedChangePct = 1.0;

// One setting's pairs: how many, how many reproduce, and the median |KnobEffect::errorPct| of each set.
struct SettingErrors {
    std::string setting;
    int pairs = 0, reproducible_pairs = 0;
    double median_abs_error_pct = 0.0, median_abs_error_pct_reproducible = 0.0;
};

// A held-out configuration (addHeldout): its row as the prediction committed before it first ran had it (`stepsim
// run --json` output: the step, the host-bound warning and range, exposed communication and overlap), scored against
// the same measurements as the table's own rows.
struct HeldoutRow {
    std::string round;                 // the round it was committed in
    ValidationRow row;                 // predicted_* and error_pct as committed; measured_* as the table's row
    double predicted_now_ms = 0.0;     // this build's prediction, for comparison
};

struct ValidationTable {
    std::string profile;  // the profile the predictions used
    std::vector<ValidationRow> rows;
    double median_abs_error_pct = 0.0;
    double worst_abs_error_pct = 0.0;
    std::string worst_id;
    StepErrors reproducible, irreproducible;     // rows whose runs agree within kReproducibleSpreadPct, the rest
    double irreproducible_max_spread_pct = 0.0;
    // Rows the simulation itself calls GPU-bound and host-bound (ValidationRow::host_bound): a split made before
    // any measurement, which a user of `stepsim run` sees too.
    StepErrors gpu_bound, host_bound;
    int host_range_runs = 0, host_range_runs_within = 0;  // runs of host-bound rows with a range, and within it
    int exposed_scored = 0;                      // rows with trusted comm figures
    int exposed_within_20pct = 0;                // of those, predicted exposed comm within 20% (or 0.2 ms)
    double exposed_median_abs_error_ms = 0.0;
    // What-if pairs (KnobEffect), ordered by setting and then by the rows' order, and how they score: all of them,
    // and those whose two rows both reproduce.
    std::vector<KnobEffect> effects;
    EffectErrors effects_all, effects_reproducible;
    std::vector<SettingErrors> effects_by_setting;  // in the order of `effects`
    // Held-out predictions (addHeldout), in round order, and how they score as committed: all of them, those the
    // committed prediction called GPU-bound and host-bound, and the host-bound rows' runs within their committed range.
    std::vector<HeldoutRow> heldout;
    StepErrors heldout_all, heldout_gpu_bound, heldout_host_bound;
    int heldout_host_range_runs = 0, heldout_host_range_runs_within = 0;
    std::vector<std::string> heldout_waiting;  // "round/id": committed predictions no measurement has met yet
};

// `profile`: "" for each scenario's own cluster.profile, else a built-in name or a profile YAML path.
ValidationTable validate(const std::filesystem::path& measured_jsonl, const std::filesystem::path& scenario_dir,
                         const std::string& profile = "");

// Adds the held-out predictions of `predictions` (JSON Lines, one a configuration: {"round": R, "id": ID,
// "prediction": `stepsim run --json` output}, in the order they are to be listed) to `t`: each scored against the
// measured row of the same id, as it was predicted. Bad lines are InputErrors naming the file, line and key.
void addHeldout(ValidationTable& t, const std::filesystem::path& predictions);

std::string toMarkdown(const ValidationTable& t);
nlohmann::ordered_json toJson(const ValidationTable& t);

}  // namespace stepsim
