#pragma once
// Checkpointing every checkpoint.interval_steps steps with torch.distributed.checkpoint, after the optimizer step of
// steps k with (k + 1) mod N = 0, as a training loop calls it.
//
// What a rank saves: its model and AdamW state (parameters, exp_avg, exp_avg_sq in the parameters' dtype). Under
// DDP the state is replicated and DCP's planner writes each tensor once, spread over the ranks, so a rank writes
// 1/world of it; under FSDP2 its shard. The staged (async) copy is the rank's whole state dict.
//   sync (dcp.save): the host plans (io.dcp_sync_overhead_ms), copies what it writes to host memory (pageable
//     device-to-host on the compute stream, after the step's kernels) and writes it to storage; it blocks for all of
//     it.
//   async (dcp.async_save): a previous save still writing is waited for first (DCP's recipe); the host blocks for
//     the staging alone (α io.dcp_stage_overhead_ms, the state at io.dcp_stage_gbps, or io.dcp_stage_pinned_gbps with
//     pinned_staging), then a background thread (the `checkpoint` stream) writes it at io.dcp_async_write_gbps beside
//     the next steps.
// Copies are flows on the GPU's PCIe route, writes on the node's storage route (one link per node, so the ranks of
// a node share it); checkpoint.storage_GBps, when set, is the write rate instead of the profile's.
#include <cstdint>
#include <optional>

#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

class CheckpointIo {
public:
    // `state_share`: the fraction of the parameters whose optimizer state this rank holds (the schedule's);
    // `param_bytes`: the bytes of a parameter as the optimizer holds it (training.param_dtype's).
    CheckpointIo(StepContext& c, ProgramBuilder& b, Program& p, double params, double state_share, double param_bytes);
    // After step `step`'s end: a checkpoint if one is due.
    void afterStep(int step);

private:
    StepContext& c_;
    ProgramBuilder& b_;
    Program& p_;
    std::uint8_t stream_ = 0;
    double state_bytes_ = 0;    // the rank's state dict
    double written_bytes_ = 0;  // what it writes
    int index_ = 0;
    std::optional<std::uint32_t> pending_;  // the previous async write's end
};

// The bytes of model and AdamW state one rank holds: parameters and two moments in the parameters' dtype.
double checkpointStateBytes(double params, double param_bytes);

}  // namespace stepsim
