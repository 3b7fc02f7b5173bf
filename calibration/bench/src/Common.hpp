#pragma once
// Shared pieces of stepsim-bench: error checks, statistics of per-iteration samples, the JSON Lines writer,
// the run options and the deadline that keeps a run inside its time budget.
//
// Every CUDA, NCCL and cuBLASLt call goes through CHECK_CUDA / CHECK_NCCL / CHECK_CUBLAS: a failure throws
// BenchError naming the call, the file and line, and the library's own error string; main() prints it and
// exits non-zero. Timing follows nccl-tests: warm-up iterations first, then one CUDA event between
// consecutive iterations, so each sample is one iteration's device time; records keep the percentiles
// (p10, median, p90, p99), mean, min, max and, for short series, the raw samples.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <thread>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace stepsim::bench {

struct BenchError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string where(const char* file, int line, const char* call);

#define CHECK_CUDA(call)                                                                                     \
    do {                                                                                                     \
        cudaError_t stepsim_err_ = (call);                                                                             \
        if (stepsim_err_ != cudaSuccess)                                                                               \
            throw ::stepsim::bench::BenchError(::stepsim::bench::where(__FILE__, __LINE__, #call) + ": " +   \
                                               cudaGetErrorName(stepsim_err_) + ": " + cudaGetErrorString(stepsim_err_));        \
    } while (0)
#define CHECK_NCCL(call)                                                                                     \
    do {                                                                                                     \
        ncclResult_t stepsim_res_ = (call);                                                                            \
        if (stepsim_res_ != ncclSuccess)                                                                               \
            throw ::stepsim::bench::BenchError(::stepsim::bench::where(__FILE__, __LINE__, #call) + ": " +   \
                                               ncclGetErrorString(stepsim_res_));                                      \
    } while (0)
#define CHECK_CUBLAS(call)                                                                                   \
    do {                                                                                                     \
        cublasStatus_t stepsim_st_ = (call);                                                                          \
        if (stepsim_st_ != CUBLAS_STATUS_SUCCESS)                                                                     \
            throw ::stepsim::bench::BenchError(::stepsim::bench::where(__FILE__, __LINE__, #call) +          \
                                               ": cublas status " + std::to_string(int(stepsim_st_)));                \
    } while (0)
#define CHECK_LAUNCH() CHECK_CUDA(cudaGetLastError())

// Percentiles of a sample (linear interpolation between order statistics).
struct Summary {
    std::size_t n = 0;
    double median = 0, mean = 0, p10 = 0, p90 = 0, p99 = 0, min = 0, max = 0;
};
Summary summarize(std::vector<double> v);

// One JSON object, built field by field, written as one line.
class JsonObject {
public:
    JsonObject& str(const std::string& k, const std::string& v);
    JsonObject& num(const std::string& k, double v);
    JsonObject& integer(const std::string& k, long long v);
    JsonObject& boolean(const std::string& k, bool v);
    JsonObject& raw(const std::string& k, const std::string& json);  // a nested object or array, already JSON
    JsonObject& summary(const std::string& k, const Summary& s);     // {"median":..,"p10":..,...}
    JsonObject& samples(const std::string& k, const std::vector<double>& v);
    std::string text() const { return "{" + body_ + "}"; }
    static std::string quote(const std::string& s);
    static std::string number(double v);

private:
    void key(const std::string& k);
    std::string body_;
};

// JSON Lines sink shared by all threads.
class Output {
public:
    explicit Output(std::FILE* f) : f_(f) {}
    void write(const JsonObject& o);
    std::size_t records() const { return records_; }

private:
    std::FILE* f_;
    std::mutex m_;
    std::size_t records_ = 0;
};

struct Options {
    std::string out_path;                 // empty: stdout
    std::set<std::string> groups;         // which measurement groups run
    int gpus = 0;                         // 0: every visible GPU
    std::size_t nccl_min_bytes = 8;
    std::size_t nccl_max_bytes = std::size_t(4) << 30;
    std::size_t variant_max_bytes = std::size_t(1) << 30;  // forced algo/proto sweeps stop here
    int warmup = 5;
    int iters = 20;
    std::vector<std::string> nccl_variants;  // "Ring/LL", ... (NCCL_ALGO/NCCL_PROTO for a fresh communicator)
    bool quick = false;                   // a small grid, for smoke tests
    double time_limit_s = 0;              // 0: none; otherwise skip what would start after this
    std::string gemm_shapes_file;         // extra "m n k" lines (e.g. from the PyTorch micro file)
    bool gemm_grid = true;                // the transformer grid (off: only --gemm-shapes)
    bool gemm_cold_l2 = true;             // rotate input sets so each GEMM starts with a cold L2
};

// Deadline for the whole run: groups check it before each measurement and record what they skipped.
class Deadline {
public:
    explicit Deadline(double seconds);
    bool passed() const;
    double elapsed_s() const;

private:
    std::chrono::steady_clock::time_point start_;
    double limit_s_;
};

struct Context {
    Options opt;
    Output* out = nullptr;
    Deadline* deadline = nullptr;
    std::vector<int> devices;  // CUDA device ordinals used, one thread each
};

// Per-iteration device times from consecutive events on one stream: ev[i+1] - ev[i], in microseconds.
std::vector<double> eventDeltasUs(const std::vector<cudaEvent_t>& ev);
std::vector<cudaEvent_t> makeEvents(std::size_t n);
void destroyEvents(std::vector<cudaEvent_t>& ev);

// Fill device memory with uniform random values in [-1, 1) (bf16 / fp8 e4m3 / fp32), from a hash of the index.
void fillRandomBf16(void* p, std::size_t n, std::uint64_t seed, cudaStream_t s);
void fillRandomFp8(void* p, std::size_t n, std::uint64_t seed, cudaStream_t s);
void fillRandomF32(void* p, std::size_t n, std::uint64_t seed, cudaStream_t s);
void fillBytes(void* p, std::size_t bytes, std::uint64_t seed, cudaStream_t s);  // random bytes (no float meaning)

// Groups.
void writeMetadata(Context& ctx);
void runNccl(Context& ctx);
void runNcclVariants(Context& ctx);
void runGemm(Context& ctx);
void runMemory(Context& ctx);
void runTransfer(Context& ctx);
void runLaunch(Context& ctx);
void runInterference(Context& ctx);

void recordSkipped(Context& ctx, const std::string& group, const std::string& what);

}  // namespace stepsim::bench

namespace stepsim::bench {
// Runs fn(rank) on one thread per device (cudaSetDevice done), joins, rethrows the first failure.
inline void onEachGpu(const std::vector<int>& devices, const std::function<void(int)>& fn) {
    std::vector<std::exception_ptr> errors(devices.size());
    std::vector<std::thread> threads;
    for (std::size_t r = 0; r < devices.size(); ++r)
        threads.emplace_back([&, r] {
            try {
                CHECK_CUDA(cudaSetDevice(devices[r]));
                fn(static_cast<int>(r));
            } catch (...) {
                errors[r] = std::current_exception();
            }
        });
    for (auto& t : threads) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
}

// NCCL datatypes measured.
struct DType {
    const char* name;
    ncclDataType_t nccl;
    std::size_t size;
};
inline DType dtypeByName(const std::string& n) {
    if (n == "bf16") return {"bf16", ncclBfloat16, 2};
    if (n == "fp32") return {"fp32", ncclFloat32, 4};
    if (n == "fp8_e4m3") return {"fp8_e4m3", ncclFloat8e4m3, 1};
    throw BenchError("unknown dtype " + n);
}
void fillRandom(const DType& t, void* p, std::size_t bytes, std::uint64_t seed, cudaStream_t s);
}  // namespace stepsim::bench

namespace stepsim::bench {
// Streaming kernels (16-byte accesses, grid-stride, grid = 4 blocks of 512 threads per SM).
void launchRead(const void* src, std::size_t bytes, unsigned long long* sink, int sms, cudaStream_t s);
void launchWrite(void* dst, std::size_t bytes, int sms, cudaStream_t s);
void launchCopy(void* dst, const void* src, std::size_t bytes, int sms, cudaStream_t s);
}  // namespace stepsim::bench
