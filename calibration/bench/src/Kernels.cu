// Common implementations: statistics, JSON Lines, deadline, events, random fills.
#include "Common.hpp"

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cinttypes>

namespace stepsim::bench {

std::string where(const char* file, int line, const char* call) {
    const char* base = std::strrchr(file, '/');
    return std::string(base ? base + 1 : file) + ":" + std::to_string(line) + ": " + call;
}

Summary summarize(std::vector<double> v) {
    Summary s;
    s.n = v.size();
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    auto q = [&](double p) {
        const double pos = p * double(v.size() - 1);
        const auto i = static_cast<std::size_t>(std::floor(pos));
        const double f = pos - double(i);
        return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
    };
    s.median = q(0.5);
    s.p10 = q(0.10);
    s.p90 = q(0.90);
    s.p99 = q(0.99);
    s.min = v.front();
    s.max = v.back();
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / double(v.size());
    return s;
}

std::string JsonObject::quote(const std::string& s) {
    std::string r = "\"";
    for (char c : s) {
        switch (c) {
            case '"': r += "\\\""; break;
            case '\\': r += "\\\\"; break;
            case '\n': r += "\\n"; break;
            case '\t': r += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char b[8];
                    std::snprintf(b, sizeof b, "\\u%04x", c);
                    r += b;
                } else {
                    r += c;
                }
        }
    }
    return r + "\"";
}

std::string JsonObject::number(double v) {
    if (!std::isfinite(v)) return "null";
    char b[40];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}

void JsonObject::key(const std::string& k) {
    if (!body_.empty()) body_ += ",";
    body_ += quote(k) + ":";
}
JsonObject& JsonObject::str(const std::string& k, const std::string& v) { key(k); body_ += quote(v); return *this; }
JsonObject& JsonObject::num(const std::string& k, double v) { key(k); body_ += number(v); return *this; }
JsonObject& JsonObject::integer(const std::string& k, long long v) { key(k); body_ += std::to_string(v); return *this; }
JsonObject& JsonObject::boolean(const std::string& k, bool v) { key(k); body_ += v ? "true" : "false"; return *this; }
JsonObject& JsonObject::raw(const std::string& k, const std::string& json) { key(k); body_ += json; return *this; }
JsonObject& JsonObject::summary(const std::string& k, const Summary& s) {
    JsonObject o;
    o.integer("n", static_cast<long long>(s.n)).num("median", s.median).num("mean", s.mean).num("p10", s.p10)
        .num("p90", s.p90).num("p99", s.p99).num("min", s.min).num("max", s.max);
    return raw(k, o.text());
}
JsonObject& JsonObject::samples(const std::string& k, const std::vector<double>& v) {
    std::string a = "[";
    for (std::size_t i = 0; i < v.size(); ++i) a += (i ? "," : "") + number(v[i]);
    return raw(k, a + "]");
}

void Output::write(const JsonObject& o) {
    std::lock_guard<std::mutex> lock(m_);
    const std::string line = o.text() + "\n";
    if (std::fwrite(line.data(), 1, line.size(), f_) != line.size()) throw BenchError("cannot write output");
    std::fflush(f_);
    ++records_;
}

Deadline::Deadline(double seconds) : start_(std::chrono::steady_clock::now()), limit_s_(seconds) {}
double Deadline::elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}
bool Deadline::passed() const { return limit_s_ > 0 && elapsed_s() > limit_s_; }

void recordSkipped(Context& ctx, const std::string& group, const std::string& what) {
    ctx.out->write(JsonObject().str("kind", "skipped").str("group", group).str("what", what)
                       .str("reason", "time limit").num("elapsed_s", ctx.deadline->elapsed_s()));
}

std::vector<cudaEvent_t> makeEvents(std::size_t n) {
    std::vector<cudaEvent_t> ev(n);
    for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
    return ev;
}
void destroyEvents(std::vector<cudaEvent_t>& ev) {
    for (auto& e : ev) CHECK_CUDA(cudaEventDestroy(e));
    ev.clear();
}
std::vector<double> eventDeltasUs(const std::vector<cudaEvent_t>& ev) {
    std::vector<double> d;
    for (std::size_t i = 0; i + 1 < ev.size(); ++i) {
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
        d.push_back(double(ms) * 1e3);
    }
    return d;
}

namespace {
__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {  // splitmix64 finalizer
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
__device__ __forceinline__ float uniform(std::uint64_t i, std::uint64_t seed) {
    return float(mix(i ^ (seed << 40)) >> 40) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1)
}
__global__ void fillBf16Kernel(__nv_bfloat16* p, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        p[i] = __float2bfloat16(uniform(i, seed));
}
__global__ void fillFp8Kernel(__nv_fp8_e4m3* p, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        p[i] = __nv_fp8_e4m3(uniform(i, seed));
}
__global__ void fillF32Kernel(float* p, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        p[i] = uniform(i, seed);
}
__global__ void fillBytesKernel(std::uint8_t* p, std::size_t n, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        p[i] = std::uint8_t(mix(i ^ (seed << 40)) >> 56);
}
constexpr int kFillBlocks = 4096, kFillThreads = 256;
}  // namespace

void fillRandomBf16(void* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
    fillBf16Kernel<<<kFillBlocks, kFillThreads, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed);
    CHECK_LAUNCH();
}
void fillRandomFp8(void* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
    fillFp8Kernel<<<kFillBlocks, kFillThreads, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed);
    CHECK_LAUNCH();
}
void fillRandomF32(void* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
    fillF32Kernel<<<kFillBlocks, kFillThreads, 0, s>>>(static_cast<float*>(p), n, seed);
    CHECK_LAUNCH();
}
void fillBytes(void* p, std::size_t bytes, std::uint64_t seed, cudaStream_t s) {
    fillBytesKernel<<<kFillBlocks, kFillThreads, 0, s>>>(static_cast<std::uint8_t*>(p), bytes, seed);
    CHECK_LAUNCH();
}

}  // namespace stepsim::bench
