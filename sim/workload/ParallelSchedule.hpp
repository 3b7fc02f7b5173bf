#pragma once
// A parallel schedule: what a parallelism strategy adds to the transformer step's kernels (TransformerStep.hpp), at
// the points where PyTorch's wrapper acts. expand() (Expand.cpp) drives one through every training step:
//
//   beginStep(s), zero_grad,
//   per micro-step:
//     forward:  beforeForward() (the root module's pre-forward hook), per layer l: beforeLayerForward(l), the layer's
//               kernels, afterLayerForward(l); after the LM head afterForward() (the root's post-forward hook);
//     beginBackward(last),
//     backward: the loss's backward, beforeHeadBackward() (the root output's gradient is ready: its pre-backward
//               hook), per layer l from the last: beforeLayerBackward(l) (before activation checkpointing's
//               recompute), the layer's kernels, afterLayerBackward(l) (its input's gradient is computed); gradReady(i)
//               per gradient as autograd makes it final;
//     endBackward() (autograd's final callback),
//   the optimizer step over optimizerShare() of the parameters, afterOptimizer().
//
// `last`: the micro-step whose gradients the optimizer step uses (the others accumulate, as under DDP's no_sync).
// streams() lists the rank's streams (index 0 the compute stream, ProgramBuilder's kComputeStream); groups() the
// process groups its collectives use. A strategy is one class and one case in Expand.cpp's makeSchedule
// (DdpSchedule.hpp, Fsdp2Schedule.hpp). The per-layer hooks do nothing unless a strategy acts there (FSDP's
// all-gathers before each layer, its reduce-scatters after each layer's backward).
#include <cstddef>
#include <vector>

#include "sim/base/Program.hpp"

namespace stepsim {

struct Expansion;

class ParallelSchedule {
public:
    virtual ~ParallelSchedule() = default;

    virtual std::vector<StreamInfo> streams() const = 0;
    virtual std::vector<ProcessGroup> groups() const = 0;
    // The rank's group (an index into groups()) for each group slot its program's collectives name; empty: the slots
    // are the indices themselves, the same for every rank (HSDP's shard and replica groups differ by rank).
    virtual std::vector<int> rankGroups(int /*rank*/) const { return {}; }

    virtual void beginStep(int step) = 0;
    virtual void beginBackward(bool last) = 0;
    virtual void gradReady(std::size_t param) = 0;
    virtual void endBackward() = 0;

    // Module hooks around the transformer's layers (l: the block's index) and its root (embeddings, final norm,
    // LM head).
    virtual void beforeForward() {}
    virtual void beforeLayerForward(int /*l*/) {}
    virtual void afterLayerForward(int /*l*/) {}
    virtual void afterForward() {}
    virtual void beforeHeadBackward() {}
    virtual void beforeLayerBackward(int /*l*/) {}
    virtual void afterLayerBackward(int /*l*/) {}
    // After the optimizer step (ZeRO: the updated partitions all-gathered into the parameters).
    virtual void afterOptimizer() {}

    // Whether autograd accumulates a micro-step's gradients into the parameters' existing .grad (AccumulateGrad's
    // add, DDP), or the strategy accumulates them itself (FSDP2 adds into the sharded gradients after each
    // reduce-scatter; the unsharded .grad is reset every micro-step).
    virtual bool autogradAccumulates() const { return true; }
    // The share of the parameters the optimizer steps on this rank (1: replicated; FSDP: 1/N, the local shard).
    virtual double optimizerShare() const { return 1.0; }

    // What the schedule reports beyond the programs (DDP: its rebuilt buckets; FSDP2: its memory).
    virtual void report(Expansion& out) const = 0;
};

}  // namespace stepsim
