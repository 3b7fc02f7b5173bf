// The validation table re-runs from the committed measurements (results/validation/measured/measured.jsonl)
// and scenarios (scenarios/validation/): ValidationTargets holds it to the accuracy targets (fixed numbers);
// ValidationRegression keeps it from drifting from the committed table (golden checks) or growing its error.
#include "sim/run/Validation.hpp"

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"

namespace stepsim {
namespace {

const std::filesystem::path kSrc = STEPSIM_SOURCE_DIR;

ValidationTable rerun() {
    return validate(kSrc / "results/validation/measured/measured.jsonl", kSrc / "scenarios/validation");
}

// The median |step-time error| over the rows of `rows` that `keep` selects.
template <class Keep>
double medianAbsErrorPct(const std::vector<ValidationRow>& rows, Keep keep) {
    std::vector<double> e;
    for (const ValidationRow& r : rows)
        if (keep(r)) e.push_back(std::abs(r.error_pct));
    if (e.empty()) return std::nan("");
    std::sort(e.begin(), e.end());
    const std::size_t n = e.size();
    return n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
}

// The accuracy targets (issue 34, item 7), fixed numbers: they change only by an explicit decision written here,
// never to let a build pass. A median step-time error of 5% or less over all rows, over the data-parallel (DDP,
// two-GPU) rows, over the rows whose runs reproduce within 10% and over the rows the simulation calls GPU-bound; a
// worst of 10% or less on the GPU-bound rows (docs/validation.md: a user knows before measuring which kind of
// prediction they have; every row over 10% is host-bound), and on the GPU-bound rows of the held-out rounds, scored as
// they were predicted before they ran. Each checks first that the rows it speaks of are there. Not met today, so
// held below as a regression bound and not as a target: a worst of 10% on the rows whose runs reproduce (10.6%, the
// host-bound s1-l16-h1536-s2048-mb1-ga8).
TEST(ValidationTargets, MedianStepTimeErrorIsWithinFivePercent) {
    const ValidationTable t = rerun();
    ASSERT_GE(t.rows.size(), 100u);
    EXPECT_LE(t.median_abs_error_pct, 5.0);
    ASSERT_GE(t.reproducible.rows, 50);
    EXPECT_LE(t.reproducible.median_abs_error_pct, 5.0);
    ASSERT_GE(t.gpu_bound.rows, 50);
    EXPECT_LE(t.gpu_bound.median_abs_error_pct, 5.0);
    const auto ddp = [](const ValidationRow& r) { return r.gpus > 1; };
    ASSERT_GE(std::count_if(t.rows.begin(), t.rows.end(), ddp), 20);
    EXPECT_LE(medianAbsErrorPct(t.rows, ddp), 5.0);
}

TEST(ValidationTargets, WorstGpuBoundStepTimeErrorIsWithinTenPercent) {
    ValidationTable t = rerun();
    ASSERT_GE(t.gpu_bound.rows, 50);
    EXPECT_LE(t.gpu_bound.worst_abs_error_pct, 10.0) << t.gpu_bound.worst_id;
    addHeldout(t, kSrc / "results/validation/heldout/rounds.jsonl");
    ASSERT_GE(t.heldout_gpu_bound.rows, 20);
    EXPECT_LE(t.heldout_gpu_bound.worst_abs_error_pct, 10.0) << t.heldout_gpu_bound.worst_id;
    EXPECT_LE(t.heldout_gpu_bound.median_abs_error_pct, 5.0);
}

// The built-in model's accuracy targets (issues 41 and 42: median |step error| of 3% or less, worst of 8% or less), on
// the rows the simulation calls GPU-bound, and the median over every row; fixed numbers, never edited to pass.
// Host-bound rows are held to the median only: their worst is set by the host's speed on the day (docs/validation.md).
constexpr double kTargetMedianPct = 3.0;
constexpr double kTargetWorstGpuBoundPct = 8.0;

struct TargetCheck {
    double median_all = 0.0, median_gpu_bound = 0.0, worst_gpu_bound = 0.0;
    bool met() const {
        return median_all <= kTargetMedianPct && median_gpu_bound <= kTargetMedianPct &&
               worst_gpu_bound <= kTargetWorstGpuBoundPct;
    }
};

// The targets scored on rows whose predictions are `perturb`(row) instead of their own.
template <class Perturb>
TargetCheck scoreTargets(const std::vector<ValidationRow>& rows, Perturb perturb) {
    std::vector<ValidationRow> r = rows;
    for (ValidationRow& row : r) {
        row.predicted_ms = perturb(row);
        row.error_pct = 100.0 * (row.predicted_ms - row.measured_ms) / row.measured_ms;
    }
    const auto all = [](const ValidationRow&) { return true; };
    const auto gpu = [](const ValidationRow& x) { return !x.host_bound; };
    TargetCheck c;
    c.median_all = medianAbsErrorPct(r, all);
    c.median_gpu_bound = medianAbsErrorPct(r, gpu);
    for (const ValidationRow& x : r)
        if (gpu(x)) c.worst_gpu_bound = std::max(c.worst_gpu_bound, std::abs(x.error_pct));
    return c;
}

TEST(ValidationTargets, BuiltInModelMeetsThreeAndEightPercent) {
    const ValidationTable t = rerun();
    ASSERT_GE(t.rows.size(), 100u);
    const TargetCheck c = scoreTargets(t.rows, [](const ValidationRow& r) { return r.predicted_ms; });
    EXPECT_LE(c.median_all, kTargetMedianPct);
    EXPECT_LE(c.median_gpu_bound, kTargetMedianPct);
    EXPECT_LE(c.worst_gpu_bound, kTargetWorstGpuBoundPct);
}

// The targets are tight enough to matter: the same table with every error doubled, or with every prediction 5%
// longer, or 5% shorter, fails them.
TEST(ValidationTargets, DoubledErrorsOrAFivePercentShiftFailTheTargets) {
    const ValidationTable t = rerun();
    ASSERT_GE(t.rows.size(), 100u);
    const auto doubled = [](const ValidationRow& r) { return r.measured_ms + 2.0 * (r.predicted_ms - r.measured_ms); };
    EXPECT_FALSE(scoreTargets(t.rows, doubled).met());
    EXPECT_FALSE(scoreTargets(t.rows, [](const ValidationRow& r) { return 1.05 * r.predicted_ms; }).met());
    EXPECT_FALSE(scoreTargets(t.rows, [](const ValidationRow& r) { return 0.95 * r.predicted_ms; }).met());
}

// Regression (golden) checks, not targets: the committed table's counts and the line its errors hold today
// (results/validation/TABLE.md; docs/validation.md says where the remaining error comes from: host-bound rows whose
// runs move with the host's speed between machine starts, and the exposed communication of host-bound DDP steps), so
// that a change that makes the predictions worse, or drops rows, fails here. A change that moves them names why.
TEST(ValidationRegression, StepTimeErrorsHoldTheCommittedLine) {
    const ValidationTable t = rerun();
    EXPECT_EQ(t.rows.size(), 145u);
    // Since the steps are measured once the host's head start has decayed (Metrics.hpp's steadyWindow), eight
    // host-bound DDP rows read 0.3-8% longer: the worst, d2-l8-h1024-s1024-mb2-b25, went 31.2 -> 33.1%, and
    // d2-l24-h2048-s1024-mb1-b25's exposed communication 9.96 -> 13.86 ms (measured 8.30) left the 20% band.
    EXPECT_LE(t.worst_abs_error_pct, 33.2);
    EXPECT_GE(t.exposed_within_20pct, 24);
    EXPECT_LE(t.exposed_median_abs_error_ms, 0.13);
    EXPECT_GE(t.reproducible.rows, 106);
    // the worst reproducible row is host-bound (an accumulating step whose host sets its pace, two runs 8% apart)
    EXPECT_LE(t.reproducible.worst_abs_error_pct, 11.0);
    EXPECT_GE(t.reproducible.exposed_within_20pct, 20);
    EXPECT_GE(t.gpu_bound.rows, 95);
    EXPECT_LE(t.gpu_bound.worst_abs_error_pct, 5.2);
    EXPECT_LE(t.gpu_bound.median_abs_error_pct, 1.6);
    EXPECT_GE(t.gpu_bound.exposed_within_20pct, 19);
    // The hosts' spread fitted as its lasting part (JitterFit.hpp: 0, the 0.127 swing between half-second windows does
    // not last a run): the two-GPU host-bound rows no longer wait for a lastingly slower host, 2-8% shorter; their
    // median error 3.2 -> 3.5%, the worst 33.1 -> 26.4%.
    EXPECT_LE(t.host_bound.median_abs_error_pct, 3.5);
    EXPECT_GE(t.host_bound.exposed_within_20pct, 5);
    EXPECT_EQ(std::size_t(t.gpu_bound.rows + t.host_bound.rows), t.rows.size());
    EXPECT_EQ(t.host_range_runs, 232);
    EXPECT_GE(t.host_range_runs_within, 185);
}

// One global batch split two ways (the micro-batch and the accumulation steps differ, their product does not) is a
// pair too, from the smaller micro-batch; a micro-batch and accumulation that change the batch are not.
TEST(Validation, SplitsOfOneGlobalBatchPairUp) {
    const auto file = std::filesystem::temp_directory_path() / "stepsim_validation_split.jsonl";
    std::ofstream(file)
        << R"({"id":"s1-l24-h2048-s2048-mb4","status":"ok","step_time_ms":{"median":152.4}})" "\n"
        << R"({"id":"s1-l24-h2048-s2048-mb2-ga2","status":"ok","step_time_ms":{"median":163.2}})" "\n"
        << R"({"id":"s1-l24-h2048-s2048-mb2","status":"ok","step_time_ms":{"median":85.2}})" "\n";
    const ValidationTable t = validate(file, kSrc / "scenarios/validation");
    ASSERT_EQ(t.effects.size(), 3u);
    EXPECT_EQ(t.effects[0].setting, "training.grad_accum");  // mb2 → mb2-ga2
    EXPECT_EQ(t.effects[1].setting, "training.micro_batch");  // mb2 → mb4
    const KnobEffect& split = t.effects[2];
    EXPECT_EQ(split.setting, "training.micro_batch × grad_accum");
    EXPECT_EQ(split.from, "2 × 2");
    EXPECT_EQ(split.to, "4 × 1");
    EXPECT_EQ(split.base_id, "s1-l24-h2048-s2048-mb2-ga2");
    EXPECT_NEAR(split.measured_pct, 100 * (152.4 / 163.2 - 1), 1e-9);
}

// What a user runs the simulator for, the change one setting makes, is predicted closer than the step itself: the
// table's configurations that differ in one setting (GPUs 1 → 2, bucket size and view, activation checkpointing,
// micro-batch, gradient accumulation, splits of one global batch, context length, depth, GQA, fp16 with GradScaler,
// bf16 parameters, a tied head, AdamW foreach against fused, gradient clipping) pair up, and the predicted ratio of
// the two steps is held against the measured one. The pairs that miss are named beside their bounds.
TEST(Validation, OneSettingsEffectIsPredicted) {
    const ValidationTable t = rerun();
    EXPECT_EQ(t.effects.size(), 112u);
    EXPECT_EQ(t.effects_reproducible.pairs, 83);
    EXPECT_LE(t.effects_reproducible.median_abs_error_pct, 1.2);
    // the worst, one sequence → two accumulating twice at hidden 2048 (3.5%): the model holds the two-sequence step
    // at 1659 MHz, where its runs held 1710-1815, and reads it slow
    EXPECT_LE(t.effects_reproducible.worst_abs_error_pct, 3.5);
    // three wrong of 77, all DDP bucket sizes at hidden 2048 (10, 25 → 100 MiB, with and without the bucket view):
    // measured −1.1% to −1.7%, predicted +0.1% to +0.5%
    EXPECT_GE(t.effects_reproducible.direction_right, t.effects_reproducible.directed - 3);
    EXPECT_LE(t.effects_all.median_abs_error_pct, 1.4);
    // 94 of 100: with the three above, the host-bound hidden-768 pairs whose runs spread 17-38% (bucket 25 → 100 MiB,
    // the bucket view) and, since the power state's idle time, its tied head (measured −1.2%, predicted +0.3%)
    EXPECT_GE(t.effects_all.direction_right, 94);
    for (const SettingErrors& e : t.effects_by_setting)
        if (e.setting == "training.activation_checkpointing") {  // 12 reproducible pairs, a median 0.4%
            EXPECT_GE(e.reproducible_pairs, 12);
            EXPECT_LE(e.median_abs_error_pct_reproducible, 1.0);
        }
}

// The held-out rounds (results/validation/heldout/rounds.jsonl: `stepsim run --json` outputs committed before their
// configurations first ran) scored as they were predicted then, not as this build predicts them: 58 measured, a median
// 2.4% and a worst 22.5% (the host-bound d2-l8-h1024-s1024-mb2-b25); the 45 the committed prediction called GPU-bound
// a median 2.3%, a worst 6.2% (the 1.4B model in fp16, before fp16 GEMMs had their own rates), within the issue's 10%;
// 11 of the 12 runs of the host-bound ones with a committed range inside it. Since: 97 measured, a median 2.4%; with round compile (torch.compile, 4 rows) 101.
TEST(Validation, HeldOutRoundsScoreAsPredictedBeforeTheyRan) {
    ValidationTable t = rerun();
    addHeldout(t, kSrc / "results/validation/heldout/rounds.jsonl");
    EXPECT_EQ(t.heldout.size(), 107u);
    EXPECT_TRUE(t.heldout_waiting.empty());
    EXPECT_LE(t.heldout_all.median_abs_error_pct, 2.5);
    EXPECT_LE(t.heldout_gpu_bound.median_abs_error_pct, 2.5);
    EXPECT_LE(t.heldout_gpu_bound.worst_abs_error_pct, 10.0);
    EXPECT_GE(t.heldout_host_range_runs_within, 25);
    for (const HeldoutRow& h : t.heldout)  // the committed prediction, not this build's
        if (h.row.id == "s1-l24-h2048-s2048-mb4-fp16") {
            EXPECT_NEAR(h.row.predicted_ms, 151.86, 0.01);
            EXPECT_GT(h.predicted_now_ms, h.row.predicted_ms);
        }
}

// A held-out prediction is scored against the measured row of its id as committed; one with no measurement waits.
TEST(Validation, HeldOutPredictionWithoutMeasurementWaits) {
    const auto rounds = std::filesystem::temp_directory_path() / "stepsim_heldout_rounds.jsonl";
    std::ofstream(rounds)
        << R"({"round":"r1","id":"s1-l24-h2048-s2048-mb2","prediction":{"step_time_ms": 80.0, "warnings": []}})" "\n"
        << R"({"round":"r1","id":"s1-l24-h2048-s2048-mb8","prediction":{"step_time_ms": 300.0, "warnings": []}})" "\n";
    const auto file = std::filesystem::temp_directory_path() / "stepsim_heldout_measured.jsonl";
    std::ofstream(file) << R"({"id":"s1-l24-h2048-s2048-mb2","status":"ok","step_time_ms":{"median":85.0}})" "\n";
    ValidationTable t = validate(file, kSrc / "scenarios/validation");
    addHeldout(t, rounds);
    ASSERT_EQ(t.heldout.size(), 1u);
    EXPECT_EQ(t.heldout[0].round, "r1");
    EXPECT_NEAR(t.heldout[0].row.error_pct, 100.0 * (80.0 / 85.0 - 1.0), 1e-9);
    EXPECT_NEAR(t.heldout[0].predicted_now_ms, t.rows[0].predicted_ms, 1e-9);
    EXPECT_EQ(t.heldout_waiting, std::vector<std::string>{"r1/s1-l24-h2048-s2048-mb8"});
}

// A line that is not a prediction is an error naming the file, the line and the key.
TEST(Validation, HeldOutLineWithoutAPredictionIsAnError) {
    const auto file = std::filesystem::temp_directory_path() / "stepsim_heldout_measured2.jsonl";
    std::ofstream(file) << R"({"id":"s1-l24-h2048-s2048-mb2","status":"ok","step_time_ms":{"median":85.0}})" "\n";
    const auto rounds = std::filesystem::temp_directory_path() / "stepsim_heldout_bad.jsonl";
    const std::vector<std::pair<std::string, std::string>> bad = {
        {R"({"round":"r1","id":"s1-l24-h2048-s2048-mb2","prediction":{"step_ms": 80.0}})", "prediction.step_time_ms"},
        {R"({"id":"s1-l24-h2048-s2048-mb2","prediction":{"step_time_ms": 80.0}})", "round"},
        {R"({"round":"r1","id":"s1-l24-h2048-s2048-mb2"})", "prediction"},
        {R"({"round":"r1", )", "not a JSON object"}};
    for (const auto& [line, key] : bad) {
        std::ofstream(rounds) << "\n" << line << "\n";
        ValidationTable u = validate(file, kSrc / "scenarios/validation");
        try {
            addHeldout(u, rounds);
            ADD_FAILURE() << "expected an InputError for " << line;
        } catch (const InputError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("stepsim_heldout_bad.jsonl:2"), std::string::npos) << what;
            EXPECT_NE(what.find(key), std::string::npos) << what;
        }
    }
    ValidationTable v = validate(file, kSrc / "scenarios/validation");
    EXPECT_THROW(addHeldout(v, rounds.string() + ".missing"), InputError);
}

// The committed table (results/validation/table.json) is what this build predicts: regenerate it with
//   build/stepsim validate results/validation/measured/measured.jsonl --scenarios scenarios/validation \
//     --heldout results/validation/heldout* --markdown results/validation/TABLE.md --json results/validation/table.json
TEST(ValidationRegression, CommittedTableMatchesThisBuild) {
    std::ifstream in(kSrc / "results/validation/table.json");
    ASSERT_TRUE(in) << "results/validation/table.json is missing";
    const nlohmann::json committed = nlohmann::json::parse(in);
    const ValidationTable t = rerun();
    ASSERT_EQ(committed["rows"].size(), t.rows.size());
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        const auto& c = committed["rows"][i];
        EXPECT_EQ(c["id"].get<std::string>(), t.rows[i].id);
        EXPECT_NEAR(c["predicted_step_time_ms"].get<double>(), t.rows[i].predicted_ms, 1e-6 * t.rows[i].predicted_ms)
            << t.rows[i].id;
        EXPECT_EQ(c["predicted_host_bound"].get<bool>(), t.rows[i].host_bound) << t.rows[i].id;
    }
}

// Exposed communication measured in steady state (consecutive steps profiled unsynchronized) is the reference when
// any run has it: the median over those runs, whatever the isolated profiled steps read; a run whose profiled
// steps ran more than 10% over its timed step (48 against 40 ms: the profiler slowed the host) is left out.
TEST(Validation, SteadyStateCommFiguresWinOverAnIsolatedProfiledStep) {
    const auto file = std::filesystem::temp_directory_path() / "stepsim_validation_steady.jsonl";
    std::ofstream(file)
        << R"({"id":"d2-l6-h1024-s2048-mb8-b25","status":"ok","step_time_ms":{"median":40.1},)"
           R"("profile":{"mode":"cuda only, gap-split steps","primary":{"span_ms":40.0,"exposed_comm_ms":9.0,"overlap_ratio":0.5}},)"
           R"("steady":{"exposed_comm_ms":0.6,"overlap_ratio":0.08,"step_time_ms":[40.3,40.0,39.9]},)"
           R"("step_time_ms_repeats":[{"median":40.0,"span_ms":40.0,"exposed_comm_ms":8.0,"overlap_ratio":0.4,)"
           R"("profile_mode":"cuda only, gap-split steps","steady_exposed_comm_ms":0.5,"steady_overlap_ratio":0.07,"steady_step_ms":40.4},)"
           R"({"median":40.2,"span_ms":40.1,"exposed_comm_ms":7.0,"overlap_ratio":0.3,"profile_mode":"cuda only, gap-split steps",)"
           R"("steady_exposed_comm_ms":0.7,"steady_overlap_ratio":0.09,"steady_step_ms":40.0},)"
           R"({"median":40.0,"span_ms":40.0,"exposed_comm_ms":7.0,"overlap_ratio":0.3,"profile_mode":"cuda only, gap-split steps",)"
           R"("steady_exposed_comm_ms":5.0,"steady_overlap_ratio":0.5,"steady_step_ms":48.0}]})" "\n"
        << R"({"id":"d2-l24-h2048-s2048-mb4-b25","status":"ok","step_time_ms":{"median":169.9},)"
           R"("profile":{"mode":"cuda only, gap-split steps","primary":{"span_ms":167.3,"exposed_comm_ms":1.08,"overlap_ratio":0.15}}})" "\n";
    const ValidationTable t = validate(file, kSrc / "scenarios/validation");
    ASSERT_EQ(t.rows.size(), 2u);
    EXPECT_EQ(t.rows[0].steady_runs, 3);
    EXPECT_DOUBLE_EQ(*t.rows[0].measured_exposed_ms, 0.6);
    EXPECT_DOUBLE_EQ(*t.rows[0].measured_overlap, 0.08);
    EXPECT_TRUE(t.rows[0].comm_trusted);
    EXPECT_EQ(t.rows[1].steady_runs, 0);  // no steady profile: the isolated step's figures
    EXPECT_DOUBLE_EQ(*t.rows[1].measured_exposed_ms, 1.08);
}

// A configuration reproduces when it ran twice or more and its runs' medians lie within 10% of their median:
// 40.0 and 40.4 ms do (1.0%), 30 and 45 ms do not (40%), one run cannot tell.
TEST(Validation, RowsSplitByWhetherTheirRunsReproduce) {
    const auto file = std::filesystem::temp_directory_path() / "stepsim_validation_spread.jsonl";
    std::ofstream(file)
        << R"({"id":"d2-l6-h1024-s2048-mb8-b25","status":"ok","step_time_ms":{"median":40.0},"step_time_ms_repeats":[{"median":40.4}]})" "\n"
        << R"({"id":"d2-l6-h768-s1024-mb1-b25","status":"ok","step_time_ms":{"median":30.0},"step_time_ms_repeats":[{"median":45.0}]})" "\n"
        << R"({"id":"s1-l12-h768-s1024-mb8","status":"ok","step_time_ms":{"median":22.7}})" "\n";
    const ValidationTable t = validate(file, kSrc / "scenarios/validation");
    ASSERT_EQ(t.rows.size(), 3u);
    EXPECT_NEAR(t.rows[0].run_spread_pct, 100 * 0.4 / 40.2, 1e-9);
    EXPECT_TRUE(t.rows[0].reproducible);
    EXPECT_NEAR(t.rows[1].run_spread_pct, 40.0, 1e-9);
    EXPECT_FALSE(t.rows[1].reproducible);
    EXPECT_FALSE(t.rows[2].reproducible);
    EXPECT_EQ(t.reproducible.rows, 1);
    EXPECT_DOUBLE_EQ(t.reproducible.worst_abs_error_pct, std::abs(t.rows[0].error_pct));
    EXPECT_EQ(t.irreproducible.rows, 2);
    EXPECT_DOUBLE_EQ(t.irreproducible_max_spread_pct, 40.0);
    const std::string md = toMarkdown(t);
    EXPECT_NE(md.find("On the 1 configurations whose runs reproduce"), std::string::npos) << md;
    EXPECT_NE(md.find("| 37.50 (runs 30.00 45.00) § |"), std::string::npos) << md;  // marked: 40% apart
    EXPECT_NE(md.find("| 40.20 (runs 40.00 40.40) |"), std::string::npos) << md;    // not marked
}

// Configurations whose scenarios differ in one setting pair up, from the setting's lower value to its higher one
// (1 → 2 GPUs, none → full checkpointing); two that differ in two settings (the one-GPU step against the two-GPU
// step with full checkpointing) do not. The changes are the measured and the predicted steps' ratios.
TEST(Validation, ConfigurationsThatDifferInOneSettingPairUp) {
    const auto file = std::filesystem::temp_directory_path() / "stepsim_validation_pairs.jsonl";
    std::ofstream(file)
        << R"({"id":"d2-l24-h2048-s2048-mb4-b25-acfull","status":"ok","step_time_ms":{"median":200.0}})" "\n"
        << R"({"id":"d2-l24-h2048-s2048-mb4-b25","status":"ok","step_time_ms":{"median":170.0},"step_time_ms_repeats":[{"median":169.0}]})" "\n"
        << R"({"id":"s1-l24-h2048-s2048-mb4","status":"ok","step_time_ms":{"median":152.0},"step_time_ms_repeats":[{"median":153.0}]})" "\n";
    const ValidationTable t = validate(file, kSrc / "scenarios/validation");
    ASSERT_EQ(t.rows.size(), 3u);
    ASSERT_EQ(t.effects.size(), 2u);
    const KnobEffect& gpus = t.effects[0];  // ordered by setting
    EXPECT_EQ(gpus.setting, "cluster.gpus_per_node");
    EXPECT_EQ(gpus.from, "1");
    EXPECT_EQ(gpus.to, "2");
    EXPECT_EQ(gpus.base_id, "s1-l24-h2048-s2048-mb4");
    EXPECT_EQ(gpus.other_id, "d2-l24-h2048-s2048-mb4-b25");
    EXPECT_NEAR(gpus.measured_pct, 100 * (169.5 / 152.5 - 1), 1e-9);
    EXPECT_NEAR(gpus.predicted_pct, 100 * (t.rows[1].predicted_ms / t.rows[2].predicted_ms - 1), 1e-9);
    EXPECT_TRUE(gpus.reproducible);
    const KnobEffect& ac = t.effects[1];
    EXPECT_EQ(ac.setting, "training.activation_checkpointing");
    EXPECT_EQ(ac.from, "none");
    EXPECT_EQ(ac.to, "full");
    EXPECT_EQ(ac.base_id, "d2-l24-h2048-s2048-mb4-b25");
    EXPECT_NEAR(ac.measured_pct, 100 * (200.0 / 169.5 - 1), 1e-9);
    EXPECT_FALSE(ac.reproducible);  // one run of the checkpointed configuration
    EXPECT_EQ(t.effects_all.pairs, 2);
    EXPECT_EQ(t.effects_reproducible.pairs, 1);
    EXPECT_EQ(t.effects_all.directed, 2);
    EXPECT_DOUBLE_EQ(t.effects_reproducible.worst_abs_error_pct, std::abs(gpus.errorPct()));
    const std::string md = toMarkdown(t);
    EXPECT_NE(md.find("| training.activation_checkpointing | none → full | d2-l24-h2048-s2048-mb4-b25 → "
                      "d2-l24-h2048-s2048-mb4-b25-acfull § | +18.0% |"),
              std::string::npos)
        << md;
    ASSERT_EQ(t.effects_by_setting.size(), 2u);  // one row per setting, in the pairs' order
    EXPECT_EQ(t.effects_by_setting[0].setting, "cluster.gpus_per_node");
    EXPECT_EQ(t.effects_by_setting[0].reproducible_pairs, 1);
    EXPECT_DOUBLE_EQ(t.effects_by_setting[0].median_abs_error_pct_reproducible, std::abs(gpus.errorPct()));
    EXPECT_EQ(t.effects_by_setting[1].reproducible_pairs, 0);
    EXPECT_NE(md.find("| training.activation_checkpointing | 1 (0) | – |"), std::string::npos) << md;
}

}  // namespace
}  // namespace stepsim
