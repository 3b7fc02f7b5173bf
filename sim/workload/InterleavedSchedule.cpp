#include <algorithm>

#include "sim/workload/PipelineActions.hpp"

namespace stepsim {

// Megatron-LM's interleaved 1F1B (schedules.py, forward_backward_pipelining_with_interleaving): the k-th forward of
// the stage runs chunk (k mod p·v) / p on micro-batch (k / (p·v))·p + k mod p; backwards mirror it over the chunks
// in reverse. m must be a multiple of p (the scenario loader checks).
std::vector<PipelineAction> interleavedActions(int stage, int stages, int micro, int chunks) {
    const int p = stages, v = chunks, total = micro * v;
    auto at = [&](int k, bool forward) {
        const int in_group = k % (p * v);
        int chunk = in_group / p;
        if (!forward) chunk = v - 1 - chunk;
        return PipelineAction{forward ? PipelineAction::forward : PipelineAction::backward, chunk,
                              (k / (p * v)) * p + k % p};
    };
    const int warmup = micro == p ? total : std::min(total, (p - stage - 1) * 2 + (v - 1) * p);
    std::vector<PipelineAction> out;
    for (int k = 0; k < warmup; ++k) out.push_back(at(k, true));
    for (int i = 0; i < total - warmup; ++i) {
        out.push_back(at(warmup + i, true));
        out.push_back(at(i, false));
    }
    for (int k = total - warmup; k < total; ++k) out.push_back(at(k, false));
    return out;
}

}  // namespace stepsim
