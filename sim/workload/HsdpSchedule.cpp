#include "sim/workload/HsdpSchedule.hpp"

#include <fmt/format.h>

namespace stepsim {

HsdpSchedule::HsdpSchedule(const StepContext& shard, const StepContext& compute, ProgramBuilder& b, int nodes)
    : Fsdp2Schedule(shard, compute, b), shard_ranks_(shard.world), nodes_(nodes), reduce_(fsdpReduceDtype(shard.sc)) {}

std::vector<StreamInfo> HsdpSchedule::streams() const {
    std::vector<StreamInfo> s = Fsdp2Schedule::streams();
    s.push_back({StreamKind::comm, "nccl:replicate all_reduce"});
    return s;
}

// The shard groups (one per node), then the replica groups (one per local rank).
std::vector<ProcessGroup> HsdpSchedule::groups() const {
    std::vector<ProcessGroup> out;
    for (int n = 0; n < nodes_; ++n) {
        ProcessGroup g{fmt::format("shard (node {})", n), {}};
        for (int l = 0; l < shard_ranks_; ++l) g.ranks.push_back(n * shard_ranks_ + l);
        out.push_back(std::move(g));
    }
    for (int l = 0; l < shard_ranks_; ++l) {
        ProcessGroup g{fmt::format("replicate (local rank {})", l), {}};
        for (int n = 0; n < nodes_; ++n) g.ranks.push_back(n * shard_ranks_ + l);
        out.push_back(std::move(g));
    }
    return out;
}

std::vector<int> HsdpSchedule::rankGroups(int rank) const {
    return {rank / shard_ranks_, nodes_ + rank % shard_ranks_};
}

std::uint8_t HsdpSchedule::afterReduceScatter(const std::string& group, double bytes) {
    ProgramBuilder& b = comm().builder();
    b.wait(kAllReduceStream, b.record(kReduceScatterStream));
    comm().collective(group + " hsdp all_reduce (replicas)", CollectiveKind::all_reduce, bytes, reduce_,
                      kAllReduceStream, 1);
    return kAllReduceStream;
}

}  // namespace stepsim
