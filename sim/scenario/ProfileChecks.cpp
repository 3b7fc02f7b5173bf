#include "sim/scenario/ProfileChecks.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/scenario/YamlReader.hpp"

namespace stepsim {
namespace {

constexpr std::array<std::string_view, 6> kCollectiveOps = {"all_reduce", "all_gather", "reduce_scatter",
                                                            "alltoall",   "broadcast",  "sendrecv"};
constexpr std::array<std::string_view, 9> kNcclAlgos = {"auto",    "ring",           "tree",
                                                        "nvls",    "nvlstree",       "collnet",
                                                        "pat",     "collnet_direct", "collnet_chain"};
constexpr std::array<std::string_view, 4> kNcclProtos = {"auto", "ll", "ll128", "simple"};

template <std::size_t N>
std::string joined(const std::array<std::string_view, N>& names) {
    std::string out;
    for (auto n : names) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
}

template <std::size_t N>
bool oneOf(const std::array<std::string_view, N>& names, const std::string& s) {
    return std::find(names.begin(), names.end(), s) != names.end();
}

// The rules a kind of value follows, each failing at `path` with what it expected.
class Checks {
public:
    explicit Checks(const YamlReader& r) : r_(r) {}

    [[noreturn]] void fail(const std::string& path, const std::string& what) const { r_.fail(path, what); }
    void positive(const std::string& path, double v) const {
        if (!(v > 0.0)) fail(path, fmt::format("expected a positive number, got {}", v));
    }
    void nonNegative(const std::string& path, double v) const {
        if (!(v >= 0.0)) fail(path, fmt::format("expected a number >= 0, got {}", v));
    }
    void fraction(const std::string& path, double v) const {
        if (!(v > 0.0 && v <= 1.0)) fail(path, fmt::format("expected a fraction in (0, 1], got {}", v));
    }
    void slowdown(const std::string& path, double v) const {
        if (!(v >= 1.0)) fail(path, fmt::format("expected a slowdown factor >= 1, got {}", v));
    }
    void distribution(const std::string& path, const Distribution& x) const {
        nonNegative(path + ".median_us", x.median_us);
        if (!(x.p99_us >= x.median_us))
            fail(path + ".p99_us", fmt::format("expected p99_us >= median_us ({}), got {}", x.median_us, x.p99_us));
    }
    // A list of [m, n, k, value]: positive dimensions, each value checked by `check`.
    void shapes(const std::string& path, const std::vector<GemmShapeValue>& list,
                void (Checks::*check)(const std::string&, double) const) const {
        for (std::size_t i = 0; i < list.size(); ++i) {
            const GemmShapeValue& g = list[i];
            const std::string gp = fmt::format("{}[{}]", path, i);
            if (g.m < 1 || g.n < 1 || g.k < 1)
                fail(gp, fmt::format("expected positive m, n, k, got [{}, {}, {}]", g.m, g.n, g.k));
            (this->*check)(gp + "[3]", g.value);
        }
    }

private:
    const YamlReader& r_;
};

void checkHeader(const Checks& k, int version, const HardwareProfile& p) {
    if (version != 1)
        k.fail("stepsim_profile", fmt::format("unsupported profile version {}; this stepsim reads version 1", version));
    if (p.name.empty()) k.fail("name", "expected a non-empty profile name");
}

void checkGpu(const Checks& k, const GpuRates& g) {
    if (g.sms < 1) k.fail("gpu.sms", fmt::format("expected a positive integer, got {}", g.sms));
    k.positive("gpu.memory_gib", g.memory_gib);
    k.positive("gpu.hbm_gbps", g.hbm_gbps);
    k.positive("gpu.peak_tflops_bf16", g.peak_tflops_bf16);
    k.positive("gpu.peak_tflops_fp16", g.peak_tflops_fp16);
    k.positive("gpu.peak_tflops_fp8", g.peak_tflops_fp8);
    k.positive("gpu.peak_tflops_fp32", g.peak_tflops_fp32);
}

// Each norm grid's points: positive sizes and times, no size twice.
void checkNorms(const Checks& k, const NormGrid& ng) {
    for (const auto& [name, grid] : {std::pair{"layer_fp32", &ng.layer_fp32}, std::pair{"layer_bf16", &ng.layer_bf16},
                                     std::pair{"rms_fp32", &ng.rms_fp32}, std::pair{"rms_bf16", &ng.rms_bf16}}) {
        for (std::size_t i = 0; i < grid->size(); ++i) {
            const NormPoint& n = (*grid)[i];
            const std::string pp = fmt::format("memory.norms.{}[{}]", name, i);
            if (n.tokens < 1 || n.hidden < 1)
                k.fail(pp, fmt::format("expected positive tokens and hidden, got {} and {}", n.tokens, n.hidden));
            k.positive(pp + "[2]", n.forward_us);
            k.positive(pp + "[3]", n.backward_us);
            k.positive(pp + "[4]", n.weight_grad_us);
            for (std::size_t j = 0; j < i; ++j)
                if ((*grid)[j].tokens == n.tokens && (*grid)[j].hidden == n.hidden)
                    k.fail(pp, fmt::format("size {} × {} listed twice (also at [{}])", n.tokens, n.hidden, j));
        }
    }
}

void checkMemory(const Checks& k, const MemoryRates& m) {
    k.fraction("memory.read_write_efficiency", m.read_write_efficiency);
    k.nonNegative("memory.min_kernel_us", m.min_kernel_us);
    for (const auto& [kind, x] : m.kernels) {
        k.fraction("memory.kernels." + kind + ".efficiency", x.efficiency);
        k.nonNegative("memory.kernels." + kind + ".fixed_us", x.fixed_us);
    }
    checkNorms(k, m.norms);
}

// Each dtype's efficiency curve, and its measured points below the dtype's peak.
void checkGemm(const Checks& k, const HardwareProfile& p) {
    const GpuRates& g = p.gpu;
    for (const auto& [dtype, e] : p.gemm) {
        const std::string path = "gemm." + dtype;
        if (!oneOf(kGemmDtypes, dtype))
            k.fail(path, fmt::format("unknown dtype; expected one of {}", joined(kGemmDtypes)));
        const double peak = dtype == "bf16"   ? g.peak_tflops_bf16
                            : dtype == "fp16" ? g.peak_tflops_fp16
                            : dtype.starts_with("fp8") ? g.peak_tflops_fp8  // fp8 and torch._scaled_mm's variants
                                                       : g.peak_tflops_fp32;
        k.fraction(path + ".max_efficiency", e.max_efficiency);
        k.positive(path + ".k_half", e.k_half);
        if (e.tile_m < 1) k.fail(path + ".tile_m", fmt::format("expected a positive integer, got {}", e.tile_m));
        if (e.tile_n < 1) k.fail(path + ".tile_n", fmt::format("expected a positive integer, got {}", e.tile_n));
        k.nonNegative(path + ".overhead_us", e.overhead_us);
        k.nonNegative(path + ".rel_error", e.rel_error);
        for (std::size_t i = 0; i < e.points.size(); ++i) {
            const GemmPoint& pt = e.points[i];
            const std::string pp = fmt::format("{}.points[{}]", path, i);
            if (pt.m < 1 || pt.n < 1 || pt.k < 1)
                k.fail(pp, fmt::format("expected positive m, n, k, got [{}, {}, {}]", pt.m, pt.n, pt.k));
            k.positive(pp + "[3]", pt.tflops);
            if (pt.tflops > peak)
                k.fail(pp + "[3]", fmt::format("{} TFLOP/s is above the {} peak gpu.peak_tflops_{} ({})", pt.tflops,
                                               dtype, dtype, peak));
        }
    }
}

void checkAttention(const Checks& k, const AttentionRates& at) {
    k.fraction("attention.fwd_efficiency", at.fwd_efficiency);
    k.fraction("attention.bwd_efficiency", at.bwd_efficiency);
    for (std::size_t i = 0; i < at.points.size(); ++i) {
        const AttentionPoint& a = at.points[i];
        const std::string pp = fmt::format("attention.points[{}]", i);
        k.positive(pp + "[0]", double(a.head_dim));
        k.positive(pp + "[1]", double(a.seq));
        k.positive(pp + "[2]", double(a.batch_heads));
        k.positive(pp + "[3]", a.fwd_tflops);
        k.positive(pp + "[4]", a.bwd_tflops);
    }
}

// Only a modelled power state is checked: the clock falls as the load grows, head_dims ascend, exponents in [0, 2].
void checkPower(const Checks& k, const PowerModel& pw) {
    k.nonNegative("power.limit_w", pw.limit_w);
    k.nonNegative("power.fixed_w", pw.fixed_w);
    if (pw.limit_w > 0.0 && !(pw.fixed_w < pw.limit_w))
        k.fail("power.fixed_w", fmt::format("expected less than power.limit_w ({} W), got {}", pw.limit_w, pw.fixed_w));
    if (!pw.modelled) return;
    k.positive("power.clock_max_mhz", pw.clock_max_mhz);
    k.positive("power.clock_intercept_mhz", pw.clock_intercept_mhz);
    if (!(pw.clock_mhz_per_tflops < 0.0))
        k.fail("power.clock_mhz_per_tflops",
               fmt::format("expected a negative slope (the clock falls as the load grows), got {}",
                           pw.clock_mhz_per_tflops));
    k.nonNegative("power.memory_busy_tflops", pw.memory_busy_tflops);
    k.nonNegative("power.idle_headroom_mhz", pw.idle_headroom_mhz);
    k.positive("power.attention_reference_mhz", pw.attention_reference_mhz);
    for (std::size_t i = 0; i < pw.attention.size(); ++i) {
        const AttentionClockExponent& a = pw.attention[i];
        const std::string pp = fmt::format("power.attention_exponent[{}]", i);
        if (a.head_dim < 1 || (i > 0 && a.head_dim <= pw.attention[i - 1].head_dim))
            k.fail(pp + "[0]", fmt::format("expected head_dims positive and ascending, got {}", a.head_dim));
        for (const auto& [j, x] : {std::pair{1, a.forward}, std::pair{2, a.backward}})
            if (!(x >= 0.0 && x <= 2.0))
                k.fail(fmt::format("{}[{}]", pp, j), fmt::format("expected an exponent in [0, 2], got {}", x));
    }
}

// The gaps before an operation by its class: alone positive; beside NCCL 0 (not measured) or more.
void checkStepGaps(const Checks& k, const LaunchRates& l) {
    const StepGaps& gaps = l.step_gap_us;
    k.positive("launch.step_gap_us.gemm", gaps.gemm_us);
    k.positive("launch.step_gap_us.attention", gaps.attention_us);
    k.positive("launch.step_gap_us.memory", gaps.memory_us);
    k.positive("launch.step_gap_us.optimizer", gaps.optimizer_us);
    k.positive("launch.step_gap_us.copy", gaps.copy_us);
    for (const auto& [key, beside] : {std::pair{"launch.step_gap_beside_transfer_us", &l.step_gap_beside_transfer_us},
                                      std::pair{"launch.step_gap_beside_waiting_us", &l.step_gap_beside_waiting_us}}) {
        k.nonNegative(fmt::format("{}.gemm", key), beside->gemm_us);  // 0: not measured
        k.nonNegative(fmt::format("{}.attention", key), beside->attention_us);
        k.nonNegative(fmt::format("{}.memory", key), beside->memory_us);
        k.nonNegative(fmt::format("{}.optimizer", key), beside->optimizer_us);
        k.nonNegative(fmt::format("{}.copy", key), beside->copy_us);
    }
}

void checkLaunch(const Checks& k, const LaunchRates& l) {
    k.distribution("launch.eager_host", l.eager_host);
    k.distribution("launch.forward_host", l.forward_host);
    k.distribution("launch.forward_host_ddp", l.forward_host_ddp);
    k.distribution("launch.backward_host", l.backward_host);
    k.nonNegative("launch.optimizer_host_per_tensor_us", l.optimizer_host_per_tensor_us);
    k.nonNegative("launch.ddp_hook_host_us", l.ddp_hook_host_us);
    k.nonNegative("launch.ddp_find_unused_host_us", l.ddp_find_unused_host_us);
    k.nonNegative("launch.grad_accumulate_host_us", l.grad_accumulate_host_us);
    k.distribution("launch.compiled_host", l.compiled_host);
    k.distribution("launch.graph_host", l.graph_host);
    k.distribution("launch.device_gap", l.device_gap);
    checkStepGaps(k, l);
    k.shapes("launch.gemm_gap_by_shape", l.gemm_gap_by_shape, &Checks::positive);
    k.shapes("launch.gemm_gap_beside_transfer_by_shape", l.gemm_gap_beside_transfer_by_shape, &Checks::positive);
    const CheckpointHost& ck = l.checkpoint_host_us;
    k.nonNegative("launch.checkpoint_host_us.selective_forward", ck.selective_forward_us);
    k.nonNegative("launch.checkpoint_host_us.selective_backward", ck.selective_backward_us);
    k.nonNegative("launch.checkpoint_host_us.full_forward", ck.full_forward_us);
    k.nonNegative("launch.checkpoint_host_us.full_backward", ck.full_backward_us);
    k.distribution("launch.nccl_host", l.nccl_host);
    if (const HostCostSpread& h = l.host_cost_spread; !(h.p10 > 0 && h.p10 <= 1 && h.p90 >= 1))
        k.fail("launch.host_cost_spread", fmt::format("expected 0 < p10 <= 1 <= p90 (factors on the host costs), got "
                                                      "p10 {} and p90 {}", h.p10, h.p90));
}

void checkNccl(const Checks& k, const NcclModel& n) {
    for (int i = 0; i < 3; ++i) {
        k.nonNegative(fmt::format("nccl.ring_base_latency_us[{}]", i), n.ring_base_latency_us[i]);
        k.nonNegative(fmt::format("nccl.tree_base_latency_us[{}]", i), n.tree_base_latency_us[i]);
        k.nonNegative(fmt::format("nccl.nvlink_hop_latency_us[{}]", i), n.nvlink_hop_latency_us[i]);
        k.nonNegative(fmt::format("nccl.net_hop_latency_us[{}]", i), n.net_hop_latency_us[i]);
        k.fraction(fmt::format("nccl.proto_bw_fraction[{}]", i), n.proto_bw_fraction[i]);
    }
    k.positive("nccl.ring_busbw_gbps", n.ring_busbw_gbps);
    k.positive("nccl.nvls_busbw_gbps", n.nvls_busbw_gbps);
}

// One fitted collective: known op, algorithm and protocol; 1 <= nodes <= ranks; its size segments ordered and
// contiguous.
void checkCollective(const Checks& k, const std::string& path, const CollectiveFit& c) {
    if (!oneOf(kCollectiveOps, c.op))
        k.fail(path + ".op", fmt::format("expected one of {}, got '{}'", joined(kCollectiveOps), c.op));
    if (c.ranks < 1) k.fail(path + ".ranks", fmt::format("expected a positive integer, got {}", c.ranks));
    if (c.nodes < 1 || c.nodes > c.ranks)
        k.fail(path + ".nodes", fmt::format("expected 1 to ranks ({}) nodes, got {}", c.ranks, c.nodes));
    if (!oneOf(kNcclAlgos, c.algo))
        k.fail(path + ".algo", fmt::format("expected one of {}, got '{}'", joined(kNcclAlgos), c.algo));
    if (!oneOf(kNcclProtos, c.proto))
        k.fail(path + ".proto", fmt::format("expected one of {}, got '{}'", joined(kNcclProtos), c.proto));
    if (c.dtype.empty()) k.fail(path + ".dtype", "expected a dtype name, got an empty string");
    k.nonNegative(path + ".rel_error", c.rel_error);
    if (c.segments.empty()) k.fail(path + ".segments", "expected at least one segment");
    for (std::size_t j = 0; j < c.segments.size(); ++j) {
        const CollectiveSegment& s = c.segments[j];
        const std::string sp = fmt::format("{}.segments[{}]", path, j);
        k.nonNegative(sp + ".lo_bytes", s.lo_bytes);
        if (!(s.hi_bytes > s.lo_bytes))
            k.fail(sp + ".hi_bytes", fmt::format("expected hi_bytes > lo_bytes ({}), got {}", s.lo_bytes, s.hi_bytes));
        if (j > 0 && s.lo_bytes != c.segments[j - 1].hi_bytes)
            k.fail(sp + ".lo_bytes",
                   fmt::format("segments must be ordered and contiguous: expected lo_bytes = the previous "
                               "segment's hi_bytes ({}), got {}",
                               c.segments[j - 1].hi_bytes, s.lo_bytes));
        k.nonNegative(sp + ".alpha_us", s.alpha_us);
        k.positive(sp + ".busbw_gbps", s.busbw_gbps);
        k.nonNegative(sp + ".rel_error", s.rel_error);
    }
}

void checkCollectives(const Checks& k, const std::vector<CollectiveFit>& collectives) {
    for (std::size_t i = 0; i < collectives.size(); ++i)
        checkCollective(k, fmt::format("collectives[{}]", i), collectives[i]);
}

void checkLinks(const Checks& k, const LinkRates& l) {
    k.positive("links.nvlink_gbps", l.nvlink_gbps);
    k.nonNegative("links.nvlink_latency_us", l.nvlink_latency_us);
    k.positive("links.pcie_h2d_gbps", l.pcie_h2d_gbps);
    k.positive("links.pcie_pageable_gbps", l.pcie_pageable_gbps);
    k.positive("links.nic_gbps", l.nic_gbps);
    k.positive("links.storage_gbps", l.storage_gbps);
}

// The io section: every figure 0 (not measured) or non-negative.
void checkIo(const Checks& k, const IoRates& io) {
    for (const auto& [name, v] :
         {std::pair{"io.copy_alpha_us", io.copy_alpha_us}, {"io.h2d_pinned_gbps", io.h2d_pinned_gbps},
          {"io.h2d_pageable_gbps", io.h2d_pageable_gbps}, {"io.d2h_pinned_gbps", io.d2h_pinned_gbps},
          {"io.d2h_pageable_gbps", io.d2h_pageable_gbps}, {"io.storage_write_gbps", io.storage_write_gbps},
          {"io.dcp_sync_overhead_ms", io.dcp_sync_overhead_ms}, {"io.dcp_sync_write_gbps", io.dcp_sync_write_gbps},
          {"io.dcp_stage_overhead_ms", io.dcp_stage_overhead_ms}, {"io.dcp_stage_gbps", io.dcp_stage_gbps},
          {"io.dcp_stage_pinned_gbps", io.dcp_stage_pinned_gbps},
          {"io.dcp_async_write_overhead_ms", io.dcp_async_write_overhead_ms},
          {"io.dcp_async_write_gbps", io.dcp_async_write_gbps}})
        k.nonNegative(name, v);
}

// Slowdowns are >= 1 (0 in a per-class entry: not measured); sizes ascend; the lag's tile both set or both 0.
void checkInterference(const Checks& k, const Interference& i) {
    k.slowdown("interference.compute_slowdown", i.compute_slowdown);
    k.slowdown("interference.comm_slowdown", i.comm_slowdown);
    for (const auto& [name, c] : {std::pair{"beside_transfer", i.beside_transfer},
                                  std::pair{"beside_waiting", i.beside_waiting}})
        for (const auto& [cls, x] :
             {std::pair{"gemm", c.gemm}, std::pair{"attention", c.attention}, std::pair{"memory", c.memory}})
            if (x != 0) k.slowdown(fmt::format("interference.{}.{}", name, cls), x);  // 0: not measured
    const auto& sized = i.beside_transfer_by_size;
    for (std::size_t j = 0; j < sized.size(); ++j) {
        const std::string sp = fmt::format("interference.beside_transfer_by_size[{}]", j);
        k.positive(sp + ".bytes", sized[j].bytes);
        if (j > 0 && !(sized[j].bytes > sized[j - 1].bytes))
            k.fail(sp + ".bytes", fmt::format("expected sizes in ascending order: more than the previous entry's {}, got {}",
                                              sized[j - 1].bytes, sized[j].bytes));
        for (const auto& [cls, x] : {std::pair{"gemm", sized[j].gemm}, std::pair{"attention", sized[j].attention},
                                     std::pair{"memory", sized[j].memory}})
            if (x != 0) k.slowdown(fmt::format("{}.{}", sp, cls), x);
    }
    k.shapes("interference.gemm_by_shape", i.gemm_by_shape, &Checks::slowdown);
    if (i.linger_tile_m < 0 || i.linger_tile_n < 0 || (i.linger_tile_m > 0) != (i.linger_tile_n > 0))
        k.fail("interference.linger_tile_m",
               fmt::format("expected linger_tile_m and linger_tile_n both positive (a tile's rows and columns) or both "
                           "0 (no lag), got {} and {}",
                           i.linger_tile_m, i.linger_tile_n));
}

void checkJitter(const Checks& k, const JitterRates& j) {
    k.nonNegative("jitter.kernel_cv", j.kernel_cv);
    k.nonNegative("jitter.straggler_cv", j.straggler_cv);
    k.nonNegative("jitter.device_compute_cv", j.device_compute_cv);
    k.nonNegative("jitter.device_memory_cv", j.device_memory_cv);
    k.nonNegative("jitter.host_rank_cv", j.host_rank_cv);
}

// A measured compile section: positive ratios and kernels per region, non-negative host costs and compile times.
void checkCompile(const Checks& k, const CompileRates& c) {
    if (!c.measured) return;
    k.positive("compile.forward.kernels_per_region", c.forward.kernels_per_region);
    k.positive("compile.forward.time_ratio", c.forward.time_ratio);
    k.positive("compile.backward.kernels_per_region", c.backward.kernels_per_region);
    k.positive("compile.backward.time_ratio", c.backward.time_ratio);
    k.positive("compile.gemm_time_ratio", c.gemm_time_ratio);
    k.positive("compile.gemm_time_ratio_max_autotune", c.gemm_time_ratio_max_autotune);
    k.nonNegative("compile.graph_host_us", c.graph_host_us);
    k.positive("compile.kernel_host_ratio", c.kernel_host_ratio);
    k.nonNegative("compile.cudagraph_kernel_host_us", c.cudagraph_kernel_host_us);
    k.nonNegative("compile.compile_s_per_block", c.compile_s_per_block);
    k.nonNegative("compile.compile_s_per_block_max_autotune", c.compile_s_per_block_max_autotune);
    if (c.optimizer.measured) {
        k.positive("compile.optimizer.kernels_per_tensor", c.optimizer.kernels_per_tensor);
        k.positive("compile.optimizer.time_ratio", c.optimizer.time_ratio);
        k.nonNegative("compile.optimizer.host_us", c.optimizer.host_us);
        k.nonNegative("compile.optimizer.host_us_per_tensor", c.optimizer.host_us_per_tensor);
        k.nonNegative("compile.optimizer.compile_s_per_tensor", c.optimizer.compile_s_per_tensor);
    }
    if (c.loss.measured) {
        k.positive("compile.loss.forward_kernels", c.loss.forward_kernels);
        k.positive("compile.loss.backward_kernels", c.loss.backward_kernels);
        k.positive("compile.loss.forward_time_ratio", c.loss.forward_time_ratio);
        k.positive("compile.loss.backward_time_ratio", c.loss.backward_time_ratio);
    }
    if (c.dynamic.measured) {
        k.positive("compile.dynamic.forward_kernels_ratio", c.dynamic.forward_kernels_ratio);
        k.positive("compile.dynamic.backward_kernels_ratio", c.dynamic.backward_kernels_ratio);
        k.positive("compile.dynamic.forward_time_ratio", c.dynamic.forward_time_ratio);
        k.positive("compile.dynamic.backward_time_ratio", c.dynamic.backward_time_ratio);
        k.positive("compile.dynamic.gemm_time_ratio", c.dynamic.gemm_time_ratio);
        k.positive("compile.dynamic.compile_time_ratio", c.dynamic.compile_time_ratio);
    }
}

}  // namespace

void checkProfile(const YamlReader& r, int version, const HardwareProfile& p) {
    const Checks k(r);
    checkHeader(k, version, p);
    checkGpu(k, p.gpu);
    checkMemory(k, p.memory);
    checkGemm(k, p);
    checkAttention(k, p.attention);
    checkPower(k, p.power);
    checkLaunch(k, p.launch);
    checkNccl(k, p.nccl);
    checkCollectives(k, p.collectives);
    checkLinks(k, p.links);
    checkIo(k, p.io);
    checkInterference(k, p.interference);
    checkJitter(k, p.jitter);
    checkCompile(k, p.compile);
    k.nonNegative("ops_host.module_call_us", p.ops_host.module_call_us);
    k.nonNegative("ops_host.autograd_node_forward_us", p.ops_host.autograd_node_forward_us);
    k.nonNegative("ops_host.autograd_node_backward_us", p.ops_host.autograd_node_backward_us);
    k.nonNegative("ops_host.fsdp2_hook_us", p.ops_host.fsdp2_hook_us);
    for (std::size_t i = 0; i < p.derivation.steps.size(); ++i) {
        const DerivationStep& d = p.derivation.steps[i];
        const std::string at = fmt::format("derivation.steps[{}]", i);
        k.positive(at + ".factor", d.factor);
        if (!(d.low > 0.0 && d.low <= d.factor && d.factor <= d.high))
            k.fail(at + ".low", fmt::format("expected 0 < low <= factor ({}) <= high, got low {} and high {}", d.factor,
                                            d.low, d.high));
    }
}

namespace {

bool endsWith(std::string_view s, std::string_view tail) { return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail; }

// The bound of a number whose key is `key` (ProfileChecks.hpp): [lo, hi] and the unit named in the error.
struct Bound {
    double lo, hi;
    const char* unit;
};

Bound boundOf(std::string_view key) {
    for (std::string_view rate : {"_gbps", "_GBps", "tflops", "bw"})
        if (endsWith(key, rate) || key.find(std::string(rate) + "_") != std::string_view::npos)
            return {-1e15, 1e5, "a rate (GB/s, Gb/s or TFLOP/s)"};
    if (endsWith(key, "_mhz")) return {-1e15, 1e5, "MHz"};
    if (endsWith(key, "_us")) return {-1e15, 1e7, "µs"};
    if (endsWith(key, "_ms")) return {-1e15, 1e6, "ms"};
    if (endsWith(key, "_cv") || key == "cv") return {0, 10, "a coefficient of variation"};
    for (std::string_view f : {"ratio", "factor", "slowdown"})
        if (key.find(f) != std::string_view::npos) return {0, 1000, "a ratio"};
    return {-1e15, 1e15, "a number"};
}

void checkNumbers(const YamlReader& r, const YAML::Node& n, const std::string& path, std::string_view key,
                  long& values) {
    if (++values > 1'000'000) r.failAt(n, path, "more than a million values: not a profile");
    if (n.IsMap()) {
        for (const auto& kv : n) {
            const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "?";
            checkNumbers(r, kv.second, path.empty() ? k : path + "." + k, k, values);
        }
    } else if (n.IsSequence()) {
        for (std::size_t i = 0; i < n.size(); ++i) checkNumbers(r, n[i], fmt::format("{}[{}]", path, i), key, values);
    } else if (n.IsScalar() && n.Tag() != "!") {
        double v = 0;
        if (!YAML::convert<double>::decode(n, v)) return;  // not a number: the reader checks its type
        const Bound b = boundOf(key);
        if (!std::isfinite(v) || v < b.lo || v > b.hi)
            r.failAt(n, path, fmt::format("expected {} from {} to {}, got {}", b.unit, b.lo, b.hi, n.Scalar()));
    }
}

}  // namespace

void checkProfileMagnitudes(const YamlReader& r, const YAML::Node& root) {
    long values = 0;
    checkNumbers(r, root, "", "", values);
}

}  // namespace stepsim
