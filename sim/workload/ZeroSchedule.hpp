#pragma once
// DeepSpeed's ZeRO stages 1 and 2 (deepspeed/runtime/zero/stage_1_and_2.py, DeepSpeedZeroOptimizer, as DeepSpeed
// schedules it with its defaults: contiguous_gradients, reduce_scatter and use_multi_rank_bucket_allreduce true).
// The parameters (fp32: training.param_dtype, the step under autocast) are replicated; the flattened parameters are
// split into N contiguous partitions (N = world size), rank k owning the k-th, whose optimizer state it alone keeps.
//
// Gradient reduction in buckets of zero.reduce_bucket_size elements (DeepSpeed's "ipg" bucket):
//   when a gradient is ready (stage 2, or stage 1 with overlap_comm: a hook on each parameter's AccumulateGrad) it is
//     copied into the contiguous bucket buffer (2·p·n, one eager op); a gradient that would overflow the bucket first
//     reduces the bucket (elements + n > reduce_bucket_size), then opens the next with it;
//   stage 1 without overlap_comm has no hooks: after the last micro-step's backward DeepSpeed walks the parameters in
//     registration order and buckets them the same way;
//   reducing a bucket of B bytes (average_tensor): with zero.overlap_comm on the reduction stream, which first waits
//     for the compute stream while the compute stream waits for the previous reduction (the two wait_stream calls);
//     without it on the compute stream. There: divide by N (2B), flatten the bucket's slices (2B), all-reduce B bytes
//     (use_multi_rank_bucket_allreduce: the slices of every owner in one all-reduce, not one reduce per owner), copy
//     the rank's own slices into its gradient partition (2B/N; 3B/N once a micro-step has added into it);
//   the last bucket is reduced in the epilogue at the end of backward; with overlap_comm the host then synchronizes
//     with the device.
// Stage 2 reduces every micro-step (the partition accumulates); stage 1 without overlap_comm only at the last one
// (the full gradients accumulate in .grad), with overlap_comm every micro-step as stage 2.
// The step (DeepSpeedZeroOptimizer.step): the global gradient norm over the partition (one pass, 4·n/N) and its
// all-reduce (4 bytes, on the compute stream); the partition's gradients flattened into the fp32 partition's .grad
// (2·4·n/N); the optimizer on the fp32 partition (n/N parameters; DeepSpeed keeps it apart from the parameters even in
// fp32); then the updated partition copied into the parameters' partition (2·p·n/N) and the parameters all-gathered
// (all_gather_into_tensor of the flat buffer: p·n bytes, once per step; allgather_bucket_size does not split it).
// Memory: estimateZeroMemory (ShardedMemory.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/workload/ParallelSchedule.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/ShardComm.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

// zero.overlap_comm as DeepSpeed resolves it: its value, else true for stage 3 only.
bool zeroOverlapComm(const Scenario& sc);
int zeroStage(const Scenario& sc);

class ZeroSchedule final : public ParallelSchedule {
public:
    static constexpr std::uint8_t kReductionStream = 1;

    ZeroSchedule(const StepContext& c, ProgramBuilder& b);

    std::vector<StreamInfo> streams() const override;
    std::vector<ProcessGroup> groups() const override;
    void beginStep(int) override { micro_ = 0; }
    void beginBackward(bool last) override;
    void gradReady(std::size_t param) override;
    void endBackward() override;
    void afterOptimizer() override;
    // Stage 2's partition and hooked stage 1 accumulate reduced gradients; stage 1 without hooks lets autograd add.
    bool autogradAccumulates() const override { return !hooks_; }
    double optimizerShare() const override { return 1.0 / double(world_); }
    void report(Expansion& out) const override;

private:
    void add(std::size_t param);
    void reduceBucket();

    const StepContext& c_;
    ProgramBuilder& b_;
    ShardComm comm_;
    int world_, stage_;
    bool overlap_, hooks_;
    double bucket_elems_ = 0;
    int bucket_index_ = 0;
    std::optional<std::uint32_t> last_reduction_;
    int micro_ = 0;
    bool reduce_ = false;  // this micro-step reduces
    bool last_ = false;
};

}  // namespace stepsim
