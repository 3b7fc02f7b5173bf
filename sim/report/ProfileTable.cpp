#include "sim/report/ProfileTable.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/base/Statistics.hpp"
#include "sim/cost/CostModel.hpp"

namespace stepsim {
namespace {

std::string pct(double x) { return fmt::format("{:.0f}%", 100 * x); }

// One row of the rate table: what, the profile's value, the datasheet's, a note.
void row(std::string& s, const std::string& what, const std::string& measured, const std::string& peak,
         const std::string& note) {
    s += fmt::format("  {:<34} {:>16} {:>16}  {}\n", what, measured, peak, note);
}

// GEMMs by dtype, attention, HBM streaming and PyTorch's memory-bound kernels by kind, against the datasheet.
void computeRates(std::string& s, const HardwareProfile& p) {
    row(s, "rate", "profile", "datasheet", "fraction of datasheet / error");
    for (const auto& [dt, e] : p.gemm) {
        const double peak = dt == "fp8" ? p.gpu.peak_tflops_fp8 : dt == "fp32" ? p.gpu.peak_tflops_fp32
                                                                                 : dt == "fp16" ? p.gpu.peak_tflops_fp16
                                                                                                : p.gpu.peak_tflops_bf16;
        double best = 0;
        for (const auto& q : e.points) best = std::max(best, q.tflops);
        row(s, "GEMM " + dt + " max (TFLOP/s)", fmt::format("{:.0f}", e.max_efficiency * peak), fmt::format("{:.0f}", peak),
            fmt::format("{} of peak; k_half {:.0f}, tile {}x{}, overhead {:.1f} us, model error {:.1f}%", pct(e.max_efficiency),
                        e.k_half, e.tile_m, e.tile_n, e.overhead_us, 100 * e.rel_error));
        if (!e.points.empty())
            row(s, "GEMM " + dt + " best measured", fmt::format("{:.0f}", best), fmt::format("{:.0f}", peak),
                fmt::format("{} of peak, {} shapes", pct(best / peak), e.points.size()));
    }
    row(s, "attention fwd (TFLOP/s)", fmt::format("{:.0f}", p.attention.fwd_efficiency * p.gpu.peak_tflops_bf16),
        fmt::format("{:.0f}", p.gpu.peak_tflops_bf16), pct(p.attention.fwd_efficiency));
    row(s, "attention bwd (TFLOP/s)", fmt::format("{:.0f}", p.attention.bwd_efficiency * p.gpu.peak_tflops_bf16),
        fmt::format("{:.0f}", p.gpu.peak_tflops_bf16), pct(p.attention.bwd_efficiency));
    row(s, "HBM streaming (GB/s)", fmt::format("{:.0f}", p.memory.read_write_efficiency * p.gpu.hbm_gbps),
        fmt::format("{:.0f}", p.gpu.hbm_gbps), pct(p.memory.read_write_efficiency));
    // PyTorch's memory-bound kernels by kind (casts, norms, the loss's log-softmax, the optimizer steps, ...): the
    // rate each streams its bytes at, after a fixed cost per launch.
    for (const auto& [kind, k] : p.memory.kernels)
        row(s, "  " + kind + " (GB/s)", fmt::format("{:.0f}", k.efficiency * p.gpu.hbm_gbps), fmt::format("{:.0f}", p.gpu.hbm_gbps),
            fmt::format("{} of HBM, +{:.1f} us a launch", pct(k.efficiency), k.fixed_us));
}

// The norms' kernels by size where measured: the grid's extent and the three kernels at one size of it.
void normGrids(std::string& s, const HardwareProfile& p) {
    const NormGrid& ng = p.memory.norms;
    for (const auto& [name, grid] : {std::pair{"LayerNorm fp32", &ng.layer_fp32}, std::pair{"LayerNorm bf16", &ng.layer_bf16},
                                     std::pair{"RMSNorm fp32", &ng.rms_fp32}, std::pair{"RMSNorm bf16", &ng.rms_bf16}}) {
        if (grid->empty()) {
            s += fmt::format("  {} kernels: no grid, priced by the norm kinds' rates\n", name);
            continue;
        }
        const auto [tlo, thi] = std::minmax_element(grid->begin(), grid->end(),
                                                    [](const NormPoint& a, const NormPoint& b) { return a.tokens < b.tokens; });
        const auto [hlo, hhi] = std::minmax_element(grid->begin(), grid->end(),
                                                    [](const NormPoint& a, const NormPoint& b) { return a.hidden < b.hidden; });
        const double fwd = normGridUs(*grid, &NormPoint::forward_us, 8192, 2048);
        const double bwd = normGridUs(*grid, &NormPoint::backward_us, 8192, 2048);
        const double wg = normGridUs(*grid, &NormPoint::weight_grad_us, 8192, 2048);
        s += fmt::format("  {} kernels: {} sizes, {}-{} rows x {}-{}; at 8192 x 2048 forward {:.1f} us, "
                         "input grad {:.1f}, weight grad {:.1f}\n",
                         name, grid->size(), tlo->tokens, thi->tokens, hlo->hidden, hhi->hidden, fwd, bwd, wg);
    }
}

// NVLink and PCIe, against the datasheet's figures where the profile states them (gpu.nvlink_gbps, gpu.pcie_gbps).
void linkRates(std::string& s, const HardwareProfile& p) {
    const auto against = [&](const char* what, double have, double datasheet, const char* fmt_have) {
        row(s, what, fmt::format(fmt::runtime(fmt_have), have), datasheet > 0 ? fmt::format("{:.0f}", datasheet) : "-",
            datasheet > 0 ? pct(have / datasheet) : "");
    };
    against("NVLink per direction (GB/s)", p.links.nvlink_gbps, p.gpu.nvlink_gbps, "{:.0f}");
    against("PCIe H2D pinned (GB/s)", p.links.pcie_h2d_gbps, p.gpu.pcie_gbps, "{:.1f}");
    row(s, "PCIe H2D pageable (GB/s)", fmt::format("{:.1f}", p.links.pcie_pageable_gbps), "", "");
}

// The host's launch costs and their spread between runs.
void launchCosts(std::string& s, const HardwareProfile& p) {
    s += "\nlaunch (median / p99, us)\n";
    auto d = [&](const std::string& n, const Distribution& x) { s += fmt::format("  {:<34} {:>8.2f} {:>8.2f}\n", n, x.median_us, x.p99_us); };
    d("eager host (PyTorch op)", p.launch.eager_host);
    d("compiled host (per kernel)", p.launch.compiled_host);
    d("CUDA graph host (per kernel)", p.launch.graph_host);
    d("device gap (back-to-back)", p.launch.device_gap);
    d("NCCL host (per collective)", p.launch.nccl_host);
    if (const HostCostSpread& h = p.launch.host_cost_spread; h.p10 < 1.0 || h.p90 > 1.0)
        s += fmt::format("  host cost between runs (10th / 90th percentile over the median): x{:.2f} / x{:.2f} (a host-bound "
                         "step's range)\n",
                         h.p10, h.p90);
}

// The gaps before each class of operation in a training step, beside NCCL, by GEMM shape; the shortest kernel.
void stepGaps(std::string& s, const HardwareProfile& p) {
    const StepGaps& g = p.launch.step_gap_us;
    s += fmt::format("  gap before, in a training step (mean): GEMM {:.2f}, attention {:.2f}, memory-bound {:.2f}, "
                     "optimizer {:.2f}, copy {:.2f} us\n",
                     g.gemm_us, g.attention_us, g.memory_us, g.optimizer_us, g.copy_us);
    const auto beside = [&](const char* what, const StepGaps& b) {
        const auto x = [](double beside_us, double alone_us) {
            return beside_us > 0 && alone_us > 0 ? fmt::format("x{:.2f}", beside_us / alone_us) : std::string("x1 (not measured)");
        };
        s += fmt::format("  the same beside an NCCL kernel {}: GEMM {}, attention {}, memory-bound {}, optimizer {}, copy {}\n",
                         what, x(b.gemm_us, g.gemm_us), x(b.attention_us, g.attention_us), x(b.memory_us, g.memory_us),
                         x(b.optimizer_us, g.optimizer_us), x(b.copy_us, g.copy_us));
    };
    beside("moving data", p.launch.step_gap_beside_transfer_us);
    beside("waiting for its peer", p.launch.step_gap_beside_waiting_us);
    const auto byShape = [&](const char* what, const std::vector<GemmShapeValue>& by) {
        if (by.empty()) return;
        std::vector<double> v;
        for (const GemmShapeValue& e : by) v.push_back(e.value);
        std::sort(v.begin(), v.end());
        s += fmt::format("  gap before a GEMM by shape{}: {} shapes, {:.2f} to {:.2f} us, median {:.2f}\n", what, v.size(),
                         v.front(), v.back(), median(v));
    };
    byShape(" (in place of the GEMM gap above)", p.launch.gemm_gap_by_shape);
    byShape(", beside an NCCL kernel moving data", p.launch.gemm_gap_beside_transfer_by_shape);
    s += fmt::format("  shortest kernel {:.2f} us; kernel CV {:.3f}\n", p.memory.min_kernel_us, p.jitter.kernel_cv);
}

// How much compute and collectives slow each other: overall, by class and state of the NCCL kernel, by the
// collective's size, by GEMM shape.
void interference(std::string& s, const HardwareProfile& p) {
    s += fmt::format("\ninterference: GEMM x{:.2f} slower beside NCCL, NCCL x{:.2f} slower beside a GEMM\n",
                     p.interference.compute_slowdown, p.interference.comm_slowdown);
    // A class the profile did not measure (0) reads "-": the engine then takes the factor above.
    const auto cls = [](const ClassSlowdown& c) {
        const auto f = [](double x) { return x > 0 ? fmt::format("x{:.2f}", x) : std::string("-"); };
        return fmt::format("GEMM {}, attention {}, memory-bound {}", f(c.gemm), f(c.attention), f(c.memory));
    };
    s += "  beside an NCCL kernel waiting for its peers: " + cls(p.interference.beside_waiting) + "\n";
    s += "  beside one moving data: " + cls(p.interference.beside_transfer) + "\n";
    for (const SizedSlowdown& z : p.interference.beside_transfer_by_size)
        s += fmt::format("    moving {:>5.0f} MiB: {}\n", z.bytes / (1 << 20), cls(z));
    if (!p.interference.beside_transfer_by_size.empty())
        s += "    (by the collective's size, log-interpolated; -: not measured at that size, the line above applies)\n";
    if (const auto& by = p.interference.gemm_by_shape; !by.empty()) {
        const auto [lo, hi] = std::minmax_element(
            by.begin(), by.end(), [](const GemmShapeValue& a, const GemmShapeValue& b) { return a.value < b.value; });
        s += fmt::format("  GEMMs by shape, beside a resident NCCL kernel: {} shapes, x{:.2f} ({}x{}x{}) to x{:.2f} "
                         "({}x{}x{}); a GEMM within 2x of one on every dimension takes the nearest one's factor\n",
                         by.size(), lo->value, lo->m, lo->n, lo->k, hi->value, hi->m, hi->n, hi->k);
    }
}

// How far the GPUs' and the hosts' speeds differ.
void speedSpreads(std::string& s, const HardwareProfile& p) {
    s += fmt::format("GPU-to-GPU speed spread at the power limit (cv): compute {:.2f}%, memory-bound {:.3f}%\n",
                     100 * p.jitter.device_compute_cv, 100 * p.jitter.device_memory_cv);
    s += fmt::format("host-to-host speed spread between training processes (cv): {:.1f}%; a host-bound data-parallel "
                     "step goes at its slowest host\n",
                     100 * p.jitter.host_rank_cv);
}

// Each collective's α-β segments.
void collectives(std::string& s, const HardwareProfile& p) {
    if (p.collectives.empty()) {
        s += "\ncollectives: none measured (NCCL's tuning model is used)\n";
        return;
    }
    s += fmt::format("\ncollectives (t = alpha + S*factor/busbw per segment; busbw vs NCCL ring model {:.0f} GB/s)\n",
                     p.nccl.ring_busbw_gbps);
    for (const auto& c : p.collectives) {
        s += fmt::format("  {} {} ranks={} nodes={} {}/{}  median error {:.1f}%\n", c.op, c.dtype, c.ranks, c.nodes, c.algo,
                         c.proto, 100 * c.rel_error);
        for (const auto& g : c.segments)
            s += fmt::format("    [{:>10}, {:>10}] B  alpha {:7.2f} us  busbw {:7.1f} GB/s  error {:.1f}%\n",
                             fmt::format("{:.0f}", g.lo_bytes), fmt::format("{:.0f}", g.hi_bytes), g.alpha_us,
                             g.busbw_gbps, 100 * g.rel_error);
    }
}

// How a derived profile came from a measured one: each step's factor on its rate and the factor's range.
void derivation(std::string& s, const HardwareProfile& p) {
    const ProfileDerivation& d = p.derivation;
    if (d.empty()) return;
    s += fmt::format("derived from {}{}{}\n", d.from, d.extrapolated ? ", EXTRAPOLATED (another die: no measurement on "
                                                                       "these GPUs checked these rates)" : "",
                     d.notes.empty() ? "" : "; how: " + d.notes);
    for (const DerivationStep& x : d.steps)
        s += fmt::format("  {:<58} x{:.3f} (x{:.3f} to x{:.3f})  {}\n", x.what, x.factor, x.low, x.high, x.why);
}

}  // namespace

std::string profileTable(const HardwareProfile& p) {
    std::string s;
    s += fmt::format("profile {}  ({})\n", p.name, p.source);
    s += fmt::format("GPU {}: {} SMs, {:.1f} GiB{}\n", p.gpu.model, p.gpu.sms, p.gpu.memory_gib,
                     p.power.limit_w > 0 ? fmt::format(", {:.0f} W limit", p.power.limit_w) : "");
    derivation(s, p);
    s += "\n";
    computeRates(s, p);
    normGrids(s, p);
    linkRates(s, p);
    launchCosts(s, p);
    stepGaps(s, p);
    interference(s, p);
    speedSpreads(s, p);
    collectives(s, p);
    return s;
}

}  // namespace stepsim
