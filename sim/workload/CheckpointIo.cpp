#include "sim/workload/CheckpointIo.hpp"

#include <stdexcept>
#include <string>

#include "sim/base/InputError.hpp"

namespace stepsim {

double checkpointStateBytes(double params, double param_bytes) { return 3.0 * params * param_bytes; }

CheckpointIo::CheckpointIo(StepContext& c, ProgramBuilder& b, Program& p, double params, double state_share,
                           double param_bytes)
    : c_(c), b_(b), p_(p) {
    if (c.sc.checkpoint.interval_steps <= 0) return;
    if (!c.cost.profile().io.measured())
        throw inputError(c.sc.source, 0, "checkpoint.interval_steps",
                         "checkpointing needs the profile's io section (torch.distributed.checkpoint measured by "
                         "calibration/pytorch/io_transfer.py); profile '" + c.cost.profile().name + "' has none");
    if (c.sc.sim.steps <= c.sc.checkpoint.interval_steps)
        throw inputError(c.sc.source, 0, "checkpoint.interval_steps",
                         "a checkpoint every " + std::to_string(c.sc.checkpoint.interval_steps) +
                             " steps needs sim.steps of at least " + std::to_string(c.sc.checkpoint.interval_steps + 1) +
                             " (one whole interval after the first step, which the results leave out), got sim.steps " +
                             std::to_string(c.sc.sim.steps));
    p_.streams.push_back({StreamKind::copy, "checkpoint"});
    stream_ = static_cast<std::uint8_t>(p_.streams.size() - 1);
    state_bytes_ = checkpointStateBytes(params * state_share, param_bytes);
    written_bytes_ = state_share >= 1.0 ? state_bytes_ / c.world : state_bytes_;
}

void CheckpointIo::afterStep(int step) {
    const CheckpointSpec& k = c_.sc.checkpoint;
    if (k.interval_steps <= 0 || (step + 1) % k.interval_steps != 0) return;
    const IoRates& io = c_.cost.profile().io;
    const bool sync = k.mode == CheckpointMode::sync;
    if (!sync && pending_) b_.hostSync(*pending_);  // the previous async save must end first
    // The host's fixed part before the data moves (planning, metadata; staging buffers for async).
    const double plan_s = (sync ? io.dcp_sync_overhead_ms : io.dcp_stage_overhead_ms) * 1e-3;
    b_.host("checkpoint: plan", plan_s);
    TransferCall stage;
    stage.seconds = plan_s;
    stage.kind = TransferKind::d2h;
    stage.checkpoint = index_;
    stage.blocking = true;
    if (sync) {
        stage.bytes = written_bytes_;
        stage.cap_Bps = io.d2h_pageable_gbps * 1e9;
    } else {
        stage.bytes = state_bytes_;
        stage.pinned = k.pinned_staging;
        stage.cap_Bps = (k.pinned_staging ? io.dcp_stage_pinned_gbps : io.dcp_stage_gbps) * 1e9;
    }
    b_.transfer("checkpoint: stage to host", stage, kComputeStream);
    b_.hostSync(b_.record(kComputeStream));
    TransferCall write;
    write.kind = TransferKind::storage_write;
    write.checkpoint = index_;
    write.blocking = sync;
    write.bytes = written_bytes_;
    const double gbps = k.storage_GBps ? *k.storage_GBps : (sync ? io.dcp_sync_write_gbps : io.dcp_async_write_gbps);
    write.cap_Bps = gbps * 1e9;
    write.alpha_s = sync ? 0.0 : io.dcp_async_write_overhead_ms * 1e-3;
    b_.transfer("checkpoint: write", write, stream_);
    b_.last().host_s = 0;
    const std::uint32_t written = b_.record(stream_);
    if (sync)
        b_.hostSync(written);
    else
        pending_ = written;
    ++index_;
}

}  // namespace stepsim
