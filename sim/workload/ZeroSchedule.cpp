#include "sim/workload/ZeroSchedule.hpp"

#include <fmt/format.h>

#include "sim/workload/Expand.hpp"
#include "sim/workload/ShardedMemory.hpp"

namespace stepsim {

int zeroStage(const Scenario& sc) {
    switch (sc.parallel.data) {
        case DataParallel::zero1: return 1;
        case DataParallel::zero2: return 2;
        case DataParallel::zero3: return 3;
        default: return 0;
    }
}

bool zeroOverlapComm(const Scenario& sc) { return sc.zero.overlap_comm.value_or(zeroStage(sc) == 3); }

ZeroSchedule::ZeroSchedule(const StepContext& c, ProgramBuilder& b)
    : c_(c),
      b_(b),
      comm_(c, b),
      world_(std::max(c.world, 1)),
      stage_(zeroStage(c.sc)),
      overlap_(zeroOverlapComm(c.sc)),
      hooks_(stage_ == 2 || overlap_) {}

std::vector<StreamInfo> ZeroSchedule::streams() const {
    return {{StreamKind::compute, "compute"}, {StreamKind::comm, "nccl:dp reduction"}};
}

std::vector<ProcessGroup> ZeroSchedule::groups() const {
    ProcessGroup dp{"dp", {}};
    for (int r = 0; r < world_; ++r) dp.ranks.push_back(r);
    return {dp};
}

void ZeroSchedule::beginBackward(bool last) {
    ++micro_;
    last_ = last;
    reduce_ = hooks_ || last;
    bucket_elems_ = 0;
}

void ZeroSchedule::gradReady(std::size_t i) {
    if (hooks_) add(i);
}

// reduce_independent_p_g_buckets_and_remove_grads: the bucket reduced first when the gradient would overflow it.
void ZeroSchedule::add(std::size_t i) {
    const double n = c_.params[i].numel;
    if (bucket_elems_ > 0 && bucket_elems_ + n > c_.sc.zero.reduce_bucket_size) reduceBucket();
    comm_.kernel(c_.params[i].name + " zero copy grad to ipg bucket", 2 * c_.pe * n, MemKind::elementwise,
                 kComputeStream);
    bucket_elems_ += n;
}

void ZeroSchedule::reduceBucket() {
    const double bytes = c_.pe * bucket_elems_, N = double(world_);
    const std::string name = fmt::format("zero ipg bucket {}", bucket_index_++);
    std::uint8_t s = kComputeStream;
    if (overlap_) {
        s = kReductionStream;
        const std::uint32_t now = b_.record(kComputeStream);
        b_.wait(kReductionStream, now);
        if (last_reduction_) b_.wait(kComputeStream, *last_reduction_);
    }
    comm_.kernel(name + " div", 2 * bytes, MemKind::elementwise, s);
    comm_.kernel(name + " flatten", 2 * bytes, MemKind::elementwise, s);
    if (world_ > 1)
        comm_.collective(name + " all_reduce", CollectiveKind::all_reduce, bytes, c_.sc.training.param_dtype, s);
    comm_.kernel(name + " copy own partition", (micro_ > 1 && hooks_ ? 3 : 2) * bytes / N, MemKind::elementwise, s);
    last_reduction_ = b_.record(s);
    bucket_elems_ = 0;
}

void ZeroSchedule::endBackward() {
    if (!reduce_) return;
    b_.phase = Phase::backward;
    if (!hooks_)  // reduce_gradients: the parameters in registration order
        for (std::size_t i = 0; i < c_.params.size(); ++i) add(i);
    if (bucket_elems_ > 0) reduceBucket();
    if (overlap_ && last_reduction_) {
        // overlapping_partition_gradients_reduce_epilogue: the host synchronizes with the device.
        b_.hostSync(*last_reduction_);
        b_.wait(kComputeStream, *last_reduction_);
    }
    last_reduction_.reset();
    if (!last_) return;
    // step(): the global norm of the partition's gradients and its all-reduce, then the fp32 partition's .grad.
    b_.phase = Phase::optimizer;
    double n = 0;
    for (const ParamInfo& p : c_.params) n += p.numel;
    comm_.kernel("zero grad partition norm", c_.pe * n / world_, MemKind::elementwise, kComputeStream);
    if (world_ > 1)
        comm_.collective("zero grad norm all_reduce", CollectiveKind::all_reduce, 4, DType::fp32, kComputeStream);
    comm_.kernel("zero flatten grad partition", 2 * 4 * n / world_, MemKind::elementwise, kComputeStream);
    b_.phase = Phase::backward;
}

void ZeroSchedule::afterOptimizer() {
    double n = 0;
    for (const ParamInfo& p : c_.params) n += p.numel;
    b_.phase = Phase::optimizer;
    comm_.kernel("zero fp32 partition to params", 2 * c_.pe * n / world_, MemKind::elementwise, kComputeStream);
    if (world_ > 1)
        comm_.collective("zero all_gather params", CollectiveKind::all_gather, c_.pe * n, c_.sc.training.param_dtype,
                         kComputeStream);
}

void ZeroSchedule::report(Expansion& out) const { out.memory = estimateZeroMemory(c_); }

}  // namespace stepsim
