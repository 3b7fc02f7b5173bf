#pragma once
// HSDP (hybrid sharding: fully_shard on a 2-D device mesh (replicate, shard), PyTorch's
// torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_reduce): FSDP2's schedule (Fsdp2Schedule.hpp) with
// the parameters sharded over the G = cluster.gpus_per_node ranks of a node and replicated across the nodes.
//   Process groups: slot 0, the shard group (the G ranks of the rank's node: its all-gathers and reduce-scatters on
//   NVLink); slot 1, the replica group (the rank's peers of the same local index on every node: one per local rank).
//   After a group's reduce-scatter (r·n bytes on the shard group), the all-reduce stream waits for the reduce-scatter
//   stream and all-reduces the reduced shard, r·n/G bytes, over the replica group (ReduceOp.AVG); the shard's cast to
//   the parameters' dtype and its accumulation run after it on the all-reduce stream. Every micro-batch's reduction
//   all-reduces (set_requires_all_reduce is not modelled).
// Everything else is FSDP2's, with N = G: the memory of estimateFsdp2Memory (sharded over the node), the optimizer on
// 1/G of the parameters. On one node there is no replica: the loader refuses hsdp there (it is fsdp2).
#include "sim/workload/Fsdp2Schedule.hpp"

namespace stepsim {

class HsdpSchedule final : public Fsdp2Schedule {
public:
    static constexpr std::uint8_t kAllReduceStream = 4;

    // `shard.world`: the shard group's size G; `nodes`: the replicas.
    HsdpSchedule(const StepContext& shard, const StepContext& compute, ProgramBuilder& b, int nodes);

    std::vector<StreamInfo> streams() const override;
    std::vector<ProcessGroup> groups() const override;
    std::vector<int> rankGroups(int rank) const override;

protected:
    std::uint8_t afterReduceScatter(const std::string& group, double bytes) override;

private:
    int shard_ranks_, nodes_;
    DType reduce_;
};

}  // namespace stepsim
