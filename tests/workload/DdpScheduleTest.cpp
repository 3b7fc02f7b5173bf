// DdpSchedule, through expand: the buckets' all-reduces, the hook's copies, the copy back, and where they fall in
// backward.
#include "sim/workload/Expand.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/scenario/ProfileYaml.hpp"
#include "sim/workload/Transformer.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

// Each step after the first all-reduces exactly the rebuilt buckets, and every gradient byte once.
TEST(Expand, DdpReducesEveryGradientOncePerStep) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Expansion e = expand(tiny(2), cost);
    const Program& p = e.workload.programs[0];
    double bytes_step1 = 0;
    int count_step1 = 0;
    for (const Op& op : p.ops)
        if (op.kind == OpKind::collective && op.step == 1) bytes_step1 += op.bytes, ++count_step1;
    EXPECT_EQ(count_step1, int(e.buckets.size()));
    EXPECT_DOUBLE_EQ(bytes_step1, 4 * e.params);
}

// The first step uses DDP's initial single bucket.
TEST(Expand, FirstStepUsesOneBucket) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Expansion e = expand(tiny(2), cost);
    int count = 0;
    for (const Op& op : e.workload.programs[0].ops)
        if (op.kind == OpKind::collective && op.step == 0) ++count;
    EXPECT_EQ(count, 1);
}

// gradient_as_bucket_view removes the copy back from buckets and the gradients' own memory: the buckets are
// allocated at construction either way (measured: the same peak with and without it,
// results/validation/memory/compare.md) and the gradients are their views.
TEST(Expand, GradientAsBucketViewDropsCopyBackAndGradientMemory) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(2);
    const Expansion plain = expand(sc, cost);
    sc.ddp.gradient_as_bucket_view = true;
    const Expansion view = expand(sc, cost);
    EXPECT_LT(view.workload.programs[0].ops.size(), plain.workload.programs[0].ops.size());
    EXPECT_DOUBLE_EQ(view.memory.buckets, 4 * plain.params);
    EXPECT_DOUBLE_EQ(plain.memory.buckets, 4 * plain.params);
    EXPECT_EQ(view.memory.grads, 0.0);
    EXPECT_LE(view.memory.peak(), plain.memory.peak());
}

// finalize_backward copies every parameter's gradient back once per step (reducer.cpp's copy_bucket_to_grad,
// one eager op each), and the reducer pays launch.nccl_host to issue each bucket's all-reduce.
TEST(Expand, CopyBackIsOnePerParameterAndAllReducesCostTheNcclIssue) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Expansion e = expand(tiny(2), cost);
    const Program& p = e.workload.programs[0];
    const std::size_t params = transformerParams(transformerShape(tiny(2).model, 2)).size();
    std::size_t copies = 0;
    for (const Op& op : p.ops) {
        if (op.step != 1) continue;
        const std::string& name = p.names[op.name];
        if (name.size() > 13 && name.compare(name.size() - 13, 13, " copy to grad") == 0) {
            ++copies;
            EXPECT_DOUBLE_EQ(op.host_s, prof.launch.eager_host.median_us * 1e-6) << name;
        }
        if (op.kind == OpKind::collective) EXPECT_DOUBLE_EQ(op.host_s, prof.launch.nccl_host.median_us * 1e-6);
    }
    EXPECT_EQ(copies, params);
}

// Autograd runs a norm-fed linear's input cast before the weight's hook (H200 traces, PyTorch 2.11): in layer 0's
// backward the order is qkv wgrad, norm1 cast backward, qkv grad cast, qkv weight copy to bucket, norm1 backward.
TEST(Expand, NormInputCastRunsBeforeTheWeightsHook) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Expansion e = expand(tiny(2), cost);
    const Program& p = e.workload.programs[0];
    std::vector<std::string> order;
    for (const Op& op : p.ops) {
        if (op.step != 1 || op.kind != OpKind::kernel) continue;
        const std::string& name = p.names[op.name];
        for (const char* want : {"h.0.attn.qkv wgrad", "h.0.norm1 cast backward", "h.0.attn.qkv grad cast",
                                 "h.0.attn.qkv.weight copy to bucket", "h.0.norm1 backward"})
            if (name == want) order.push_back(name);
    }
    EXPECT_EQ(order, (std::vector<std::string>{"h.0.attn.qkv wgrad", "h.0.norm1 cast backward", "h.0.attn.qkv grad cast",
                                               "h.0.attn.qkv.weight copy to bucket", "h.0.norm1 backward"}));
}

}  // namespace
}  // namespace stepsim
