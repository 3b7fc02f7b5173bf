#include "sim/engine/PowerState.hpp"

#include <utility>

namespace stepsim {

PowerState::PowerState(EngineContext& ctx, const PowerModel& model)
    : ctx_(ctx), model_(model), ranks_(ctx.w.programs.size()) {
    if (!model_.modelled) return;
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
        StepLoad kernels;
        for (const Op& op : ctx.w.programs[r].ops)
            if (op.kind == OpKind::kernel && op.step == 0) kernels.addKernel(op.cls, op.flops, op.work_s);
        ranks_[r].clock_mhz = model_.firstStepClock(kernels);
    }
}

void PowerState::endStep(int rank, int step, bool gpu_busy) {
    Rank& r = ranks_[rank];
    ctx_.tl.clock_mhz[rank][step] = r.clock_mhz;
    if (!model_.modelled) return;
    const Time now = ctx_.now;
    if (gpu_busy) r.load.busy_s += (now - std::exchange(r.busy_since, now)).seconds();
    r.clock_mhz = model_.nextClock(r.clock_mhz, r.load, (now - r.step_start).seconds(), step == 0);
    r.load = StepLoad{};
    r.step_start = now;
}

}  // namespace stepsim
