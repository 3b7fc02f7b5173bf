#pragma once
// The oracles' hardware: a profile of round numbers under which a step's time follows from closed forms, and the
// closed forms themselves, written from the model's documented formulas (docs/architecture.md, "Cost models" and
// "The engine's model"), not from the code that prices them.
//
//   GEMM         t = 2mnk / P                  P = 100 TFLOP/s (bf16, fp16; fp8 200; fp32 10): e_max 1, k_half 0,
//                                              no overhead, a 1×1 tile on one SM (no wave quantization), no grid
//   attention    t = FLOPs / P                 efficiency 1 forward and backward, no measured points
//   memory-bound t = bytes / H                 H = 1000 GB/s, efficiency 1, no fixed cost, no minimum, no norm grid
//   collective   t = α + S·F(kind, n) / β      α = 10 µs, β = 100 GB/s for every op, rank count and node count
//                                              (a measured segment over every size), F nccl-tests' bus factor
//   host         every launch, hook and optimizer tensor costs nothing; no launch gaps
//   interference none (every slowdown 1, no lag); no power model; jitter off in every scenario
// β is far below the node's NVLink capacity and the scenarios' NICs (oracleScenario: 3200 Gb/s), so a collective's flows run at their caps whatever else is
// on the links: within a node each collective takes its closed-form time, beside others or not.
#include <string>
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/cost/HardwareProfile.hpp"
#include "sim/run/Simulate.hpp"

namespace stepsim::oracles {

inline constexpr double kPeak = 100e12;    // FLOP/s, bf16 and fp16
inline constexpr double kHbm = 1000e9;     // B/s
inline constexpr double kAlpha = 10e-6;    // s, every collective
inline constexpr double kBusBw = 100e9;    // B/s, every collective
inline constexpr double kH2d = 50e9;       // B/s, pinned host-to-device copies
inline constexpr double kPageable = 10e9;  // B/s, pageable copies
inline constexpr double kStage = 20e9;     // B/s, async checkpoint staging (pageable)

// `peak`: the bf16/fp16 GEMM rate P (fp8 2P, fp32 P/10).
inline HardwareProfile roundProfile(double peak = kPeak) {
    HardwareProfile p;
    p.name = "round-numbers";
    p.source = "tests/oracles";
    p.gpu.model = "round";
    p.gpu.sms = 1;
    p.gpu.hbm_gbps = kHbm / 1e9;
    p.gpu.peak_tflops_bf16 = p.gpu.peak_tflops_fp16 = peak / 1e12;
    p.gpu.peak_tflops_fp8 = 2 * peak / 1e12;
    p.gpu.peak_tflops_fp32 = peak / 10 / 1e12;
    for (const char* dtype : {"bf16", "fp16", "fp32", "fp8", "fp8_tensorwise", "fp8_rowwise"}) {
        GemmEfficiency& e = p.gemm[dtype];
        e.max_efficiency = 1.0;
        e.k_half = 0.0;
        e.tile_m = e.tile_n = 1;
        e.overhead_us = 0.0;
    }
    p.memory.read_write_efficiency = 1.0;
    p.memory.min_kernel_us = 0.0;
    p.attention.fwd_efficiency = p.attention.bwd_efficiency = 1.0;
    p.interference.compute_slowdown = 1.0;
    p.interference.comm_slowdown = 1.0;
    p.jitter = JitterRates{0, 0, 0, 0, 0};
    p.links.nic_gbps = 400.0;
    p.links.pcie_h2d_gbps = kH2d / 1e9;
    p.links.pcie_pageable_gbps = kPageable / 1e9;
    for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv"})
        for (int ranks : {2, 4, 8, 16, 32})
            for (int nodes : {1, 2, 4})
                if (nodes <= ranks)
                    p.collectives.push_back({op, ranks, nodes, "auto", "auto", "bf16",
                                             {{0.0, 1e18, kAlpha * 1e6, kBusBw / 1e9, 0.0}}, 0.0});
    p.io.copy_alpha_us = 0.0;
    p.io.h2d_pinned_gbps = kH2d / 1e9;
    p.io.h2d_pageable_gbps = kPageable / 1e9;
    p.io.d2h_pinned_gbps = kH2d / 1e9;
    p.io.d2h_pageable_gbps = kPageable / 1e9;
    p.io.storage_write_gbps = 2.0;
    p.io.dcp_sync_write_gbps = 2.0;
    p.io.dcp_stage_gbps = kStage / 1e9;
    p.io.dcp_stage_pinned_gbps = 2 * kStage / 1e9;
    p.io.dcp_async_write_gbps = 2.0;
    return p;
}

// nccl-tests' bus factor F(kind, n) (doc/PERFORMANCE.md).
inline double busFactor(CollectiveKind kind, int n) {
    switch (kind) {
        case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
        case CollectiveKind::all_gather:
        case CollectiveKind::reduce_scatter:
        case CollectiveKind::alltoall: return double(n - 1) / n;
        default: return 1.0;
    }
}

// A collective's closed-form time under roundProfile.
inline double collectiveSeconds(CollectiveKind kind, int ranks, double bytes) {
    return kAlpha + bytes * busFactor(kind, ranks) / kBusBw;
}

// The scenario's defaults with jitter off; `gpus` GPUs on one HGX H200 node, NICs of 3200 Gb/s (400 GB/s) so that no
// NIC is narrower than β. Across nodes a flow also crosses the PCIe Gen5 x16 links between each GPU and its NIC
// (55 GB/s, below β): there a collective takes α + S·F/min(β, 55 GB/s) (HsdpOracleTest.cpp).
inline Scenario oracleScenario(int gpus) {
    Scenario sc;
    sc.name = "oracle";
    sc.cluster.gpus_per_node = gpus;
    sc.cluster.network.nic_gbps = 3200;
    sc.model.layers = 4;
    sc.model.hidden = 1024;
    sc.model.heads = 8;
    sc.model.vocab = 8192;
    sc.model.seq_len = 1024;
    sc.training.micro_batch = 2;
    sc.jitter.enabled = false;
    sc.sim.steps = 3;
    return sc;
}

inline Simulation simulateRound(const Scenario& sc) {
    static const HardwareProfile profile = roundProfile();
    return simulate(sc, profile, false, 1);
}

inline Simulation simulateOn(const Scenario& sc, const HardwareProfile& profile) {
    return simulate(sc, profile, false, 1);
}

// Σ work_s of the kernels `p` runs in `step` (every stream).
inline double kernelSeconds(const Program& p, int step) {
    double s = 0;
    for (const Op& op : p.ops)
        if (op.kind == OpKind::kernel && op.step == step) s += op.work_s;
    return s;
}

}  // namespace stepsim::oracles
