#pragma once
// Prices kernels and collectives from a HardwareProfile.
//
// Kernels (per GPU):
//   GEMM       GemmModel.hpp, against the dense peak of the compute dtype;
//   attention  FLOPs / (peak · attention efficiency) (flash attention; causal FLOPs counted once);
//   memory     max(min_kernel, fixed(kind) + bytes / (HBM · efficiency(kind)))  (streaming, roofline-bound;
//              per kind of kernel as calibrated: elementwise, casts, norms, the fused optimizer).
// Collectives follow NCCL's own model (src/graph/tuning.cc), time = latency + S·F / busbw, where F is
// nccl-tests' bus factor (all_reduce 2(n−1)/n; all_gather, reduce_scatter, alltoall (n−1)/n; others 1),
// so busbw is what nccl-tests reports. The (algorithm, protocol) pair is the argmin over the candidates
// NCCL would consider, unless the scenario forces one:
//   Ring:  latency = base[p] + steps·hop[p],  steps = 2(n−1) for all_reduce, n−1 otherwise;
//          busbw = ring_busbw · proto_bw_fraction[p] (intra-node), limited by the NIC across nodes;
//   NVLS:  all_reduce on one NVSwitch node, Simple only: latency 23 µs, busbw = nvls_busbw (FACTS.md).
// A measured fit for the same (op, ranks, nodes, algo, proto) replaces the model: its segment covering S
// gives α and busbw; a size outside the measured range is answered by the nearest segment and flagged.
#include <string>

#include "sim/cost/HardwareProfile.hpp"
#include "sim/scenario/Scenario.hpp"
#include "sim/workload/Program.hpp"

namespace stepsim {

double busFactor(CollectiveKind kind, int ranks);
const char* collectiveName(CollectiveKind kind);

struct CollectiveEstimate {
    double alpha_s = 0.0;
    double busbw_Bps = 0.0;   // bus bandwidth the collective reaches alone
    double factor = 1.0;      // bus factor F: bytes each rank moves = S·F
    std::string algo, proto;
    bool measured = false;    // from a calibrated fit
    bool in_domain = true;    // false: outside the measured size range
    double seconds(double bytes) const { return alpha_s + (busbw_Bps > 0 ? bytes * factor / busbw_Bps : 0.0); }
};

class CostModel {
public:
    CostModel(const HardwareProfile& profile, NcclSpec nccl, bool nvls_capable_node);

    const HardwareProfile& profile() const { return profile_; }
    double peakFlops(DType dtype) const;

    double gemmSeconds(const GemmShape& s, DType dtype, bool* in_domain = nullptr) const;
    double attentionSeconds(double flops, bool backward, DType dtype) const;
    double memorySeconds(double bytes, MemKind kind = MemKind::elementwise) const;
    // Prices a kernel op (work_s) by its class; returns false if a query fell outside measured domains.
    bool price(Op& op, DType dtype) const;

    CollectiveEstimate collective(CollectiveKind kind, int ranks, int nodes, double bytes) const;

private:
    const HardwareProfile& profile_;
    NcclSpec nccl_;
    bool nvls_capable_;
};

}  // namespace stepsim
