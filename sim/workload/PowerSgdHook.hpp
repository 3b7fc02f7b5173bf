#pragma once
// DDP's PowerSGD gradient compression (ddp.comm_hook: powersgd), as PyTorch's powerSGD_hook runs it
// (torch/distributed/algorithms/ddp_comm_hooks/powerSGD_hook.py, PowerSGDState; Vogels et al. 2019).
//
// Before step start_powerSGD_iter (ddp.powersgd_start_iter) the hook is default_hooks._allreduce_fut: the bucket divided
// by the world size N in place (2B bytes for a bucket of B bytes), then all-reduced. From that step on, for a bucket
// whose gradients (element size e) are the tensors t, each viewed as an n×m matrix (n = its first dimension; a 1-D
// tensor is n×1), rank r = min(n, m, powersgd_rank):
//   a matrix is compressed when (n + m)·r·min_compression_rate < n·m; the others (every 1-D tensor) are uncompressed,
//     U elements together;
//   on the compute stream (the hook runs inside backward): with error feedback the previous step's error added
//     (3B; a zero error made the first time, B), the bucket cloned (2B); the uncompressed tensors concatenated (2Ue);
//     each Q (m×r) from a CPU randn copied to the GPU (the first compressed step, or every step without warm start)
//     or kept from the last step, then orthogonalized; each P = M·Q; the uncompressed tensors all-reduced (none when
//     U = 0: NCCL returns at once for an empty tensor);
//   the future's callbacks run at once on the host, their kernels on a side stream chained to the NCCL work (stepsim
//     puts them on the NCCL stream, which gives the same order): the uncompressed sum divided by N (2Ue) and copied
//     back per tensor; the Ps all-reduced (Σ n·r·e bytes); each P orthogonalized; each Q = Mᵀ·P; the Qs all-reduced
//     (Σ m·r·e); divided by N; each M = P·Qᵀ; then torch.cuda.synchronize(): the host waits for the whole GPU, so
//     the backward's later kernels are issued only after this bucket's three all-reduces; with error feedback the new
//     error (input copy − result, 3B).
// Orthogonalization is Gram-Schmidt (r ≤ 2, or 16-bit gradients): per column a norm and a division, and for each
// column but the last four kernels projecting it out of the rest (col·rest, sum, ·col, rest −=): 2r + 4(r−1) kernels
// on n·r elements. The matrix products with r ≤ 16 columns do 2r FLOPs per matrix element, under the GPU's
// FLOP-to-byte ratio in fp32 as in bf16, so they are priced as memory passes over the n·m matrix at the elementwise
// rate. Every kernel costs one eager launch on the host (launch.eager_host), every collective an NCCL issue.
//
// Memory the hook keeps (MemoryEstimate's buffers): with error feedback one error per bucket (the gradients' bytes in
// all) and, while a bucket is compressed, its clone (the largest bucket); with warm start the Ps and Qs
// (Σ (n + m)·r·e over all buckets).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/DdpBuckets.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

// One gradient tensor of a bucket as PowerSGD views it: n×m, compressed at rank r or not (r = 0).
struct PowerSgdMatrix {
    double n = 0, m = 0;
    int r = 0;
};

// The bucket's tensors (`params`: indices into c.params) as PowerSGD splits them.
std::vector<PowerSgdMatrix> powerSgdMatrices(const StepContext& c, const std::vector<std::size_t>& params);

// The hook on one bucket of `bucket_bytes` at step `step`, launched when its gradients are ready; returns the event
// the reducer waits for in finalize_backward (on the NCCL stream).
std::uint32_t powerSgdAllReduce(ProgramBuilder& b, const StepContext& c, const std::string& name, double bucket_bytes,
                                const std::vector<std::size_t>& params, int step, double eager_s, double nccl_s);

// Bytes the hook keeps on each GPU beyond DDP's own buckets, for `buckets` (indices into c.params).
double powerSgdStateBytes(const StepContext& c, const std::vector<std::vector<std::size_t>>& buckets);

}  // namespace stepsim
