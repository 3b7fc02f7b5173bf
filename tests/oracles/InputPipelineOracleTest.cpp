// Oracle of the input pipeline (InputPipeline.hpp, docs/io.md: torch.utils.data.DataLoader feeding the loop) under the
// round-number profile (OracleProfile.hpp: host-to-device copies R_pinned = 50 GB/s, R_pageable = 10 GB/s, below the
// PCIe Gen5 x16 route's 55 GB/s, so a copy alone runs at its rate), with a copy latency α_c = 10 µs. The case:
// oracleScenario(1) (one GPU, its step's kernels C, the host free and never synchronized with the GPU otherwise).
//
// Expectations:
//   a copy of B = micro_batch · sample_bytes takes t = α_c + B/R (pinned or pageable);
//   pageable (a plain .to(): cudaMemcpyAsync from pageable memory on the compute stream, then the host blocks on it):
//     the copy is serial with the step's kernels: step = C + α_c + B/R_pageable;
//   pinned (non_blocking from page-locked memory on a side stream, the compute stream waiting for it; the host goes on
//     at once and runs ahead of the GPU): each step's copy runs ahead of its step, beside the GPU's earlier work;
//     only the first step's is exposed: step = C (the measured step), the first step's GPU end C + α_c + B/R_pinned;
//   loading X per batch in the main thread (num_workers 0): the host loads the next batch while the GPU runs, then
//     blocks on its pageable copy: step = max(C, X) + t;
//   W workers, each a batch every X (prefetch_factor 2): a batch every X/W: step = max(C + t, X/W).
#include <algorithm>

#include <gtest/gtest.h>

#include "tests/oracles/OracleProfile.hpp"

namespace stepsim::oracles {
namespace {

constexpr double kCopyAlpha = 10e-6;
constexpr double kSampleBytes = 25e6, kTokensBytes = (1024 + 1) * 8.0;  // sample_bytes; the default: seq_len + 1 int64

const HardwareProfile& profile() {
    static const HardwareProfile p = [] {
        HardwareProfile q = roundProfile();
        q.io.copy_alpha_us = kCopyAlpha * 1e6;
        return q;
    }();
    return p;
}

Scenario loader(bool pinned, int workers, double batch_cpu_ms, std::optional<double> sample_bytes) {
    Scenario sc = oracleScenario(1);
    sc.data_loader.modelled = true;
    sc.data_loader.pin_memory = pinned;
    sc.data_loader.num_workers = workers;
    sc.data_loader.batch_cpu_ms = batch_cpu_ms;
    sc.data_loader.sample_bytes = sample_bytes;
    return sc;
}

struct Outcome {
    Simulation sim;
    double kernels_ms = 0, rounding_ms = 0;
};

Outcome run(const Scenario& sc) {
    Outcome r{simulateOn(sc, profile())};
    const Program& p = r.sim.expansion.workload.programs[0];
    r.kernels_ms = kernelSeconds(p, 1) * 1e3;
    r.rounding_ms = double(std::count_if(p.ops.begin(), p.ops.end(), [](const Op& op) { return op.step == 1; })) * 1e-9;
    return r;
}

double copyMs(double bytes, double rate) { return (kCopyAlpha + bytes / rate) * 1e3; }

// Every host-to-device copy of the run lasts its closed form.
void expectCopies(const Simulation& sim, double bytes, double rate) {
    const Program& p = sim.expansion.workload.programs[0];
    int copies = 0;
    for (const TransferRecord& t : sim.timeline.transfers) {
        const TransferCall& c = p.transfers[t.call];
        if (c.kind != TransferKind::h2d) continue;
        ++copies;
        EXPECT_DOUBLE_EQ(c.bytes, bytes);
        EXPECT_NEAR((t.end - t.start).seconds() * 1e3, copyMs(bytes, rate), 1e-9);
    }
    EXPECT_EQ(copies, sim.expansion.workload.steps);
}

TEST(InputPipelineOracle, APageableCopyIsSerialWithTheStep) {
    const Outcome r = run(loader(false, 0, 0, kSampleBytes));
    expectCopies(r.sim, 2 * kSampleBytes, kPageable);
    EXPECT_NEAR(r.sim.results.step_time_ms, r.kernels_ms + copyMs(2 * kSampleBytes, kPageable), r.rounding_ms);
}

TEST(InputPipelineOracle, APinnedCopyOnItsSideStreamHidesBehindEarlierWork) {
    const Outcome r = run(loader(true, 0, 0, kSampleBytes));
    expectCopies(r.sim, 2 * kSampleBytes, kH2d);
    EXPECT_NEAR(r.sim.results.step_time_ms, r.kernels_ms, r.rounding_ms);
    EXPECT_NEAR(r.sim.timeline.step_end[0][0].seconds() * 1e3,
                kernelSeconds(r.sim.expansion.workload.programs[0], 0) * 1e3 + copyMs(2 * kSampleBytes, kH2d),
                r.rounding_ms);
}

TEST(InputPipelineOracle, MainThreadLoadingBoundsTheStep) {
    const Outcome r = run(loader(false, 0, 30, std::nullopt));
    ASSERT_GT(30.0, r.kernels_ms);
    expectCopies(r.sim, 2 * kTokensBytes, kPageable);
    EXPECT_NEAR(r.sim.results.step_time_ms, 30 + copyMs(2 * kTokensBytes, kPageable), r.rounding_ms);
}

TEST(InputPipelineOracle, WorkersDeliverABatchEveryXOverW) {
    Scenario one = loader(false, 1, 30, std::nullopt), two = loader(false, 2, 30, std::nullopt);
    one.sim.steps = two.sim.steps = 5;
    const Outcome r1 = run(one), r2 = run(two);
    const double t = copyMs(2 * kTokensBytes, kPageable);
    ASSERT_GT(30.0, r1.kernels_ms + t);
    ASSERT_LT(30.0 / 2, r2.kernels_ms + t);
    EXPECT_NEAR(r1.sim.results.step_time_ms, 30, r1.rounding_ms);
    EXPECT_NEAR(r2.sim.results.step_time_ms, r2.kernels_ms + t, r2.rounding_ms);
}

}  // namespace
}  // namespace stepsim::oracles
