#pragma once
// DistributedDataParallel's schedule (torch/nn/parallel/distributed.py, torch/csrc/distributed/c10d/reducer.cpp),
// on the process group "dp" of every rank and its NCCL stream:
//   in the last micro-step (the others run under no_sync), when a parameter's gradient is ready DDP's autograd hook
//     copies (and divides) it into its bucket: one kernel per parameter, at the hook's host cost
//     (launch.ddp_hook_host_us);
//   a bucket whose gradients are all ready launches its all-reduce on the NCCL stream, which first waits for the
//     compute stream; buckets strictly in index order, each at the host cost of an NCCL issue (launch.nccl_host);
//     with the fp16/bf16 compression hook a bucket is cast down (1.5 accesses per byte) and reduced at half its size;
//     with a quantizing hook (quantize_8bit, quantize_4bit) the bucket goes through QuantizedAllReduce.hpp;
//   finalize_backward: the compute stream waits for every bucket's all-reduce (decompressed: 3 accesses per byte);
//     unless gradient_as_bucket_view, each bucket is copied back into the gradients, one eager op per parameter.
// The first step reduces everything in one bucket; later steps use the buckets rebuilt in gradient-ready order
// (DdpBuckets.hpp). On one GPU there is no communication: the schedule adds nothing.
// find_unused_parameters (without static_graph; the reducer's dynamic_graph_find_unused): the buckets are made at
//   construction from the parameters in registration order with the limits [first_bucket_mb, bucket_cap_mb], their
//   list reversed, and never rebuilt (reducer.hpp's should_rebuild_buckets); every forward's output goes through
//   _DDPSink, which clones it (the logits: 2·c·T·V bytes, c the compute dtype's element size); at the end of each
//   synchronizing forward prepare_for_backward walks the autograd graph from the outputs on the host
//   (launch.ddp_find_unused_host_us per parameter tensor); when the last bucket is launched the used-parameter map
//   (one int32 per parameter tensor) is copied to the GPU from pinned memory and all-reduced on the NCCL stream, and
//   finalize_backward makes the compute stream wait for it (all_reduce_local_used_map, finalize_backward).
// static_graph: the first step runs as with find_unused_parameters but with its all-reduces delayed to the end of the
//   backward (delay_all_reduce: the map all-reduced, every gradient copied into the single bucket, then reduced); from
//   the second step on, the buckets rebuilt as without it and no graph walk, clone or map all-reduce (with or without
//   find_unused_parameters): in the measured steps the schedule of plain DDP.
// duplicate_gradients: the first N gradients to become ready are also all-reduced each by its own
//   synchronous dist.all_reduce from a gradient hook, on every backward: the NCCL stream waits for the compute stream,
//   reduces the gradient, and the compute stream waits for that all-reduce (work.wait()).
// comm_hook powersgd: the bucket goes through PowerSgdHook.hpp.
// Compiled (compile.enabled), by compile.optimize_ddp: ddp_optimizer runs the hooks as above (CompileTransform splits
// the graphs at the buckets); python_reducer (compiled autograd traces the reducer) has no per-parameter hook on the
// host and its bucket copies are graph kernels (fusible); none (one graph for the whole backward) makes every gradient
// ready only when the backward graph ends: the hooks, copies and all-reduces all follow the last backward kernel.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/DdpBuckets.hpp"
#include "sim/workload/ParallelSchedule.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

class DdpSchedule final : public ParallelSchedule {
public:
    // `ready_order`: the parameters in the order backward makes their gradients ready (gradientReadyOrder).
    DdpSchedule(const StepContext& c, ProgramBuilder& b, std::vector<std::size_t> ready_order);

    std::vector<StreamInfo> streams() const override;
    std::vector<ProcessGroup> groups() const override;
    void beginStep(int step) override;
    void beginBackward(bool last) override;
    void gradReady(std::size_t param) override;
    void endBackward() override;
    void report(Expansion& out) const override;

private:
    void launchReadyBuckets();
    void launchUsedMap();
    void onReady(std::size_t param);
    void duplicateAllReduce(std::size_t param);

    const StepContext& c_;
    ProgramBuilder& b_;
    std::vector<std::size_t> order_;
    std::string grad_dtype_;
    bool compress_;
    bool defer_;   // compiled with optimize_ddp none: gradients ready at the end of the backward graph
    bool traced_;  // compiled with optimize_ddp python_reducer: the reducer traced into the graph
    bool find_unused_;  // find_unused_parameters without static_graph: graph walk and used-map all-reduce each step
    std::vector<bool> duplicate_;  // per parameter: its gradient all-reduced a second time (duplicate_gradients)
    double walk_s_ = 0.0;          // prepare_for_backward's autograd graph walk, per step
    std::vector<std::size_t> deferred_;
    double eager_s_, nccl_s_, hook_s_;  // host costs: one eager op, an NCCL issue, DDP's hook per parameter
    std::vector<Bucket> rebuilt_;       // the buckets of the steps after the first
    std::vector<Bucket> initial_;       // the first step's buckets (find_unused_parameters: every step's)
    // The current step and micro-step.
    const std::vector<Bucket>* buckets_ = nullptr;
    std::vector<std::size_t> bucket_of_;  // parameter → its bucket
    bool sync_ = false;
    int step_ = 0;
    bool delayed_ = false;         // static_graph's first step: every all-reduce after the backward
    bool map_launched_ = false;    // the used-parameter map all-reduced in this backward
    std::uint32_t map_event_ = 0;
    std::vector<int> pending_;  // gradients each bucket still waits for
    std::size_t next_bucket_ = 0;
    std::vector<std::uint32_t> done_events_;
};

}  // namespace stepsim
