#pragma once
// What to change: the few knobs most likely to shorten this scenario's step, each tried by a what-if run.
//
// From the step's breakdown (Breakdown.hpp) every part of at least kAdviceMinShare of the step suggests the knobs that
// act on it (candidates below), most suggestive part first:
//   comm.<group> (exposed communication): DDP's bucket size (ddp.bucket_cap_mb 100 and 10), compiled DDP with the
//     compiler's collective fusion (compile.enabled with compile.comm_fusion_depth 2), FSDP's forward prefetch and
//     keeping the gathered parameters (fsdp.forward_prefetch, fsdp.reshard_after_forward: false), async TP
//     (parallel.async_tp, with sequence_parallel);
//   host_bound: torch.compile (compile.enabled), CUDA graphs (compile.mode: reduce-overhead), twice the micro-batch;
//   pipeline_bubble: twice the micro-batches (training.grad_accum), interleaving (pp_schedule: interleaved, 2 chunks),
//     zero-bubble (pp_schedule: zero_bubble);
//   loader: DataLoader workers (data_loader.num_workers: 4), pinned memory (data_loader.pin_memory);
//   checkpoint: async saves (checkpoint.mode: async, pinned staging);
//   compute.optimizer: fused AdamW (training.optimizer_impl: fused);  compute.memory: torch.compile;
//   and a peak over the GPU's memory: sharding (parallel.data: fsdp2), activation checkpointing (selective, full).
// A knob already at the suggested value, or a combination the loader refuses, is not tried. Each candidate runs once
// (sim.samples: 1), with the scenario's seed and steps, against the scenario run the same way; its gain is in
// throughput, 100 · (tokens_per_s / tokens_per_s as given − 1), so a knob that changes the tokens per step (a larger
// micro-batch, more micro-batches) is weighed by its tokens, with that named in its cost. Ranked: a candidate that
// fits in memory before one that does not, then by gain; those with no gain are dropped (unless the scenario as given
// does not fit and they do); at most kAdviceItems are kept.
#include <string>
#include <vector>

#include "sim/cost/HardwareProfile.hpp"
#include "sim/metrics/Results.hpp"
#include "sim/base/Scenario.hpp"

namespace stepsim {

inline constexpr double kAdviceMinShare = 0.03;
inline constexpr int kAdviceItems = 5;

// One what-if to try: the overrides and the breakdown part (or "memory") that suggested it.
struct AdviceCandidate {
    std::vector<std::string> sets;
    std::string reason;
};

// The candidates for `sc` with results `r` (its breakdown, peak memory) on a GPU of `gpu_memory_gib`, in the order
// above, without repeats.
std::vector<AdviceCandidate> adviceCandidates(const Scenario& sc, const Results& r, double gpu_memory_gib);

// Runs the candidates: `file` with `sets` is the scenario as given (its results `given`), each candidate's overrides
// added after them. `threads`: the candidates run on that many threads of parallelFor (0: one per core); the advice
// does not depend on it.
std::vector<AdviceItem> advise(const std::string& file, const std::vector<std::string>& sets, const Results& given,
                               const HardwareProfile& profile, int threads = 0);

}  // namespace stepsim
