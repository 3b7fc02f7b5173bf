#pragma once
// GPU memory of a captured step (model.type: ops; docs/ops.md), from its tensors' lifetimes: each storage is alive
// from the op that allocates it (`alloc`) to the op after which its last reference dies (`free`), at the size PyTorch's
// caching allocator gives it (allocatorBytes). Parameters and optimizer state are resident throughout (a step after
// the first: the optimizer's lazily made states already exist); a storage no op allocates (the inputs, gradients kept
// between steps) is alive from the step's start. The live total is taken after each op's allocations, before its
// frees; the peak is the largest over the step, reported with its phase (forward, backward, optimizer) and split by
// the storages' kinds: params, grads, optimizer (optimizer_state), activations (activation, temp, input).
// A data-parallel wrapper adds what the capture does not hold (ParallelMemory): DDP's buckets (resident), FSDP2's
// sharding (params, grads and optimizer state 1/N) and its gathered units (the root's parameters all along, and in
// the forward and backward the two largest units at once: the one computing and the one prefetched).
#include "sim/base/OpGraph.hpp"
#include "sim/workload/MemoryEstimate.hpp"

namespace stepsim {

// PyTorch's CUDACachingAllocator: requests under 1 MiB are rounded up to 512-byte blocks (kMinBlockSize) out of 2 MiB
// segments; larger ones take a block of their own segment, rounded up to 2 MiB (kRoundLarge), whose remainder under
// 1 MiB (kSmallSize) is not split off and counts as allocated.
double allocatorBytes(double bytes);

struct ParallelMemory {
    double shard = 1.0;           // the share of params, grads and optimizer state a rank holds (FSDP2: 1/N)
    double buckets = 0.0;         // resident communication buffers (DDP's buckets)
    double gathered_root = 0.0;   // FSDP2: the root's unsharded parameters
    double gathered_units = 0.0;  // FSDP2: the units gathered at once in forward and backward
};

MemoryEstimate opsMemoryPeak(const OpGraph& g, const ParallelMemory& par = {});

}  // namespace stepsim
