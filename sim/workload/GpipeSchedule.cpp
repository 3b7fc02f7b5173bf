#include "sim/workload/PipelineActions.hpp"

namespace stepsim {

// GPipe (Huang et al. 2019; torch.distributed.pipelining.ScheduleGPipe): all forwards, then all backwards in the
// same micro-batch order. Every micro-batch's activations are alive at the turn.
std::vector<PipelineAction> gpipeActions(int, int, int micro) {
    std::vector<PipelineAction> out;
    for (int i = 0; i < micro; ++i) out.push_back({PipelineAction::forward, 0, i});
    for (int i = 0; i < micro; ++i) out.push_back({PipelineAction::backward, 0, i});
    return out;
}

}  // namespace stepsim
