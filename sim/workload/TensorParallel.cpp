#include "sim/workload/TensorParallel.hpp"

#include <vector>

#include <fmt/format.h>

#include "sim/workload/ParallelLayout.hpp"

namespace stepsim {

void TensorParallel::collective(const std::string& name, CollectiveKind kind, double bytes, std::uint8_t stream) {
    b_.collective(name, kind, bytes, c_.cdt == DType::fp16 ? "fp16" : "bf16", stream, kTpGroup);
    b_.last().host_s = c_.nccl_s;
}

void TensorParallel::reduce(const std::string& name, double bytes) {
    if (!on()) return;
    if (c_.sp) collective(name + " reduce_scatter", CollectiveKind::reduce_scatter, bytes, kComputeStream);
    else collective(name + " all_reduce", CollectiveKind::all_reduce, bytes, kComputeStream);
}

void TensorParallel::gather(const std::string& name, double bytes) {
    if (on() && c_.sp) collective(name + " all_gather", CollectiveKind::all_gather, bytes, kComputeStream);
}

void TensorParallel::crossEntropy(const std::string& name, long tokens) {
    if (!on()) return;
    for (const char* what : {"max", "target logit", "sum exp"}) {
        b_.collective(fmt::format("{} {} all_reduce", name, what), CollectiveKind::all_reduce, 4.0 * double(tokens),
                      "fp32", kComputeStream, kTpGroup);
        b_.last().host_s = c_.nccl_s;
    }
}

void TensorParallel::amaxAllReduce(const std::string& name) {
    if (!on()) return;
    b_.collective(name + " amax all_reduce", CollectiveKind::all_reduce, 4.0, "fp32", kComputeStream, kTpGroup);
    b_.last().host_s = c_.nccl_s;
}

void TensorParallel::gatheredGemm(const std::string& name, long m, long n, long k, const RowsGemm& gemm_of,
                                  double elem_bytes) {
    const RowsGemm gemm = gemm_of ? gemm_of : RowsGemm([&](const std::string& g, long rows) { b_.gemm(g, rows, n, k); });
    const double bytes = (elem_bytes > 0 ? elem_bytes : c_.ce) * double(m) * double(k);
    if (!on() || !c_.async_tp) {
        gather(name + " input", bytes);
        gemm(name, m);
        return;
    }
    // Chunk 0 is the local shard; chunk i arrives with the i-th ring shift.
    const long rows = m / c_.tp;
    const std::uint32_t ready = b_.record(kComputeStream);
    b_.wait(c_.tp_stream, ready);
    std::vector<std::uint32_t> arrived;
    for (int i = 1; i < c_.tp; ++i) {
        collective(fmt::format("{} input shift {}", name, i), CollectiveKind::sendrecv, bytes / c_.tp, c_.tp_stream);
        arrived.push_back(b_.record(c_.tp_stream));
    }
    for (int i = 0; i < c_.tp; ++i) {
        if (i > 0) b_.wait(kComputeStream, arrived[std::size_t(i - 1)]);
        gemm(fmt::format("{} chunk {}", name, i), rows);
    }
}

void TensorParallel::reducedGemm(const std::string& name, long m, long n, long k, const RowsGemm& gemm_of) {
    const RowsGemm gemm = gemm_of ? gemm_of : RowsGemm([&](const std::string& g, long rows) { b_.gemm(g, rows, n, k); });
    const double bytes = c_.ce * double(m) * double(n);
    if (!on() || !c_.async_tp) {
        gemm(name, m);
        reduce(name, bytes);
        return;
    }
    // Each chunk's partial rows go to the rank that owns them while the next chunk computes; the owner sums the tp
    // partial shards (reads tp of S/tp, writes one).
    const long rows = m / c_.tp;
    std::uint32_t shifted = 0;
    for (int i = 0; i < c_.tp; ++i) {
        gemm(fmt::format("{} chunk {}", name, i), rows);
        if (i == 0) continue;  // the first chunk is the rank's own shard's partial sum: it stays
        const std::uint32_t done = b_.record(kComputeStream);
        b_.wait(c_.tp_stream, done);
        collective(fmt::format("{} output shift {}", name, i), CollectiveKind::sendrecv, bytes / c_.tp, c_.tp_stream);
        shifted = b_.record(c_.tp_stream);
    }
    b_.wait(kComputeStream, shifted);
    b_.mem(name + " reduce shards", (c_.tp + 1) * bytes / c_.tp);
}

}  // namespace stepsim
