#include "sim/run/Explain.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "sim/base/ParallelDims.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/workload/Expand.hpp"

namespace stepsim {

std::string explainDerived(const Scenario& sc, const HardwareProfile& profile) {
    const CostModel cost = scenarioCostModel(sc, profile);
    const Expansion e = expand(sc, cost);
    const Workload& w = e.workload;
    fmt::memory_buffer b;
    auto out = std::back_inserter(b);
    fmt::format_to(out, "# derived (from the expanded step on profile {}; not scenario keys)\n", profile.name);
    const int world = w.ranks();
    const int tp = sc.parallel.tp, pp = sc.parallel.pp;
    fmt::format_to(out, "#   parameters: {:.4g} ({:.3f} B)\n", e.params, e.params * 1e-9);
    if (w.tokens_per_step > 0)
        fmt::format_to(out, "#   model FLOPs per token: {:.4g} (6 N = {:.4g}; the rest attention)\n",
                       w.model_flops_per_step / w.tokens_per_step, 6.0 * e.params);
    fmt::format_to(out, "#   world: {} GPUs = dp {} x tp {} x pp {} ({})\n", world, parallelDims(sc.parallel, world).dp, tp,
                   pp, sc.parallel.data == DataParallel::ddp ? "ddp" : "sharded data parallel");
    fmt::format_to(out, "#   tokens per step: {:.0f} per GPU, {:.0f} in all; samples {:.4g} per GPU\n",
                   w.tokens_per_step, w.tokens_per_step * world, w.samples_per_step);
    if (!w.programs.empty()) {
        const Program& p = w.programs.front();
        const int last = w.steps - 1;
        int kernels = 0, collectives = 0;
        double coll_bytes = 0.0;
        for (const Op& op : p.ops) {
            if (op.step != last) continue;
            if (op.kind == OpKind::kernel) ++kernels;
            if (op.kind == OpKind::collective) ++collectives, coll_bytes += p.collectives[op.collective].bytes;
        }
        fmt::format_to(out, "#   rank 0 per step: {} kernels, {} collectives of {:.4g} MB in all\n", kernels,
                       collectives, coll_bytes * 1e-6);
    }
    if (!e.buckets.empty()) {
        double total = 0.0, largest = 0.0, smallest = e.buckets.front().bytes;
        for (const Bucket& bk : e.buckets)
            total += bk.bytes, largest = std::max(largest, bk.bytes), smallest = std::min(smallest, bk.bytes);
        fmt::format_to(out, "#   DDP buckets: {} (rebuilt), {:.2f} MiB in all, {:.2f} to {:.2f} MiB each:", e.buckets.size(),
                       total / (1 << 20), smallest / (1 << 20), largest / (1 << 20));
        for (std::size_t i = 0; i < e.buckets.size(); ++i)
            fmt::format_to(out, "{}{:.2f}", i % 12 == 0 ? "\n#     " : " ", e.buckets[i].bytes / (1 << 20));
        fmt::format_to(out, "\n");
    }
    if (sc.model.type != "trace") {
        const MemoryBreakdown m = memoryBreakdown(e.memory);
        fmt::format_to(out,
                       "#   memory per GPU (GiB): peak {:.2f} at {}: params {:.2f}, grads {:.2f}, optimizer {:.2f}, "
                       "activations {:.2f}, buffers {:.2f}; the GPU has {:.2f}\n",
                       m.sum(), m.phase.empty() ? "every term's largest" : m.phase, m.params, m.grads, m.optimizer,
                       m.activations, m.buffers, profile.gpu.memory_gib);
        for (const MemoryEstimate& ph : e.memory.phases) {
            const MemoryBreakdown p = memoryBreakdown(ph);
            fmt::format_to(out, "#     {:<22} {:7.2f}: params {:.2f}, grads {:.2f}, optimizer {:.2f}, activations {:.2f}, buffers {:.2f}\n",
                           p.phase, p.sum(), p.params, p.grads, p.optimizer, p.activations, p.buffers);
        }
    }
    for (const std::string& warning : e.warnings) fmt::format_to(out, "#   note: {}\n", warning);
    return fmt::to_string(b);
}

}  // namespace stepsim
