// Oracle of checkpointing (CheckpointIo.hpp, docs/io.md: torch.distributed.checkpoint's dcp.save and dcp.async_save
// after the optimizer step of every second step) under the round-number profile (OracleProfile.hpp): device-to-host
// pageable copies R_d2h = 10 GB/s, staging R_stage = 20 GB/s (pinned 40), writes R_w = 2 GB/s (sync and async), with
// fixed costs plan_sync = 1 ms, plan_async = 2 ms, α_w = 3 ms (the async write's). The case: oracleScenario (L = 4
// blocks, n = 68,175,872 fp32 parameters), sim.steps 5, checkpoint.interval_steps 2: checkpoints after steps 1, 3, ....
// The host costs nothing and runs ahead of the GPU (it has issued step 1 when the GPU starts step 0), so the host's
// planning before a save ends before the GPU reaches it; C is a step's kernels.
//
// What a rank saves: its parameters and AdamW's two moments, 12n bytes (fp32); under DDP DCP writes each tensor once,
// spread over the N ranks: W = 12n/N. The node's storage is one link of 5 GB/s (Builders.hpp) shared by its ranks.
//
// Expectations (timeline: the GPU's step ends and the transfers' records, whatever the results' window counts):
//   sync (dcp.save): the copy to host W/R_d2h after step 1's kernels, then the write W/min(R_w, 5 GB/s / N) of every
//     rank at once, the host blocked until both end: step 2 lasts a step without a save (S: C on one GPU, C plus the
//     last bucket's all-reduce under DDP) plus W/R_d2h + W/min(R_w, 5/N); step 3 lasts S;
//   async (dcp.async_save): the host blocks for the staging of its whole state dict alone, 12n/R_stage (12n/R_pinned
//     with pinned_staging), then the write runs in the background for α_w + W/R_w: step 2 ends C + 12n/R_stage after
//     step 1, step 3 C after step 2 (the write beside it); the next save waits for the previous write: its staging
//     starts plan_async after that write's end.
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "tests/oracles/OracleProfile.hpp"

namespace stepsim::oracles {
namespace {

constexpr double h = 1024, V = 8192, T = 1024, L = 4;
constexpr double n = L * (12 * h * h + 4 * h) + 2 * V * h + T * h + 2 * h;
constexpr double kState = 12 * n;
constexpr double kD2h = kPageable, kWrite = 2e9, kStorageLink = 5e9;
constexpr double kPlanSync = 1e-3, kPlanAsync = 2e-3, kWriteAlpha = 3e-3;

const HardwareProfile& profile() {
    static const HardwareProfile p = [] {
        HardwareProfile q = roundProfile();
        q.io.dcp_sync_overhead_ms = kPlanSync * 1e3;
        q.io.dcp_stage_overhead_ms = kPlanAsync * 1e3;
        q.io.dcp_async_write_overhead_ms = kWriteAlpha * 1e3;
        return q;
    }();
    return p;
}

Scenario checkpointing(int gpus, CheckpointMode mode, bool pinned = false) {
    Scenario sc = oracleScenario(gpus);
    sc.sim.steps = 5;
    sc.checkpoint.interval_steps = 2;
    sc.checkpoint.mode = mode;
    sc.checkpoint.pinned_staging = pinned;
    return sc;
}

struct Outcome {
    Simulation sim;
    std::vector<double> step_ms;  // rank 0's GPU step lengths, step_ms[k] = end(k) − end(k − 1), k ≥ 1
    double kernels_ms = 0, rounding_ms = 0;
    std::vector<const TransferRecord*> stage, write;  // rank 0's, in checkpoint order
};

Outcome run(const Scenario& sc) {
    Outcome r{simulateOn(sc, profile())};
    const Program& p = r.sim.expansion.workload.programs[0];
    const std::vector<Time>& end = r.sim.timeline.step_end[0];
    r.step_ms.push_back(0);
    for (std::size_t k = 1; k < end.size(); ++k) r.step_ms.push_back((end[k] - end[k - 1]).seconds() * 1e3);
    r.kernels_ms = kernelSeconds(p, 1) * 1e3;
    r.rounding_ms = double(std::count_if(p.ops.begin(), p.ops.end(), [](const Op& op) { return op.step == 1; })) * 1e-9;
    for (const TransferRecord& t : r.sim.timeline.transfers) {
        if (t.rank != 0) continue;
        const TransferCall& c = p.transfers[t.call];
        if (c.checkpoint < 0) continue;
        (c.kind == TransferKind::storage_write ? r.write : r.stage).push_back(&t);
    }
    auto byStart = [](const TransferRecord* a, const TransferRecord* b) { return a->start < b->start; };
    std::sort(r.stage.begin(), r.stage.end(), byStart);
    std::sort(r.write.begin(), r.write.end(), byStart);
    return r;
}

// After the steps k with (k + 1) mod 2 = 0.
std::size_t saves(const Outcome& r) { return std::size_t(r.sim.expansion.workload.steps / 2); }

double ms(const TransferRecord* t) { return (t->end - t->start).seconds() * 1e3; }

void expectSync(int gpus) {
    const Outcome r = run(checkpointing(gpus, CheckpointMode::sync));
    const double written = kState / gpus;
    const double copy_ms = written / kD2h * 1e3, write_ms = written / std::min(kWrite, kStorageLink / gpus) * 1e3;
    ASSERT_EQ(r.stage.size(), saves(r));
    ASSERT_EQ(r.write.size(), saves(r));
    for (std::size_t k = 0; k < saves(r); ++k) {
        EXPECT_NEAR(ms(r.stage[k]), copy_ms, 1e-6);
        EXPECT_NEAR(ms(r.write[k]), write_ms, 1e-6);
    }
    if (gpus == 1) EXPECT_NEAR(r.step_ms[1], r.kernels_ms, r.rounding_ms);
    EXPECT_NEAR(r.step_ms[2], r.step_ms[1] + copy_ms + write_ms, 2 * r.rounding_ms + 1e-6);
    EXPECT_NEAR(r.step_ms[3], r.step_ms[1], 2 * r.rounding_ms);
}

TEST(CheckpointOracle, SyncSaveBlocksForTheCopyAndTheWrite) { expectSync(1); }

// Four ranks of DDP write a quarter each, sharing the node's storage link: 5/4 GB/s each, below R_w.
TEST(CheckpointOracle, SyncSaveOfFourRanksSharesTheNodesStorage) { expectSync(4); }

void expectAsync(bool pinned) {
    const Outcome r = run(checkpointing(1, CheckpointMode::async, pinned));
    const double stage_ms = kState / (pinned ? 2 * kStage : kStage) * 1e3;
    const double write_ms = (kWriteAlpha + kState / kWrite) * 1e3;
    ASSERT_EQ(r.stage.size(), saves(r));
    ASSERT_EQ(r.write.size(), saves(r));
    for (std::size_t k = 0; k < saves(r); ++k) {
        EXPECT_NEAR(ms(r.stage[k]), stage_ms, 1e-6);
        EXPECT_NEAR(ms(r.write[k]), write_ms, 1e-6);
    }
    EXPECT_NEAR(r.step_ms[2], r.kernels_ms + stage_ms, 2 * r.rounding_ms + 1e-6);
    ASSERT_GT(r.write[0]->end, r.sim.timeline.step_end[0][3]);  // the write outlasts step 3, which runs beside it
    EXPECT_NEAR(r.step_ms[3], r.kernels_ms, r.rounding_ms);
    EXPECT_NEAR((r.stage[1]->start - r.write[0]->end).seconds(), kPlanAsync, 1e-9);
}

TEST(CheckpointOracle, AsyncSaveBlocksForTheStagingAloneAndTheNextWaitsForItsWrite) { expectAsync(false); }
TEST(CheckpointOracle, AsyncSaveStagesFasterIntoPinnedMemory) { expectAsync(true); }

}  // namespace
}  // namespace stepsim::oracles
