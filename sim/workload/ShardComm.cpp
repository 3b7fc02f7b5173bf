#include "sim/workload/ShardComm.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace stepsim {

const char* dtypeName(DType d) {
    switch (d) {
        case DType::fp32: return "fp32";
        case DType::bf16: return "bf16";
        case DType::fp16: return "fp16";
        case DType::fp8: return "fp8";
    }
    return "fp32";
}

std::vector<ShardGroup> shardGroups(const StepContext& c) {
    std::vector<ShardGroup> g(std::size_t(std::max(c.t.L, 0)) + 1);
    for (int l = 0; l < c.t.L; ++l) g[std::size_t(l)].name = fmt::format("h.{}", l);
    g.back().name = "root";
    for (std::size_t i = 0; i < c.params.size(); ++i) {
        const ParamInfo& p = c.params[i];
        ShardGroup& to = p.layer < 0 ? g.back() : g[std::size_t(p.layer)];
        to.numel += p.numel;
        to.params.push_back(i);
    }
    return g;
}

GroupSizes groupSizes(const StepContext& c) {
    GroupSizes s;
    const std::vector<ShardGroup> g = shardGroups(c);
    for (std::size_t i = 0; i + 1 < g.size(); ++i) {
        s.blocks += g[i].numel;
        s.largest_block = std::max(s.largest_block, g[i].numel);
    }
    s.root = g.back().numel;
    return s;
}

ShardComm::ShardComm(const StepContext& c, ProgramBuilder& b) : b_(b) {
    const LaunchRates& launch = c.cost.profile().launch;
    eager_s_ = launch.eager_host.median_us * 1e-6;
    nccl_s_ = launch.nccl_host.median_us * 1e-6;
}

void ShardComm::kernel(const std::string& name, double bytes, MemKind kind, std::uint8_t stream) {
    b_.mem(name, bytes, kind, KernelClass::copy);
    b_.last().stream = stream;
    b_.last().host_s = eager_s_;
}

std::uint32_t ShardComm::collective(const std::string& name, CollectiveKind kind, double bytes, DType dtype,
                                    std::uint8_t stream, int group) {
    const auto prev = last_.find(group);
    if (prev != last_.end() && prev->second.first != stream) b_.wait(stream, prev->second.second);
    b_.collective(name, kind, bytes, dtypeName(dtype), stream, group);
    b_.last().host_s = nccl_s_;
    const std::uint32_t end = b_.record(stream);
    last_[group] = {stream, end};
    return end;
}

}  // namespace stepsim
