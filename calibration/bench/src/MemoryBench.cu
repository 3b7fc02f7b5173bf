// HBM bandwidth on the first GPU: a read kernel, a write kernel, a copy kernel and cudaMemcpy device to
// device, over sizes from 1 MiB to 4 GiB (×4). Bytes counted: read = S, write = S, copy = 2S (read + write),
// as nccl-tests and METHOD.md count a copy. Sizes below the L2 (50 MiB) are served partly from L2 and are
// kept as such: they are what short kernels see. GB/s = bytes / median time.
#include "Common.hpp"

namespace stepsim::bench {
namespace {

__global__ void readKernel(const uint4* __restrict__ p, std::size_t n, unsigned long long* sink) {
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        const uint4 v = p[i];
        acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
    }
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9e3779b9u) atomicAdd(sink, 1ull);  // keeps the loads alive
}
__global__ void writeKernel(uint4* __restrict__ p, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        p[i] = make_uint4(unsigned(i), unsigned(i >> 32), 0x5a5a5a5au, 0xa5a5a5a5u);
}
__global__ void copyKernel(uint4* __restrict__ d, const uint4* __restrict__ s, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        d[i] = s[i];
}
constexpr int kThreads = 512, kBlocksPerSm = 4;

}  // namespace

void launchRead(const void* src, std::size_t bytes, unsigned long long* sink, int sms, cudaStream_t s) {
    readKernel<<<sms * kBlocksPerSm, kThreads, 0, s>>>(static_cast<const uint4*>(src), bytes / 16, sink);
    CHECK_LAUNCH();
}
void launchWrite(void* dst, std::size_t bytes, int sms, cudaStream_t s) {
    writeKernel<<<sms * kBlocksPerSm, kThreads, 0, s>>>(static_cast<uint4*>(dst), bytes / 16);
    CHECK_LAUNCH();
}
void launchCopy(void* dst, const void* src, std::size_t bytes, int sms, cudaStream_t s) {
    copyKernel<<<sms * kBlocksPerSm, kThreads, 0, s>>>(static_cast<uint4*>(dst), static_cast<const uint4*>(src), bytes / 16);
    CHECK_LAUNCH();
}

void runMemory(Context& ctx) {
    const int dev = ctx.devices.front();
    CHECK_CUDA(cudaSetDevice(dev));
    cudaDeviceProp prop{};
    CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
    const int sms = prop.multiProcessorCount;
    const std::size_t maxS = ctx.opt.quick ? (std::size_t(256) << 20) : (std::size_t(4) << 30);
    cudaStream_t st;
    CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    void *a = nullptr, *b = nullptr;
    unsigned long long* sink = nullptr;
    CHECK_CUDA(cudaMalloc(&a, maxS));
    CHECK_CUDA(cudaMalloc(&b, maxS));
    CHECK_CUDA(cudaMalloc(&sink, sizeof *sink));
    fillBytes(a, maxS, 11, st);
    fillBytes(b, maxS, 12, st);
    CHECK_CUDA(cudaStreamSynchronize(st));
    const int iters = ctx.opt.iters;
    for (std::size_t S = std::size_t(1) << 20; S <= maxS; S *= 4) {
        struct Op { const char* name; double bytesFactor; std::function<void()> go; };
        const std::vector<Op> ops = {
            {"read", 1.0, [&] { launchRead(a, S, sink, sms, st); }},
            {"write", 1.0, [&] { launchWrite(b, S, sms, st); }},
            {"copy_kernel", 2.0, [&] { launchCopy(b, a, S, sms, st); }},
            {"memcpy_d2d", 2.0, [&] { CHECK_CUDA(cudaMemcpyAsync(b, a, S, cudaMemcpyDeviceToDevice, st)); }},
        };
        for (const auto& op : ops) {
            if (ctx.deadline->passed()) {
                recordSkipped(ctx, "memory", std::string(op.name) + " " + std::to_string(S));
                continue;
            }
            for (int w = 0; w < 3; ++w) op.go();
            auto ev = makeEvents(iters + 1);
            for (int it = 0; it < iters; ++it) {
                CHECK_CUDA(cudaEventRecord(ev[it], st));
                op.go();
            }
            CHECK_CUDA(cudaEventRecord(ev[iters], st));
            CHECK_CUDA(cudaStreamSynchronize(st));
            const Summary sm = summarize(eventDeltasUs(ev));
            destroyEvents(ev);
            const double bytes = op.bytesFactor * double(S);
            ctx.out->write(JsonObject().str("kind", "memory").str("op", op.name).integer("device", dev)
                               .integer("size_bytes", static_cast<long long>(S)).num("bytes_moved", bytes)
                               .summary("time_us", sm).num("GBps", bytes / (sm.median * 1e3))
                               .boolean("fits_l2", S <= static_cast<std::size_t>(prop.l2CacheSize)));
        }
    }
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(b));
    CHECK_CUDA(cudaFree(sink));
    CHECK_CUDA(cudaStreamDestroy(st));
}

}  // namespace stepsim::bench
