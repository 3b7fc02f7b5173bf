// The validation table re-runs from the committed measurements (results/validation/measured/measured.jsonl)
// and scenarios (scenarios/validation/), and must not drift from the committed table or grow its error.
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

// Issue 5's target is a median step-time error ≤ 5% and a worst ≤ 10%, exposed communication within 20%.
// Against the median of each configuration's runs (up to sixteen runs) this build reaches a median of 2.8% and a
// worst of 26.5% over 96 configurations (README, "How good are the predictions?"; five are run 77's fp16, bf16-parameter
// and tied-head steps, measured to build their model from, and run again in run 88). 58 were held out, predicted and
// committed before they ran (results/validation/heldout/, runs 55 and 57; heldout2/, runs 59 and 60; heldout3/, runs
// 63 and 64; heldout4/, runs 68 and 69; heldout5/, runs 71 and 72; heldout7/, runs 80 and 81; heldout8/, AdamW's
// default foreach step, runs 85 and 86; heldout9/, gradient clipping, runs 89 and 90); the worst row is one
// of them, d2-l8-h1024-s1024-mb2-b25, which the simulation calls host-bound and
// whose two runs were 25% apart (14.2 and 17.8 ms against 20.3 predicted). Exposed
// communication, measured in steady state where a run profiled it so, is within 20% on 17 of 30 scored rows, a median
// error of 0.23 ms (the host-bound DDP rows' ranks wait for each other far longer than the model's). On the 70
// configurations whose runs reproduce within 10% the median is 2.2% and the worst 6.2%, exposed communication within
// 20% on 13 of 16 (median error 0.10 ms); the 26 others ran once or moved up to 67% between machine starts. Split by
// what the simulation says before any measurement, the 63 rows it calls GPU-bound reach a median of 2.3% and a worst
// of 6.2%, exposed communication within 20% on 12 of 14; the 33 it calls host-bound 4.0% and 26.5%, 5 of 16.
// Two kernel-level fixes moved these lines, each read off H200 traces: the loss's log-softmax priced from its own
// calibration (run 79: autocast runs it on the bf16 logits, which the model had priced as an fp32 streaming kernel,
// 0.2 ms too slow per 2048 tokens), and each residual add's gradient cast down for its bf16 sublayer under autocast
// (two a layer, 25 µs each in the 1.4B step) in place of an attention-gradient transpose no trace shows. With the
// second the model launches as many backward kernels as the real step, so at the calibrated host cost per kernel the
// host-bound rows take more host time: most of those that read low now read closer (d2-l6-h768-s1024-mb1-b25 −10.9% →
// −7.5%), those that read high higher (d2-l8-h1024-s1024-mb2-b25 +22.6% → +26.5%, d2-l12-h768-s1024-mb8-b25 +14.1%
// → +19.3%). The host-bound rows' ranges hold 186 of their 209 runs (every miss under the low end, the GPU-bound
// floor, by up to 5.7%). Taking the holes
// beside an NCCL kernel by what it does (longer while it moves data than while it waits: run 61) brought the
// GPU-bound rows' from 11 to 13 of 14 (hidden 2048: 1.02 against 1.11, was 0.87); the held-out rows' own GEMMs
// measured beside NCCL (run 66) brought hidden 3072 to 1.40 against 1.39 (0.98 before both), and
// d2-l32-h2048-s4096-mb1-b50 still reads high (1.79 against 1.45: the model's NCCL kernels stay resident longer).
// Pricing attention at the clock each step's load holds the board at (the power model, run 101) took the median from
// 2.9% to 1.9% (GPU-bound rows 2.3% → 1.4%, their worst 5.7% → 4.4%; exposed communication within 20% on 16 → 18
// rows), and the host-bound rows' ranges from 180 to 164 of their 224 runs: the model puts the hidden-1024 steps'
// clock ~200 MHz under the 1830-1905 MHz they held, and their GPU-bound floor (the ranges' low end) 1-2% over runs
// that sat on it (s1-l24-h1024-s2048-mb4: 13 → 1 of 14 runs inside). The all-reduce's own rate beside compute,
// measured with its kernel resident before the compute starts (interference_training.py --modes resident, run 73:
// ×1.17 over 83 records, where the profile had ×1.54), took exposed communication within 20% from 22 to 25 of 36
// rows (median error 0.20 → 0.12 ms; the GPU-bound rows 17 → 19 of 20) and the host ranges from 164 to 188 of 224
// runs, the step median from 1.7% to 1.9% (the GPU-bound DDP rows read lower: 1.4% → 1.6%, worst 4.4% → 5.5%).
// The power state with idle time (run 104: the clock line refitted over two boards, the load over the busy time and
// the headroom idle time leaves, the first step's idle left out, NCCL's slowing of kernels drawn by the NCCL kernel,
// copies drawing as memory-bound kernels) took the step median from 1.9% to 1.8% (GPU-bound 1.6% → 1.5%, worst 5.5%
// → 5.3%) and the host ranges from 188 to 183 runs: five GPT-2-small and hidden-1024 runs now sit 0.003-0.1 ms under
// their range's low end, the GPU's time, where the model still holds a light step's clock low. The fourteenth
// held-out round (runs 106-107) added six rows: the four GPU-bound within 2.4% of their runs' medians, and one run
// of each of the two host-bound ones under its range (13.89 ms under 14.17, 41.40 and 42.48 under 42.74): 184 of 228.
// A GEMM launched beside an NCCL kernel that leaves mid-way ends no sooner than its own time plus how long the SMs
// were held, up to one wave of its tiles (run 108, a kernel holding 24 SMs on one GPU, gemm_linger_probe.py; the
// 1.4B step's traces, runs 29 and 34, within 1.1-2.8% under, where a slowdown that lifts as the NCCL kernel leaves
// read 4.7-7.1% under: calibration/validation/gemm_linger.py): the GPU-bound rows 1.55% → 1.53% (worst 5.3% →
// 5.0%; the two-GPU ones a median −2.8% → −2.7%); exposed communication within 20% on 23 of 36 (two host-bound rows
// whose runs spread: d2-l24-h1024-s1024-mb4-b25 6.70 → 8.21 ms against 6.19, d2-l24-h2048-s1024-mb1-b25 6.68 → 6.24
// against 8.30), the host ranges 183 of 228.
// Each rank's host at its own speed (jitter.host_rank_cv 0.127: two host-bound processes' speeds apart over
// half-second windows, run 26; 0.06-0.11 with 2, 4 and 8 processes on the one-GPU kind, run 109), a host-bound DDP
// step at its slower host and the faster rank's GPU waiting for it in NCCL: the host-bound rows 4.3% → 3.4% (the
// two-GPU ones that read low closer, d2-l6-h768-s1024-mb1-b25 −7.3% → +1.1%, the accumulating
// d2-l24-h2048-s1024-mb2-b25-ga4 −8.6% → −0.1%; those that read high higher, d2-l8-h1024-s1024-mb2-b25 +26.0% →
// +31.7%, d2-l12-h768-s1024-mb8-b25 +19.5% → +29.5%, whose runs mostly went GPU-bound), exposed communication
// within 20% on 25 of 36 (three host-bound rows in, among them the accumulating one, 3.38 → 13.74 ms against
// 16.68; d2-l16-h2048-s2048-mb4-b25-swiglu-gqa4 out by 0.15 µs at the 0.2 ms edge, 0.7285 → 0.7283 against 0.9283,
// the jitter's draws), the host ranges 185 of 228, the GPU-bound rows as before within the jitter's draws (worst
// 5.0% → 5.1%).
// DDP's host costs measured on the validation's own models, plain and under a one-rank DDP in turn (run 110,
// ddp_host.py): the forward under DDP at 1.039 the one-GPU forward (27 paired ratios with the tiny model's, where the
// medians of unpaired runs had put it at 1.23: 31.3 → 26.3 µs a kernel), the hook 39.5 → 47.1 µs a tensor. The
// host-bound rows 3.4% → 3.3% (those that read high lower: d2-l12-h768-s1024-mb8-b25 +29.5% → +26.7%, its 1 and
// 100 MiB twins +5.0% → +3.6% and +4.3% → +3.3%; the accumulating d2-l24-h2048-s1024-mb2-b25-ga4 −0.1% → −3.9%,
// its exposed comm 13.74 → 9.57 ms against 16.68, out of 20%), the step median 1.82% → 1.89%, the GPU-bound rows
// 1.49% → 1.55% (their hosts start each step sooner), exposed communication 25 of 36 (GPU-bound 19 of 20 again),
// the host ranges 185 of 228.
// The medians are held at the issue's target of 5%, the worst of the reproducible and of the
// GPU-bound rows at its 10%, the rest at this build's line: a change that makes the predictions worse fails here.
TEST(Validation, MedianStepTimeErrorDoesNotGrow) {
    const ValidationTable t = rerun();
    EXPECT_EQ(t.rows.size(), 135u);
    EXPECT_LE(t.median_abs_error_pct, 5.0);
    EXPECT_LE(t.worst_abs_error_pct, 32.0);
    EXPECT_GE(t.exposed_within_20pct, 25);
    EXPECT_LE(t.exposed_median_abs_error_ms, 0.13);
    EXPECT_GE(t.reproducible.rows, 106);
    EXPECT_LE(t.reproducible.median_abs_error_pct, 5.0);
    // the worst reproducible row is host-bound (an accumulating step whose host sets its pace, two runs 8% apart):
    // the 10% target holds on the GPU-bound rows
    EXPECT_LE(t.reproducible.worst_abs_error_pct, 11.0);
    EXPECT_GE(t.reproducible.exposed_within_20pct, 20);
    EXPECT_GE(t.gpu_bound.rows, 95);
    EXPECT_LE(t.gpu_bound.median_abs_error_pct, 5.0);
    EXPECT_LE(t.gpu_bound.worst_abs_error_pct, 10.0);
    EXPECT_LE(t.gpu_bound.worst_abs_error_pct, 5.2);
    EXPECT_LE(t.gpu_bound.median_abs_error_pct, 1.6);
    EXPECT_GE(t.gpu_bound.exposed_within_20pct, 19);
    EXPECT_LE(t.host_bound.median_abs_error_pct, 3.4);
    EXPECT_GE(t.host_bound.exposed_within_20pct, 6);
    EXPECT_EQ(std::size_t(t.gpu_bound.rows + t.host_bound.rows), t.rows.size());
    EXPECT_EQ(t.host_range_runs, 228);
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
// table's configurations hold 77 what-if pairs (GPUs 1 → 2, bucket size, bucket view, activation checkpointing,
// micro-batch, gradient accumulation, splits of one global batch, context length, depth, GQA, fp16 with GradScaler,
// bf16 parameters, a tied head, AdamW's foreach step against fused, gradient clipping; 11 from the fourth held-out
// round, heldout4/, 13 from the fifth, heldout5/, 8 from the seventh, heldout7/, 7 from the eighth, heldout8/, 5 from
// the ninth, heldout9/, predicted before they ran). On the 61 whose two configurations reproduce the predicted ratio of the two steps lies a median 1.1% from the
// measured (checkpointing none → full +18.8% against +19.1%, one GPU → two +10.3% against +11.7%, accumulation 1 → 2
// +92.9% against +91.4%, GQA 4 → 16 KV heads +7.6% against +7.3%, bf16 → fp16 on the 1.4B model +6.3% against
// +6.3%, bf16 parameters → fp32 +16.2% against +13.7%, foreach → fused AdamW −11.8% against −9.5%, clipping the
// gradient norm on the 1.4B model +3.3% against +2.8%), the direction right on all 60 that change 1% or more. The
// splits of one global batch are the weakest: six of seven overstate the saving (1.1-7.2%), most where the model
// prices the one-sequence accumulating step host-bound (1 × 4 → 4 × 1 sequences at hidden 2048: −26.0% against −20.3%; its runs, 187.7 and 193.8 ms, sit at the model's GPU-bound floor, 187.7). The
// foreach → fused pairs overstate the fused step's saving by 1.5-2.5% on four of the five GPU-bound fp32-parameter
// ones: the foreach steps read −0.4% to −1.3%, their fused twins −2.0% to −3.1% (a step with 30 ms of memory-bound
// optimizer passes holds a lower average power and runs its compute at a higher clock: README §3, the power state). The seventh round's four fp16 pairs were predicted 1.5-3.1% short (fp16 GEMMs priced
// as bf16); run 83's fp16 GEMMs brought them within 0.5% (within 1.0% in this build). Over all 77, 1.3%, and the
// direction right on 73 of the 76 measured to change 1% or more: the three wrong are host-bound hidden-768 pairs whose
// runs spread 17-38% between machine starts (bucket 25 → 100 MiB measured +18.4%, bucket view +22.8%, predicted
// -3.4% and -4.8%; gradient clipping measured +11.7%, predicted -0.2%). The bf16-parameter pairs read 1.2-2.6% high, 6.2% against the foreach step (README §3: the
// bf16-parameter steps read 2.5-6.2% low).
TEST(Validation, OneSettingsEffectIsPredicted) {
    const ValidationTable t = rerun();
    EXPECT_EQ(t.effects.size(), 106u);
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
// 11 of the 12 runs of the host-bound ones with a committed range inside it. Since: 97 measured, a median 2.4%.
TEST(Validation, HeldOutRoundsScoreAsPredictedBeforeTheyRan) {
    ValidationTable t = rerun();
    addHeldout(t, kSrc / "results/validation/heldout/rounds.jsonl");
    // heldout6 (two GPUs, runs 73-74): −0.6% to −4.9%; heldout13 (the power state, runs 102-103): within 2.7%;
    // heldout14 (idle time, runs 106-107): the four GPU-bound within 2.4%, the two host-bound ranges held 1 of 4 runs
    EXPECT_EQ(t.heldout.size(), 97u);
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
TEST(Validation, CommittedTableMatchesThisBuild) {
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
