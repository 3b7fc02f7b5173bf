// GEMMs through cuBLASLt on the first GPU: BF16 and FP8 E4M3 (FP8 with per-tensor scale pointers, fast
// accumulation on and off), TN layout (the layout FP8 needs on Hopper: cuBLASLt docs, "FP8 ... A must be
// transposed and B non-transposed"), BF16 output, FP32 compute, 32 MiB workspace, cuBLASLt's first
// heuristic. Column-major: D(m×n) = op(A)ᵀ-stored (k×m, lda = k) · B (k×n, ldb = k), ldd = m.
// Cold L2: each iteration uses the next of several input/output sets, enough sets to cover 4× the L2.
// Inputs are uniform random in [-1, 1) (never zeros: zeros run faster on Hopper, METHOD.md).
// TFLOP/s = 2mnk / median time.
#include "Common.hpp"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <fstream>
#include <map>

namespace stepsim::bench {
namespace {

struct Shape {
    long m, n, k;
    std::string tag;
};

std::vector<Shape> gemmShapes(const Options& opt) {
    std::vector<Shape> v;
    auto add = [&](long m, long n, long k, const std::string& tag) {
        for (const auto& s : v)
            if (s.m == m && s.n == n && s.k == k) return;
        v.push_back({m, n, k, tag});
    };
    const std::vector<long> tokens = opt.quick ? std::vector<long>{4096} : std::vector<long>{2048, 4096, 8192, 16384};
    const std::vector<long> hidden = opt.quick ? std::vector<long>{2048} : std::vector<long>{1024, 2048, 4096, 8192};
    for (long t : opt.gemm_grid ? tokens : std::vector<long>{})
        for (long h : hidden) {
            add(t, h, h, "attn_out");        // [tokens, h] x [h, h]
            add(t, 3 * h, h, "qkv");         // fused QKV projection
            add(t, 4 * h, h, "mlp_up");
            add(t, h, 4 * h, "mlp_down");    // also the data-gradient of mlp_up
        }
    for (long t : opt.gemm_grid ? tokens : std::vector<long>{})
        for (long h : hidden) {
            add(h, 4 * h, t, "wgrad_mlp");   // weight gradient: K = tokens
            add(h, h, t, "wgrad_attn");
        }
    if (!opt.gemm_shapes_file.empty()) {
        std::ifstream f(opt.gemm_shapes_file);
        if (!f) throw BenchError("cannot read --gemm-shapes " + opt.gemm_shapes_file);
        std::string line;
        while (std::getline(f, line)) {
            if (line.empty() || line[0] == '#') continue;
            std::istringstream in(line);
            long m = 0, n = 0, k = 0;
            if (!(in >> m >> n >> k) || m <= 0 || n <= 0 || k <= 0)
                throw BenchError("--gemm-shapes " + opt.gemm_shapes_file + ": expected 'm n k', got '" + line + "'");
            add(m, n, k, "extra");
        }
    }
    return v;
}

struct Variant {
    std::string dtype;  // "bf16" or "fp8_e4m3"
    bool fp8 = false;
    bool fast_accum = false;
};

std::size_t alignUp(std::size_t x) { return (x + 255) / 256 * 256; }

}  // namespace

void runGemm(Context& ctx) {
    const int dev = ctx.devices.front();
    CHECK_CUDA(cudaSetDevice(dev));
    cudaDeviceProp prop{};
    CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
    const std::size_t l2 = static_cast<std::size_t>(prop.l2CacheSize);
    const auto shapes = gemmShapes(ctx.opt);
    const std::vector<Variant> variants = {{"bf16", false, false}, {"fp8_e4m3", true, true}, {"fp8_e4m3", true, false}};

    // Arenas sized for the largest shape's rotation: inputs (random), outputs.
    auto setsFor = [&](const Shape& s, std::size_t elemIn) {
        const std::size_t bytes = (s.m * s.k + s.k * s.n) * elemIn + s.m * s.n * 2;
        if (!ctx.opt.gemm_cold_l2) return std::size_t(1);  // C then aliases D: BF16 only (FP8 refuses it)
        return std::max<std::size_t>(2, std::min<std::size_t>(64, (4 * l2 + bytes - 1) / bytes));
    };
    std::size_t inElems = 0, outElems = 0;
    for (const auto& s : shapes) {
        const std::size_t sets = setsFor(s, 1);  // fp8 needs the most sets; bf16 uses the same element count
        inElems = std::max(inElems, sets * (alignUp(s.m * s.k) + alignUp(s.k * s.n)));
        outElems = std::max(outElems, sets * alignUp(s.m * s.n));
    }
    cudaStream_t st;
    CHECK_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    void *inBf16 = nullptr, *inFp8 = nullptr, *out = nullptr, *workspace = nullptr;
    float* scales = nullptr;
    const std::size_t wsBytes = std::size_t(32) << 20;
    CHECK_CUDA(cudaMalloc(&inBf16, inElems * 2));
    CHECK_CUDA(cudaMalloc(&inFp8, inElems));
    CHECK_CUDA(cudaMalloc(&out, outElems * 2));
    CHECK_CUDA(cudaMalloc(&workspace, wsBytes));
    CHECK_CUDA(cudaMalloc(&scales, 128 * sizeof(float)));  // A scale at [0], B scale at [64]: each 256-B aligned
    fillRandomBf16(inBf16, inElems, 7, st);
    fillRandomFp8(inFp8, inElems, 8, st);
    std::vector<float> one(128, 1.0f);
    CHECK_CUDA(cudaMemcpyAsync(scales, one.data(), one.size() * sizeof(float), cudaMemcpyHostToDevice, st));
    CHECK_CUDA(cudaStreamSynchronize(st));

    cublasLtHandle_t lt;
    CHECK_CUBLAS(cublasLtCreate(&lt));
    const float alpha = 1.0f, beta = 0.0f;
    const double targetUs = 25e3;  // time per (shape, variant) after warm-up
    std::map<std::string, int> failures;  // per variant: shapes on which no algorithm ran

    for (const auto& s : shapes) {
        for (const auto& v : variants) {
            if (ctx.deadline->passed()) {
                recordSkipped(ctx, "gemm", std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " + v.dtype);
                continue;
            }
            if (failures[v.dtype + (v.fast_accum ? "1" : "0")] >= 3) continue;  // this variant does not run here
            const cudaDataType_t inType = v.fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
            const std::size_t elemIn = v.fp8 ? 1 : 2;
            cublasLtMatmulDesc_t op;
            CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
            const cublasOperation_t tA = CUBLAS_OP_T, tB = CUBLAS_OP_N;
            CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &tA, sizeof tA));
            CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tB, sizeof tB));
            if (v.fp8) {
                const float* sa = scales;
                const float* sb = scales + 64;
                CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
                CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
                const std::int8_t fast = v.fast_accum ? 1 : 0;
                CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
            }
            cublasLtMatrixLayout_t la, lb, lc;
            CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, inType, s.k, s.m, s.k));
            CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb, inType, s.k, s.n, s.k));
            CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, s.m, s.n, s.m));
            cublasLtMatmulPreference_t pref;
            CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
            CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes));
            constexpr int kCandidates = 8;
            cublasLtMatmulHeuristicResult_t cand[kCandidates] = {};
            int found = 0;
            CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, kCandidates, cand, &found));

            const std::size_t aE = alignUp(s.m * s.k), bE = alignUp(s.k * s.n), dE = alignUp(s.m * s.n);
            const std::size_t sets = setsFor(s, elemIn);
            const cublasLtMatmulAlgo_t* algo = nullptr;
            auto matmulWith = [&](const cublasLtMatmulAlgo_t* a, std::size_t set) {
                const char* base = static_cast<const char*>(v.fp8 ? inFp8 : inBf16) + set * (aE + bE) * elemIn;
                void* d = static_cast<char*>(out) + set * dE * 2;
                // beta = 0 so C is never read, but cuBLASLt's FP8 kernels refuse C aliasing D (NOT_SUPPORTED;
                // PyTorch's scaled_gemm passes a separate dummy C for the same reason): C = the next set's output.
                const void* c = static_cast<const char*>(out) + ((set + 1) % sets) * dE * 2;
                return cublasLtMatmul(lt, op, &alpha, base, la, base + aE * elemIn, lb, &beta, c, lc, d, lc, a, workspace,
                                      wsBytes, st);
            };
            auto matmul = [&](std::size_t set) { CHECK_CUBLAS(matmulWith(algo, set)); };
            // cuBLASLt's first heuristic answer is what frameworks run; if it refuses to run (NOT_SUPPORTED),
            // take the next candidate and record which one ran.
            int chosen = -1;
            cublasStatus_t lastStatus = CUBLAS_STATUS_NOT_SUPPORTED;
            for (int c = 0; c < found && chosen < 0; ++c) {
                if (cand[c].workspaceSize > wsBytes) continue;
                lastStatus = matmulWith(&cand[c].algo, 0);
                if (lastStatus == CUBLAS_STATUS_SUCCESS) chosen = c;
            }
            const std::string what = v.dtype + (v.fp8 ? (v.fast_accum ? " fast_accum" : " no_fast_accum") : "") + " " +
                                     std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
            if (chosen < 0) {
                ctx.out->write(JsonObject().str("kind", "error").str("group", "gemm").str("what", what)
                                   .integer("heuristic_candidates", found)
                                   .str("message", "cublasLtMatmul refused every heuristic candidate, last status " +
                                                       std::to_string(int(lastStatus))));
                std::fprintf(stderr, "stepsim-bench: gemm %s: no candidate ran (status %d, %d candidates)\n", what.c_str(),
                             int(lastStatus), found);
                ++failures[v.dtype + (v.fast_accum ? "1" : "0")];
                CHECK_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
                CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(la));
                CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(lb));
                CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(lc));
                CHECK_CUBLAS(cublasLtMatmulDescDestroy(op));
                continue;
            }
            algo = &cand[chosen].algo;
            // Warm-up, then estimate the time of one call to choose the iteration count.
            auto ev2 = makeEvents(2);
            for (int w = 0; w < 3; ++w) matmul(w % sets);
            CHECK_CUDA(cudaEventRecord(ev2[0], st));
            for (std::size_t w = 0; w < 3; ++w) matmul((3 + w) % sets);
            CHECK_CUDA(cudaEventRecord(ev2[1], st));
            CHECK_CUDA(cudaStreamSynchronize(st));
            const double est = eventDeltasUs(ev2)[0] / 3;
            destroyEvents(ev2);
            const int iters = static_cast<int>(std::clamp(targetUs / std::max(est, 1.0), 10.0, 200.0));
            auto ev = makeEvents(iters + 1);
            for (int it = 0; it < iters; ++it) {
                CHECK_CUDA(cudaEventRecord(ev[it], st));
                matmul(it % sets);
            }
            CHECK_CUDA(cudaEventRecord(ev[iters], st));
            CHECK_CUDA(cudaStreamSynchronize(st));
            const auto t = eventDeltasUs(ev);
            destroyEvents(ev);
            const Summary sm = summarize(t);
            const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
            JsonObject o;
            o.str("kind", "gemm").str("dtype", v.dtype).str("layout", "TN").str("out_dtype", "bf16")
                .integer("m", s.m).integer("n", s.n).integer("k", s.k).str("shape_tag", s.tag).integer("device", dev)
                .integer("rotating_sets", static_cast<long long>(sets)).summary("time_us", sm)
                .num("tflops", flops / (sm.median * 1e6));
            double var = 0;
            for (double x : t) var += (x - sm.mean) * (x - sm.mean);
            const double sd = std::sqrt(var / double(t.size()));
            o.num("stdev_us", sd).num("cv", sd / sm.mean);
            if (v.fp8) o.boolean("fast_accum", v.fast_accum).str("scaling", "per_tensor");
            o.integer("heuristic_index", chosen).integer("heuristic_candidates", found);
            ctx.out->write(o);

            CHECK_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
            CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(la));
            CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(lb));
            CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(lc));
            CHECK_CUBLAS(cublasLtMatmulDescDestroy(op));
        }
    }
    CHECK_CUBLAS(cublasLtDestroy(lt));
    CHECK_CUDA(cudaFree(inBf16));
    CHECK_CUDA(cudaFree(inFp8));
    CHECK_CUDA(cudaFree(out));
    CHECK_CUDA(cudaFree(workspace));
    CHECK_CUDA(cudaFree(scales));
    CHECK_CUDA(cudaStreamDestroy(st));
}

}  // namespace stepsim::bench
