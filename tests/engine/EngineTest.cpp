// Small programs whose timelines can be worked out by hand, run through the engine (sim/engine/Engine.hpp and the
// parts it drives).
#include "sim/engine/Engine.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace stepsim {
namespace {

// A profile whose all_reduce on 2 ranks is measured: α = 10 µs, busbw = 100 GB/s at every size.
HardwareProfile testProfile() {
    HardwareProfile p;
    p.name = "test";
    CollectiveFit fit;
    fit.op = "all_reduce";
    fit.ranks = 2;
    fit.segments.push_back({0, 1e15, 10.0, 100.0, 0.0});
    p.collectives.push_back(fit);
    p.interference = {1.25, 2.0};
    return p;
}

// engineConfig of a cost model on profile `p`, without jitter.
EngineConfig configOf(const HardwareProfile& p) { return engineConfig(CostModel(p, NcclSpec{}, false), false, 1); }

struct Rig {
    HardwareProfile profile = testProfile();
    CostModel cost{profile, NcclSpec{}, false};
    Fabric fabric = switchNode(2, 450, 0, false);
    EngineConfig cfg = [] {
        EngineConfig c;
        c.jitter = false;
        c.slowdown_transfer = EngineConfig::filled(1.25);
        c.slowdown_waiting = EngineConfig::filled(1.25);
        c.comm_slowdown = 2.0;
        return c;
    }();
};

Program twoStreams() {
    Program p;
    p.streams = {{StreamKind::compute, "compute"}, {StreamKind::comm, "nccl"}};
    return p;
}
Op kernel(double work_us, double host_us, std::uint8_t stream = 0) {
    Op op;
    op.kind = OpKind::kernel;
    op.cls = KernelClass::gemm;
    op.stream = stream;
    op.work_s = work_us * 1e-6;
    op.host_s = host_us * 1e-6;
    return op;
}
Op allReduce(Program& p, double bytes, std::uint8_t stream) {
    Op op;
    op.kind = OpKind::collective;
    op.cls = KernelClass::comm;
    op.stream = stream;
    op.collective = static_cast<std::uint32_t>(p.collectives.size());
    p.collectives.push_back({CollectiveKind::all_reduce, 0, bytes, "bf16"});
    return op;
}
// record_event, wait_event or host_sync of event 0 on `stream`.
Op eventOp(OpKind kind, std::uint8_t stream = 0) {
    Op op;
    op.kind = kind;
    op.stream = stream;
    op.event = 0;
    return op;
}
Op stepEnd(std::uint8_t stream = 0) {
    Op op;
    op.kind = OpKind::step_end;
    op.stream = stream;
    return op;
}

// A rank that runs one kernel of `compute_us` and then joins an all-reduce of `bytes` on the same stream.
Program computeThenAllReduce(double compute_us, double bytes) {
    Program p = twoStreams();
    p.ops = {kernel(compute_us, 0)};
    p.ops.push_back(allReduce(p, bytes, 0));
    p.ops.push_back(stepEnd());
    return p;
}
// A rank whose all-reduce of `bytes` is resident on its NCCL stream from 0 while `k` runs on its compute stream.
Program allReduceBeside(const Op& k, double bytes) {
    Program p = twoStreams();
    p.ops.push_back(allReduce(p, bytes, 1));
    p.ops.push_back(k);
    p.ops.push_back(stepEnd());
    return p;
}
Workload oneGroup(std::vector<Program> programs) {
    Workload w;
    w.programs = std::move(programs);
    w.groups.push_back({"dp", {}});
    for (std::size_t r = 0; r < w.programs.size(); ++r) w.groups[0].ranks.push_back(int(r));
    return w;
}

// Host launches A (10 µs), then B (10 µs); A runs 10→110 µs, B queues behind it and runs 110→160 µs.
TEST(Engine, HandComputedStepTimeIsExact) {
    Rig rig;
    Program p = twoStreams();
    p.ops = {kernel(100, 10), kernel(50, 10), stepEnd()};
    Workload w = oneGroup({p});
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.spans.size(), 2u);
    EXPECT_EQ(tl.spans[0].start, Time::us(10));
    EXPECT_EQ(tl.spans[0].end, Time::us(110));
    EXPECT_EQ(tl.spans[1].start, Time::us(110));
    EXPECT_EQ(tl.step_end[0][0], Time::us(160));
}

// With a 2 µs device gap the same program keeps its stream timing (the gap is part of each kernel's
// calibrated period) but each span starts 2 µs into it: A is busy 12→110, B 112→160, and the GPU idles
// 2 µs between them, where a concurrent NCCL kernel is exposed.
TEST(Engine, DeviceGapOpensAHoleBetweenBackToBackKernels) {
    Rig rig;
    rig.cfg.device_gap_s.fill(2e-6);
    Program p = twoStreams();
    p.ops = {kernel(100, 10), kernel(50, 10), stepEnd()};
    Workload w = oneGroup({p});
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.spans.size(), 2u);
    EXPECT_EQ(tl.spans[0].start, Time::us(12));
    EXPECT_EQ(tl.spans[0].end, Time::us(110));
    EXPECT_EQ(tl.spans[1].start, Time::us(112));
    EXPECT_EQ(tl.spans[1].end, Time::us(160));
    EXPECT_EQ(tl.step_end[0][0], Time::us(160));
}

// The gap is the one of each kernel's class: a GEMM (3 µs) then a memory-bound kernel (1 µs) back to back
// are busy 13→110 and 111→160; the stream's timing is unchanged.
TEST(Engine, DeviceGapIsThatOfTheKernelsClass) {
    Rig rig;
    rig.cfg.device_gap_s.fill(9e-6);
    rig.cfg.device_gap_s[std::size_t(KernelClass::gemm)] = 3e-6;
    rig.cfg.device_gap_s[std::size_t(KernelClass::memory)] = 1e-6;
    Program p = twoStreams();
    Op mem = kernel(50, 10);
    mem.cls = KernelClass::memory;
    p.ops = {kernel(100, 10), mem, stepEnd()};
    Workload w = oneGroup({p});
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.spans.size(), 2u);
    EXPECT_EQ(tl.spans[0].start, Time::us(13));
    EXPECT_EQ(tl.spans[1].start, Time::us(111));
    EXPECT_EQ(tl.spans[1].end, Time::us(160));
}

// A kernel shorter than the gap is an empty span at its end, never one that ends before it starts.
// A GEMM with its own gap (measured for its shape) opens that hole, not its class's.
// A kernel that starts while an NCCL kernel moves data opens a longer hole: both ranks' all-reduces are resident
// from 0 (10 µs α + 1e6 B at 50 GB/s while computing = 30 µs), so rank 0's first kernel, launched at 1 µs, begins
// its work 2 µs × 1.5 later; the second starts at 101 µs, after the collective, with the plain 2 µs. A GEMM with its
// own gap beside NCCL moving data takes that one. While the NCCL kernel only waits (rank 1 joins after a 300 µs
// kernel), the hole is 2 µs × 1.25, the second kernel's too.
// The start of each of rank 0's two GEMM spans (µs).
std::vector<double> rank0GemmStarts(const Rig& rig, const Op& first, double rank1_before_us) {
    Program p0 = twoStreams(), p1 = twoStreams();
    p0.ops.push_back(allReduce(p0, 1e6, 1));
    p0.ops.push_back(first);
    p0.ops.push_back(kernel(50, 0, 0));
    p0.ops.push_back(stepEnd());
    if (rank1_before_us > 0) p1.ops.push_back(kernel(rank1_before_us, 0, 0));
    p1.ops.push_back(allReduce(p1, 1e6, rank1_before_us > 0 ? 0 : 1));
    p1.ops.push_back(stepEnd(rank1_before_us > 0 ? 0 : 1));
    Timeline tl = Engine(oneGroup({p0, p1}), rig.cost, rig.fabric, rig.cfg).run();
    std::vector<double> starts;
    for (const Span& sp : tl.spans)
        if (sp.rank == 0 && sp.cls == KernelClass::gemm) starts.push_back(sp.start.seconds() * 1e6);
    return starts;
}

void expectStarts(const std::vector<double>& got, double first_us, double second_us) {
    ASSERT_EQ(got.size(), 2u);
    EXPECT_NEAR(got[0], first_us, 1e-3);
    EXPECT_NEAR(got[1], second_us, 1e-3);
}

TEST(Engine, AKernelStartedBesideNcclHasTheGapOfWhatNcclDoes) {
    Rig rig;
    rig.cfg.device_gap_s = EngineConfig::filled(2e-6);
    rig.cfg.gap_beside_transfer = EngineConfig::filled(1.5);
    rig.cfg.gap_beside_waiting = EngineConfig::filled(1.25);
    rig.cfg.slowdown_transfer = EngineConfig::filled(1.0);
    rig.cfg.slowdown_waiting = EngineConfig::filled(1.0);
    expectStarts(rank0GemmStarts(rig, kernel(100, 1, 0), 0), 4, 103);
    Op own = kernel(100, 1, 0);
    own.gap_s = 3.3e-6;
    own.gap_transfer_s = 4.8e-6;
    expectStarts(rank0GemmStarts(rig, own, 0), 5.8, 103);
    expectStarts(rank0GemmStarts(rig, kernel(100, 1, 0), 300), 3.5, 103.5);
    const EngineConfig c = [] {
        HardwareProfile prof;
        prof.launch.step_gap_us = {2.0, 2.5, 1.8, 1.6, 1.6};
        prof.launch.step_gap_beside_transfer_us = {3.0, 0.0, 2.7, 0.0, 0.0};
        prof.launch.step_gap_beside_waiting_us = {2.0, 0.0, 1.8 * 0.98, 0.0, 0.0};
        return configOf(prof);
    }();
    EXPECT_DOUBLE_EQ(c.gap_beside_transfer[std::size_t(KernelClass::gemm)], 1.5);
    EXPECT_DOUBLE_EQ(c.gap_beside_transfer[std::size_t(KernelClass::memory)], 1.5);
    EXPECT_DOUBLE_EQ(c.gap_beside_transfer[std::size_t(KernelClass::attention)], 1.0);  // 0: not measured
    EXPECT_DOUBLE_EQ(c.gap_beside_waiting[std::size_t(KernelClass::gemm)], 1.0);
    EXPECT_DOUBLE_EQ(c.gap_beside_waiting[std::size_t(KernelClass::memory)], 0.98);
    EXPECT_DOUBLE_EQ(c.gap_beside_waiting[std::size_t(KernelClass::copy)], 1.0);
}

TEST(Engine, AGemmsOwnGapReplacesItsClasss) {
    Rig rig;
    rig.cfg.device_gap_s = EngineConfig::filled(2e-6);
    Program p = twoStreams();
    Op own = kernel(50, 0);
    own.gap_s = 3.3e-6;
    p.ops = {kernel(100, 0), own, stepEnd()};
    Timeline tl = Engine(oneGroup({p}), rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.spans.size(), 2u);
    EXPECT_EQ(tl.spans[0].start, Time::us(2));
    EXPECT_EQ(tl.spans[1].start, Time::us(100) + fromSeconds(3.3e-6));
    EXPECT_EQ(tl.step_end[0][0], Time::us(150));  // the stream's timing keeps the kernels' periods
}

TEST(Engine, DeviceGapNeverOutlastsTheKernel) {
    Rig rig;
    rig.cfg.device_gap_s.fill(5e-6);
    Program p = twoStreams();
    p.ops = {kernel(3, 10), stepEnd()};
    Workload w = oneGroup({p});
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.spans.size(), 1u);
    EXPECT_EQ(tl.spans[0].start, Time::us(13));
    EXPECT_EQ(tl.spans[0].end, Time::us(13));
}

// Launch-bound: kernels shorter than their launch leave the GPU idle; B starts when launched at 20 µs.
TEST(Engine, HostBoundKernelsWaitForTheirLaunch) {
    Rig rig;
    Program p = twoStreams();
    p.ops = {kernel(5, 10), kernel(5, 10), stepEnd()};
    Workload w = oneGroup({p});
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    EXPECT_EQ(tl.spans[1].start, Time::us(20));
    EXPECT_EQ(tl.step_end[0][0], Time::us(25));
}

// Rank 0 reaches the all-reduce at 100 µs, rank 1 at 300 µs: it starts at 300 and takes
// α + S/busbw = 10 + 1e6 B / 100 GB/s = 20 µs; rank 0's NCCL kernel is resident (busy) from 100 µs.
TEST(Engine, CollectiveStartsWhenTheLastRankArrives) {
    Rig rig;
    Workload w = oneGroup({computeThenAllReduce(100, 1e6), computeThenAllReduce(300, 1e6)});
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.collectives.size(), 1u);
    EXPECT_EQ(tl.collectives[0].first_arrival, Time::us(100));
    EXPECT_EQ(tl.collectives[0].start, Time::us(300));
    EXPECT_EQ(tl.collectives[0].end, Time::us(320));
    EXPECT_EQ(tl.step_end[0][0], Time::us(320));
    for (const Span& s : tl.spans)
        if (s.rank == 0 && s.cls == KernelClass::comm) EXPECT_EQ(s.start, Time::us(100));
}

// Both ranks arrive at 0; rank 0 computes a 100 µs kernel on its other stream meanwhile.
// Its flow is capped at 100/2 = 50 GB/s while it computes: 10 µs α + 20 µs → collective ends at 30 µs.
// The kernel runs at 1/1.25 while the NCCL kernel is resident: 24 µs of work by 30 µs, 76 µs left → 106 µs.
TEST(Engine, ComputeAndCommSlowEachOtherWhileOverlapped) {
    Rig rig;
    Program p0 = twoStreams(), p1 = twoStreams();
    p0.ops.push_back(allReduce(p0, 1e6, 1));
    p0.ops.push_back(kernel(100, 0, 0));
    p0.ops.push_back(stepEnd());
    p1.ops.push_back(allReduce(p1, 1e6, 1));
    p1.ops.push_back(stepEnd(1));
    Workload w = oneGroup({p0, p1});
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.collectives.size(), 1u);
    EXPECT_EQ(tl.collectives[0].end, Time::us(30));
    EXPECT_NEAR(double(tl.step_end[0][0].count()), double(Time::us(106).count()), 2.0);
}

// Rank 0's NCCL kernel is resident from 0 µs but rank 1 arrives at 300 µs: rank 0's 200 µs GEMM runs beside a
// waiting NCCL kernel, at 1/1.5, and ends at 300 µs; a memory-bound kernel waits at 1/1.1 (its class's factor).
TEST(Engine, ComputeBesideAWaitingNcclKernelSlowsByItsClass) {
    for (auto [cls, factor] : {std::pair{KernelClass::gemm, 1.5}, std::pair{KernelClass::memory, 1.1}}) {
        Rig rig;
        rig.cfg.slowdown_transfer = EngineConfig::filled(1.25);
        rig.cfg.slowdown_waiting = EngineConfig::filled(1.0);
        rig.cfg.slowdown_waiting[std::size_t(KernelClass::gemm)] = 1.5;
        rig.cfg.slowdown_waiting[std::size_t(KernelClass::memory)] = 1.1;
        Op k = kernel(200, 0, 0);
        k.cls = cls;
        Workload w = oneGroup({allReduceBeside(k, 1e6), computeThenAllReduce(300, 1e6)});
        Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
        Time end{};
        for (const Span& sp : tl.spans)
            if (sp.rank == 0 && sp.cls == cls) end = sp.end;
        // the whole kernel runs beside the waiting NCCL kernel (it would end by 300 µs even at 1/1.5)
        EXPECT_NEAR(double(end.count()), double(Time::us(200 * factor).count()), 2.0) << int(cls);
    }
}

// Once the last rank arrives the NCCL kernel moves data: the same GEMM slows at the transfer factor from then on.
// Rank 1 arrives at 40 µs: 40 µs at 1/1.5 (26.7 µs of work), then α + S/busbw' = 10 + 1e6 B / 50 GB/s = 30 µs at
// 1/1.25 (24 µs of work) → 70 µs, the remaining 149.3 µs alone → 219.3 µs.
TEST(Engine, WaitingThenMovingDataChangesTheFactor) {
    Rig rig;
    rig.cfg.slowdown_transfer = EngineConfig::filled(1.25);
    rig.cfg.slowdown_waiting = EngineConfig::filled(1.5);
    Workload w = oneGroup({allReduceBeside(kernel(200, 0, 0), 1e6), computeThenAllReduce(40, 1e6)});
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.collectives.size(), 1u);
    EXPECT_EQ(tl.collectives[0].start, Time::us(40));
    EXPECT_EQ(tl.collectives[0].end, Time::us(70));
    const double end_us = 200 + 40.0 - 40.0 / 1.5 + 30.0 - 30.0 / 1.25;
    EXPECT_NEAR(double(tl.step_end[0][0].count()), end_us * double(Time::us(1).count()), 2.0);
}

// A GEMM whose shape was measured beside NCCL slows by its own factor instead of its class's, in both states.
// Waiting: rank 1 arrives at 300 µs, after the 100 µs GEMM would end even at 1/1.8: 180 µs (its class: 150).
// Moving: both arrive at 0, the flows take 10 µs α + 1e6 B / 50 GB/s = 30 µs; 30 µs at 1/1.8, then alone:
// 30 + (100 − 30/1.8) = 113.3 µs (its class, 1.25: 106).
TEST(Engine, AGemmsOwnSlowdownReplacesItsClasssBesideNccl) {
    Rig rig;
    rig.cfg.slowdown_waiting = EngineConfig::filled(1.5);
    Op k = kernel(100, 0, 0);
    k.beside_nccl = 1.8;
    const auto gemmEnd = [](const Timeline& tl) {
        Time end{};
        for (const Span& sp : tl.spans)
            if (sp.rank == 0 && sp.cls == KernelClass::gemm) end = sp.end;
        return end.seconds() * 1e6;
    };
    Workload waiting = oneGroup({allReduceBeside(k, 1e6), computeThenAllReduce(300, 1e6)});
    EXPECT_NEAR(gemmEnd(Engine(waiting, rig.cost, rig.fabric, rig.cfg).run()), 180.0, 0.01);
    Workload moving = oneGroup({allReduceBeside(k, 1e6), allReduceBeside(kernel(0, 0, 0), 1e6)});
    EXPECT_NEAR(gemmEnd(Engine(moving, rig.cost, rig.fabric, rig.cfg).run()), 30.0 + (100.0 - 30.0 / 1.8), 0.01);
}

// A GEMM launched beside a resident NCCL kernel lost SMs to it from the start: once the NCCL kernel leaves it ends no
// sooner than its own time plus how long the SMs were held, up to one wave of its 128x256 tiles over 132 SMs, and
// no later than beside the NCCL kernel throughout (×1.25 here). The flows (not slowed here) take 10 µs α + bytes /
// 100 GB/s: 20 µs for 1 MB, 50 for 4 MB. A 100 µs GEMM of 8192x2048 outputs (512 tiles, 4 waves of 25 µs) held
// 20 µs ends at 100 + 20 = 120 µs, where a slowdown that lifts at once gives 20 + (100 − 20/1.25) = 104; of
// 8192x8192 outputs (16 waves of 6.25 µs) at 106.25; of 2048x2048 (one wave) held 50 µs at 125 (100 + 50, over
// the 1.25 × 100 beside it throughout). With no tile in the profile, or for a memory-bound kernel, 104.
TEST(Engine, AGemmLaunchedBesideNcclLagsByTheTimeItsSmsWereHeld) {
    const auto endOf = [](const Timeline& tl, KernelClass cls) {
        Time end{};
        for (const Span& sp : tl.spans)
            if (sp.rank == 0 && sp.cls == cls) end = sp.end;
        return end.seconds() * 1e6;
    };
    for (auto [cls, m, n, bytes, linger, expect_us] :
         {std::tuple{KernelClass::gemm, 8192L, 2048L, 1e6, true, 120.0},
          std::tuple{KernelClass::gemm, 8192L, 8192L, 1e6, true, 106.25},
          std::tuple{KernelClass::gemm, 2048L, 2048L, 4e6, true, 125.0},
          std::tuple{KernelClass::gemm, 8192L, 2048L, 1e6, false, 104.0},
          std::tuple{KernelClass::memory, 8192L, 2048L, 1e6, true, 104.0}}) {
        Rig rig;
        rig.cfg.comm_slowdown = 1.0;
        rig.cfg.sms = 132;
        if (linger) rig.cfg.linger_tile_m = 128, rig.cfg.linger_tile_n = 256;
        Op k = kernel(100, 0, 0);
        k.cls = cls;
        k.gemm = {m, n, 4096};
        Workload w = oneGroup({allReduceBeside(k, bytes), allReduceBeside(kernel(0, 0, 0), bytes)});
        Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
        ASSERT_EQ(tl.collectives.size(), 1u);
        EXPECT_EQ(tl.collectives[0].end, Time::us(bytes > 2e6 ? 50 : 20));
        EXPECT_NEAR(endOf(tl, cls), expect_us, 0.01) << int(cls) << ' ' << m << 'x' << n << ' ' << linger;
    }
}

// The GEMM's CTAs hold every SM: an NCCL kernel launched while it runs (rank 0's host issues it at 10 µs, into
// the 100 µs GEMM) is placed when the GEMM ends, so the collective starts at 100 µs, rank 1 waiting from 0, and
// the GEMM runs alone.
TEST(Engine, AnNcclKernelWaitsForTheRunningKernelsSms) {
    Rig rig;
    Program p0 = twoStreams(), p1 = twoStreams();
    p0.ops.push_back(kernel(100, 0, 0));
    p0.ops.push_back(allReduce(p0, 1e6, 1));
    p0.ops.back().host_s = 10e-6;
    p0.ops.push_back(stepEnd(1));
    p1.ops.push_back(allReduce(p1, 1e6, 1));
    p1.ops.push_back(stepEnd(1));
    Timeline tl = Engine(oneGroup({p0, p1}), rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.collectives.size(), 1u);
    EXPECT_EQ(tl.collectives[0].first_arrival, Time{});
    EXPECT_EQ(tl.collectives[0].start, Time::us(100));
    EXPECT_EQ(tl.collectives[0].end, Time::us(120));  // α 10 µs + 1e6 B at 100 GB/s, nothing computing
    for (const Span& sp : tl.spans) {
        if (sp.rank == 0 && sp.cls == KernelClass::gemm) EXPECT_EQ(sp.end, Time::us(100));
        if (sp.rank == 0 && sp.cls == KernelClass::comm) EXPECT_EQ(sp.start, Time::us(100));
    }
}

// When A ends, the event the NCCL stream waits on completes and B, next on A's stream, starts at the same instant:
// B reaches the SMs first, and the NCCL kernel is placed when B ends (90 µs), as on the GPU, where a bucket's
// all-reduce starts at the tail of the kernel after the one it waits for.
TEST(Engine, AStreamsNextKernelReachesTheSmsBeforeACrossStreamWait) {
    Rig rig;
    Program p0 = twoStreams(), p1 = twoStreams();
    p0.events = 1;
    p0.ops = {kernel(40, 0, 0), eventOp(OpKind::record_event), kernel(50, 0, 0), eventOp(OpKind::wait_event, 1)};
    p0.ops.push_back(allReduce(p0, 1e6, 1));
    p0.ops.push_back(stepEnd(1));
    p1.ops.push_back(allReduce(p1, 1e6, 1));
    p1.ops.push_back(stepEnd(1));
    Timeline tl = Engine(oneGroup({p0, p1}), rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.collectives.size(), 1u);
    EXPECT_EQ(tl.collectives[0].start, Time::us(90));
    EXPECT_EQ(tl.step_end[0][0], Time::us(110));
}

// A stream waiting on an event recorded after a kernel on another stream starts only when it completes.
TEST(Engine, WaitEventOrdersStreams) {
    Rig rig;
    Program p = twoStreams();
    p.events = 1;
    p.ops = {kernel(40, 0, 0), eventOp(OpKind::record_event), eventOp(OpKind::wait_event, 1), kernel(10, 0, 1), stepEnd(1)};
    Workload w = oneGroup({p});
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    EXPECT_EQ(tl.step_end[0][0], Time::us(50));
}

// Host blocks on an event (like loss.item()) and launches the next kernel only after it completes.
TEST(Engine, HostSyncBlocksTheHost) {
    Rig rig;
    Program p = twoStreams();
    p.events = 1;
    p.ops = {kernel(40, 0), eventOp(OpKind::record_event), eventOp(OpKind::host_sync), kernel(10, 5), stepEnd()};
    Workload w = oneGroup({p});
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    EXPECT_EQ(tl.step_end[0][0], Time::us(55));
}

Workload jittery() {
    Program p0 = twoStreams(), p1 = twoStreams();
    for (Program* p : {&p0, &p1}) {
        for (int i = 0; i < 50; ++i) p->ops.push_back(kernel(20, 9));
        p->ops.push_back(allReduce(*p, 1e7, 0));
        p->ops.push_back(stepEnd());
    }
    return oneGroup({p0, p1});
}

TEST(Engine, SameSeedGivesIdenticalTimelines) {
    Rig rig;
    rig.cfg.jitter = true;
    rig.cfg.host_sigma = 0.1;
    rig.cfg.kernel_cv = 0.05;
    rig.cfg.straggler_cv = 0.01;
    Workload w = jittery();
    Timeline a = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    Timeline b = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(a.spans.size(), b.spans.size());
    for (std::size_t i = 0; i < a.spans.size(); ++i) {
        EXPECT_EQ(a.spans[i].start, b.spans[i].start);
        EXPECT_EQ(a.spans[i].end, b.spans[i].end);
    }
    EXPECT_EQ(a.events, b.events);
}

// The profile's host costs are means per kernel (a phase's host time over its kernels), so the launch jitter
// keeps the mean: 2000 host-bound launches of 10 µs with σ = 0.34 (the built-in profile's) take 20 ms within the
// sum's spread (0.35/√2000 ≈ 0.8%), not the lognormal median's exp(σ²/2) ≈ 6% more.
TEST(Engine, HostJitterKeepsTheMeanLaunchCost) {
    Rig rig;
    rig.cfg.jitter = true;
    rig.cfg.host_sigma = 0.34;
    Program p = twoStreams();
    for (int i = 0; i < 2000; ++i) p.ops.push_back(kernel(1, 10));
    p.ops.push_back(stepEnd());
    Workload w = oneGroup({p});
    const double ms = Engine(w, rig.cost, rig.fabric, rig.cfg).run().step_end[0][0].seconds() * 1e3;
    EXPECT_NEAR(ms, 20.0, 0.5);
}

TEST(Engine, DifferentSeedsGiveDifferentJitter) {
    Rig rig;
    rig.cfg.jitter = true;
    rig.cfg.host_sigma = 0.1;
    rig.cfg.kernel_cv = 0.05;
    Workload w = jittery();
    Timeline a = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    rig.cfg.seed = 2;
    Timeline b = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    EXPECT_NE(a.step_end[0][0], b.step_end[0][0]);
}

// A 200 µs GEMM beside a moving all-reduce (α 10 µs, 100 GB/s, the flow not slowed here): 1 MB moves in 10 + 10 µs
// at the small size's factor (×1.5 for 20 µs: 13.3 µs of work), 4 MB in 10 + 40 µs at the large one's (×2.0 for
// 50 µs: 25 µs of work); the rest alone.
TEST(Engine, ComputeBesideALargerAllReduceSlowsMore) {
    for (auto [bytes, factor, move_us] : {std::tuple{1e6, 1.5, 20.0}, std::tuple{4e6, 2.0, 50.0}}) {
        Rig rig;
        rig.cfg.comm_slowdown = 1.0;
        rig.cfg.transfer_by_size = {{1e6, EngineConfig::filled(1.5)}, {4e6, EngineConfig::filled(2.0)}};
        Workload w = oneGroup({allReduceBeside(kernel(200, 0, 0), bytes), allReduceBeside(kernel(0, 0, 0), bytes)});
        Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
        Time end{};
        for (const Span& sp : tl.spans)
            if (sp.rank == 0 && sp.cls == KernelClass::gemm) end = sp.end;
        const double expect_us = move_us + (200.0 - move_us / factor);
        EXPECT_NEAR(end.seconds() * 1e6, expect_us, 0.01) << bytes;
    }
}

// Two ranks compute 1000 µs, then all-reduce: with a device spread the slower GPU's 1000·exp(0.02·0.5894) =
// 1011.9 µs sets when the collective starts; without jitter every GPU runs at the median speed.
TEST(Engine, TheSlowerGpuSetsWhenTheCollectiveStarts) {
    Rig rig;
    rig.cfg.device_compute_cv = 0.02;
    Workload w = oneGroup({computeThenAllReduce(1000, 1e6), computeThenAllReduce(1000, 1e6)});
    EXPECT_EQ(Engine(w, rig.cost, rig.fabric, rig.cfg).run().collectives[0].start, Time::us(1000));
    rig.cfg.jitter = true;
    const Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    EXPECT_NEAR(tl.collectives[0].start.seconds() * 1e6, 1000 * std::exp(0.02 * 0.589456), 0.01);
    EXPECT_NEAR(tl.collectives[0].first_arrival.seconds() * 1e6, 1000 * std::exp(-0.02 * 0.589456), 0.01);
}

// Two host-bound ranks (ten 5 µs kernels of 100 µs host cost each, an all-reduce of 20 µs, twice) with hosts
// spread by cv 0.1: the faster host (×0.9428) launches ahead, and its GPU waits in NCCL for the slower (×1.0607) at
// each all-reduce, longer at the second (its host kept running ahead: 1890.6 → 2126.4 µs) than at the first (947.8
// → 1065.7); the step ends at the slower host's pace, 2000 · 1.0607 + 5 + 20 µs, where without jitter both end at
// 2025 µs.
TEST(Engine, AHostBoundStepGoesAtItsSlowestHost) {
    Rig rig;
    rig.cfg.host_rank_cv = 0.1;
    Program p = twoStreams();
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 10; ++i) p.ops.push_back(kernel(5, 100));
        p.ops.push_back(allReduce(p, 1e6, 0));
    }
    p.ops.push_back(stepEnd());
    const Workload w = oneGroup({p, p});
    const Timeline flat = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    EXPECT_EQ(flat.step_end[0][0], Time::us(2025));
    rig.cfg.jitter = true;
    const Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    const double fast = std::exp(-0.1 * 0.589456), slow = std::exp(0.1 * 0.589456);
    const auto us = [](Time t) { return t.seconds() * 1e6; };
    ASSERT_EQ(tl.collectives.size(), 2u);
    EXPECT_NEAR(us(tl.collectives[0].first_arrival), 1000 * fast + 5, 0.01);
    EXPECT_NEAR(us(tl.collectives[0].start), 1000 * slow + 5, 0.01);
    EXPECT_NEAR(us(tl.collectives[1].first_arrival), 2000 * fast + 5, 0.01);
    EXPECT_NEAR(us(tl.collectives[1].start), 2000 * slow + 5, 0.01);
    for (int r = 0; r < 2; ++r) EXPECT_NEAR(us(tl.step_end[r][0]), 2000 * slow + 25, 0.01);
}

// A power model whose clock line is 2000 MHz less 1 MHz per TFLOP/s of load, capped at 1980; idle time leaves
// `headroom` MHz per unit of idle over busy time (0: the load over the whole step).
PowerModel linePower(double headroom) {
    PowerModel m;
    m.modelled = true;
    m.clock_max_mhz = 1980;
    m.clock_intercept_mhz = 2000;
    m.clock_mhz_per_tflops = -1.0;
    m.idle_headroom_mhz = headroom;
    return m;
}

// The power state: a step's clock comes from its load, and attention runs at it. Each step: a GEMM of 2e11 FLOP for
// 1 ms, then a forward attention kernel (head_dim 128, 1e11 FLOP) of 0.5 ms at full clock, then a memory-bound
// kernel of 0.5 ms. Step 0's clock: its kernels' load over their own 2 ms, (3e11 / 2e-3) TFLOP/s + 1000 · 0.25 = 400
// → 2000 − 400 = 1600 MHz; attention then runs (2000 / 1600)^0.5 of its time. Step 1's clock is step 0's load over
// its measured length (2.059 ms with the slower attention) and so on; the timeline keeps each step's clock.
TEST(Engine, AttentionRunsAtTheClockTheStepsLoadSets) {
    Rig rig;
    rig.cfg.power = linePower(0);
    rig.cfg.power.memory_busy_tflops = 1000;
    rig.cfg.power.attention_reference_mhz = 2000;
    rig.cfg.power.attention = {{64, 1.0, 1.0}, {128, 0.5, 0.5}};
    Program p = twoStreams();
    for (int step = 0; step < 3; ++step) {
        Op gemm = kernel(1000, 0);
        gemm.flops = 2e11;
        Op attention = kernel(500, 0);
        attention.cls = KernelClass::attention;
        attention.phase = Phase::forward;
        attention.gemm = {64, 2048, 128};
        attention.flops = 1e11;
        Op memory = kernel(500, 0);
        memory.cls = KernelClass::memory;
        for (Op* op : {&gemm, &attention, &memory}) op->step = step;
        Op end = stepEnd();
        end.step = step;
        p.ops.insert(p.ops.end(), {gemm, attention, memory, end});
    }
    Workload w = oneGroup({p});
    w.steps = 3;
    Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    ASSERT_EQ(tl.clock_mhz[0].size(), 3u);
    EXPECT_DOUBLE_EQ(tl.clock_mhz[0][0], 1600.0);
    const double attention0 = 500e-6 * std::sqrt(2000.0 / 1600.0);
    EXPECT_NEAR((tl.spans[1].end - tl.spans[1].start).seconds(), attention0, 1e-9);
    const double step0 = 1000e-6 + attention0 + 500e-6;
    EXPECT_NEAR(tl.step_end[0][0].seconds(), step0, 1e-9);
    const double clock1 = 2000.0 - (3e11 / step0 * 1e-12 + 1000.0 * 500e-6 / step0);
    EXPECT_NEAR(tl.clock_mhz[0][1], clock1, 1e-6);
    EXPECT_NEAR((tl.spans[4].end - tl.spans[4].start).seconds(), 500e-6 * std::sqrt(2000.0 / clock1), 1e-9);

    // Without a power model nothing moves and no clock is kept.
    rig.cfg.power.modelled = false;
    Timeline plain = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    EXPECT_EQ(plain.step_end[0][0], Time::us(2000));
    EXPECT_EQ(plain.clock_mhz[0][0], 0.0);
}

// Idle time leaves headroom under the limit: each step a GEMM of 1e12 FLOP for 1 ms, then the host waits for it and
// works 1 ms with the GPU idle. Step 0's clock from the GEMM alone: 2000 − 1000 = 1000 MHz; step 1's too, the first
// step being a warm-up whose idle time does not count. Step 2's: the load over the busy time is the same, and step
// 1's idle half adds 300 MHz per unit of idle over busy time: 1300 MHz. Without the headroom measured (0), the load
// is taken over the whole step instead: 2000 − 500 = 1500 MHz.
TEST(Engine, IdleTimeRaisesTheClockAfterTheWarmUpStep) {
    Rig rig;
    rig.cfg.power = linePower(300);
    Program p = twoStreams();
    p.events = 3;
    for (int step = 0; step < 3; ++step) {
        Op gemm = kernel(1000, 0);
        gemm.flops = 1e12;
        Op work;
        work.kind = OpKind::host_work;
        work.host_s = 1e-3;
        Op record = eventOp(OpKind::record_event), sync = eventOp(OpKind::host_sync), end = stepEnd();
        record.event = sync.event = std::uint32_t(step);
        for (Op* op : {&gemm, &record, &sync, &work, &end}) op->step = step;
        p.ops.insert(p.ops.end(), {gemm, record, sync, work, end});
    }
    Workload w = oneGroup({p});
    w.steps = 3;
    const Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    const double step1 = (tl.step_end[0][1] - tl.step_end[0][0]).seconds();
    ASSERT_NEAR(step1, 2e-3, 2e-5);
    EXPECT_DOUBLE_EQ(tl.clock_mhz[0][0], 1000.0);
    EXPECT_DOUBLE_EQ(tl.clock_mhz[0][1], 1000.0);
    EXPECT_NEAR(tl.clock_mhz[0][2], 1000.0 + 300.0 * (step1 - 1e-3) / 1e-3, 1e-6);
    rig.cfg.power.idle_headroom_mhz = 0;
    const Timeline diluted = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    EXPECT_DOUBLE_EQ(diluted.clock_mhz[0][1], 1000.0);
    EXPECT_NEAR(diluted.clock_mhz[0][2],
                2000.0 - 1e12 / (diluted.step_end[0][1] - diluted.step_end[0][0]).seconds() * 1e-12, 1e-6);
}

// What an all-reduce moving beside a GEMM takes from it, its NCCL kernel draws: the load is taken over the GEMM's
// own time (1 ms for 1e12 FLOP), not the longer time it took beside the all-reduce (×1.25 while 20 MB move), so the
// next step's clock is 2000 − 1000 = 1000 MHz, as without the all-reduce.
TEST(Engine, ClockHoldsWhenAnAllReduceSlowsTheKernels) {
    Rig rig;
    rig.cfg.power = linePower(300);
    std::vector<Program> ranks;
    for (int r = 0; r < 2; ++r) {
        Program p = twoStreams();
        for (int step = 0; step < 2; ++step) {
            Op ar = allReduce(p, 20e6, 1), gemm = kernel(1000, 0), end = stepEnd();
            gemm.flops = 1e12;
            for (Op* op : {&ar, &gemm, &end}) op->step = step;
            p.ops.insert(p.ops.end(), {ar, gemm, end});
        }
        ranks.push_back(std::move(p));
    }
    Workload w = oneGroup(std::move(ranks));
    w.steps = 2;
    const Timeline tl = Engine(w, rig.cost, rig.fabric, rig.cfg).run();
    EXPECT_GT(tl.step_end[0][0].seconds(), 1.03e-3);  // the GEMM was slowed beside the transfer
    EXPECT_DOUBLE_EQ(tl.clock_mhz[0][0], 1000.0);
    EXPECT_NEAR(tl.clock_mhz[0][1], 1000.0, 1e-6);
}

}  // namespace
}  // namespace stepsim
