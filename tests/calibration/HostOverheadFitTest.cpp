// The fit's host costs from host_overhead.py records (sim/fit/ProfileFit.hpp, "launch"): medians over
// runs, DDP's hook from a DDP run paired with the one-GPU run before it in the same file, NCCL's issue cost.
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "sim/fit/ProfileFit.hpp"
#include "sim/fit/RawData.hpp"

namespace stepsim {
namespace {

RawHostOverhead run(const std::string& file, bool ddp, double fwd, double bwd_layer, double issue = 0.0) {
    RawHostOverhead h;
    h.file = file;
    h.ddp = ddp;
    h.forward_us_per_kernel = fwd;
    h.backward_us_per_kernel = bwd_layer / 28.0;
    h.optimizer_us_per_param_tensor = 10.0;
    h.backward_us_per_layer = bwd_layer;
    h.param_tensors_per_layer = 8.0;
    if (issue > 0) h.allreduce_issue_us = issue;
    return h;
}

// Two machine starts, one 2× slower than the other. Within each, DDP's backward grows by 8 tensors × 20 µs
// (fast) and × 40 µs (slow); across starts the DDP runs' backward minus the one-GPU runs' would mix speeds.
TEST(HostOverheadFit, MediansOverRunsAndTheHookFromPairedRuns) {
    RawData raw;
    raw.host = {run("fast.jsonl", false, 20.0, 700.0), run("fast.jsonl", true, 25.0, 860.0, 30.0),
                run("slow.jsonl", false, 40.0, 1400.0), run("slow.jsonl", true, 50.0, 1720.0, 70.0),
                run("slow.jsonl", false, 42.0, 1470.0)};
    HardwareProfile base;
    base.launch.forward_host = {99.0, 198.0};
    const ProfileFitResult r = fitProfile(raw, base, "t", "test");
    const LaunchRates& l = r.profile.launch;
    EXPECT_DOUBLE_EQ(l.forward_host.median_us, 40.0);           // median of 20, 40, 42
    EXPECT_DOUBLE_EQ(l.forward_host.p99_us, 80.0);              // the base's p99/median spread (×2) kept
    EXPECT_DOUBLE_EQ(l.backward_host.median_us, 1400.0 / 28.0);
    // the profile's forward times the pairs' ratio, 1.25 in both starts (their median, 37.5, would mix the speeds)
    EXPECT_DOUBLE_EQ(l.forward_host_ddp.median_us, 50.0);
    EXPECT_DOUBLE_EQ(l.ddp_hook_host_us, 30.0);                 // median of the pairs' 20 and 40
    EXPECT_DOUBLE_EQ(l.nccl_host.median_us, 50.0);              // median of 30, 70
    EXPECT_DOUBLE_EQ(l.optimizer_host_per_tensor_us, 10.0);
}

// Gradient accumulation's add per parameter tensor: the median of the runs' ratios to their own backward cost per
// kernel (accumulate_host-1.jsonl: 0.182, 0.246, 0.459), times the profile's backward cost per kernel; without
// accumulate_host records the base's value stays, and the report says so.
TEST(HostOverheadFit, AccumulateGradFromItsRatioToTheBackward) {
    RawData raw;
    raw.host = {run("a.jsonl", false, 20.0, 1400.0)};
    raw.accumulate_host = {{8.24, 0.182}, {9.0, 0.246}, {13.52, 0.459}};
    HardwareProfile base;
    base.launch.grad_accumulate_host_us = 99.0;
    const ProfileFitResult r = fitProfile(raw, base, "t", "test");
    EXPECT_DOUBLE_EQ(r.profile.launch.grad_accumulate_host_us, 0.246 * 1400.0 / 28.0);
    raw.accumulate_host.clear();
    const ProfileFitResult kept = fitProfile(raw, base, "t", "test");
    EXPECT_DOUBLE_EQ(kept.profile.launch.grad_accumulate_host_us, 99.0);
    const auto& k = kept.report.at("kept_from_base");
    EXPECT_NE(std::find(k.begin(), k.end(), "launch.grad_accumulate_host_us"), k.end());
}

// Runs that timed the backward with and without gradient sync alternately give the hook, and win over the
// paired runs. Two machine starts, the second host 2× slower: (sync − no_sync) per tensor is 25 and 50 µs, each
// put in the profile's units (× the profile's 37.5 µs backward per kernel / the run's no_sync 25 and 50 µs per
// kernel) = 37.5 both, less the copy back (one eager op, 5 µs): 32.5.
TEST(HostOverheadFit, SyncAgainstNoSyncGivesTheHookInTheProfilesUnits) {
    auto alternate = [](const std::string& file, double sync, double nosync) {
        RawHostOverhead h = run(file, true, 25.0, sync);
        h.backward_sync_us_per_layer = sync;
        h.backward_nosync_us_per_layer = nosync;
        return h;
    };
    RawData raw;
    raw.host = {run("c.jsonl", false, 20.0, 700.0), alternate("c.jsonl", 900.0, 700.0),
                run("d.jsonl", false, 40.0, 1400.0), alternate("d.jsonl", 1800.0, 1400.0)};
    HardwareProfile base;
    base.launch.eager_host = {5.0, 10.0};
    const ProfileFitResult r = fitProfile(raw, base, "t", "test");
    EXPECT_DOUBLE_EQ(r.profile.launch.backward_host.median_us, 37.5);
    EXPECT_DOUBLE_EQ(r.profile.launch.ddp_hook_host_us, 32.5);
}

// A DDP run with no one-GPU run before it in its own file gives no hook: the base's value stays.
TEST(HostOverheadFit, UnpairedDdpRunKeepsTheBaseHook) {
    RawData raw;
    raw.host = {run("a.jsonl", false, 20.0, 700.0), run("b.jsonl", true, 25.0, 860.0)};
    HardwareProfile base;
    base.launch.ddp_hook_host_us = 26.3;
    const ProfileFitResult r = fitProfile(raw, base, "t", "test");
    EXPECT_DOUBLE_EQ(r.profile.launch.ddp_hook_host_us, 26.3);
    bool kept = false;
    for (const auto& f : r.report["kept_from_base"]) kept = kept || f == "launch.ddp_hook_host_us";
    EXPECT_TRUE(kept);
}

RawDdpHost ddpHost(double plain_backward_us, double extra_us_per_tensor, bool view) {
    RawDdpHost d;
    d.id = view ? "d2-view" : "d2";
    d.param_tensors = 100;
    d.buckets = 10;
    d.gradient_as_bucket_view = view;
    d.plain = {5000.0, plain_backward_us, 200, 200};
    d.ddp = {5200.0, plain_backward_us + 100 * extra_us_per_tensor, 200, 400};
    return d;
}

// DDP's costs from the validation's own models (ddp_host records), in the profile's units: the hook is what DDP adds
// to the backward per tensor, scaled by the profile's backward cost per kernel (50 µs) over the record's (50 and, on
// a host twice as slow, 100), less the copy back (7.5 µs; none with the bucket views) and the tensor's share of ten
// buckets' issue (50 µs each over 100 tensors): 60 − 7.5 − 5, 52.5 − 5 and 120/2 − 7.5 − 5, 47.5 each. The forward
// under DDP: the profile's forward times the records' ratio, 5200/5000.
TEST(HostOverheadFit, DdpCostsFromTheValidationModelsThemselves) {
    RawData raw;
    raw.ddp_host = {ddpHost(10000, 60, false), ddpHost(10000, 52.5, true), ddpHost(20000, 120, false)};
    HardwareProfile base;
    base.launch.forward_host = {25.0, 30.0};
    base.launch.forward_host_ddp = {30.0, 36.0};
    base.launch.backward_host = {50.0, 60.0};
    base.launch.eager_host = {7.5, 15.0};
    base.launch.nccl_host = {50.0, 60.0};
    base.launch.ddp_hook_host_us = 26.3;
    const ProfileFitResult r = fitProfile(raw, base, "t", "test");
    EXPECT_NEAR(r.profile.launch.ddp_hook_host_us, 47.5, 1e-9);
    EXPECT_NEAR(r.profile.launch.forward_host_ddp.median_us, 26.0, 1e-9);
    EXPECT_NEAR(r.profile.launch.forward_host_ddp.p99_us, 26.0 * 1.2, 1e-9);  // the base's spread (36/30) kept
    EXPECT_EQ(r.report["launch"]["ddp_hook_host_us"]["records"].size(), 3u);
}

// Activation checkpointing per layer from checkpoint_host records: (extra − recomputed kernels × the rounds'
// forward cost per kernel) × (profile forward cost / the rounds'), the median over runs. Two runs, the second host
// 2× slower: selective backward (300 − 2·20)·25/20 = 325 and (600 − 2·40)·25/40 = 325; forward 200·25/20 = 250,
// 400·25/40 = 250; full backward (900 − 15·20)·1.25 = 750 and (1800 − 15·40)·0.625 = 750.
TEST(HostOverheadFit, CheckpointHostInTheProfilesUnits) {
    RawData raw;
    auto run = [](double plain, double k) {
        RawCheckpointHost c;
        c.plain_forward_us_per_kernel = plain;
        c.selective = {200 * k, 300 * k, 2};
        c.full = {400 * k, 900 * k, 15};
        return c;
    };
    raw.checkpoint_host = {run(20, 1), run(40, 2)};
    HardwareProfile base;
    base.launch.forward_host = {25.0, 30.0};
    const CheckpointHost c = fitProfile(raw, base, "t", "test").profile.launch.checkpoint_host_us;
    EXPECT_DOUBLE_EQ(c.selective_forward_us, 250.0);
    EXPECT_DOUBLE_EQ(c.selective_backward_us, 325.0);
    EXPECT_DOUBLE_EQ(c.full_forward_us, 500.0);
    EXPECT_DOUBLE_EQ(c.full_backward_us, 750.0);
}

// The host's speed spread: each run's cost per kernel over the median of its kind (forward, backward, DDP forward),
// pooled, the 10th and 90th percentile; from 8 ratios on, else the base's (1 and 1) and the report says so.
TEST(HostOverheadFit, HostCostSpreadIsThePercentilesOfEachRunOverItsKindsMedian) {
    RawData raw;
    // forward 20, 40, 42, 80 (median 41); backward 700, 1400, 1470, 1400 per layer (median 1400); DDP forward 25, 50
    raw.host = {run("a.jsonl", false, 20.0, 700.0), run("a.jsonl", true, 25.0, 860.0),
                run("b.jsonl", false, 40.0, 1400.0), run("b.jsonl", true, 50.0, 1720.0),
                run("b.jsonl", false, 42.0, 1470.0), run("c.jsonl", false, 80.0, 1400.0)};
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    // ratios: 20/41, 40/41, 42/41, 80/41; 0.5, 1, 1.05, 1; 25/37.5, 50/37.5 — ten, sorted:
    std::vector<double> v = {20 / 41.0, 0.5, 25 / 37.5, 40 / 41.0, 1.0, 1.0, 42 / 41.0, 1.05, 50 / 37.5, 80 / 41.0};
    std::sort(v.begin(), v.end());
    const HostCostSpread& h = r.profile.launch.host_cost_spread;
    EXPECT_DOUBLE_EQ(h.p10, v[0] + 0.9 * (v[1] - v[0]));  // 10% of the way: position 0.9
    EXPECT_DOUBLE_EQ(h.p90, v[8] + 0.1 * (v[9] - v[8]));  // position 8.1
    EXPECT_EQ(r.report.at("launch").at("host_cost_spread").at("ratios").size(), 10u);
    raw.host.resize(3);  // three runs, four ratios: too few
    const ProfileFitResult few = fitProfile(raw, HardwareProfile{}, "t", "test");
    EXPECT_DOUBLE_EQ(few.profile.launch.host_cost_spread.p10, 1.0);
    EXPECT_DOUBLE_EQ(few.profile.launch.host_cost_spread.p90, 1.0);
    const auto& kept = few.report.at("kept_from_base");
    EXPECT_NE(std::find(kept.begin(), kept.end(), "launch.host_cost_spread"), kept.end());
}

}  // namespace
}  // namespace stepsim
