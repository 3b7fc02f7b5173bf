#pragma once
// What every part of a training step's expansion reads (the transformer's kernels, the data-parallel schedule, the
// optimizer, the memory estimate): the scenario, the cost model, the model's shape and parameters, the dtypes'
// element sizes and the host cost of each kind of launch, from the profile's `launch` section.
#include <cstdint>
#include <vector>

#include "sim/base/Scenario.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/workload/Transformer.hpp"

namespace stepsim {

// Bytes per element: fp32 4, bf16 and fp16 2, fp8 1.
double elementBytes(DType d);

struct StepContext {
    const Scenario& sc;
    const CostModel& cost;
    TransformerShape t;
    std::vector<ParamInfo> params;
    DType cdt;           // compute dtype
    double pe;           // parameter element bytes
    double ce;           // compute element bytes
    bool autocast;       // params kept in a wider dtype than the compute dtype
    // fp16 autocast over wider parameters trains with torch.amp.GradScaler, as PyTorch's AMP recipe does (fp16
    // parameters cannot: GradScaler refuses to unscale fp16 gradients).
    bool grad_scaler;
    double forward_s;    // host cost per kernel launched by the forward pass
    double backward_s;   // host cost per kernel launched by the autograd engine
    double accumulate_s; // host cost of AccumulateGrad's in-place add into an existing .grad, per parameter tensor
    int world;              // the ranks of the data-parallel group (the world without tensor or pipeline parallelism)
    int out_of_domain = 0;  // kernels priced outside the profile's measured grid
    // Tensor parallelism (TensorParallel.hpp): its degree, sequence parallelism, async TP and the stream its chunked
    // collectives run on; the host cost of an NCCL issue.
    int tp = 1;
    bool sp = false, async_tp = false;
    std::uint8_t tp_stream = 0;
    double nccl_s = 0.0;
    // Element bytes of the residual stream and its gradient: the parameters' dtype (the embeddings' output; under
    // autocast an fp32 stream plus a bf16 sublayer output stays fp32).
    double re() const { return pe; }
};

// The context of `sc`'s step: its model's shape at the micro-batch and parameters, and the host costs per launch
// (the forward's under DDP when more than one GPU trains).
StepContext makeStepContext(const Scenario& sc, const CostModel& cost);

}  // namespace stepsim
