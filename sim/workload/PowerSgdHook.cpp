#include "sim/workload/PowerSgdHook.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace stepsim {

std::vector<PowerSgdMatrix> powerSgdMatrices(const StepContext& c, const std::vector<std::size_t>& params) {
    const DdpSpec& d = c.sc.ddp;
    std::vector<PowerSgdMatrix> out;
    for (std::size_t i : params) {
        const ParamInfo& p = c.params[i];
        PowerSgdMatrix mx;
        mx.n = p.rows > 0 ? p.rows : p.numel;  // tensor.view(shape[0], -1)
        mx.m = p.numel / mx.n;
        const double r = std::min({mx.n, mx.m, double(d.powersgd_rank)});
        if ((mx.n + mx.m) * r * d.powersgd_min_compression_rate < mx.n * mx.m) mx.r = int(r);
        out.push_back(mx);
    }
    return out;
}

namespace {

// An eager kernel of `bytes` on `stream`.
void kernel(ProgramBuilder& b, const std::string& name, double bytes, std::uint8_t stream, double eager_s,
            KernelClass cls = KernelClass::memory) {
    b.mem(name, bytes, MemKind::elementwise, cls);
    b.last().stream = stream;
    b.last().host_s = eager_s;
}

// Gram-Schmidt over the r columns of a rows×r matrix (powerSGD_hook.py's _orthogonalize_gram_schmidt, epsilon 0).
void orthogonalize(ProgramBuilder& b, const std::string& name, double rows, int r, double e, std::uint8_t stream,
                   double eager_s) {
    const double bytes = 2 * rows * r * e;
    for (int col = 0; col < r; ++col) {
        kernel(b, name + " orthogonalize: norm", bytes, stream, eager_s);
        kernel(b, name + " orthogonalize: col /= norm", bytes, stream, eager_s);
        if (col + 1 == r) continue;
        for (const char* k : {"col * rest", "sum", "* col", "rest -="})
            kernel(b, name + " orthogonalize: " + k, bytes, stream, eager_s);
    }
}

void collective(ProgramBuilder& b, const std::string& name, double bytes, const StepContext& c, double nccl_s) {
    b.collective(name, CollectiveKind::all_reduce, bytes, c.pe == 4 ? "fp32" : "bf16");
    b.last().host_s = nccl_s;
}

}  // namespace

std::uint32_t powerSgdAllReduce(ProgramBuilder& b, const StepContext& c, const std::string& name, double bucket_bytes,
                                const std::vector<std::size_t>& params, int step, double eager_s, double nccl_s) {
    const DdpSpec& d = c.sc.ddp;
    const double B = bucket_bytes, e = c.pe;
    if (step < d.powersgd_start_iter) {  // default_hooks._allreduce_fut
        kernel(b, name + " div_ world size", 2 * B, kComputeStream, eager_s);
        b.wait(kCommStream, b.record(kComputeStream));
        collective(b, name + " all_reduce", B, c, nccl_s);
        return b.record(kCommStream);
    }
    const bool first = step == d.powersgd_start_iter;
    const std::vector<PowerSgdMatrix> mx = powerSgdMatrices(c, params);
    double U = 0, Ps = 0, Qs = 0;
    for (const PowerSgdMatrix& x : mx) {
        if (x.r == 0) U += x.n * x.m;
        else Ps += x.n * x.r, Qs += x.m * x.r;
    }
    const std::string ps = name + " powersgd";
    if (d.powersgd_error_feedback) {
        if (first) kernel(b, ps + " error zeros", B, kComputeStream, eager_s);
        else kernel(b, ps + " += error", 3 * B, kComputeStream, eager_s);
        kernel(b, ps + " clone input", 2 * B, kComputeStream, eager_s);
    }
    if (U > 0) kernel(b, ps + " cat uncompressed", 2 * U * e, kComputeStream, eager_s);
    const bool randomize = first || !d.powersgd_warm_start;
    for (const PowerSgdMatrix& x : mx) {
        if (x.r == 0) continue;
        if (randomize) {  // torch.randn on the CPU, q.copy_ of it: a pageable copy the host waits for
            const LinkRates& links = c.cost.profile().links;
            const IoRates& io = c.cost.profile().io;
            TransferCall t;
            t.kind = TransferKind::h2d;
            t.bytes = x.m * x.r * e;
            t.cap_Bps = (io.h2d_pageable_gbps > 0 ? io.h2d_pageable_gbps : links.pcie_pageable_gbps) * 1e9;
            t.alpha_s = io.copy_alpha_us * 1e-6;
            t.blocking = true;
            b.transfer(ps + " random Q to GPU", t, kComputeStream);
        }
        orthogonalize(b, ps + " Q", x.m, x.r, e, kComputeStream, eager_s);
    }
    for (const PowerSgdMatrix& x : mx)
        if (x.r > 0) kernel(b, ps + " P = M Q", (x.n * x.m + (x.n + x.m) * x.r) * e, kComputeStream, eager_s);
    b.wait(kCommStream, b.record(kComputeStream));
    if (U > 0) {
        collective(b, ps + " uncompressed all_reduce", U * e, c, nccl_s);
        kernel(b, ps + " uncompressed /= world size", 2 * U * e, kCommStream, eager_s);
        for (const PowerSgdMatrix& x : mx)
            if (x.r == 0) kernel(b, ps + " uncompressed copy back", 2 * x.n * x.m * e, kCommStream, eager_s);
    }
    if (Ps > 0) {
        collective(b, ps + " P all_reduce", Ps * e, c, nccl_s);
        for (const PowerSgdMatrix& x : mx)
            if (x.r > 0) orthogonalize(b, ps + " P", x.n, x.r, e, kCommStream, eager_s);
        for (const PowerSgdMatrix& x : mx)
            if (x.r > 0) kernel(b, ps + " Q = M^T P", (x.n * x.m + (x.n + x.m) * x.r) * e, kCommStream, eager_s);
        collective(b, ps + " Q all_reduce", Qs * e, c, nccl_s);
        kernel(b, ps + " Q /= world size", 2 * Qs * e, kCommStream, eager_s);
        for (const PowerSgdMatrix& x : mx)
            if (x.r > 0) kernel(b, ps + " M = P Q^T", (x.n * x.m + (x.n + x.m) * x.r) * e, kCommStream, eager_s);
    }
    b.hostSync(b.record(kCommStream));  // torch.cuda.synchronize(device) in decompress
    if (d.powersgd_error_feedback) kernel(b, ps + " error = input - result", 3 * B, kCommStream, eager_s);
    return b.record(kCommStream);
}

double powerSgdStateBytes(const StepContext& c, const std::vector<std::vector<std::size_t>>& buckets) {
    const DdpSpec& d = c.sc.ddp;
    double grads = 0, largest = 0, low_rank = 0;
    for (const std::vector<std::size_t>& bk : buckets) {
        double bytes = 0;
        for (std::size_t i : bk) bytes += c.params[i].numel * c.pe;
        grads += bytes;
        largest = std::max(largest, bytes);
        for (const PowerSgdMatrix& x : powerSgdMatrices(c, bk)) low_rank += (x.n + x.m) * x.r * c.pe;
    }
    double out = 0;
    if (d.powersgd_error_feedback) out += grads + largest;
    if (d.powersgd_warm_start) out += low_rank;
    return out;
}

}  // namespace stepsim
