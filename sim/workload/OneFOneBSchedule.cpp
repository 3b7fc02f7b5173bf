#include <algorithm>

#include "sim/workload/PipelineActions.hpp"

namespace stepsim {

// 1F1B (PipeDream-Flush; torch.distributed.pipelining.Schedule1F1B, Megatron's non-interleaved schedule).
std::vector<PipelineAction> oneFOneBActions(int stage, int stages, int micro) {
    const int warmup = std::min(stages - stage - 1, micro);
    std::vector<PipelineAction> out;
    for (int i = 0; i < warmup; ++i) out.push_back({PipelineAction::forward, 0, i});
    for (int i = 0; i < micro - warmup; ++i) {
        out.push_back({PipelineAction::forward, 0, warmup + i});
        out.push_back({PipelineAction::backward, 0, i});
    }
    for (int i = micro - warmup; i < micro; ++i) out.push_back({PipelineAction::backward, 0, i});
    return out;
}

std::vector<PipelineAction> pipelineActions(PipelineSchedule schedule, int stage, int stages, int micro, int chunks) {
    switch (schedule) {
        case PipelineSchedule::gpipe: return gpipeActions(stage, stages, micro);
        case PipelineSchedule::one_f_one_b: return oneFOneBActions(stage, stages, micro);
        case PipelineSchedule::interleaved: return interleavedActions(stage, stages, micro, chunks);
        case PipelineSchedule::zero_bubble: return zeroBubbleActions(stage, stages, micro);
    }
    return {};
}

int peakInFlight(const std::vector<PipelineAction>& actions) {
    int alive = 0, peak = 0;
    for (const PipelineAction& a : actions) {
        if (a.kind == PipelineAction::forward) peak = std::max(peak, ++alive);
        else if (a.kind != PipelineAction::backward_weight) --alive;
    }
    return peak;
}

}  // namespace stepsim
