#pragma once
// The power state of each rank's GPU: the SM clock its running step holds, and the load the step has drawn so far.
//
// The clock comes from the power model (sim/cost/PowerModel.hpp): the first step's from its kernels alone, each next
// step's from the load of the step before, as the board's limiter follows the recent draw. This class only accounts:
// each kernel's FLOP and seconds at its own rate as it starts, the time the GPU has a compute kernel running (from the
// kernel that finds it idle to the one that leaves it idle), and each step's end. Attention kernels run at the clock
// (PowerModel::attentionFactor); the others' rates were timed in the power state a step holds them in.
// Timeline::clock_mhz keeps each step's clock (0 when the profile has no power model).
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/base/Time.hpp"
#include "sim/cost/PowerModel.hpp"
#include "sim/engine/EngineContext.hpp"

namespace stepsim {

class PowerState {
public:
    PowerState(EngineContext& ctx, const PowerModel& model);

    // A kernel of `seconds` at full clock starts on `rank`'s GPU: its seconds at the step's clock.
    double kernelStarts(int rank, const Op& op, double seconds) {
        if (!model_.modelled) return seconds;
        Rank& r = ranks_[rank];
        if (op.cls == KernelClass::attention)  // its shape: {batch·heads, seq, head_dim}
            seconds *= model_.attentionFactor(op.gemm.k, op.phase == Phase::backward, r.clock_mhz);
        r.load.addKernel(op.cls, op.flops, seconds);
        return seconds;
    }
    // The GPU goes from idle to computing, and back, at `now`.
    void gpuBusy(int rank, Time now) {
        if (model_.modelled) ranks_[rank].busy_since = now;
    }
    void gpuIdle(int rank, Time now) {
        if (model_.modelled) ranks_[rank].load.busy_s += (now - ranks_[rank].busy_since).seconds();
    }
    // `step` ends on `rank` (its GPU computing or not): its clock goes into the timeline, and its load sets the next
    // step's.
    void endStep(int rank, int step, bool gpu_busy);

private:
    struct Rank {
        double clock_mhz = 0.0;
        StepLoad load;
        Time step_start, busy_since;  // busy_since: when the GPU last went from idle to computing
    };

    EngineContext& ctx_;
    const PowerModel model_;
    std::vector<Rank> ranks_;
};

}  // namespace stepsim
