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
    const StepTransients st = stepTransients(compute);
    const Scenario& sc = shard.sc;
    const double N = double(std::max(shard.world, 1));
    const double p = shard.pe, g = elementBytes(fsdpGatherDtype(sc)), r = elementBytes(fsdpReduceDtype(sc));
    const GroupSizes s = groupSizes(shard);
    const double n = s.total(), sharded = p * n / N;
    const bool keep = !sc.fsdp.sync_every_micro_batch && sc.training.grad_accum > 1;
    const bool accumulated = sc.training.grad_accum > 1;
    const bool reshard = bool(sc.fsdp.reshard_after_forward);
    const bool limited = reshard && sc.fsdp.limit_all_gathers;
    PhaseTerms t;
    t.params = p * n / N;
    t.optimizer = optimizerStatesPerParam(sc.training) * p * n / N;
    t.grads_loss = keep ? g * n : accumulated ? sharded : 0.0;
    t.grads_start = keep ? g * n : (accumulated ? sharded : 0.0) + g * st.head_numel;
    t.grads_end = sharded + g * (keep ? n : s.root + s.largest_block);
    t.grads_step = sharded;
    t.gathered_loss = g * s.root + (reshard ? 0.0 : g * s.blocks);
    t.gathered_start = g * s.root + (limited ? 2 * g * s.largest_block : g * s.blocks);
    t.gathered_end = g * s.root + g * s.largest_block;
    t.buffers_end = r * s.largest_block / N + (r != g ? r * s.largest_block : 0.0) +
                    (g != p ? g * s.largest_block / N : 0.0);
    t.optimizer_temp = optimizerTemporaries(sc.training, n / N, p);
    return phasePeak(st, t);
}

MemoryEstimate estimateZeroMemory(const StepContext& c) {
    const StepTransients st = stepTransients(c);
    const double N = double(std::max(c.world, 1)), p = c.pe, n = paramCount(c), R = c.sc.zero.reduce_bucket_size;
    const bool accumulated = c.sc.training.grad_accum > 1;
    PhaseTerms t;
    t.params = p * n;
    t.optimizer = optimizerStatesPerParam(c.sc.training) * p * n / N + 4 * n / N;
    t.buffers = p * R * (zeroOverlapComm(c.sc) ? 2 : 1);
    const double grads = zeroStage(c.sc) == 1 ? p * n : p * n / N, partition = 4 * n / N;
    t.grads_loss = partition + (accumulated ? grads : 0.0);
    t.grads_start = partition + (accumulated ? grads : zeroStage(c.sc) == 1 ? p * st.head_numel : 0.0);
    t.grads_end = t.grads_step = partition + grads;
    t.buffers_end = p * std::min(R, n);
    t.optimizer_temp = optimizerTemporaries(c.sc.training, n / N, 4);
    return phasePeak(st, t);
}

MemoryEstimate estimateZero3Memory(const StepContext& c, const Zero3Sizes& s) {
    const StepTransients st = stepTransients(c);
    const double N = double(std::max(c.world, 1)), p = c.pe, n = paramCount(c), R = c.sc.zero.reduce_bucket_size;
    const double P = c.sc.zero.stage3_prefetch_bucket_size, partitioned = n - s.persistent;
    PhaseTerms t;
    t.params = p * (n - s.persistent) / N + p * s.persistent;
    t.optimizer = optimizerStatesPerParam(c.sc.training) * p * n / N + 4 * n / N;
    t.buffers = p * R;  // the ipg buffer, allocated at R
    t.grads_loss = t.grads_start = t.grads_end = t.grads_step = 4 * n / N;  // the fp32 gradient partition
    // Gathered: the modules kept from forward to backward, the unit in use and the prefetch window.
    t.gathered_loss = t.gathered_start = p * std::min(partitioned, s.kept + s.unit + P);
    t.gathered_end = p * std::min(partitioned, s.unit + P);
    t.buffers_end = p * std::min(R, n);
    t.optimizer_temp = optimizerTemporaries(c.sc.training, n / N, 4);
    return phasePeak(st, t);
}

}  // namespace stepsim
