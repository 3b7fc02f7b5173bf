// Transfers: GPU-to-GPU over NVLink through the copy engine (cudaMemcpyPeerAsync, peer access enabled),
// one direction and both at once, and through SMs (a copy kernel on GPU 0 writing into GPU 1's memory);
// host-to-device and device-to-host from pinned (cudaHostAlloc) and pageable (malloc, pages touched
// first) memory. Sizes 64 KiB .. 1 GiB (×4). GB/s = bytes / median time (bytes one way; "both" counts the
// two directions together). Device-side copies are timed with events; pageable copies with the host clock
// around a synchronous cudaMemcpy (the staging through pinned buffers is part of what they cost).
#include "Common.hpp"

#include <cstdlib>
#include <cstring>

namespace stepsim::bench {
namespace {

int itersFor(const Options& o, std::size_t S) { return S >= (std::size_t(256) << 20) ? std::min(o.iters, 8) : o.iters; }

void writeTransfer(Context& ctx, const std::string& op, int src, int dst, std::size_t S, double bytes,
                   const std::vector<double>& t, const std::string& timing) {
    const Summary sm = summarize(t);
    ctx.out->write(JsonObject().str("kind", "transfer").str("op", op).integer("src", src).integer("dst", dst)
                       .integer("size_bytes", static_cast<long long>(S)).num("bytes_moved", bytes)
                       .str("timing", timing).summary("time_us", sm).num("GBps", bytes / (sm.median * 1e3)));
}

std::vector<double> timeEvents(cudaStream_t st, int warm, int iters, const std::function<void()>& go) {
    for (int w = 0; w < warm; ++w) go();
    auto ev = makeEvents(iters + 1);
    for (int it = 0; it < iters; ++it) {
        CHECK_CUDA(cudaEventRecord(ev[it], st));
        go();
    }
    CHECK_CUDA(cudaEventRecord(ev[iters], st));
    CHECK_CUDA(cudaStreamSynchronize(st));
    auto t = eventDeltasUs(ev);
    destroyEvents(ev);
    return t;
}

std::vector<double> timeHost(int warm, int iters, const std::function<void()>& go) {
    for (int w = 0; w < warm; ++w) go();
    std::vector<double> t;
    for (int it = 0; it < iters; ++it) {
        const auto a = std::chrono::steady_clock::now();
        go();
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
    }
    return t;
}

}  // namespace

void runTransfer(Context& ctx) {
    const std::size_t maxS = ctx.opt.quick ? (std::size_t(64) << 20) : (std::size_t(1) << 30);
    const int d0 = ctx.devices.front();
    cudaDeviceProp prop{};
    CHECK_CUDA(cudaGetDeviceProperties(&prop, d0));

    // Host <-> device on the first GPU.
    CHECK_CUDA(cudaSetDevice(d0));
    cudaStream_t st;
    CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    void *dev = nullptr, *pinned = nullptr;
    CHECK_CUDA(cudaMalloc(&dev, maxS));
    CHECK_CUDA(cudaHostAlloc(&pinned, maxS, cudaHostAllocDefault));
    void* pageable = std::malloc(maxS);
    if (!pageable) throw BenchError("malloc of pageable host buffer failed");
    std::memset(pageable, 0x5a, maxS);
    std::memset(pinned, 0xa5, maxS);
    for (std::size_t S = std::size_t(64) << 10; S <= maxS; S *= 4) {
        if (ctx.deadline->passed()) {
            recordSkipped(ctx, "transfer", "host " + std::to_string(S));
            continue;
        }
        const int it = itersFor(ctx.opt, S);
        writeTransfer(ctx, "h2d_pinned", -1, d0, S, double(S),
                      timeEvents(st, 2, it, [&] { CHECK_CUDA(cudaMemcpyAsync(dev, pinned, S, cudaMemcpyHostToDevice, st)); }), "events");
        writeTransfer(ctx, "d2h_pinned", d0, -1, S, double(S),
                      timeEvents(st, 2, it, [&] { CHECK_CUDA(cudaMemcpyAsync(pinned, dev, S, cudaMemcpyDeviceToHost, st)); }), "events");
        writeTransfer(ctx, "h2d_pageable", -1, d0, S, double(S),
                      timeHost(2, it, [&] { CHECK_CUDA(cudaMemcpy(dev, pageable, S, cudaMemcpyHostToDevice)); }), "host_clock");
        writeTransfer(ctx, "d2h_pageable", d0, -1, S, double(S),
                      timeHost(2, it, [&] { CHECK_CUDA(cudaMemcpy(pageable, dev, S, cudaMemcpyDeviceToHost)); }), "host_clock");
    }
    std::free(pageable);
    CHECK_CUDA(cudaFreeHost(pinned));

    if (ctx.devices.size() >= 2) {
        const int d1 = ctx.devices[1];
        int can01 = 0, can10 = 0;
        CHECK_CUDA(cudaDeviceCanAccessPeer(&can01, d0, d1));
        CHECK_CUDA(cudaDeviceCanAccessPeer(&can10, d1, d0));
        const bool peer = can01 && can10;
        if (!peer) {
            std::fprintf(stderr, "stepsim-bench: GPUs %d and %d have no peer access; peer copies go through the host\n", d0, d1);
        } else {
            auto enable = [](int from, int to) {
                CHECK_CUDA(cudaSetDevice(from));
                const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
                if (e == cudaErrorPeerAccessAlreadyEnabled) {
                    (void)cudaGetLastError();  // clear it: already enabled is fine
                    return;
                }
                CHECK_CUDA(e);
            };
            enable(d0, d1);
            enable(d1, d0);
        }
        cudaStream_t st1;
        void* dev1 = nullptr;
        void* dev1b = nullptr;
        CHECK_CUDA(cudaSetDevice(d1));
        CHECK_CUDA(cudaStreamCreateWithFlags(&st1, cudaStreamNonBlocking));
        CHECK_CUDA(cudaMalloc(&dev1, maxS));
        CHECK_CUDA(cudaMalloc(&dev1b, maxS));
        fillBytes(dev1b, maxS, 21, st1);
        CHECK_CUDA(cudaStreamSynchronize(st1));
        CHECK_CUDA(cudaSetDevice(d0));
        fillBytes(dev, maxS, 22, st);
        CHECK_CUDA(cudaStreamSynchronize(st));
        for (std::size_t S = std::size_t(64) << 10; S <= maxS; S *= 4) {
            if (ctx.deadline->passed()) {
                recordSkipped(ctx, "transfer", "peer " + std::to_string(S));
                continue;
            }
            const int it = itersFor(ctx.opt, S);
            writeTransfer(ctx, "peer_ce", d0, d1, S, double(S),
                          timeEvents(st, 2, it, [&] { CHECK_CUDA(cudaMemcpyPeerAsync(dev1, d1, dev, d0, S, st)); }), "events");
            if (peer)
                writeTransfer(ctx, "peer_sm", d0, d1, S, double(S),
                              timeEvents(st, 2, it, [&] { launchCopy(dev1, dev, S, prop.multiProcessorCount, st); }), "events");
            writeTransfer(ctx, "peer_ce_both", d0, d1, S, 2.0 * double(S), timeHost(2, it, [&] {
                              CHECK_CUDA(cudaMemcpyPeerAsync(dev1, d1, dev, d0, S, st));
                              CHECK_CUDA(cudaMemcpyPeerAsync(dev, d0, dev1b, d1, S, st1));
                              CHECK_CUDA(cudaStreamSynchronize(st));
                              CHECK_CUDA(cudaStreamSynchronize(st1));
                          }), "host_clock");
        }
        CHECK_CUDA(cudaSetDevice(d1));
        CHECK_CUDA(cudaFree(dev1));
        CHECK_CUDA(cudaFree(dev1b));
        CHECK_CUDA(cudaStreamDestroy(st1));
        CHECK_CUDA(cudaSetDevice(d0));
    }
    CHECK_CUDA(cudaFree(dev));
    CHECK_CUDA(cudaStreamDestroy(st));
}

}  // namespace stepsim::bench
