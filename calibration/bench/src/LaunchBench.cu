// Launch costs on the first GPU, each kept as a distribution:
//  - host_enqueue: host time of one cudaLaunchKernel of an empty kernel (steady_clock around the call),
//    in batches of 100 so the launch queue never fills;
//  - device_gap / device_period: back-to-back kernels on one stream with no host starvation: a spin kernel
//    holds the stream for 20 ms while the host enqueues 1000 "stamp" kernels, each of which writes
//    %globaltimer at its start and end; gap = start(i+1) − end(i), period = start(i+1) − start(i);
//  - graph_per_kernel: a CUDA graph of 100 stamp kernels, replayed; device time per kernel = replay time
//    (events) / 100, and its gaps from the stamps; graph_host_launch: host time of cudaGraphLaunch.
// %globaltimer has a coarse tick on some GPUs: the record gives the smallest non-zero difference between two
// back-to-back reads inside one kernel (an upper bound on the timer's step).
#include "Common.hpp"

namespace stepsim::bench {
namespace {

__global__ void emptyKernel() {}

__device__ __forceinline__ unsigned long long globalTimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__global__ void stampKernel(unsigned long long* buf, int i) {
    if (threadIdx.x == 0) {
        buf[2 * i] = globalTimer();
        buf[2 * i + 1] = globalTimer();
    }
}
__global__ void spinKernel(unsigned long long ns) {
    const unsigned long long t0 = globalTimer();
    while (globalTimer() - t0 < ns) {
    }
}

struct Stamps {
    std::vector<double> gaps, periods;
    double tick_ns = 0;
};
Stamps readStamps(const unsigned long long* dbuf, int n) {
    std::vector<unsigned long long> h(2 * n);
    CHECK_CUDA(cudaMemcpy(h.data(), dbuf, h.size() * sizeof h[0], cudaMemcpyDeviceToHost));
    Stamps s;
    unsigned long long tick = ~0ull;
    for (int i = 0; i + 1 < n; ++i) {
        s.gaps.push_back(double(h[2 * (i + 1)] - h[2 * i + 1]) * 1e-3);
        s.periods.push_back(double(h[2 * (i + 1)] - h[2 * i]) * 1e-3);
    }
    for (int i = 0; i < n; ++i) {  // two reads back to back inside a kernel differ by 0 or one timer step
        const unsigned long long d = h[2 * i + 1] - h[2 * i];
        if (d > 0) tick = std::min(tick, d);
    }
    s.tick_ns = tick == ~0ull ? 0 : double(tick);
    return s;
}

void writeLaunch(Context& ctx, const std::string& op, const std::vector<double>& t, const std::string& how,
                 double tick_ns = 0) {
    JsonObject o;
    o.str("kind", "launch").str("op", op).integer("device", ctx.devices.front()).str("method", how)
        .summary("time_us", summarize(t));
    if (tick_ns > 0) o.num("globaltimer_step_ns", tick_ns);
    ctx.out->write(o);
}

}  // namespace

void runLaunch(Context& ctx) {
    const int dev = ctx.devices.front();
    CHECK_CUDA(cudaSetDevice(dev));
    cudaStream_t st;
    CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

    // Host enqueue cost.
    for (int i = 0; i < 200; ++i) emptyKernel<<<1, 32, 0, st>>>();
    CHECK_LAUNCH();
    CHECK_CUDA(cudaStreamSynchronize(st));
    std::vector<double> host;
    for (int b = 0; b < 30; ++b) {
        for (int i = 0; i < 100; ++i) {
            const auto a = std::chrono::steady_clock::now();
            emptyKernel<<<1, 32, 0, st>>>();
            host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
        }
        CHECK_LAUNCH();
        CHECK_CUDA(cudaStreamSynchronize(st));
    }
    writeLaunch(ctx, "host_enqueue", host, "steady_clock around cudaLaunchKernel (empty kernel, 1x32)");

    // Back-to-back device gaps.
    constexpr int kN = 1000;
    unsigned long long* buf = nullptr;
    CHECK_CUDA(cudaMalloc(&buf, 2 * kN * sizeof(unsigned long long)));
    std::vector<double> gaps, periods, perKernelEvents;
    double tick = 0;
    auto ev = makeEvents(2);
    for (int rep = 0; rep < 3; ++rep) {
        spinKernel<<<1, 1, 0, st>>>(20'000'000ull);
        CHECK_LAUNCH();
        for (int i = 0; i < kN; ++i) {
            stampKernel<<<1, 32, 0, st>>>(buf, i);
            if (i == 0) CHECK_CUDA(cudaEventRecord(ev[0], st));
        }
        CHECK_LAUNCH();
        CHECK_CUDA(cudaEventRecord(ev[1], st));
        CHECK_CUDA(cudaStreamSynchronize(st));
        const Stamps s = readStamps(buf, kN);
        gaps.insert(gaps.end(), s.gaps.begin(), s.gaps.end());
        periods.insert(periods.end(), s.periods.begin(), s.periods.end());
        tick = s.tick_ns;
        perKernelEvents.push_back(eventDeltasUs(ev)[0] / (kN - 1));
    }
    writeLaunch(ctx, "device_gap", gaps, "globaltimer end(i) -> start(i+1), 1000 queued stamp kernels", tick);
    writeLaunch(ctx, "device_period", periods, "globaltimer start(i) -> start(i+1)", tick);
    writeLaunch(ctx, "device_per_kernel_events", perKernelEvents, "events around 999 queued kernels / 999");

    // CUDA graph of 100 kernels.
    constexpr int kG = 100;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kG; ++i) stampKernel<<<1, 32, 0, st>>>(buf, i);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaStreamEndCapture(st, &graph));
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int w = 0; w < 5; ++w) CHECK_CUDA(cudaGraphLaunch(exec, st));
    CHECK_CUDA(cudaStreamSynchronize(st));
    std::vector<double> perKernel, graphHost, graphGaps;
    for (int rep = 0; rep < 100; ++rep) {
        CHECK_CUDA(cudaEventRecord(ev[0], st));
        const auto a = std::chrono::steady_clock::now();
        CHECK_CUDA(cudaGraphLaunch(exec, st));
        graphHost.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
        CHECK_CUDA(cudaEventRecord(ev[1], st));
        CHECK_CUDA(cudaStreamSynchronize(st));
        perKernel.push_back(eventDeltasUs(ev)[0] / kG);
        if (rep % 10 == 0) {
            const Stamps s = readStamps(buf, kG);
            graphGaps.insert(graphGaps.end(), s.gaps.begin(), s.gaps.end());
        }
    }
    writeLaunch(ctx, "graph_per_kernel", perKernel, "events around a 100-kernel graph replay / 100");
    writeLaunch(ctx, "graph_device_gap", graphGaps, "globaltimer gaps inside a graph replay", tick);
    writeLaunch(ctx, "graph_host_launch", graphHost, "steady_clock around cudaGraphLaunch (100 kernels)");
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
    destroyEvents(ev);
    CHECK_CUDA(cudaFree(buf));
    CHECK_CUDA(cudaStreamDestroy(st));
}

}  // namespace stepsim::bench
