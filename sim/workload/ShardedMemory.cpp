#include "sim/workload/ShardedMemory.hpp"

#include <algorithm>

#include "sim/workload/Fsdp2Schedule.hpp"
#include "sim/workload/OptimizerStep.hpp"
#include "sim/workload/ShardComm.hpp"
#include "sim/workload/ZeroSchedule.hpp"

namespace stepsim {

namespace {
double paramCount(const StepContext& c) {
    double n = 0;
    for (const ParamInfo& p : c.params) n += p.numel;
    return n;
}
}  // namespace

MemoryEstimate estimateFsdp1Memory(const StepContext& shard, const StepContext& compute) {
    MemoryEstimate m = estimateMemory(compute, /*ddp=*/false);
    const Scenario& sc = shard.sc;
    const double N = double(std::max(shard.world, 1));
    const double p = shard.pe, g = elementBytes(fsdpGatherDtype(sc)), r = elementBytes(fsdpReduceDtype(sc));
    const GroupSizes s = groupSizes(shard);
    const double n = s.total();
    m.params = p * n / N;
    m.optimizer = optimizerStatesPerParam(sc.training) * p * n / N;
    const bool keep = !sc.fsdp.sync_every_micro_batch && sc.training.grad_accum > 1;
    m.grads = p * n / N + g * (keep ? n : s.root + s.largest_block);
    const bool limited = sc.fsdp.reshard_after_forward && sc.fsdp.limit_all_gathers;
    m.gathered = g * s.root + (limited ? 2 * g * s.largest_block : g * s.blocks);
    m.buckets = r * s.largest_block / N + (r != g ? r * s.largest_block : 0.0) + (g != p ? g * s.largest_block / N : 0.0);
    return m;
}

MemoryEstimate estimateZeroMemory(const StepContext& c) {
    MemoryEstimate m = estimateMemory(c, /*ddp=*/false);
    const double N = double(std::max(c.world, 1)), p = c.pe, n = paramCount(c), R = c.sc.zero.reduce_bucket_size;
    m.params = p * n;
    m.optimizer = optimizerStatesPerParam(c.sc.training) * p * n / N + 4 * n / N;
    m.grads = (zeroStage(c.sc) == 1 ? p * n : p * n / N) + 4 * n / N;
    m.buckets = p * R * (zeroOverlapComm(c.sc) ? 2 : 1) + p * std::min(R, n);
    return m;
}

MemoryEstimate estimateZero3Memory(const StepContext& c, const Zero3Sizes& s) {
    MemoryEstimate m = estimateMemory(c, /*ddp=*/false);
    const double N = double(std::max(c.world, 1)), p = c.pe, n = paramCount(c), R = c.sc.zero.reduce_bucket_size;
    m.params = p * (n - s.persistent) / N + p * s.persistent;
    m.optimizer = optimizerStatesPerParam(c.sc.training) * p * n / N + 4 * n / N;
    m.grads = 4 * n / N;
    m.gathered = p * std::min(n - s.persistent, s.kept + s.unit + c.sc.zero.stage3_prefetch_bucket_size);
    m.buckets = p * R + p * std::min(R, n);
    return m;
}

}  // namespace stepsim
