#pragma once
// The kernels of one micro-step of the transformer (Transformer.hpp's shapes and FLOPs), forward and backward, as
// eager PyTorch with autocast runs them: embedding, per layer the norms, autocast's casts, the GEMMs, flash attention,
// the activation and the residual adds, the final norm, the LM head and cross-entropy in fp32; backward in reverse,
// with activation checkpointing's recompute before each layer's backward. Each is appended to a ProgramBuilder,
// priced by the cost model.
//
// backward(ready) calls ready(i) when parameter i's gradient is final for the micro-step (after its dtype cast), in
// the order autograd produces them: the point where a data-parallel schedule acts (DDP's hook). With `accumulate`
// (a micro-step after the first) each gradient is first added into the existing .grad by AccumulateGrad's own kernel.
// With `hooks` the parallel schedule's module hooks run where PyTorch runs them (ParallelSchedule.hpp): around each
// layer's forward and backward, the root's pre-forward, post-forward and pre-backward; none around activation
// checkpointing's recompute (FSDP's pre-forward returns early in backward).
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sim/workload/Fp8Linear.hpp"
#include "sim/workload/ParallelSchedule.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"
#include "sim/workload/TensorParallel.hpp"

namespace stepsim {

// Zero-bubble pipelines split a backward in two: B, the input gradients (every kernel on the path to the stage's input,
// with the TP collectives and activation checkpointing's recompute), and W, the weight gradients (the wgrad GEMMs,
// the norms' weight gradients, the gradients' casts and their accumulation, the embedding's gradient).
enum class BackwardPart { whole, input, weight };

class TransformerStep {
public:
    TransformerStep(StepContext& c, ProgramBuilder& b, bool accumulate = false, ParallelSchedule* hooks = nullptr,
                    ModelSlice slice = {});

    void forward();
    void backward(const std::function<void(std::size_t)>& ready, BackwardPart part = BackwardPart::whole);

    static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

private:
    void recompute(int l, bool full);
    // torchtitan's op policy (Checkpointing::selective_op): the block's unsaved ops rerun (TransformerStep.cpp).
    void recomputeUnsavedOps(int l);
    double checkpointHost(bool backward) const;
    std::size_t paramIndex(const std::string& name) const;
    std::string L(int l, const char* what) const;
    void normKernel(const std::string& name, double passes, MemKind layer, MemKind rms);
    void norm(const std::string& name);
    void normBackward(const std::string& name, const std::string& param);
    void weightCast(const std::string& name, double numel);
    enum class TpSplit { none, column, row };
    void headBackward();
    void linearForward(const std::string& name, long out, long in, TpSplit tp = TpSplit::none);
    void fp8Forward(const std::string& name, long out, long in, TpSplit tp);
    void linearBackward(const std::string& name, long out, long in, std::size_t param,
                        const std::function<void()>& input_grad = {}, TpSplit tp = TpSplit::none);
    void residualGradCast(const std::string& name);
    void normCastBackward(const std::string& name);
    void gradReady(std::size_t i);
    bool hasBias(const std::string& name) const;
    void biasBackward(const std::string& name, long out);
    void dropoutForward(const std::string& name, double e);
    void dropoutBackward(const std::string& name, double e);
    void separateQkvBackward(int l);
    // model.implementation: hf (TransformerStepHf.cpp): Hugging Face's kernels where they differ.
    void hfRmsNorm(const std::string& name);
    void hfRmsNormBackward(const std::string& name, const std::string& param);
    void hfRopeForward(int l);
    void hfRopeBackward(int l);
    void hfMaskForward();
    void hfMaskLayer(int l);
    void hfRotaryTables();
    void hfGeluNewForward(int l);
    void hfGeluNewBackward(int l);
    void ropeForward(int l);
    void ropeBackward(int l);
    GemmShape attnShape() const;
    void attentionForward(int l);
    void layerForward(int l, bool recompute = false);
    void layerBackward(int l);

    int layerEnd() const { return slice_.end < 0 ? t_.L : slice_.end; }
    bool input() const { return part_ != BackwardPart::weight; }
    bool weight() const { return part_ != BackwardPart::input; }
    void inputMem(const std::string& name, double bytes, MemKind kind = MemKind::elementwise);

    bool accumulate_;  // gradients already exist (micro-step > 0): autograd adds into them
    StepContext& c_;
    ProgramBuilder& b_;
    const TransformerShape& t_;
    const std::function<void(std::size_t)>* ready_ = nullptr;
    ParallelSchedule* hooks_;
    ModelSlice slice_;
    BackwardPart part_ = BackwardPart::whole;
    TensorParallel tp_;
    std::optional<Fp8Linear> fp8_;  // fp8.enabled: the linears Float8Linear converts run in FP8 (Fp8Linear.hpp)
};

// The order in which one backward makes the parameters' gradients ready (indices into StepContext::params), from a
// dry run of TransformerStep::backward into a scratch Program. Its kernels are priced as any others: those outside
// the profile's grid count in c.out_of_domain.
std::vector<std::size_t> gradientReadyOrder(StepContext& c);

}  // namespace stepsim
