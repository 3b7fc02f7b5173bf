// Interference between a GEMM and an NCCL collective on the same GPUs. Every GPU runs a BF16 GEMM
// (cuBLASLt, TN, 8192×8192×8192 unless --quick) in a loop on one stream and all_reduce of S bytes (bf16) in a
// loop on another, both started from one event, each loop long enough (≥ 30 ms) that most iterations of
// each run while the other is running. Per-iteration times come from events; only iterations that lie
// wholly inside the window where both loops run are kept. slowdown = median time together / median alone
// (the rate multiplier in the simulator is 1 / slowdown), for S from 4 MiB to 1 GiB.
#include "Common.hpp"

#include <barrier>

namespace stepsim::bench {
namespace {

class Bf16Gemm {
public:
    Bf16Gemm(long m, long n, long k, cudaStream_t s) : m_(m), n_(n), k_(k), s_(s) {
        CHECK_CUBLAS(cublasLtCreate(&lt_));
        CHECK_CUBLAS(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        const cublasOperation_t tA = CUBLAS_OP_T, tB = CUBLAS_OP_N;
        CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &tA, sizeof tA));
        CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tB, sizeof tB));
        CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la_, CUDA_R_16BF, k, m, k));
        CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb_, CUDA_R_16BF, k, n, k));
        CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lc_, CUDA_R_16BF, m, n, m));
        cublasLtMatmulPreference_t pref;
        CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
        CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_, sizeof ws_));
        int found = 0;
        CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt_, op_, la_, lb_, lc_, lc_, pref, 1, &heur_, &found));
        CHECK_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
        if (!found) throw BenchError("cuBLASLt found no BF16 algorithm for the interference GEMM");
        CHECK_CUDA(cudaMalloc(&a_, m * k * 2));
        CHECK_CUDA(cudaMalloc(&b_, k * n * 2));
        CHECK_CUDA(cudaMalloc(&c_, m * n * 2));
        CHECK_CUDA(cudaMalloc(&w_, ws_));
        fillRandomBf16(a_, m * k, 31, s);
        fillRandomBf16(b_, k * n, 32, s);
    }
    ~Bf16Gemm() {
        cudaFree(a_); cudaFree(b_); cudaFree(c_); cudaFree(w_);
        cublasLtMatrixLayoutDestroy(la_); cublasLtMatrixLayoutDestroy(lb_); cublasLtMatrixLayoutDestroy(lc_);
        cublasLtMatmulDescDestroy(op_); cublasLtDestroy(lt_);
    }
    void run() {
        const float alpha = 1.0f, beta = 0.0f;
        CHECK_CUBLAS(cublasLtMatmul(lt_, op_, &alpha, a_, la_, b_, lb_, &beta, c_, lc_, c_, lc_, &heur_.algo, w_, ws_, s_));
    }
    std::string name() const { return std::to_string(m_) + "x" + std::to_string(n_) + "x" + std::to_string(k_); }

private:
    long m_, n_, k_;
    cudaStream_t s_;
    cublasLtHandle_t lt_{};
    cublasLtMatmulDesc_t op_{};
    cublasLtMatrixLayout_t la_{}, lb_{}, lc_{};
    cublasLtMatmulHeuristicResult_t heur_{};
    std::size_t ws_ = std::size_t(32) << 20;
    void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr, *w_ = nullptr;
};

float since(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    return ms * 1e3f;
}

// Iteration times (µs) of the iterations wholly inside [lo, hi] (µs from the start event).
std::vector<double> inside(cudaEvent_t e0, const std::vector<cudaEvent_t>& ev, double lo, double hi) {
    std::vector<double> r;
    for (std::size_t i = 0; i + 1 < ev.size(); ++i) {
        const double a = since(e0, ev[i]), b = since(e0, ev[i + 1]);
        if (a >= lo && b <= hi) r.push_back(b - a);
    }
    return r;
}

}  // namespace

void runInterference(Context& ctx) {
    const int n = static_cast<int>(ctx.devices.size());
    if (n < 2) {
        std::fprintf(stderr, "stepsim-bench: interference needs two GPUs, skipped\n");
        return;
    }
    std::vector<ncclComm_t> comms(n);
    CHECK_NCCL(ncclCommInitAll(comms.data(), n, ctx.devices.data()));
    const long g = ctx.opt.quick ? 4096 : 8192;
    std::vector<std::size_t> sizes;
    for (std::size_t s = std::size_t(4) << 20; s <= (std::size_t(1) << 30); s *= 4) sizes.push_back(s);
    if (ctx.opt.quick) sizes = {std::size_t(16) << 20};
    bool stop = false;
    std::vector<double> tgAll(n), tcAll(n);  // each rank's times alone: every rank must issue as many collectives
    std::barrier sync(n, [&]() noexcept { stop = ctx.deadline->passed(); });

    onEachGpu(ctx.devices, [&](int rank) {
        cudaStream_t sc, sn;
        CHECK_CUDA(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
        CHECK_CUDA(cudaStreamCreateWithFlags(&sn, cudaStreamNonBlocking));
        Bf16Gemm gemm(g, g, g, sc);
        void *send = nullptr, *recv = nullptr;
        CHECK_CUDA(cudaMalloc(&send, sizes.back()));
        CHECK_CUDA(cudaMalloc(&recv, sizes.back()));
        fillRandomBf16(send, sizes.back() / 2, 41 + rank, sn);
        CHECK_CUDA(cudaDeviceSynchronize());
        auto e2 = makeEvents(11);
        try {
            for (std::size_t S : sizes) {
                sync.arrive_and_wait();
                if (stop) break;
                auto comm = [&] { CHECK_NCCL(ncclAllReduce(send, recv, S / 2, ncclBfloat16, ncclSum, comms[rank], sn)); };
                // Alone.
                for (int w = 0; w < 3; ++w) gemm.run();
                for (int i = 0; i <= 10; ++i) {
                    CHECK_CUDA(cudaEventRecord(e2[i], sc));
                    if (i < 10) gemm.run();
                }
                CHECK_CUDA(cudaStreamSynchronize(sc));
                const double tg = summarize(eventDeltasUs(e2)).median;
                for (int w = 0; w < 3; ++w) comm();
                for (int i = 0; i <= 10; ++i) {
                    CHECK_CUDA(cudaEventRecord(e2[i], sn));
                    if (i < 10) comm();
                }
                CHECK_CUDA(cudaStreamSynchronize(sn));
                const double tc = summarize(eventDeltasUs(e2)).median;
                tgAll[rank] = tg;
                tcAll[rank] = tc;
                sync.arrive_and_wait();
                // Together: counts from the slowest rank, the same on every rank.
                const double tgMax = *std::max_element(tgAll.begin(), tgAll.end());
                const double tcMax = *std::max_element(tcAll.begin(), tcAll.end());
                const double T = std::max(30e3, 10 * std::max(tgMax, tcMax));
                const int ng = static_cast<int>(std::ceil(T / tgMax)), nc = static_cast<int>(std::ceil(T / tcMax));
                auto eg = makeEvents(ng + 1), ec = makeEvents(nc + 1), e0 = makeEvents(1);
                CHECK_CUDA(cudaEventRecord(e0[0], sc));
                CHECK_CUDA(cudaStreamWaitEvent(sn, e0[0], 0));
                // Interleave the two enqueues in proportion so neither stream waits for the host.
                int ig = 0, ic = 0;
                while (ig < ng || ic < nc) {
                    if (ig < ng && (ic >= nc || double(ig) / ng <= double(ic) / nc)) {
                        CHECK_CUDA(cudaEventRecord(eg[ig], sc));
                        gemm.run();
                        ++ig;
                    } else {
                        CHECK_CUDA(cudaEventRecord(ec[ic], sn));
                        comm();
                        ++ic;
                    }
                }
                CHECK_CUDA(cudaEventRecord(eg[ng], sc));
                CHECK_CUDA(cudaEventRecord(ec[nc], sn));
                CHECK_CUDA(cudaStreamSynchronize(sc));
                CHECK_CUDA(cudaStreamSynchronize(sn));
                const double lo = std::max(since(e0[0], eg[0]), since(e0[0], ec[0]));
                const double hi = std::min(since(e0[0], eg[ng]), since(e0[0], ec[nc]));
                const auto gIn = inside(e0[0], eg, lo, hi), cIn = inside(e0[0], ec, lo, hi);
                const Summary gs = summarize(gIn), cs = summarize(cIn);
                ctx.out->write(JsonObject().str("kind", "interference").integer("device", ctx.devices[rank]).integer("ranks", n)
                                   .str("gemm", "bf16 " + gemm.name()).str("comm_op", "all_reduce").str("comm_dtype", "bf16")
                                   .integer("comm_bytes", static_cast<long long>(S)).num("gemm_alone_us", tg)
                                   .num("comm_alone_us", tc).num("gemm_with_comm_us", gs.median).num("comm_with_gemm_us", cs.median)
                                   .integer("gemm_iters_overlapped", static_cast<long long>(gIn.size()))
                                   .integer("comm_iters_overlapped", static_cast<long long>(cIn.size()))
                                   .num("overlap_window_us", hi - lo).num("gemm_slowdown", gs.median / tg)
                                   .num("comm_slowdown", cs.median / tc));
                destroyEvents(eg);
                destroyEvents(ec);
                destroyEvents(e0);
            }
        } catch (...) {
            sync.arrive_and_drop();
            throw;
        }
        destroyEvents(e2);
        CHECK_CUDA(cudaFree(send));
        CHECK_CUDA(cudaFree(recv));
        CHECK_CUDA(cudaStreamDestroy(sc));
        CHECK_CUDA(cudaStreamDestroy(sn));
    });
    for (auto c : comms) CHECK_NCCL(ncclCommDestroy(c));
}

}  // namespace stepsim::bench
