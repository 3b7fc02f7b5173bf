#include <algorithm>

#include "sim/workload/PipelineActions.hpp"

namespace stepsim {

// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", 2023): 1F1B's forwards and input-gradient backwards B, each
// weight-gradient pass W run d = s micro-batches after its B on stage s, the rest after the last B: the later a stage,
// the more of its W passes wait, so its B passes (the gradient's path back to the first stage) go first, and the
// deferred W passes fill the cool-down while the gradients travel upstream.
std::vector<PipelineAction> zeroBubbleActions(int stage, int stages, int micro) {
    const int warmup = std::min(stages - stage - 1, micro);
    const int delay = stage;
    std::vector<PipelineAction> out;
    int next_w = 0;
    auto backward = [&](int i) {
        out.push_back({PipelineAction::backward_input, 0, i});
        if (i - delay >= next_w) out.push_back({PipelineAction::backward_weight, 0, next_w++});
    };
    for (int i = 0; i < warmup; ++i) out.push_back({PipelineAction::forward, 0, i});
    for (int i = 0; i < micro - warmup; ++i) {
        out.push_back({PipelineAction::forward, 0, warmup + i});
        backward(i);
    }
    for (int i = micro - warmup; i < micro; ++i) backward(i);
    while (next_w < micro) out.push_back({PipelineAction::backward_weight, 0, next_w++});
    return out;
}

}  // namespace stepsim
