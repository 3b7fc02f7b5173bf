#pragma once
// A parallel schedule: what a parallelism strategy adds to the transformer step's kernels (TransformerStep.hpp), at
// the points where PyTorch's wrapper acts. expand() (Expand.cpp) drives one through every training step:
//
//   beginStep(s), zero_grad,
//   per micro-step: forward, beginBackward(last), backward calling gradReady(i) per gradient, endBackward(),
//   the optimizer step.
//
// `last`: the micro-step whose gradients the optimizer step uses (the others accumulate, as under DDP's no_sync).
// streams() lists the rank's streams (index 0 the compute stream, ProgramBuilder's kComputeStream); groups() the
// process groups its collectives use. A strategy is one class and one case in Expand.cpp's makeSchedule
// (DdpSchedule.hpp is the first); the hooks a later one needs (FSDP's all-gathers before each layer) join this
// interface with it.
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

    virtual void beginStep(int step) = 0;
    virtual void beginBackward(bool last) = 0;
    virtual void gradReady(std::size_t param) = 0;
    virtual void endBackward() = 0;

    // What the schedule reports beyond the programs (DDP: its rebuilt buckets).
    virtual void report(Expansion& out) const = 0;
};

}  // namespace stepsim
