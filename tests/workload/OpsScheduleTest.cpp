// A captured op graph as Programs (sim/workload/OpsSchedule.hpp): each family's kernels priced as the profile's
// formulas give them (sim/cost/OpCost.hpp), DDP's buckets from the gradient-ready order, FSDP2's units from the
// modules, the memory peak from the tensors' lifetimes, and the committed graph simulated end to end.
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/cost/GemmModel.hpp"
#include "sim/cost/OpCost.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/workload/Expand.hpp"
#include "sim/workload/OpsMemory.hpp"
#include "sim/workload/OpsUnits.hpp"

namespace stepsim {
namespace {

std::string dataFile(const std::string& name) {
    return (std::filesystem::path(STEPSIM_SOURCE_DIR) / "tests" / "data" / "ops" / name).string();
}

OpTensorRef ref(int t, std::vector<long long> shape, const std::string& dtype, std::vector<long long> stride = {}) {
    OpTensorRef r;
    r.t = t;
    r.shape = shape;
    r.dtype = dtype;
    if (stride.empty()) {
        stride.assign(shape.size(), 1);
        for (std::size_t i = shape.size(); i-- > 1;) stride[i - 1] = stride[i] * shape[i];
    }
    r.stride = stride;
    return r;
}

OpTensorArg one(OpTensorRef r) {
    return {false, {std::move(r)}};
}

OpNode node(const std::string& op, std::vector<OpTensorArg> in, std::vector<OpTensorArg> out,
            Phase phase = Phase::forward) {
    OpNode n;
    n.op = op;
    n.phase = phase;
    n.in = std::move(in);
    n.out = std::move(out);
    return n;
}

// A profile with known rates: HBM 4000 GB/s, elementwise at 0.8 with 1 µs fixed, residual_add at 0.5, casts at 0.7,
// optimizer_foreach at 0.75, kernels no shorter than 2 µs.
HardwareProfile knownProfile() {
    HardwareProfile p;
    p.gpu.hbm_gbps = 4000;
    p.memory.min_kernel_us = 2.0;
    p.memory.kernels["elementwise"] = {0.8, 1.0};
    p.memory.kernels["residual_add"] = {0.5, 0.0};
    p.memory.kernels["cast_up"] = {0.7, 0.0};
    p.memory.kernels["optimizer_foreach"] = {0.75, 0.0};
    p.gemm["bf16"] = GemmEfficiency{};
    return p;
}

double memoryTime(double bytes, double eff, double fixed_us) {
    return std::max(2e-6, fixed_us * 1e-6 + bytes / (4000e9 * eff));
}

double priced(const HardwareProfile& prof, const OpNode& n, std::size_t k = 0, std::size_t* count = nullptr) {
    const CostModel cost(prof, NcclSpec{}, false);
    OpGraph g;
    const std::vector<OpKernel> ks = opKernels(g, n);
    if (count) *count = ks.size();
    if (ks.size() <= k) return -1;
    bool inside = true;
    return priceKernel(cost, ks[k], n.phase, inside).work_s;
}

TEST(OpCost, ViewsLaunchNothing) {
    OpNode v = node("aten::t", {one(ref(0, {4, 8}, "bfloat16"))}, {one(ref(0, {8, 4}, "bfloat16", {1, 8}))});
    v.view = true;
    OpGraph g;
    EXPECT_TRUE(opKernels(g, v).empty());
    EXPECT_TRUE(opKernels(g, node("aten::empty_strided", {}, {one(ref(1, {1024}, "float32"))})).empty());
}

TEST(OpCost, ElementwiseCountsABroadcastInputOnceAndPricesTheResidualAdd) {
    const HardwareProfile p = knownProfile();
    // fp32 [1024, 256] + bf16 [256] broadcast (stride 0 over the rows) -> fp32 [1024, 256]: a residual add.
    const OpNode add =
        node("aten::add", {one(ref(0, {1024, 256}, "float32")), one(ref(1, {1024, 256}, "bfloat16", {0, 1}))},
             {one(ref(2, {1024, 256}, "float32"))});
    const double bytes = 1024.0 * 256 * 4 + 256 * 2 + 1024.0 * 256 * 4;
    EXPECT_NEAR(priced(p, add), memoryTime(bytes, 0.5, 0.0), 1e-12);
    // Same dtypes: elementwise's rate and fixed cost.
    const OpNode mul = node("aten::mul", {one(ref(0, {1024, 256}, "bfloat16")), one(ref(1, {1024, 256}, "bfloat16"))},
                            {one(ref(2, {1024, 256}, "bfloat16"))});
    EXPECT_NEAR(priced(p, mul), memoryTime(3 * 1024.0 * 256 * 2, 0.8, 1.0), 1e-12);
}

TEST(OpCost, CastsAndCopiesByDtypeAndLayout) {
    const HardwareProfile p = knownProfile();
    const OpNode up =
        node("aten::_to_copy", {one(ref(0, {4096, 1024}, "bfloat16"))}, {one(ref(1, {4096, 1024}, "float32"))});
    EXPECT_NEAR(priced(p, up), memoryTime(4096.0 * 1024 * 6, 0.7, 0.0), 1e-12);
    OpGraph g;
    // A contiguous copy in one dtype is a memcpy; a transposed one an elementwise kernel.
    const OpNode flat = node("aten::clone", {one(ref(0, {64, 64}, "float32"))}, {one(ref(1, {64, 64}, "float32"))});
    EXPECT_EQ(opKernels(g, flat).at(0).cls, KernelClass::copy);
    const OpNode strided =
        node("aten::clone", {one(ref(0, {64, 64}, "float32", {1, 64}))}, {one(ref(1, {64, 64}, "float32"))});
    EXPECT_EQ(opKernels(g, strided).at(0).cls, KernelClass::memory);
    EXPECT_EQ(opKernels(g, strided).at(0).mem, MemKind::elementwise);
}

TEST(OpCost, GemmShapesFromTheOperands) {
    const HardwareProfile p = knownProfile();
    OpGraph g;
    // linear: input [2, 128, 256], weight [512, 256] -> C[256 x 512] = A[256 x 256] B.
    const OpNode lin =
        node("aten::linear", {one(ref(0, {2, 128, 256}, "bfloat16")), one(ref(1, {512, 256}, "bfloat16"))},
             {one(ref(2, {2, 128, 512}, "bfloat16"))});
    const OpKernel k = opKernels(g, lin).at(0);
    EXPECT_EQ(k.shape, (GemmShape{256, 512, 256}));
    EXPECT_DOUBLE_EQ(k.flops, 2.0 * 256 * 512 * 256);
    const double expect = gemmSeconds(k.shape, p.gemm.at("bf16"), p.gpu.peak_tflops_bf16 * 1e12, p.gpu.sms).seconds;
    EXPECT_NEAR(priced(p, lin), expect, 1e-15);
    // addmm(bias, A, B) takes A and B; bmm folds the batch into m.
    const OpNode addmm = node("aten::addmm",
                              {one(ref(0, {512}, "bfloat16")), one(ref(1, {300, 256}, "bfloat16")),
                               one(ref(2, {256, 512}, "bfloat16", {1, 256}))},
                              {one(ref(3, {300, 512}, "bfloat16"))});
    EXPECT_EQ(opKernels(g, addmm).at(0).shape, (GemmShape{300, 512, 256}));
    const OpNode bmm = node("aten::bmm", {one(ref(0, {8, 64, 32}, "bfloat16")), one(ref(1, {8, 32, 16}, "bfloat16"))},
                            {one(ref(2, {8, 64, 16}, "bfloat16"))});
    EXPECT_EQ(opKernels(g, bmm).at(0).shape, (GemmShape{512, 16, 32}));
}

TEST(OpCost, AttentionFlopsCausalAndBackward) {
    OpGraph g;
    // cuDNN SDPA, q/k/v [2, 8, 1024, 64], is_causal (position 6) true: a memset, then 2·B·H·S²·D FLOPs.
    OpNode fwd = node("aten::_scaled_dot_product_cudnn_attention",
                      {one(ref(0, {2, 8, 1024, 64}, "bfloat16")), one(ref(1, {2, 8, 1024, 64}, "bfloat16")),
                       one(ref(2, {2, 8, 1024, 64}, "bfloat16"))},
                      {one(ref(3, {2, 8, 1024, 64}, "bfloat16"))});
    fwd.args[6] = OpScalarArg{OpScalarArg::Kind::boolean, 1.0, "", {}};
    const std::vector<OpKernel> f = opKernels(g, fwd);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[1].cls, KernelClass::attention);
    EXPECT_DOUBLE_EQ(f[1].flops, 2.0 * 2 * 8 * 1024.0 * 1024 * 64);
    EXPECT_EQ(f[1].shape, (GemmShape{16, 1024, 64}));
    fwd.args[6].number = 0.0;
    EXPECT_DOUBLE_EQ(opKernels(g, fwd)[1].flops, 4.0 * 2 * 8 * 1024.0 * 1024 * 64);
    // Its backward (q at position 1) with no is_causal of its own takes the forward's, through fwd_op.
    g.ops.push_back(fwd);
    g.ops[0].args[6].number = 1.0;
    OpNode bwd = node("aten::_scaled_dot_product_cudnn_attention_backward",
                      {one(ref(4, {2, 8, 1024, 64}, "bfloat16")), one(ref(0, {2, 8, 1024, 64}, "bfloat16")),
                       one(ref(1, {2, 8, 1024, 64}, "bfloat16"))},
                      {}, Phase::backward);
    bwd.fwd_op = 0;
    // Backward: the memset, the dO·O preprocess, the kernel, dQ's conversion.
    const std::vector<OpKernel> b = opKernels(g, bwd);
    ASSERT_EQ(b.size(), 4u);
    EXPECT_EQ(b[2].cls, KernelClass::attention);
    EXPECT_DOUBLE_EQ(b[2].flops, 2.5 * 2.0 * 2 * 8 * 1024.0 * 1024 * 64);
}

TEST(OpCost, ForeachLaunchesAsMultiTensorApplyChunksThem) {
    const HardwareProfile p = knownProfile();
    // Two lists of 6 tensors of 400 chunks (65536 elements) each: 2400 blocks, 320 a launch: 8 launches.
    OpTensorArg a{true, {}}, b{true, {}};
    for (int i = 0; i < 6; ++i)
        a.items.push_back(ref(i, {400 * 65536}, "float32")), b.items.push_back(ref(6 + i, {400 * 65536}, "float32"));
    const OpNode lerp = node("aten::_foreach_lerp_", {a, b}, {}, Phase::optimizer);
    std::size_t launches = 0;
    const double t = priced(p, lerp, 0, &launches);
    EXPECT_EQ(launches, 8u);
    // The pass priced whole (both lists read, the first written), each launch an eighth of its time.
    EXPECT_NEAR(t, memoryTime(3 * 6 * 400 * 65536.0 * 4, 0.75, 0.0) / 8, 1e-12);
    // Many small tensors: 110 a launch with one list, 64 with two.
    OpTensorArg small{true, {}}, small2{true, {}};
    for (int i = 0; i < 130; ++i)
        small.items.push_back(ref(i, {1000}, "float32")), small2.items.push_back(ref(i, {1000}, "float32"));
    OpGraph g;
    EXPECT_EQ(opKernels(g, node("aten::_foreach_mul_", {small}, {}, Phase::optimizer)).size(), 2u);
    EXPECT_EQ(opKernels(g, node("aten::_foreach_add_", {small, small2}, {}, Phase::optimizer)).size(), 3u);
}

TEST(OpCost, NormsTakeRowsAndWidth) {
    OpGraph g;
    const OpNode ln = node("aten::native_layer_norm", {one(ref(0, {8, 512, 1024}, "float32"))},
                           {one(ref(1, {8, 512, 1024}, "float32"))});
    const OpKernel k = opKernels(g, ln).at(0);
    EXPECT_EQ(k.mem, MemKind::norm_forward);
    EXPECT_EQ(k.shape, (GemmShape{4096, 1024, 4}));
    const OpNode back =
        node("aten::native_layer_norm_backward",
             {one(ref(2, {8, 512, 1024}, "float32")), one(ref(0, {8, 512, 1024}, "float32"))},
             {one(ref(3, {8, 512, 1024}, "float32")), one(ref(4, {1024}, "float32")), one(ref(5, {1024}, "float32"))},
             Phase::backward);
    const std::vector<OpKernel> ks = opKernels(g, back);
    ASSERT_EQ(ks.size(), 2u);
    EXPECT_EQ(ks[0].mem, MemKind::norm_backward);
    EXPECT_EQ(ks[1].mem, MemKind::norm_weight_grad);
}

TEST(OpsMemory, TheAllocatorsRounding) {
    EXPECT_DOUBLE_EQ(allocatorBytes(1), 512);
    EXPECT_DOUBLE_EQ(allocatorBytes(513), 1024);
    EXPECT_DOUBLE_EQ(allocatorBytes((1 << 20) - 1), 1 << 20);
    EXPECT_DOUBLE_EQ(allocatorBytes(1 << 20), 2 << 20);
    EXPECT_DOUBLE_EQ(allocatorBytes(5 << 20), 6 << 20);
}

TEST(OpsMemory, PeakOfAHandBuiltGraph) {
    // A 4 MiB parameter and its 4 MiB optimizer state resident; op 0 allocates a 1000-byte temp (512-rounded: 1024)
    // and a 3 MiB activation (rounded to 4 MiB); op 1 frees the temp after it and allocates a 1.5 MiB gradient
    // (2 MiB); op 2 frees the activation. Peak after op 1's allocation, in the backward:
    // 4 + 4 MiB + 1024 B + 4 MiB + 2 MiB.
    constexpr double MiB = 1 << 20;
    OpGraph g;
    g.tensors = {{4 * MiB, OpTensorKind::param},
                 {4 * MiB, OpTensorKind::optimizer_state},
                 {1000, OpTensorKind::temp},
                 {3 * MiB, OpTensorKind::activation},
                 {1.5 * MiB, OpTensorKind::grad}};
    OpNode a = node("aten::mul", {}, {}), b = node("aten::mm", {}, {}, Phase::backward),
           c = node("aten::add", {}, {}, Phase::backward);
    a.alloc = {2, 3};
    b.alloc = {4};
    b.free = {2};
    c.free = {3};
    g.ops = {a, b, c};
    const MemoryEstimate m = opsMemoryPeak(g);
    EXPECT_DOUBLE_EQ(m.peak(), 14 * MiB + 1024);
    EXPECT_EQ(m.phase, "backward");
    EXPECT_DOUBLE_EQ(m.params, 4 * MiB);
    EXPECT_DOUBLE_EQ(m.grads, 2 * MiB);
    EXPECT_DOUBLE_EQ(m.activations, 4 * MiB + 1024);
    // FSDP2 over 4 ranks: params, state and gradients a quarter, the gathered parameters beside them.
    const MemoryEstimate s = opsMemoryPeak(g, ParallelMemory{0.25, 0.0, 1 * MiB, 2 * MiB});
    EXPECT_DOUBLE_EQ(s.params, 2 * MiB);  // 1 MiB rounded to 2 MiB
    EXPECT_DOUBLE_EQ(s.gathered, 3 * MiB);
}

Scenario opsScenario(int gpus, const std::string& extra = "") {
    return parseScenario(fmt::format("stepsim: 1\ncluster: {{gpus_per_node: {}}}\nmodel:\n  type: ops\n  ops: "
                                     "synthetic-step.ops.json.gz\njitter: {{enabled: false}}\nsim: {{steps: 3}}\n{}",
                                     gpus, extra),
                         dataFile("x.yaml"));
}

TEST(OpsUnits, TheRepeatedBlockAndNamedUnits) {
    const Scenario sc = opsScenario(1);
    const OpGraph& g = *sc.model.graph;
    const OpUnits def = findOpUnits(g, "", "x.yaml");
    EXPECT_EQ(def.modules.size(), 2u);
    EXPECT_THAT(def.rule, ::testing::HasSubstr("Block"));
    // The blocks' parameters are theirs; the embedding and head the root's.
    EXPECT_EQ(def.param_unit, (std::vector<int>{-1, 0, 0, 1, 1, -1}));
    // A backward op without a module is its forward op's unit.
    EXPECT_EQ(def.op_unit[g.params[1].grad_ready_op], 0);
    EXPECT_EQ(findOpUnits(g, "layers.*", "x.yaml").modules, def.modules);
    EXPECT_EQ(findOpUnits(g, "Linear", "x.yaml").modules.size(), 3u);
    EXPECT_THROW(findOpUnits(g, "Attention", "x.yaml"), InputError);
}

TEST(OpsSchedule, DdpBucketsFollowTheGradientReadyOrder) {
    const Scenario sc = opsScenario(2);
    const HardwareProfile prof = builtinProfile("h200x2");
    const CostModel cost(prof, sc.nccl, true);
    const Expansion e = expand(sc, cost);
    // Ready order: head (512 KiB), layers.1 weight (256 KiB) and bias (1 KiB), layers.0 weight (256 KiB) and bias,
    // embedding (512 KiB). The first bucket closes at 1 MiB: after layers.0's weight.
    ASSERT_EQ(e.buckets.size(), 2u);
    EXPECT_EQ(e.buckets[0].params.size(), 4u);
    EXPECT_EQ(e.buckets[1].params.size(), 2u);
    std::size_t all_reduces = 0;
    for (const Op& op : e.workload.programs[0].ops)
        if (op.kind == OpKind::collective && op.step == 2) ++all_reduces;
    EXPECT_EQ(all_reduces, 2u);
}

TEST(OpsSchedule, Fsdp2GathersEachUnitAndTheRoot) {
    const Scenario sc = opsScenario(4, "parallel: {data: fsdp2}\n");
    const HardwareProfile prof = builtinProfile("h200x2");
    const CostModel cost(prof, sc.nccl, true);
    const Expansion e = expand(sc, cost);
    std::size_t gathers = 0, scatters = 0;
    for (const CollectiveCall& c : e.workload.programs[0].collectives) {
        gathers += c.kind == CollectiveKind::all_gather;
        scatters += c.kind == CollectiveKind::reduce_scatter;
    }
    // Per step: the root and two units gathered in forward, the units again in backward; three reductions.
    EXPECT_EQ(gathers, 3u * 5u);
    EXPECT_EQ(scatters, 3u * 3u);
    EXPECT_GT(e.memory.gathered, 0.0);
}

TEST(OpsSchedule, TheSyntheticStepRunsEndToEnd) {
    const Scenario sc = opsScenario(1);
    const Simulation s = simulate(sc, builtinProfile("h200x2"));
    // 45 ops, 3 of them views; the others one kernel each but the embedding backward (3) and nll_loss_backward (2)
    // (the foreach ops over 6 small tensors one launch each).
    EXPECT_EQ(s.results.kernels_per_step, 42u + 2u + 1u);
    EXPECT_GT(s.results.step_time_ms, 0.0);
    ASSERT_TRUE(s.results.peak_memory_gib);
    EXPECT_GT(*s.results.peak_memory_gib, 0.0);
}

// The committed capture of transformers' LlamaForCausalLM (4 layers), with and without its op times.
TEST(OpsSchedule, ACommittedCaptureRunsWithItsOpTimes) {
    const auto load = [](const std::string& extra) {
        return parseScenario(
            "stepsim: 1\ncluster: {gpus_per_node: 1}\nmodel:\n  type: ops\n  ops: hf-llama-4l.ops.json.gz\n" + extra +
                "jitter: {enabled: false}\nsim: {steps: 3}\n",
            dataFile("x.yaml"));
    };
    const Scenario timed = load("  op_times: hf-llama-4l.op_times.json\n");
    const OpGraph& g = *timed.model.graph;
    // Every op that is not a view has a row; each timed one launches the table's kernels, the rest the model's.
    std::size_t kernels = 0;
    double device_us = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if (g.times[i].measured)
            kernels += std::size_t(g.times[i].kernels), device_us += g.times[i].device_us;
        else
            kernels += opKernels(g, g.ops[i]).size();
    }
    const HardwareProfile prof = builtinProfile("h200x2");
    const Simulation t = simulate(timed, prof);
    EXPECT_EQ(t.results.kernels_per_step, kernels);
    // One stream: the step is no shorter than its measured device time.
    EXPECT_GE(t.results.step_time_ms, device_us * 1e-3);
    // The memory peak holds at least the resident parameters and optimizer state.
    double resident = 0;
    for (const OpStorage& s : g.tensors)
        if (s.kind == OpTensorKind::param || s.kind == OpTensorKind::optimizer_state) resident += s.bytes;
    ASSERT_TRUE(t.results.peak_memory_gib);
    EXPECT_GE(*t.results.peak_memory_gib, resident / (1024.0 * 1024 * 1024));
    const Simulation m = simulate(load(""), prof);
    EXPECT_GT(m.results.step_time_ms, 0.0);
    EXPECT_DOUBLE_EQ(*m.results.peak_memory_gib, *t.results.peak_memory_gib);  // op times change no lifetime
}

}  // namespace
}  // namespace stepsim
