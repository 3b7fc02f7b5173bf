// PowerSgdHook, through expand: vanilla all-reduces before start_powerSGD_iter, then per bucket the all-reduces of the
// uncompressed tensors, of the Ps and of the Qs with their sizes, the host's synchronize, and the hook's memory.
#include "sim/workload/PowerSgdHook.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/scenario/ProfileYaml.hpp"
#include "sim/workload/Expand.hpp"
#include "sim/workload/Transformer.hpp"
#include "sim/workload/TransformerStep.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

Scenario powerSgd(int rank) {
    Scenario sc = tiny(2);
    sc.sim.steps = 4;
    sc.ddp.comm_hook = CommHook::powersgd;
    sc.ddp.powersgd_rank = rank;
    sc.ddp.powersgd_start_iter = 2;
    return sc;
}

struct Collective {
    std::string name;
    double bytes;
};

std::vector<Collective> collectives(const Expansion& e, int step) {
    const Program& p = e.workload.programs[0];
    std::vector<Collective> out;
    for (const Op& op : p.ops)
        if (op.kind == OpKind::collective && op.step == step) out.push_back({p.names[op.name], op.bytes});
    return out;
}

bool endsWith(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Before start_powerSGD_iter each bucket is all-reduced whole, once.
TEST(PowerSgd, VanillaAllReduceBeforeTheStartStep) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Expansion e = expand(powerSgd(1), cost);
    const std::vector<Collective> c = collectives(e, 1);
    ASSERT_EQ(c.size(), e.buckets.size());
    for (std::size_t k = 0; k < c.size(); ++k) EXPECT_DOUBLE_EQ(c[k].bytes, e.buckets[k].bytes);
}

// From the start step on, each bucket all-reduces its uncompressed tensors (if any) in one call, then its Ps
// (Σ n·r elements) and its Qs (Σ m·r); the sizes follow the rank.
TEST(PowerSgd, ThreeAllReducesPerBucketOfTheLowRankSizes) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    for (int rank : {1, 2}) {
        const Scenario sc = powerSgd(rank);
        const Expansion e = expand(sc, cost);
        StepContext c = makeStepContext(sc, cost);
        const std::vector<std::size_t> order = gradientReadyOrder(c);
        const std::vector<Collective> got = collectives(e, 3);
        std::vector<Collective> want;
        for (std::size_t k = 0; k < e.buckets.size(); ++k) {
            std::vector<std::size_t> params;
            for (std::size_t j : e.buckets[k].params) params.push_back(order[j]);
            double U = 0, P = 0, Q = 0;
            for (const PowerSgdMatrix& x : powerSgdMatrices(c, params)) {
                if (x.r == 0) U += x.n * x.m;
                else P += x.n * x.r, Q += x.m * x.r;
                if (x.m == 1) EXPECT_EQ(x.r, 0) << "1-D tensors are never compressed";
            }
            if (U > 0) want.push_back({"uncompressed all_reduce", 4 * U});
            if (P > 0) want.push_back({"P all_reduce", 4 * P}), want.push_back({"Q all_reduce", 4 * Q});
        }
        ASSERT_EQ(got.size(), want.size()) << "rank " << rank;
        for (std::size_t i = 0; i < got.size(); ++i) {
            EXPECT_TRUE(endsWith(got[i].name, want[i].name)) << got[i].name << " vs " << want[i].name;
            EXPECT_DOUBLE_EQ(got[i].bytes, want[i].bytes) << got[i].name;
        }
    }
}

// A hidden-256 Linear weight (256×256) at rank 1: (256 + 256)·1·2 < 65536, compressed; its P and Q have 256
// elements each.
TEST(PowerSgd, CompressesAMatrixWhenItSavesEnough) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Scenario sc = powerSgd(1);  // StepContext keeps a reference to it
    const StepContext c = makeStepContext(sc, cost);
    for (std::size_t i = 0; i < c.params.size(); ++i) {
        if (c.params[i].name != "h.0.attn.proj.weight") continue;
        const std::vector<PowerSgdMatrix> m = powerSgdMatrices(c, {i});
        ASSERT_EQ(m.size(), 1u);
        EXPECT_EQ(m[0].n, 256);
        EXPECT_EQ(m[0].m, 256);
        EXPECT_EQ(m[0].r, 1);
    }
}

// decompress ends with torch.cuda.synchronize(): one host sync per bucket in each compressed step (2 and 3), none in
// the vanilla step before.
TEST(PowerSgd, TheHostSynchronizesOncePerBucket) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Expansion e = expand(powerSgd(1), cost);
    std::vector<int> syncs(4, 0);
    for (const Op& op : e.workload.programs[0].ops)
        if (op.kind == OpKind::host_sync) ++syncs[std::size_t(op.step)];
    EXPECT_EQ(syncs[1], 0);
    EXPECT_EQ(syncs[2], int(e.buckets.size()));
    EXPECT_EQ(syncs[3], int(e.buckets.size()));
}

// Error feedback keeps one error per bucket (every gradient byte) plus the largest bucket's clone; warm start keeps the
// Ps and Qs; both in the DDP buffers.
TEST(PowerSgd, HookStateIsInTheBuffers) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(2);
    const Expansion plain = expand(sc, cost);
    sc = powerSgd(1);
    const Expansion e = expand(sc, cost);
    double largest = 0;
    for (const Bucket& b : e.buckets) largest = std::max(largest, b.bytes);
    EXPECT_GT(e.memory.buckets, plain.memory.buckets + 4 * e.params + largest);
    sc.ddp.powersgd_error_feedback = false;
    sc.ddp.powersgd_warm_start = false;
    EXPECT_DOUBLE_EQ(expand(sc, cost).memory.buckets, plain.memory.buckets);
}

}  // namespace
}  // namespace stepsim
