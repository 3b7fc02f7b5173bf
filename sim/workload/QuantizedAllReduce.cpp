#include "sim/workload/QuantizedAllReduce.hpp"

#include <fmt/format.h>

namespace stepsim {

int quantizedHookBits(CommHook hook) {
    switch (hook) {
        case CommHook::quantize_8bit: return 8;
        case CommHook::quantize_4bit: return 4;
        default: return 0;
    }
}

std::uint32_t quantizedAllReduce(ProgramBuilder& b, const StepContext& c, const std::string& name, double bucket_bytes,
                                 int bits, double eager_s, double nccl_s) {
    const double n = bucket_bytes / 4, q = n * bits / 8, N = double(c.world);
    auto kernel = [&](const std::string& what, double bytes, MemKind kind, std::uint8_t stream) {
        b.mem(name + " " + what, bytes, kind, KernelClass::copy);
        b.last().stream = stream;
        b.last().host_s = eager_s;
    };
    // MinMaxObserver and calculate_qparams on the compute stream, then the host reads (s, z).
    kernel("quantize observer aminmax", 4 * n, MemKind::fp8_amax, kComputeStream);
    for (int i = 0; i < 4 + 12; ++i) kernel("quantize qparams scalar op", 8, MemKind::fp8_scale_math, kComputeStream);
    b.hostSync(b.record(kComputeStream));
    kernel("quantize (s, z) to device", 8, MemKind::elementwise, kComputeStream);
    b.wait(kCommStream, b.record(kComputeStream));
    b.collective(name + " quantize (s, z) all_gather", CollectiveKind::all_gather, 8 * N, "fp32");
    b.last().host_s = nccl_s;
    for (const char* op : {"div", "round", "add zero point"}) kernel(std::string("quantize ") + op, 8 * n,
                                                                        MemKind::fp8_scale_mul, kCommStream);
    kernel("quantize clamp", 8 * n, MemKind::fp8_clamp, kCommStream);
    kernel("quantize to uint8", 5 * n, MemKind::fp8_quantize, kCommStream);
    if (bits == 4) kernel("quantize pack 4-bit pairs", 1.5 * n, MemKind::elementwise, kCommStream);
    for (int r = 0; r < c.world; ++r) kernel("quantize all_gather output zeros", q, MemKind::elementwise, kCommStream);
    b.collective(name + fmt::format(" quantized {}-bit all_gather", bits), CollectiveKind::all_gather, N * q, "fp8");
    b.last().host_s = nccl_s;
    kernel("dequantize accumulator zeros", 4 * n, MemKind::elementwise, kCommStream);
    for (int r = 0; r < c.world; ++r) {
        if (bits == 4) kernel("dequantize unpack 4-bit pairs", 1.5 * n, MemKind::elementwise, kCommStream);
        kernel("dequantize to fp32", 5 * n, MemKind::fp8_upcast, kCommStream);
        kernel("dequantize - zero point", 8 * n, MemKind::fp8_scale_mul, kCommStream);
        kernel("dequantize * scale", 8 * n, MemKind::fp8_scale_mul, kCommStream);
        kernel("dequantize accumulate", 12 * n, MemKind::elementwise, kCommStream);
    }
    kernel("dequantize mean", 8 * n, MemKind::fp8_scale_mul, kCommStream);
    kernel("hook result to bucket", 8 * n, MemKind::elementwise, kCommStream);
    return b.record(kCommStream);
}

}  // namespace stepsim
