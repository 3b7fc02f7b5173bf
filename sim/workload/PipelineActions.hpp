#pragma once
// The order in which one pipeline stage runs its micro-batches' forward and backward passes, per schedule (one file
// each). p stages, m micro-batches (training.grad_accum), v model chunks per stage (parallel.pp_virtual_stages).
//   GPipe (GpipeSchedule.cpp): every forward, then every backward.
//   1F1B (OneFOneBSchedule.cpp, PipeDream-Flush; Narayanan et al. 2021): min(p−s−1, m) warm-up forwards on stage s,
//     then one forward and one backward alternately, then the remaining backwards. Bubble (p−1)/(m+p−1).
//   Interleaved 1F1B (InterleavedSchedule.cpp, Megatron-LM's): the stage holds v chunks (chunk c is virtual stage
//     c·p + s); forwards run in groups of p micro-batches per chunk, (p−s−1)·2 + (v−1)·p warm-up forwards; bubble
//     (p−1)/(v·m+p−1) of the step when chunks take 1/v of a stage's time.
//   Zero bubble (ZeroBubbleSchedule.cpp, ZB-H1 of Qi et al. 2023): 1F1B with each backward split into B (input
//     gradients, on the critical path) and W (weight gradients), W delayed by s micro-batches on stage s to fill the
//     cool-down bubble; same warm-up, so the activations in flight stay 1F1B's. Bubble (p−1)(F+B−W) against 1F1B's
//     (p−1)(F+B+W) for passes of F, B, W.
#include <vector>

#include "sim/base/Scenario.hpp"

namespace stepsim {

struct PipelineAction {
    enum Kind { forward, backward, backward_input, backward_weight };
    Kind kind = forward;
    int chunk = 0;  // the stage's model chunk (0 unless interleaved)
    int micro = 0;  // micro-batch
};

std::vector<PipelineAction> gpipeActions(int stage, int stages, int micro);
std::vector<PipelineAction> oneFOneBActions(int stage, int stages, int micro);
std::vector<PipelineAction> interleavedActions(int stage, int stages, int micro, int chunks);
std::vector<PipelineAction> zeroBubbleActions(int stage, int stages, int micro);

// The schedule's actions for `stage`.
std::vector<PipelineAction> pipelineActions(PipelineSchedule schedule, int stage, int stages, int micro, int chunks);

// The most micro-batch chunks whose activations are alive at once on the stage (a forward keeps them until its
// backward, or its input-gradient half B under zero bubble).
int peakInFlight(const std::vector<PipelineAction>& actions);

}  // namespace stepsim
