#pragma once
// What the sharded data-parallel schedules share (FSDP2, HSDP, FSDP1, ZeRO-1/2/3; one file each beside this one):
//   the model's parameter groups as the wrappers flatten them: one group per transformer block and the root (the
//     embeddings, the final norm and the LM head), shardGroups();
//   the kernels the wrapper launches itself (one eager op's host cost, launch.eager_host) and its NCCL collectives
//     (an NCCL issue's host cost, launch.nccl_host), ShardComm.
// NCCL runs one communicator's kernels one after the other whatever stream they are launched on (its strong-stream
// chain of CUDA events; NVIDIA/nccl#574): ShardComm makes a collective's stream first wait for the previous
// collective of the same process group when that one ran on another stream.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

// "fp32", "bf16", "fp16", "fp8": the collective's dtype as the profile names it.
const char* dtypeName(DType d);

struct ShardGroup {
    std::string name;                 // "h.3" or "root"
    double numel = 0;                 // parameters (unsharded)
    std::vector<std::size_t> params;  // indices into StepContext::params
};

// Blocks 0 … L−1, then the root.
std::vector<ShardGroup> shardGroups(const StepContext& c);

// The blocks' parameter counts and the root's.
struct GroupSizes {
    double largest_block = 0, root = 0, blocks = 0;
    double total() const { return root + blocks; }
};
GroupSizes groupSizes(const StepContext& c);

class ShardComm {
public:
    ShardComm(const StepContext& c, ProgramBuilder& b);

    // A kernel the wrapper launches (a copy, a cast, a division), on `stream`.
    void kernel(const std::string& name, double bytes, MemKind kind, std::uint8_t stream);
    // A collective on `stream` in process-group slot `group`; returns the event recorded after it on its stream.
    std::uint32_t collective(const std::string& name, CollectiveKind kind, double bytes, DType dtype,
                             std::uint8_t stream, int group = 0);
    ProgramBuilder& builder() { return b_; }
    double eagerHost() const { return eager_s_; }

private:
    ProgramBuilder& b_;
    double eager_s_, nccl_s_;
    std::map<int, std::pair<std::uint8_t, std::uint32_t>> last_;  // per group: the last collective's stream and end
};

}  // namespace stepsim
