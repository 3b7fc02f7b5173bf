#pragma once
// Collectives: the barrier of their member ranks, then their data as flows on the flow network.
//
// An NCCL kernel becomes resident on a rank when it reaches its stream head, or, if a compute kernel holds the SMs
// then, when that kernel ends (NCCL kernels start in the last µs of the kernel running when they become ready, as
// H200 traces show), and stays, spinning, until the collective ends: the barrier that breaks overlap windows. The
// collective starts when its last member arrives (the i-th call of a process group on each member is one instance),
// pays the latency α of the cost model's estimate (CostModel::collective), then moves its data as the flows of the
// chosen algorithm (CollectiveAlgorithms.hpp: rail-aligned ring, tree, NVLS, ...), each bounded by its share of the
// calibrated bus bandwidth (÷ comm_slowdown while its source GPU computes) and sharing links max-min fairly
// (FlowNetwork.hpp). So a collective alone reproduces its calibration exactly. It ends with its last flow. A link
// straggler (Jitter::linkFactor) divides the bound of the flows its rank sends by its factor for the step.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sim/cost/CostModel.hpp"
#include "sim/engine/EngineConfig.hpp"
#include "sim/engine/EngineContext.hpp"
#include "sim/net/CollectiveAlgorithms.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/net/FlowNetwork.hpp"

namespace stepsim {

class GpuCompute;
class Jitter;
class LinkUsage;
class Streams;
class Transfers;

class Collectives {
public:
    Collectives(EngineContext& ctx, const CostModel& cost, const Fabric& fabric, const EngineConfig& cfg,
                Streams& streams, GpuCompute& gpus, Jitter& jitter, Transfers& transfers, LinkUsage* usage);

    // The collective `op` at the head of stream `slot` arrives: its NCCL kernel is resident from now.
    void arrive(std::uint32_t slot, const Op& op);
    // kAlphaDone: collective `id` has paid its latency and starts its flows.
    void startFlows(std::uint32_t id);
    // kFlowDone: the event is the flow's latest completion, and the flow ends.
    bool current(FlowId f, std::uint32_t version) const { return net_.active(f) && net_.version(f) == version; }
    void flowDone(FlowId f);
    // A host transfer's data (Transfers.hpp) as a flow on the same network: its end calls Transfers::flowDone(id).
    void startTransferFlow(const Route& route, double bytes, double cap_Bps, std::uint32_t rank, std::uint32_t id);
    // The GPU went from idle to computing or back: the caps of the flows it sources change.
    void computeChanged(int gpu) {
        if (!gpu_flows_[gpu].empty()) refreshFlowCaps(gpu);
    }

private:
    // One collective as its member ranks run it.
    struct Instance {
        int group = 0;
        std::uint32_t seq = 0;
        int arrived = 0;
        std::vector<std::uint32_t> member_slot;  // by position in the group
        Time first_arrival, start;
        CollectiveEstimate est;
        const CollectiveCall* call = nullptr;
        int step = 0;
        int flows_left = 0;
        std::array<double, kKernelClasses> transfer{};  // compute beside it while it moves data: transferSlowdown
    };

    // The instance the `pos`-th member of `group` joins with its next call.
    std::uint32_t instanceFor(int group, int pos, const CollectiveCall& call, int step);
    void finish(std::uint32_t id);
    double flowCap(double base_Bps, int gpu, int step);
    void refreshFlowCaps(int gpu);
    void rescheduleFlows();
    // A reduced run's flows (Symmetry.hpp): the specs of every member merged per (representative source, bytes,
    // bound), each with the routes of all its members.
    struct Merged {
        int src = 0;
        double bytes = 0.0, cap_Bps = 0.0;
        Route route;
    };
    std::vector<Merged> mergeMirrors(const std::vector<FlowSpec>& specs) const;
    // (group, kind, algorithm, bytes, bus bandwidth, bus factor) → its merged flows.
    using MergedKey = std::tuple<int, int, std::string, double, double, double>;
    std::map<MergedKey, std::vector<Merged>> merged_;
    void addFlow(std::uint32_t id, int src, const Route& route, double bytes, double cap_Bps);

    EngineContext& ctx_;
    const CostModel& cost_;
    const Fabric& fabric_;
    const EngineConfig& cfg_;
    Streams& streams_;
    GpuCompute& gpus_;
    Jitter& jitter_;
    Transfers& transfers_;
    LinkUsage* usage_;  // null unless link usage is recorded
    FlowNetwork net_;
    std::vector<std::vector<int>> group_pos_;                 // [group][rank] → position or -1
    std::vector<std::vector<std::uint32_t>> group_next_seq_;  // [group][position]
    std::vector<std::vector<std::uint32_t>> group_instances_; // [group][seq] → instance
    std::vector<int> group_nodes_;                            // [group] → nodes its ranks span
    std::vector<int> group_simulated_;                        // [group] → its simulated members
    std::vector<Instance> instances_;
    static constexpr std::uint32_t kTransferFlow = 1u << 31;
    std::vector<std::uint32_t> flow_inst_;                    // flow → collective instance, or kTransferFlow | id
    std::vector<double> flow_base_cap_;                       // flow → its bound alone (B/s)
    std::vector<std::vector<FlowId>> gpu_flows_;              // [gpu] → flows sourced there
};

}  // namespace stepsim
