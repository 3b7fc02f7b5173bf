#pragma once
// Prices kernels and collectives from a HardwareProfile.
//
// Kernels (per GPU):
//   GEMM       GemmModel.hpp, against the dense peak of the compute dtype;
//   attention  FLOPs / (peak · attention efficiency) (flash attention; causal FLOPs counted once);
//   memory     max(min_kernel, fixed(kind) + bytes / (HBM · efficiency(kind)))  (streaming, roofline-bound;
//              per kind of kernel as calibrated: elementwise, casts, norms, the fused optimizer).
// Collectives follow NCCL's own model (src/graph/tuning.cc, NCCL 2.19–2.21), time = latency + S·F / busbw,
// where F is nccl-tests' bus factor (all_reduce 2(n−1)/n; all_gather, reduce_scatter, alltoall (n−1)/n;
// others 1), so busbw is what nccl-tests reports. The (algorithm, protocol) pair is the argmin over the
// candidates NCCL considers for this op, rank count n and node count N (L = ⌈n/N⌉ ranks per node), unless the
// scenario forces one (nccl.algo, nccl.proto, nccl.nvls; a forced pair that does not exist for the op falls
// back to the argmin, flagged out of domain). p ∈ {LL, LL128, Simple}; frac[p] = profile proto_bw_fraction.
//   Bandwidths: intra = nccl.ring_busbw (one node's NVLink ring); inter = min(nics_per_node, L) · nic, the NIC
//   rate nic = min(profile links.nic_gbps (achieved), network.nic_gbps / 8 (line rate)). NCCL runs one ring
//   channel per NIC with rail-aligned inter-node hops (PXN), so a node injects nics·nic and a ring's busbw is
//   min(intra, inter) (8 × 48 GB/s = 384 on 8×400G HGX nodes).
//   Ring   (all_reduce, all_gather, reduce_scatter, broadcast):
//          latency = ring_base[p] + (steps − isteps)·nvlink_hop[p] + isteps·net_hop[p],
//          steps = 2(n−1) / isteps = 2(N−1) for all_reduce, n−1 / N−1 otherwise (broadcast: the chain's
//          first chunk crossing n−1 hops); busbw = min(intra, inter if N > 1) · frac[p].
//   Tree   (all_reduce; NCCL's double binary tree, nodes ≥ 1):
//          latency = tree_base[p] + 2·((L−1)·tree_nvlink_hop[p] + ⌊log2 N⌋·tree_net_hop[p]), tree hops from
//          tuning.cc hwLat (NVLink .6/1.25/4, NET 5/8.5/14 µs); NCCL's tree bus bandwidth
//          B = 0.92·min(intra, inter if N > 1), LL: B/3.8, LL128: B·(7/9 on one node, 120/128 across nodes);
//          algorithm bandwidth B/2, times treeCorrectionFactor[p][log2(S/64)] below 128 MiB (tuning.cc);
//          in nccl-tests terms busbw = F·B/2·correction.
//   NVLS   (all_reduce on one NVSwitch node, Simple only; nccl.nvls auto → where the node has it):
//          latency 23 µs (tuning.cc hwLat[NVLINK][NVLS]), busbw = nccl.nvls_busbw (FACTS.md: ~480 on 8×H100).
//          NVLS_Tree (multi-node NVLS) is not modelled: across nodes NVLS is not a candidate.
//   P2P    (alltoall, sendrecv; NCCL's grouped send/recv, Simple, and LL while each peer's message is
//          ≤ 16 KiB, NCCL_P2P_LL_THRESHOLD): latency = ring_base[p] + hops·hop[p], hops = n−1 (alltoall) or 1,
//          hop = net_hop when the collective spans nodes, else nvlink_hop;
//          alltoall busbw = min(intra, inter·(n−1)/(L·(n−L))) (a node's off-node bytes L·S·(n−L)/n cross its
//          NICs), sendrecv busbw = intra on one node, min(intra, nic) across nodes; both · frac[p].
//   Not modelled: NCCL's ring Simple multi-node plateau correction, net overhead floor, PAT, CollNet,
//   channel counts (implicit: the bandwidths above are all channels together).
// A measured fit for the same (op, ranks, nodes, algo, proto) replaces the model: its segment covering S
// gives α and busbw; a size outside the measured range is answered by the nearest segment and flagged.
#include <map>
#include <string>
#include <tuple>

#include "sim/cost/HardwareProfile.hpp"
#include "sim/base/BusBandwidth.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/base/Program.hpp"

namespace stepsim {


struct CollectiveEstimate {
    double alpha_s = 0.0;
    double busbw_Bps = 0.0;   // bus bandwidth the collective reaches alone
    double factor = 1.0;      // bus factor F: bytes each rank moves = S·F
    std::string algo, proto;
    bool measured = false;    // from a calibrated fit
    bool in_domain = true;    // false: outside the measured size range
    double seconds(double bytes) const { return alpha_s + (busbw_Bps > 0 ? bytes * factor / busbw_Bps : 0.0); }
};

// One pass (NormPoint's forward_us, backward_us or weight_grad_us) of a norm grid at rows × hidden, µs: linear in
// log time over log rows and log hidden between the measured sizes around it, the edge slopes carried on beyond the
// grid (held between 0 and 1). `in_domain`: within a factor 2 of the grid's sizes.
double normGridUs(const std::vector<NormPoint>& grid, double NormPoint::*pass, double rows, double hidden,
                  bool* in_domain = nullptr);

class CostModel {
public:
    // `network` gives NICs per node and their line rate (the default: 8 × 400 Gb/s, SCENARIO.md's default).
    CostModel(const HardwareProfile& profile, NcclSpec nccl, bool nvls_capable_node,
              const NetworkSpec& network = NetworkSpec{});
    // The model keeps a reference to the profile: a temporary one would dangle.
    CostModel(HardwareProfile&& profile, NcclSpec nccl, bool nvls_capable_node,
              const NetworkSpec& network = NetworkSpec{}) = delete;

    const HardwareProfile& profile() const { return profile_; }
    double peakFlops(DType dtype) const;

    double gemmSeconds(const GemmShape& s, DType dtype, bool* in_domain = nullptr) const;
    // torch._scaled_mm by its variant, the profile's gemm key ("fp8_tensorwise", "fp8_rowwise_fast_accum", ...; absent:
    // the "fp8" grid, out of domain), against the FP8 dense peak.
    double scaledMmSeconds(const GemmShape& s, const std::string& variant, bool* in_domain = nullptr) const;
    // Causal attention of `flops` FLOPs; `shape` is {m = batch·heads, n = seq, k = head_dim}.
    double attentionSeconds(double flops, bool backward, DType dtype, const GemmShape& shape = {},
                            bool* in_domain = nullptr) const;
    double memorySeconds(double bytes, MemKind kind = MemKind::elementwise) const;
    // A norm kernel (isNormKind) from the profile's grid for its norm and dtype, else by its bytes and kind.
    double normSeconds(const Op& op, bool* in_domain = nullptr) const;
    // Prices a kernel op (work_s) by its class, and a GEMM's slowdown beside NCCL (beside_nccl) and launch gaps,
    // alone and beside NCCL moving data (gap_s, gap_transfer_s), by its shape when the profile measured one near it;
    // returns false if a query fell outside measured domains.
    bool price(Op& op, DType dtype) const;

    CollectiveEstimate collective(CollectiveKind kind, int ranks, int nodes, double bytes) const;

private:
    // The argmin over NCCL's candidates (CostModel.cpp).
    struct Candidates;
    // A calibrated fit for exactly this case, into `best`; false if the profile has none.
    bool measuredCollective(CollectiveEstimate& best, CollectiveKind kind, int ranks, int nodes, double bytes,
                            const std::string& want_algo, const std::string& want_proto) const;
    // NCCL's model: the candidates of ring-style collectives (Ring, Tree, NVLS), and of P2P ones.
    void ringTreeNvls(Candidates& c, CollectiveKind kind, int n, int nodes) const;
    void p2p(Candidates& c, CollectiveKind kind, int n, int nodes) const;
    double gemmUncached(const GemmShape& s, DType dtype, bool& in_domain) const;
    // A GEMM's own slowdown beside NCCL and launch gaps (s) from the profile's lists by shape; 0 where none is near.
    struct ByShape {
        double beside_nccl = 0.0, gap_s = 0.0, gap_transfer_s = 0.0;
    };
    ByShape gemmByShape(const GemmShape& s) const;

    const HardwareProfile& profile_;
    NcclSpec nccl_;
    bool nvls_capable_;
    NetworkSpec network_;
    int nics_per_node_;
    double nic_gbps_;  // achieved per NIC, GB/s
    // A step prices the same few GEMM shapes on every layer and rank; each is worked out once (the anchored
    // model scans every measured point). Not shared between threads: one CostModel per simulation.
    mutable std::map<std::tuple<long, long, long, DType>, std::pair<double, bool>> gemm_memo_;
    mutable std::map<std::tuple<long, long, long>, ByShape> shape_memo_;  // gemmByShape
};

}  // namespace stepsim
