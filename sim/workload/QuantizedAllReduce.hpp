#pragma once
// DDP's quantized gradient communication (ddp.comm_hook: quantize_8bit, quantize_4bit), as PyTorch's
// quantization_pertensor_hook runs it (torch/distributed/algorithms/ddp_comm_hooks/quantization_hooks.py): an
// all-gather protocol, not an all-reduce (summing uint8 values would overflow), so each rank receives every rank's
// quantized bucket. For a bucket of n fp32 gradients, q = n·bits/8 bytes quantized, N ranks, each op one eager kernel:
//   on the compute stream (the hook runs inside backward): MinMaxObserver's aminmax (4n bytes) and its four scalar
//     updates, calculate_qparams' twelve scalar ops (observer.py's per-tensor affine path), then
//     torch.FloatTensor([s, z]) reads both back to the host: the host waits for the compute stream (a host sync), and
//     the pair is copied back to the GPU;
//   on the NCCL stream (waiting for the compute stream): the pairs all-gathered (8 bytes a rank); the quantization
//     x / s, round, + z, clamp (8n bytes each), .to(uint8) (5n), for 4 bits a pack of two values per byte (1.5n);
//     N output buffers zeroed (q each), the all-gather of the quantized buckets (N·q bytes out, nccl-tests' S);
//     the dequantization: an fp32 accumulator zeroed (4n), per rank [4 bits: unpack, n bytes out] .to(float32) (5n),
//     − z, × s (8n each), += (12n); the mean / N (8n); DDP copies the result into the bucket (8n).
// 8 bits: the hook as PyTorch ships it; 4 bits: the same hook packing two values per byte, which PyTorch does not
// ship. The hook's own Python between its kernels is not measured and costs nothing beyond each kernel's launch.
#include <cstdint>
#include <string>

#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

// Bits a quantizing comm hook sends per gradient (8 or 4), 0 for any other hook.
int quantizedHookBits(CommHook hook);

// The bucket's hook, launched when its gradients are ready; returns the event the reducer waits for in
// finalize_backward (the dequantized mean written back into the bucket, on the NCCL stream).
std::uint32_t quantizedAllReduce(ProgramBuilder& b, const StepContext& c, const std::string& name, double bucket_bytes,
                                 int bits, double eager_s, double nccl_s);

}  // namespace stepsim
