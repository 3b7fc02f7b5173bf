// The metadata record: GPUs (model, SMs, clocks, memory, L2), driver / runtime / NCCL / cuBLASLt versions,
// GPU-to-GPU links. Links come from cudaDeviceGetP2PAttribute and, when libnvidia-ml can be loaded at run
// time (dlopen, so the harness needs no NVML header or library to build), the count of active NVLinks and
// the current SM clock.
#include "Common.hpp"

#include <dlfcn.h>

#include <ctime>
#include <unistd.h>

namespace stepsim::bench {
namespace {

// The few NVML entry points we use, declared by hand (stable C ABI, documented in nvml.h).
struct Nvml {
    void* lib = nullptr;
    int (*init)() = nullptr;
    int (*byPci)(const char*, void**) = nullptr;
    int (*linkState)(void*, unsigned, int*) = nullptr;
    int (*clockInfo)(void*, int, unsigned*) = nullptr;
    int (*maxClockInfo)(void*, int, unsigned*) = nullptr;
    bool ok = false;

    Nvml() {
        lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return;
        init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
        byPci = reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
        linkState = reinterpret_cast<int (*)(void*, unsigned, int*)>(dlsym(lib, "nvmlDeviceGetNvLinkState"));
        clockInfo = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
        maxClockInfo = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
        ok = init && byPci && linkState && clockInfo && maxClockInfo && init() == 0;
    }
    ~Nvml() {
        if (lib) dlclose(lib);
    }
};
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2, kNvmlMaxLinks = 18;

std::string pciId(int dev) {
    char b[64] = {0};
    CHECK_CUDA(cudaDeviceGetPCIBusId(b, sizeof b, dev));
    return b;
}

}  // namespace

void writeMetadata(Context& ctx) {
    Nvml nvml;
    int driver = 0, runtime = 0, nccl = 0;
    CHECK_CUDA(cudaDriverGetVersion(&driver));
    CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
    CHECK_NCCL(ncclGetVersion(&nccl));
    const std::size_t cublaslt = cublasLtGetVersion();

    std::string gpus = "[";
    for (std::size_t i = 0; i < ctx.devices.size(); ++i) {
        const int d = ctx.devices[i];
        cudaDeviceProp p{};
        CHECK_CUDA(cudaGetDeviceProperties(&p, d));
        int clockKhz = 0, memClockKhz = 0, busWidth = 0;
        CHECK_CUDA(cudaDeviceGetAttribute(&clockKhz, cudaDevAttrClockRate, d));
        CHECK_CUDA(cudaDeviceGetAttribute(&memClockKhz, cudaDevAttrMemoryClockRate, d));
        CHECK_CUDA(cudaDeviceGetAttribute(&busWidth, cudaDevAttrGlobalMemoryBusWidth, d));
        JsonObject g;
        g.integer("index", d).str("name", p.name).str("pci_bus_id", pciId(d))
            .str("compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor))
            .integer("sms", p.multiProcessorCount).integer("max_sm_clock_mhz", clockKhz / 1000)
            .integer("mem_clock_mhz", memClockKhz / 1000).integer("mem_bus_width_bits", busWidth)
            .num("memory_gib", double(p.totalGlobalMem) / double(1ull << 30)).integer("l2_bytes", p.l2CacheSize)
            .integer("shared_mem_per_sm", static_cast<long long>(p.sharedMemPerMultiprocessor));
        if (nvml.ok) {
            void* h = nullptr;
            if (nvml.byPci(pciId(d).c_str(), &h) == 0) {
                unsigned sm = 0, mem = 0, smMax = 0;
                if (nvml.clockInfo(h, kNvmlClockSm, &sm) == 0) g.integer("sm_clock_now_mhz", sm);
                if (nvml.clockInfo(h, kNvmlClockMem, &mem) == 0) g.integer("mem_clock_now_mhz", mem);
                if (nvml.maxClockInfo(h, kNvmlClockSm, &smMax) == 0) g.integer("sm_clock_max_nvml_mhz", smMax);
                int active = 0;
                for (unsigned l = 0; l < kNvmlMaxLinks; ++l) {
                    int st = 0;
                    if (nvml.linkState(h, l, &st) == 0 && st == 1) ++active;
                }
                g.integer("nvlinks_active", active);
            }
        }
        gpus += (i ? "," : "") + g.text();
    }
    gpus += "]";

    std::string links = "[";
    bool first = true;
    for (int a : ctx.devices)
        for (int b : ctx.devices) {
            if (a == b) continue;
            int access = 0, rank = 0, atomics = 0, canPeer = 0;
            CHECK_CUDA(cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, a, b));
            CHECK_CUDA(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b));
            CHECK_CUDA(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b));
            CHECK_CUDA(cudaDeviceCanAccessPeer(&canPeer, a, b));
            links += (first ? "" : ",") + JsonObject().integer("src", a).integer("dst", b).boolean("p2p_access", access)
                                              .integer("p2p_performance_rank", rank).boolean("native_atomics", atomics)
                                              .boolean("can_access_peer", canPeer).text();
            first = false;
        }
    links += "]";

    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    std::time_t now = std::time(nullptr);
    char when[64];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::string env = "{";
    bool firstEnv = true;
    for (const char* k : {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE", "NCCL_P2P_LEVEL", "NCCL_MIN_NCHANNELS",
                          "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE", "CUDA_VISIBLE_DEVICES"}) {
        if (const char* v = std::getenv(k)) {
            env += (firstEnv ? "" : ",") + JsonObject::quote(k) + ":" + JsonObject::quote(v);
            firstEnv = false;
        }
    }
    env += "}";

    ctx.out->write(JsonObject().str("kind", "metadata").str("schema", "stepsim-bench/1").str("host", host)
                       .str("time_utc", when).integer("driver_version", driver).integer("cuda_runtime_version", runtime)
                       .integer("nccl_version", nccl).integer("cublaslt_version", static_cast<long long>(cublaslt))
                       .integer("gpu_count", static_cast<long long>(ctx.devices.size())).boolean("nvml", nvml.ok)
                       .raw("gpus", gpus).raw("links", links).raw("env", env)
                       .integer("warmup", ctx.opt.warmup).integer("iters", ctx.opt.iters));
}

}  // namespace stepsim::bench
