#pragma once
// DeepSpeed's ZeRO stage 3 (deepspeed/runtime/zero/stage3.py, partitioned_param_coordinator.py, parameter_offload.py),
// with fp32 parameters (training.param_dtype; the step under autocast). Every parameter of at least
// zero.stage3_param_persistence_threshold elements is partitioned: a rank keeps 1/N of it (N = world size) and the
// module that holds it gathers it before each use; smaller ones (the norms' weights and biases) persist whole.
//
// The module trace: the forward's modules in order (wte, wpe, per block its Linears, lm_head), then the backward's in
// reverse. Fetching module m at its use (fetch_sub_module):
//   if m is neither gathered nor in flight, one all-gather of m's parameters (p·n_m bytes) on the all-gather stream;
//   then the prefetch: walking the trace on from the furthest point already considered, modules not yet gathered nor
//   in flight are added while the elements in flight stay below zero.stage3_prefetch_bucket_size, and gathered in one
//   coalesced all-gather (allgather_coalesced: the partitions copied into one flat buffer first, 2·p·n/N on the
//   all-gather stream);
//   the compute stream waits for m's all-gather; a module gathered in a coalesced call is then copied out of the flat
//   buffer into its parameters (2·p·n_m, on the compute stream).
// The hooks fetch at the granularity stepsim's step exposes: a block's modules are fetched, in trace order, at the
// block's pre-forward (pre-backward), so the compute stream waits for all of them before the block's first kernel.
// Release after use (release_sub_module, decided here at the end of the block): a module is freed unless it is used
// again within zero.stage3_max_reuse_distance elements of the trace (the parameters of the modules in between) —
// with DeepSpeed's default of 1e9 the modules of the last blocks stay gathered from forward to backward, and every
// module of a model under 0.5 B parameters does.
// Gradients (the hooks on every parameter's AccumulateGrad, every micro-step): the gradient copied into the bucket
// (2·p·n); a gradient that would overflow zero.reduce_bucket_size elements first reduces the bucket: on the
// reduce-and-partition stream (with zero.overlap_comm, DeepSpeed's default for stage 3; without it on the compute
// stream), after waiting for the compute stream: the bucket's partitions interleaved by rank (2B), divided by N (2B),
// reduce-scattered (reduce_scatter_coalesced: B bytes), the rank's shard copied into its fp32 gradient partition
// (2B/N; 3B/N after the first micro-step). The epilogue at the end of backward reduces the last bucket, and the
// compute stream waits for the stream.
// The step: the global norm and its all-reduce (4 bytes), the optimizer on the fp32 partition (n/N), its copy into the
// parameters' partition (2·p·n/N), and one coalesced all-gather of the persistent parameters (p·n_persist).
// Memory: estimateZero3Memory (ShardedMemory.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/workload/ParallelSchedule.hpp"
#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/ShardComm.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

class Zero3Schedule final : public ParallelSchedule {
public:
    static constexpr std::uint8_t kAllGatherStream = 1, kReduceStream = 2;

    Zero3Schedule(const StepContext& c, ProgramBuilder& b);

    std::vector<StreamInfo> streams() const override;
    std::vector<ProcessGroup> groups() const override;
    void beginStep(int) override;
    void beginBackward(bool last) override;
    void gradReady(std::size_t param) override;
    void endBackward() override;
    void afterOptimizer() override;
    void beforeForward() override;
    void beforeLayerForward(int l) override;
    void afterLayerForward(int l) override;
    void afterForward() override;
    void beforeHeadBackward() override;
    void beforeLayerBackward(int l) override;
    void afterLayerBackward(int l) override;
    bool autogradAccumulates() const override { return false; }
    double optimizerShare() const override { return 1.0 / double(world_); }
    void report(Expansion& out) const override;

    // Elements of the partitioned modules kept gathered from their forward use to their backward one (reuse within
    // zero.stage3_max_reuse_distance), and of the persistent parameters.
    double keptNumel() const;
    double persistentNumel() const { return persistent_; }

private:
    struct Module {
        std::string name;
        double numel = 0;
        int layer = -1;           // its block, −1 the root
        bool gathered = false;
        bool coalesced = false;   // gathered in a coalesced call: copied out at use
        std::optional<std::uint32_t> in_flight;
        std::vector<std::size_t> uses;  // its positions in the trace
    };

    void fetch(std::size_t module);
    void release(std::size_t module);
    void useLayer(int layer, bool forward);
    void releaseLayer(int layer);
    bool reusedWithin(std::size_t module, std::size_t from) const;
    void reduceBucket();

    const StepContext& c_;
    ProgramBuilder& b_;
    ShardComm comm_;
    int world_;
    bool overlap_;
    std::uint8_t gather_stream_, reduce_stream_;
    std::vector<Module> modules_;
    std::vector<std::size_t> trace_;       // module indices, forward then backward
    std::vector<std::size_t> module_of_;   // parameter → module (npos: persistent)
    double persistent_ = 0, total_ = 0;
    std::size_t pos_ = 0;       // next trace position to be used
    std::size_t queue_ = 0;     // next trace position the prefetch considers
    double in_flight_ = 0;      // elements gathered ahead and not yet used
    double bucket_elems_ = 0;
    int bucket_index_ = 0;
    int micro_ = 0;
    bool last_ = false;
};

}  // namespace stepsim
