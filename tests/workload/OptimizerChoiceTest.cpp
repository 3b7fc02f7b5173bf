// OptimizerStep's optimizers, through expand: SGD (with and without momentum) and Adam beside AdamW, fused and
// foreach: their kernels, bytes per parameter and state memory.
#include "sim/workload/Expand.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/scenario/ProfileYaml.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

struct Step {
    int kernels = 0;
    double bytes = 0;
};

// The optimizer-class kernels of step 1 on rank 0.
Step optimizerKernels(const Expansion& e) {
    Step s;
    for (const Op& op : e.workload.programs[0].ops)
        if (op.step == 1 && op.kind == OpKind::kernel && op.cls == KernelClass::optimizer) ++s.kernels, s.bytes += op.bytes;
    return s;
}

Expansion run(Optimizer o, OptimizerImpl impl, double momentum = 0.0) {
    static const HardwareProfile prof = builtinProfile("h200-sxm");
    static const CostModel cost(prof, NcclSpec{}, true);
    Scenario sc = tiny(1);
    sc.training.optimizer = o;
    sc.training.optimizer_impl = impl;
    sc.training.sgd_momentum = momentum;
    return expand(sc, cost);
}

// foreach passes and element accesses per parameter (fp32: 4 bytes each): AdamW 8 passes / 20, Adam 7 / 18,
// SGD with momentum 3 / 8, SGD without 1 / 3.
TEST(OptimizerChoice, ForeachPassesAndBytes) {
    struct Case {
        Optimizer o;
        double momentum;
        int kernels;
        double accesses;
    };
    for (const Case& c : {Case{Optimizer::adamw, 0, 8, 20}, Case{Optimizer::adam, 0, 7, 18},
                          Case{Optimizer::sgd, 0.9, 3, 8}, Case{Optimizer::sgd, 0, 1, 3}}) {
        const Expansion e = run(c.o, OptimizerImpl::foreach, c.momentum);
        const Step s = optimizerKernels(e);
        EXPECT_EQ(s.kernels, c.kernels) << int(c.o) << " " << c.momentum;
        EXPECT_DOUBLE_EQ(s.bytes, 4 * c.accesses * e.params) << int(c.o) << " " << c.momentum;
    }
}

// fused: Adam and AdamW one kernel of 7 accesses plus the step counts; SGD one kernel of 5 (momentum) or 3, no counts.
TEST(OptimizerChoice, FusedKernels) {
    const Expansion adam = run(Optimizer::adam, OptimizerImpl::fused);
    const Expansion adamw = run(Optimizer::adamw, OptimizerImpl::fused);
    EXPECT_EQ(optimizerKernels(adam).kernels, 2);
    EXPECT_DOUBLE_EQ(optimizerKernels(adam).bytes, optimizerKernels(adamw).bytes);
    const Expansion sgdm = run(Optimizer::sgd, OptimizerImpl::fused, 0.9);
    EXPECT_EQ(optimizerKernels(sgdm).kernels, 1);
    EXPECT_DOUBLE_EQ(optimizerKernels(sgdm).bytes, 4 * 5 * sgdm.params);
    const Expansion sgd = run(Optimizer::sgd, OptimizerImpl::fused);
    EXPECT_DOUBLE_EQ(optimizerKernels(sgd).bytes, 4 * 3 * sgd.params);
}

// State memory in the parameter dtype: Adam(W) exp_avg and exp_avg_sq, SGD its momentum buffer or nothing. The tiny
// model's peak is its optimizer step, where foreach Adam(W) adds the _foreach_sqrt temporaries (4 bytes a
// parameter) and fused or SGD nothing.
TEST(OptimizerChoice, StateBytes) {
    const Expansion adamw = run(Optimizer::adamw, OptimizerImpl::foreach);
    ASSERT_EQ(adamw.memory.phase, "optimizer_step");
    EXPECT_DOUBLE_EQ(adamw.memory.optimizer, 8 * adamw.params + 4 * adamw.params);
    EXPECT_DOUBLE_EQ(run(Optimizer::adam, OptimizerImpl::foreach).memory.optimizer, 12 * adamw.params);
    EXPECT_DOUBLE_EQ(run(Optimizer::adamw, OptimizerImpl::fused).memory.optimizer, 8 * adamw.params);
    EXPECT_DOUBLE_EQ(run(Optimizer::sgd, OptimizerImpl::foreach, 0.9).memory.optimizer, 4 * adamw.params);
    EXPECT_DOUBLE_EQ(run(Optimizer::sgd, OptimizerImpl::foreach).memory.optimizer, 0.0);
}

}  // namespace
}  // namespace stepsim
