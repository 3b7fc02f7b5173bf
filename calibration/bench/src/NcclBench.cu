// NCCL collectives timed as nccl-tests does (common.cu / *_perf): warm-up iterations, then iterations
// back-to-back on one stream; here with a CUDA event between consecutive iterations so each iteration's
// time is a sample. The reported per-iteration time is the slowest rank's. Sizes follow nccl-tests' S
// (bytes per rank for all_reduce/broadcast/sendrecv; the total gathered/scattered for all_gather,
// reduce_scatter and alltoall). Bus bandwidth (nccl-tests doc/PERFORMANCE.md):
//   algbw = S / t;  busbw = algbw · 2(n−1)/n (all_reduce), · (n−1)/n (all_gather, reduce_scatter,
//   alltoall), · 1 (broadcast, sendrecv).
// Forced variants (NCCL_ALGO / NCCL_PROTO) need a fresh communicator: NCCL reads both variables when it
// builds a communicator's tuning table (src/graph/tuning.cc ncclTopoTuneModel), so each variant sets them,
// creates communicators, sweeps all_reduce and destroys them.
#include "Common.hpp"

#include <barrier>
#include <cstdlib>

namespace stepsim::bench {

void fillRandom(const DType& t, void* p, std::size_t bytes, std::uint64_t seed, cudaStream_t s) {
    if (t.nccl == ncclBfloat16) fillRandomBf16(p, bytes / 2, seed, s);
    else if (t.nccl == ncclFloat32) fillRandomF32(p, bytes / 4, seed, s);
    else fillRandomFp8(p, bytes, seed, s);
}

namespace {

enum class Coll { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, SendRecv };

const char* collName(Coll c) {
    switch (c) {
        case Coll::AllReduce: return "all_reduce";
        case Coll::AllGather: return "all_gather";
        case Coll::ReduceScatter: return "reduce_scatter";
        case Coll::AllToAll: return "alltoall";
        case Coll::Broadcast: return "broadcast";
        case Coll::SendRecv: return "sendrecv";
    }
    return "?";
}

double busFactor(Coll c, int n) {
    switch (c) {
        case Coll::AllReduce: return 2.0 * (n - 1) / n;
        case Coll::AllGather:
        case Coll::ReduceScatter:
        case Coll::AllToAll: return double(n - 1) / n;
        default: return 1.0;
    }
}

bool splitsAcrossRanks(Coll c) { return c == Coll::AllGather || c == Coll::ReduceScatter || c == Coll::AllToAll; }

// 8 B .. max in ×2 steps, plus 1.5× points from 32 KiB to 64 MiB where NCCL switches protocol/algorithm.
std::vector<std::size_t> sweepSizes(std::size_t lo, std::size_t hi) {
    std::vector<std::size_t> v;
    for (std::size_t s = 8; s <= hi; s *= 2) {
        if (s >= lo) v.push_back(s);
        const std::size_t mid = s + s / 2;
        if (s >= (std::size_t(32) << 10) && s < (std::size_t(64) << 20) && mid <= hi && mid >= lo) v.push_back(mid);
    }
    return v;
}

struct Sweep {
    Coll coll;
    DType dtype;
    std::string algo = "auto", proto = "auto";
    std::size_t max_bytes;
};

void issue(Coll c, const void* send, void* recv, std::size_t bytes, const DType& t, int rank, int n, ncclComm_t comm,
           cudaStream_t s) {
    const std::size_t count = bytes / t.size;
    switch (c) {
        case Coll::AllReduce: CHECK_NCCL(ncclAllReduce(send, recv, count, t.nccl, ncclSum, comm, s)); break;
        case Coll::AllGather: CHECK_NCCL(ncclAllGather(send, recv, count / n, t.nccl, comm, s)); break;
        case Coll::ReduceScatter: CHECK_NCCL(ncclReduceScatter(send, recv, count / n, t.nccl, ncclSum, comm, s)); break;
        case Coll::Broadcast: CHECK_NCCL(ncclBroadcast(send, recv, count, t.nccl, 0, comm, s)); break;
        case Coll::AllToAll: {  // as nccl-tests alltoall_perf: grouped point-to-point, count/n to each peer
            const std::size_t per = count / n;
            CHECK_NCCL(ncclGroupStart());
            for (int p = 0; p < n; ++p) {
                CHECK_NCCL(ncclSend(static_cast<const char*>(send) + p * per * t.size, per, t.nccl, p, comm, s));
                CHECK_NCCL(ncclRecv(static_cast<char*>(recv) + p * per * t.size, per, t.nccl, p, comm, s));
            }
            CHECK_NCCL(ncclGroupEnd());
            break;
        }
        case Coll::SendRecv: {  // as nccl-tests sendrecv_perf: send to rank+1, receive from rank−1
            CHECK_NCCL(ncclGroupStart());
            CHECK_NCCL(ncclSend(send, count, t.nccl, (rank + 1) % n, comm, s));
            CHECK_NCCL(ncclRecv(recv, count, t.nccl, (rank - 1 + n) % n, comm, s));
            CHECK_NCCL(ncclGroupEnd());
            break;
        }
    }
}

void runSweep(Context& ctx, const std::vector<ncclComm_t>& comms, const Sweep& sw) {
    const int n = static_cast<int>(ctx.devices.size());
    std::vector<std::size_t> sizes;
    for (std::size_t s : sweepSizes(ctx.opt.nccl_min_bytes, std::min(sw.max_bytes, ctx.opt.nccl_max_bytes))) {
        const std::size_t unit = splitsAcrossRanks(sw.coll) ? n * sw.dtype.size : sw.dtype.size;
        if (s % unit == 0 && s >= unit) sizes.push_back(s);
    }
    if (sizes.empty()) return;
    const std::size_t maxS = sizes.back();
    const int warm = ctx.opt.warmup, iters = ctx.opt.iters;
    // times[size][rank] = per-iteration µs
    std::vector<std::vector<std::vector<double>>> times(sizes.size(), std::vector<std::vector<double>>(n));
    std::size_t done = 0;
    bool stop = false;
    std::barrier sync(n, [&]() noexcept { stop = ctx.deadline->passed(); });

    onEachGpu(ctx.devices, [&](int rank) {
        cudaStream_t s;
        CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        void *send = nullptr, *recv = nullptr;
        CHECK_CUDA(cudaMalloc(&send, maxS));
        CHECK_CUDA(cudaMalloc(&recv, maxS));
        fillRandom(sw.dtype, send, maxS, 1234 + rank, s);
        CHECK_CUDA(cudaMemsetAsync(recv, 0, maxS, s));
        CHECK_CUDA(cudaStreamSynchronize(s));
        auto ev = makeEvents(iters + 1);
        std::size_t i = 0;
        try {
        for (; i < sizes.size(); ++i) {
            sync.arrive_and_wait();
            if (stop) break;
            for (int w = 0; w < warm; ++w) issue(sw.coll, send, recv, sizes[i], sw.dtype, rank, n, comms[rank], s);
            for (int it = 0; it < iters; ++it) {
                CHECK_CUDA(cudaEventRecord(ev[it], s));
                issue(sw.coll, send, recv, sizes[i], sw.dtype, rank, n, comms[rank], s);
            }
            CHECK_CUDA(cudaEventRecord(ev[iters], s));
            CHECK_CUDA(cudaStreamSynchronize(s));
            times[i][rank] = eventDeltasUs(ev);
            if (rank == 0) done = i + 1;
        }
        } catch (...) {
            sync.arrive_and_drop();  // let the other ranks' barrier complete; they fail in NCCL the same way
            throw;
        }
        destroyEvents(ev);
        CHECK_CUDA(cudaFree(send));
        CHECK_CUDA(cudaFree(recv));
        CHECK_CUDA(cudaStreamDestroy(s));
    });

    for (std::size_t i = 0; i < done; ++i) {
        std::vector<double> worst(iters, 0.0);
        std::vector<double> rankMedians;
        for (int r = 0; r < n; ++r) {
            for (int it = 0; it < iters; ++it) worst[it] = std::max(worst[it], times[i][r][it]);
            rankMedians.push_back(summarize(times[i][r]).median);
        }
        const Summary sm = summarize(worst);
        const double algbw = double(sizes[i]) / (sm.median * 1e3);  // GB/s (1e9 B/s) from bytes/µs
        ctx.out->write(JsonObject().str("kind", "collective").str("op", collName(sw.coll)).str("dtype", sw.dtype.name)
                           .integer("bytes", static_cast<long long>(sizes[i]))
                           .integer("count", static_cast<long long>(sizes[i] / sw.dtype.size)).integer("ranks", n)
                           .integer("nodes", 1).str("algo", sw.algo).str("proto", sw.proto).str("timing", "event_per_iter")
                           .summary("time_us", sm).num("algbw_GBps", algbw)
                           .num("busbw_GBps", algbw * busFactor(sw.coll, n)).num("bus_factor", busFactor(sw.coll, n))
                           .samples("rank_median_us", rankMedians).samples("iter_us", worst));
    }
    if (done < sizes.size())
        recordSkipped(ctx, "nccl", std::string(collName(sw.coll)) + " " + sw.dtype.name + " from " +
                                       std::to_string(sizes[done]) + " B");
}

std::vector<ncclComm_t> initComms(const std::vector<int>& devices) {
    std::vector<ncclComm_t> comms(devices.size());
    CHECK_NCCL(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
    return comms;
}
void destroyComms(std::vector<ncclComm_t>& comms) {
    for (auto c : comms) CHECK_NCCL(ncclCommDestroy(c));
    comms.clear();
}

}  // namespace

void runNccl(Context& ctx) {
    if (ctx.devices.size() < 2) {
        std::fprintf(stderr, "stepsim-bench: nccl: one GPU only, collectives skipped\n");
        return;
    }
    auto comms = initComms(ctx.devices);
    const std::size_t all = ctx.opt.nccl_max_bytes;
    std::vector<Sweep> sweeps = {
        {Coll::AllReduce, dtypeByName("bf16"), "auto", "auto", all},
        {Coll::AllGather, dtypeByName("bf16"), "auto", "auto", all},
        {Coll::ReduceScatter, dtypeByName("bf16"), "auto", "auto", all},
        {Coll::AllToAll, dtypeByName("bf16"), "auto", "auto", all},
        {Coll::Broadcast, dtypeByName("bf16"), "auto", "auto", all},
        {Coll::SendRecv, dtypeByName("bf16"), "auto", "auto", all},
        {Coll::AllReduce, dtypeByName("fp32"), "auto", "auto", all},
        {Coll::AllReduce, dtypeByName("fp8_e4m3"), "auto", "auto", all},
        {Coll::ReduceScatter, dtypeByName("fp32"), "auto", "auto", all},
    };
    for (const auto& sw : sweeps) {
        if (ctx.deadline->passed()) {
            recordSkipped(ctx, "nccl", std::string(collName(sw.coll)) + " " + sw.dtype.name);
            continue;
        }
        std::fprintf(stderr, "stepsim-bench: nccl %s %s (%.0f s)\n", collName(sw.coll), sw.dtype.name,
                     ctx.deadline->elapsed_s());
        runSweep(ctx, comms, sw);
    }
    destroyComms(comms);
}

void runNcclVariants(Context& ctx) {
    if (ctx.devices.size() < 2) return;
    for (const std::string& v : ctx.opt.nccl_variants) {
        const auto slash = v.find('/');
        if (slash == std::string::npos) throw BenchError("--nccl-variants: expected ALGO/PROTO, got " + v);
        const std::string algo = v.substr(0, slash), proto = v.substr(slash + 1);
        if (ctx.deadline->passed()) {
            recordSkipped(ctx, "nccl-variants", v);
            continue;
        }
        std::fprintf(stderr, "stepsim-bench: nccl variant %s (%.0f s)\n", v.c_str(), ctx.deadline->elapsed_s());
        setenv("NCCL_ALGO", algo.c_str(), 1);
        setenv("NCCL_PROTO", proto.c_str(), 1);
        try {
            auto comms = initComms(ctx.devices);
            runSweep(ctx, comms, {Coll::AllReduce, dtypeByName("bf16"), algo, proto, ctx.opt.variant_max_bytes});
            destroyComms(comms);
        } catch (const BenchError& e) {
            ctx.out->write(JsonObject().str("kind", "error").str("group", "nccl-variants").str("what", v)
                               .str("message", e.what()));
            std::fprintf(stderr, "stepsim-bench: variant %s failed: %s\n", v.c_str(), e.what());
        }
        unsetenv("NCCL_ALGO");
        unsetenv("NCCL_PROTO");
    }
}

}  // namespace stepsim::bench
