#pragma once
// Tensor parallelism as Megatron-LM and PyTorch's DTensor (torchtitan) run it, on the process group of a rank's
// parallel.tp ranks (ParallelLayout.hpp's kTpGroup). Every transformer block has two column-parallel linears (fused
// QKV; MLP fc, or gate and up) whose output features are split over the tp ranks, followed by two row-parallel ones
// (attention output; MLP proj or down) whose input features are split; attention runs heads/tp heads. The embedding
// and the LM head are vocabulary-parallel (V/tp rows each) with a vocabulary-parallel cross-entropy (three
// all-reduces of T fp32 values: the max, the target logit, the sum of exponentials). TransformerShape carries the
// local shapes (Transformer.hpp); this class adds the communication:
//   without sequence parallelism, per block and micro-batch, an all-reduce of the T×h activation after each
//     row-parallel linear (forward) and after each column-parallel linear's input gradient (backward): 4 per block;
//   with parallel.sequence_parallel each all-reduce becomes a reduce-scatter (T → T/tp tokens) and the matching
//     identity an all-gather (T/tp → T) of the same S = T·h·c bytes (nccl-tests' size: the full buffer), so the norms,
//     residual adds and their casts run on T/tp tokens; the all-gathered input is kept for the weight gradient
//     (DTensor; Megatron gathers it again in backward, which is not modelled);
//   with parallel.async_tp (torch's micro-pipelined TP, torch.distributed._symmetric_memory) an all-gather followed
//     by a GEMM, and a GEMM followed by a reduce-scatter, are split into tp chunks of T/tp rows: tp−1 ring shifts of
//     S/tp bytes (sendrecv on the TP group, every rank sending to its successor) on the TP stream, each chunk's GEMM
//     waiting for its shard (all-gather) or each shift for its chunk's GEMM (reduce-scatter, then a local sum of the
//     tp partial shards); the column-parallel input gradients' reduce-scatters stay whole (autograd computes the
//     weight gradient between the GEMM and the collective).
// FP8 linears (fp8.enabled, tensorwise) as torchao's Float8 TP plans run them (torchtitan: Float8ColwiseParallel,
// Float8RowwiseParallel, PrepareFloat8ModuleInput): a column-parallel group's input is cast to FP8 on its sequence
// shard and all-gathered in FP8 (1 byte an element; the scale's amax all-reduced over the group first), then shared by
// the group's linears; a row-parallel linear's sharded input is cast with its amax all-reduced; the GEMMs are scaled
// GEMMs (chunked as above under async TP); backward's collectives stay in the compute dtype.
// Synchronous collectives run on the compute stream (the next kernel needs their output); their element size is the
// compute dtype's.
#include <cstdint>
#include <functional>
#include <string>

#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

class TensorParallel {
public:
    TensorParallel(const StepContext& c, ProgramBuilder& b) : c_(c), b_(b) {}

    // A GEMM of `rows` rows under the given name (an FP8 linear's scaled GEMM: Fp8Linear::gemm).
    using RowsGemm = std::function<void(const std::string& name, long rows)>;

    bool on() const { return c_.tp > 1; }
    // An all-gather of the sequence shards of a T×width activation (SP only; nothing otherwise), then the GEMM
    // m×n×k that reads it (async TP: chunked with it). `gemm`: the GEMM's kernel (default: the compute dtype's),
    // `elem_bytes` the gathered elements' size (0: the compute dtype's; 1: an FP8 input cast before the gather).
    void gatheredGemm(const std::string& name, long m, long n, long k, const RowsGemm& gemm = {},
                      double elem_bytes = 0);
    // The GEMM m×n×k, then the reduction of its partial output (all-reduce; SP: reduce-scatter; async TP: chunked).
    void reducedGemm(const std::string& name, long m, long n, long k, const RowsGemm& gemm = {});
    // The all-reduce of a tensorwise FP8 scale's amax over the group (one fp32: a cast of a sharded tensor).
    void amaxAllReduce(const std::string& name);
    // The reduction of `bytes` of partial sums (all-reduce; SP: reduce-scatter), on the compute stream.
    void reduce(const std::string& name, double bytes);
    // SP's all-gather of `bytes` (the gathered size), on the compute stream; nothing without SP.
    void gather(const std::string& name, double bytes);
    // The vocabulary-parallel cross-entropy's three all-reduces of T fp32 values.
    void crossEntropy(const std::string& name, long tokens);

private:
    void collective(const std::string& name, CollectiveKind kind, double bytes, std::uint8_t stream);

    const StepContext& c_;
    ProgramBuilder& b_;
};

}  // namespace stepsim
