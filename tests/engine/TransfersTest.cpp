// Transfers (sim/engine/Transfers.hpp): host copies as flows on the flow network, worked out by hand on a fabric of
// one GPU whose host side is three links: host→GPU and GPU→host PCIe (50 GB/s each), host→storage.
#include "sim/engine/Engine.hpp"

#include <gtest/gtest.h>

namespace stepsim {
namespace {

struct Rig {
    HardwareProfile profile;
    CostModel cost{profile, NcclSpec{}, false};
    Fabric fabric = [] {
        Fabric f;
        f.gpus = 1;
        f.gpus_per_node = 1;
        f.links = {{"host->gpu0", LinkKind::pcie, 50e9, Time{}},
                   {"gpu0->host", LinkKind::pcie, 50e9, Time{}},
                   {"host->storage", LinkKind::storage, 2e9, Time{}}};
        f.route = [](int, int) { return Route{}; };
        f.host_route = [](int, bool to_gpu) { return Route{to_gpu ? LinkId(0) : LinkId(1)}; };
        f.storage_route = [](int) { return Route{2}; };
        return f;
    }();
    EngineConfig cfg = [] {
        EngineConfig c;
        c.jitter = false;
        return c;
    }();

    Timeline run(const Program& p, bool usage = false) {
        Workload w;
        w.programs = {p};
        w.steps = 1;
        EngineConfig c = cfg;
        c.link_usage = usage;
        return Engine(w, cost, fabric, c).run();
    }
};

Program threeStreams() {
    Program p;
    p.streams = {{StreamKind::compute, "compute"}, {StreamKind::copy, "h2d"}, {StreamKind::copy, "other"}};
    return p;
}

Op kernel(double work_us, std::uint8_t stream) {
    Op op;
    op.kind = OpKind::kernel;
    op.cls = KernelClass::gemm;
    op.stream = stream;
    op.work_s = work_us * 1e-6;
    return op;
}

Op copyOp(Program& p, std::uint8_t stream, TransferKind kind, double bytes, double rate_Bps, bool pinned) {
    Op op;
    op.kind = OpKind::transfer;
    op.stream = stream;
    op.collective = static_cast<std::uint32_t>(p.transfers.size());
    TransferCall t;
    t.kind = kind;
    t.bytes = bytes;
    t.cap_Bps = rate_Bps;
    t.pinned = pinned;
    p.transfers.push_back(t);
    return op;
}

Op eventOp(OpKind kind, std::uint8_t stream, std::uint32_t event) {
    Op op;
    op.kind = kind;
    op.stream = stream;
    op.event = event;
    return op;
}

// Where the kernel on stream 2 (launched by the host right after the copy) started.
Time probeStart(const Timeline& tl) {
    for (const Span& s : tl.spans)
        if (s.stream == 2) return s.start;
    return Time::max();
}

// A pageable copy is issued on the compute stream behind 1 ms of work and the host synchronizes on it (PyTorch's
// synchronous .to()): the host's next launch waits for the kernel and the copy (1 MB at 10 GB/s: 100 µs). A pinned
// non-blocking copy on its own stream leaves the host free: the next launch goes at once, and the copy runs beside
// the kernel.
TEST(Transfers, PageableCopyBlocksTheHostPinnedDoesNot) {
    Rig rig;
    Program pageable = threeStreams();
    pageable.events = 1;
    pageable.ops = {kernel(1000, 0), copyOp(pageable, 0, TransferKind::h2d, 1e6, 10e9, false),
                    eventOp(OpKind::record_event, 0, 0), eventOp(OpKind::host_sync, 0, 0), kernel(10, 2)};
    const Timeline a = rig.run(pageable);
    EXPECT_NEAR(probeStart(a).micros(), 1100.0, 1.0);

    Program pinned = threeStreams();
    pinned.events = 1;
    pinned.ops = {kernel(1000, 0), copyOp(pinned, 1, TransferKind::h2d, 1e6, 50e9, true),
                  eventOp(OpKind::record_event, 1, 0), eventOp(OpKind::wait_event, 0, 0), kernel(10, 2)};
    const Timeline b = rig.run(pinned);
    EXPECT_LT(probeStart(b).micros(), 1.0);
    ASSERT_EQ(b.transfers.size(), 1u);
    EXPECT_NEAR(b.transfers[0].start.micros(), 0.0, 1.0);
    EXPECT_NEAR(b.transfers[0].end.micros(), 20.0, 0.1);  // 1 MB at 50 GB/s, beside the kernel
}

// Two copies host→GPU at once share the one PCIe link (50 GB/s): each 50 MB copy, 1 ms alone at its own 50 GB/s,
// takes 2 ms; a copy in the other direction has its own link and is not slowed.
TEST(Transfers, TwoCopiesOnOnePcieLinkShareIt) {
    Rig rig;
    Program p = threeStreams();
    p.ops = {copyOp(p, 1, TransferKind::h2d, 50e6, 50e9, true), copyOp(p, 2, TransferKind::h2d, 50e6, 50e9, true)};
    const Timeline same = rig.run(p);
    ASSERT_EQ(same.transfers.size(), 2u);
    for (const TransferRecord& t : same.transfers) EXPECT_NEAR((t.end - t.start).micros(), 2000.0, 1.0);

    Program q = threeStreams();
    q.ops = {copyOp(q, 1, TransferKind::h2d, 50e6, 50e9, true), copyOp(q, 2, TransferKind::d2h, 50e6, 50e9, true)};
    const Timeline both = rig.run(q);
    for (const TransferRecord& t : both.transfers) EXPECT_NEAR((t.end - t.start).micros(), 1000.0, 1.0);
}

// Link usage, when asked for, follows the flows: the shared link at 50 GB/s while both copies run, then 0.
TEST(Transfers, LinkUsageRecordsTheLoad) {
    Rig rig;
    Program p = threeStreams();
    p.ops = {copyOp(p, 1, TransferKind::h2d, 50e6, 50e9, true), copyOp(p, 2, TransferKind::h2d, 50e6, 50e9, true)};
    EXPECT_TRUE(rig.run(p).link_samples.empty());
    const Timeline tl = rig.run(p, true);
    ASSERT_FALSE(tl.link_samples.empty());
    EXPECT_EQ(tl.link_samples.front().link, 0u);
    EXPECT_NEAR(tl.link_samples.front().Bps, 50e9, 1.0);
    EXPECT_EQ(tl.link_samples.back().Bps, 0.0);
    EXPECT_NEAR(tl.link_samples.back().t.micros(), 2000.0, 1.0);
}

}  // namespace
}  // namespace stepsim
