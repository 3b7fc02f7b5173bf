#include "sim/scenario/ProfileYaml.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <sstream>

#include "sim/base/InputError.hpp"
#include "sim/scenario/YamlReader.hpp"
#include "sim/scenario/YamlWriter.hpp"

namespace stepsim {

// The measured points are flow lists of numbers, one per member in order: a GemmPoint [m, n, k, tflops], a
// GemmShapeValue [m, n, k, value], an AttentionPoint [head_dim, seq, batch_heads, fwd_tflops, bwd_tflops], a NormPoint
// [tokens, hidden, forward_us, backward_us, weight_grad_us], an AttentionClockExponent [head_dim, forward, backward].
// `shape` names them for the error.
template <class P, class... T>
void readFlowList(YamlReader& r, const YAML::Node& n, const std::string& path, P& out, std::string_view shape,
                  T P::*... members) {
    if (!n.IsSequence() || n.size() != sizeof...(members))
        r.failAt(n, path, fmt::format("expected {}, got {}", shape, describeNode(n)));
    std::size_t i = 0;
    ((readValue(r, n[i], fmt::format("{}[{}]", path, i), out.*members), ++i), ...);
}

template <class P, class... T>
std::string formatFlowList(const P& p, T P::*... members) {
    std::string out;
    ((out += (out.empty() ? "[" : ", ") + formatValue(p.*members)), ...);
    return out + "]";
}

void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, GemmPoint& out) {
    readFlowList(r, n, path, out, "[m, n, k, tflops]", &GemmPoint::m, &GemmPoint::n, &GemmPoint::k, &GemmPoint::tflops);
}

std::string formatValue(const GemmPoint& p) {
    return formatFlowList(p, &GemmPoint::m, &GemmPoint::n, &GemmPoint::k, &GemmPoint::tflops);
}

void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, GemmShapeValue& out) {
    readFlowList(r, n, path, out, "[m, n, k, value]", &GemmShapeValue::m, &GemmShapeValue::n, &GemmShapeValue::k,
                 &GemmShapeValue::value);
}

std::string formatValue(const GemmShapeValue& p) {
    return formatFlowList(p, &GemmShapeValue::m, &GemmShapeValue::n, &GemmShapeValue::k, &GemmShapeValue::value);
}

void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, AttentionPoint& out) {
    readFlowList(r, n, path, out, "[head_dim, seq, batch_heads, fwd_tflops, bwd_tflops]", &AttentionPoint::head_dim,
                 &AttentionPoint::seq, &AttentionPoint::batch_heads, &AttentionPoint::fwd_tflops,
                 &AttentionPoint::bwd_tflops);
}

std::string formatValue(const AttentionPoint& p) {
    return formatFlowList(p, &AttentionPoint::head_dim, &AttentionPoint::seq, &AttentionPoint::batch_heads,
                          &AttentionPoint::fwd_tflops, &AttentionPoint::bwd_tflops);
}

void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, NormPoint& out) {
    readFlowList(r, n, path, out, "[tokens, hidden, forward_us, backward_us, weight_grad_us]", &NormPoint::tokens,
                 &NormPoint::hidden, &NormPoint::forward_us, &NormPoint::backward_us, &NormPoint::weight_grad_us);
}

std::string formatValue(const NormPoint& p) {
    return formatFlowList(p, &NormPoint::tokens, &NormPoint::hidden, &NormPoint::forward_us, &NormPoint::backward_us,
                          &NormPoint::weight_grad_us);
}

void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, AttentionClockExponent& out) {
    readFlowList(r, n, path, out, "[head_dim, forward, backward]", &AttentionClockExponent::head_dim,
                 &AttentionClockExponent::forward, &AttentionClockExponent::backward);
}

std::string formatValue(const AttentionClockExponent& p) {
    return formatFlowList(p, &AttentionClockExponent::head_dim, &AttentionClockExponent::forward,
                          &AttentionClockExponent::backward);
}

namespace {

// The whole file: the schema version, then the profile's members.
struct ProfileDocument {
    int stepsim_profile = 1;
    HardwareProfile profile;
};

constexpr std::array<std::string_view, 4> kGemmDtypes = {"bf16", "fp16", "fp8", "fp32"};
constexpr std::array<std::string_view, 19> kMemoryKernelKinds = {
    "elementwise",    "cast_up",           "cast_down",            "norm_forward",
    "norm_backward",  "optimizer",         "residual_add",         "optimizer_bf16",
    "log_softmax_forward", "log_softmax_backward", "log_softmax_forward_fp32", "log_softmax_backward_fp32",
    "optimizer_foreach", "optimizer_foreach_bf16", "norm_weight_grad", "rms_forward", "rms_backward",
    "rms_weight_grad", "gelu_forward"};
constexpr std::array<std::string_view, 6> kCollectiveOps = {"all_reduce", "all_gather", "reduce_scatter",
                                                            "alltoall",   "broadcast",  "sendrecv"};
constexpr std::array<std::string_view, 9> kNcclAlgos = {"auto",    "ring",           "tree",
                                                        "nvls",    "nvlstree",       "collnet",
                                                        "pat",     "collnet_direct", "collnet_chain"};
constexpr std::array<std::string_view, 4> kNcclProtos = {"auto", "ll", "ll128", "simple"};

}  // namespace

template <class V>
void describe(V& v, GpuRates& g) {
    v.field("model", g.model);
    v.field("sms", g.sms);
    v.field("memory_gib", g.memory_gib);
    v.field("hbm_gbps", g.hbm_gbps);
    v.field("peak_tflops_bf16", g.peak_tflops_bf16);
    v.field("peak_tflops_fp16", g.peak_tflops_fp16);
    v.field("peak_tflops_fp8", g.peak_tflops_fp8);
    v.field("peak_tflops_fp32", g.peak_tflops_fp32);
}

template <class V>
void describe(V& v, MemoryKernelRate& k) {
    v.field("efficiency", k.efficiency);
    v.field("fixed_us", k.fixed_us);
}

template <class V>
void describe(V& v, NormGrid& g) {
    v.field("layer_fp32", g.layer_fp32);
    v.field("layer_bf16", g.layer_bf16);
    v.field("rms_fp32", g.rms_fp32);
    v.field("rms_bf16", g.rms_bf16);
}

template <class V>
void describe(V& v, MemoryRates& m) {
    v.field("read_write_efficiency", m.read_write_efficiency);
    v.field("min_kernel_us", m.min_kernel_us);
    v.sectionMap("kernels", m.kernels, std::span<const std::string_view>(kMemoryKernelKinds));
    v.section("norms", m.norms);
}

template <class V>
void describe(V& v, GemmEfficiency& g) {
    v.field("max_efficiency", g.max_efficiency);
    v.field("k_half", g.k_half);
    v.field("tile_m", g.tile_m);
    v.field("tile_n", g.tile_n);
    v.field("overhead_us", g.overhead_us);
    v.field("points", g.points);
    v.field("rel_error", g.rel_error);
}

template <class V>
void describe(V& v, AttentionRates& a) {
    v.field("fwd_efficiency", a.fwd_efficiency);
    v.field("bwd_efficiency", a.bwd_efficiency);
    v.field("points", a.points);
}

template <class V>
void describe(V& v, Distribution& d) {
    v.field("median_us", d.median_us);
    v.field("p99_us", d.p99_us);
}

template <class V>
void describe(V& v, StepGaps& g) {
    v.field("gemm", g.gemm_us);
    v.field("attention", g.attention_us);
    v.field("memory", g.memory_us);
    v.field("optimizer", g.optimizer_us);
    v.field("copy", g.copy_us);
}

template <class V>
void describe(V& v, CheckpointHost& c) {
    v.field("selective_forward", c.selective_forward_us);
    v.field("selective_backward", c.selective_backward_us);
    v.field("full_forward", c.full_forward_us);
    v.field("full_backward", c.full_backward_us);
}

template <class V>
void describe(V& v, HostCostSpread& h) {
    v.field("p10", h.p10);
    v.field("p90", h.p90);
}

template <class V>
void describe(V& v, LaunchRates& l) {
    v.section("eager_host", l.eager_host);
    v.section("forward_host", l.forward_host);
    v.section("forward_host_ddp", l.forward_host_ddp);
    v.section("backward_host", l.backward_host);
    v.field("optimizer_host_per_tensor_us", l.optimizer_host_per_tensor_us);
    v.field("ddp_hook_host_us", l.ddp_hook_host_us);
    v.field("grad_accumulate_host_us", l.grad_accumulate_host_us);
    v.section("compiled_host", l.compiled_host);
    v.section("graph_host", l.graph_host);
    v.section("device_gap", l.device_gap);
    v.section("step_gap_us", l.step_gap_us);
    v.section("step_gap_beside_transfer_us", l.step_gap_beside_transfer_us);
    v.section("step_gap_beside_waiting_us", l.step_gap_beside_waiting_us);
    v.field("gemm_gap_by_shape", l.gemm_gap_by_shape);
    v.field("gemm_gap_beside_transfer_by_shape", l.gemm_gap_beside_transfer_by_shape);
    v.section("checkpoint_host_us", l.checkpoint_host_us);
    v.section("nccl_host", l.nccl_host);
    v.section("host_cost_spread", l.host_cost_spread);
}

template <class V>
void describe(V& v, NcclModel& n) {
    v.field("ring_base_latency_us", n.ring_base_latency_us);
    v.field("tree_base_latency_us", n.tree_base_latency_us);
    v.field("nvlink_hop_latency_us", n.nvlink_hop_latency_us);
    v.field("net_hop_latency_us", n.net_hop_latency_us);
    v.field("proto_bw_fraction", n.proto_bw_fraction);
    v.field("ring_busbw_gbps", n.ring_busbw_gbps);
    v.field("nvls_busbw_gbps", n.nvls_busbw_gbps);
}

template <class V>
void describe(V& v, CollectiveSegment& s) {
    v.field("lo_bytes", s.lo_bytes);
    v.field("hi_bytes", s.hi_bytes);
    v.field("alpha_us", s.alpha_us);
    v.field("busbw_gbps", s.busbw_gbps);
    v.field("rel_error", s.rel_error);
}

template <class V>
void describe(V& v, CollectiveFit& c) {
    v.field("op", c.op);
    v.field("ranks", c.ranks);
    v.field("nodes", c.nodes);
    v.field("algo", c.algo);
    v.field("proto", c.proto);
    v.field("dtype", c.dtype);
    v.field("rel_error", c.rel_error);
    v.sectionList("segments", c.segments);
}

template <class V>
void describe(V& v, LinkRates& l) {
    v.field("nvlink_gbps", l.nvlink_gbps);
    v.field("nvlink_latency_us", l.nvlink_latency_us);
    v.field("pcie_h2d_gbps", l.pcie_h2d_gbps);
    v.field("pcie_pageable_gbps", l.pcie_pageable_gbps);
    v.field("nic_gbps", l.nic_gbps);
    v.field("storage_gbps", l.storage_gbps);
}

template <class V>
void describe(V& v, ClassSlowdown& c) {
    v.field("gemm", c.gemm);
    v.field("attention", c.attention);
    v.field("memory", c.memory);
}

template <class V>
void describe(V& v, SizedSlowdown& s) {
    v.field("bytes", s.bytes);
    describe(v, static_cast<ClassSlowdown&>(s));
}

template <class V>
void describe(V& v, Interference& i) {
    v.field("compute_slowdown", i.compute_slowdown);
    v.field("comm_slowdown", i.comm_slowdown);
    v.section("beside_transfer", i.beside_transfer);
    v.section("beside_waiting", i.beside_waiting);
    v.sectionList("beside_transfer_by_size", i.beside_transfer_by_size);
    v.field("gemm_by_shape", i.gemm_by_shape);
    v.field("linger_tile_m", i.linger_tile_m);
    v.field("linger_tile_n", i.linger_tile_n);
}

template <class V>
void describe(V& v, JitterRates& j) {
    v.field("kernel_cv", j.kernel_cv);
    v.field("straggler_cv", j.straggler_cv);
    v.field("device_compute_cv", j.device_compute_cv);
    v.field("device_memory_cv", j.device_memory_cv);
    v.field("host_rank_cv", j.host_rank_cv);
}

template <class V>
void describe(V& v, PowerModel& p) {
    v.field("modelled", p.modelled);
    v.field("clock_max_mhz", p.clock_max_mhz);
    v.field("clock_intercept_mhz", p.clock_intercept_mhz);
    v.field("clock_mhz_per_tflops", p.clock_mhz_per_tflops);
    v.field("memory_busy_tflops", p.memory_busy_tflops);
    v.field("idle_headroom_mhz", p.idle_headroom_mhz);
    v.field("attention_reference_mhz", p.attention_reference_mhz);
    v.field("attention_exponent", p.attention);
}

template <class V>
void describe(V& v, ProfileDocument& d) {
    HardwareProfile& p = d.profile;
    v.field("stepsim_profile", d.stepsim_profile);
    v.field("name", p.name);
    v.field("source", p.source);
    v.section("gpu", p.gpu);
    v.section("memory", p.memory);
    v.sectionMap("gemm", p.gemm, std::span<const std::string_view>(kGemmDtypes));
    v.section("attention", p.attention);
    v.section("launch", p.launch);
    v.section("nccl", p.nccl);
    v.sectionList("collectives", p.collectives);
    v.section("links", p.links);
    v.section("interference", p.interference);
    v.section("jitter", p.jitter);
    v.section("power", p.power);
}

namespace {

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

void validate(const YamlReader& r, const ProfileDocument& d) {
    auto positive = [&](const std::string& path, double v) {
        if (!(v > 0.0)) r.fail(path, fmt::format("expected a positive number, got {}", v));
    };
    auto nonNegative = [&](const std::string& path, double v) {
        if (!(v >= 0.0)) r.fail(path, fmt::format("expected a number >= 0, got {}", v));
    };
    auto fraction = [&](const std::string& path, double v) {
        if (!(v > 0.0 && v <= 1.0)) r.fail(path, fmt::format("expected a fraction in (0, 1], got {}", v));
    };
    auto slowdown = [&](const std::string& path, double v) {
        if (!(v >= 1.0)) r.fail(path, fmt::format("expected a slowdown factor >= 1, got {}", v));
    };
    auto distribution = [&](const std::string& path, const Distribution& x) {
        nonNegative(path + ".median_us", x.median_us);
        if (!(x.p99_us >= x.median_us))
            r.fail(path + ".p99_us",
                   fmt::format("expected p99_us >= median_us ({}), got {}", x.median_us, x.p99_us));
    };

    if (d.stepsim_profile != 1)
        r.fail("stepsim_profile",
               fmt::format("unsupported profile version {}; this stepsim reads version 1", d.stepsim_profile));
    const HardwareProfile& p = d.profile;
    if (p.name.empty()) r.fail("name", "expected a non-empty profile name");

    const GpuRates& g = p.gpu;
    if (g.sms < 1) r.fail("gpu.sms", fmt::format("expected a positive integer, got {}", g.sms));
    positive("gpu.memory_gib", g.memory_gib);
    positive("gpu.hbm_gbps", g.hbm_gbps);
    positive("gpu.peak_tflops_bf16", g.peak_tflops_bf16);
    positive("gpu.peak_tflops_fp16", g.peak_tflops_fp16);
    positive("gpu.peak_tflops_fp8", g.peak_tflops_fp8);
    positive("gpu.peak_tflops_fp32", g.peak_tflops_fp32);

    fraction("memory.read_write_efficiency", p.memory.read_write_efficiency);
    nonNegative("memory.min_kernel_us", p.memory.min_kernel_us);
    for (const auto& [kind, k] : p.memory.kernels) {
        fraction("memory.kernels." + kind + ".efficiency", k.efficiency);
        nonNegative("memory.kernels." + kind + ".fixed_us", k.fixed_us);
    }
    const NormGrid& ng = p.memory.norms;
    for (const auto& [name, grid] : {std::pair{"layer_fp32", &ng.layer_fp32}, std::pair{"layer_bf16", &ng.layer_bf16},
                                     std::pair{"rms_fp32", &ng.rms_fp32}, std::pair{"rms_bf16", &ng.rms_bf16}}) {
        for (std::size_t i = 0; i < grid->size(); ++i) {
            const NormPoint& n = (*grid)[i];
            const std::string pp = fmt::format("memory.norms.{}[{}]", name, i);
            if (n.tokens < 1 || n.hidden < 1)
                r.fail(pp, fmt::format("expected positive tokens and hidden, got {} and {}", n.tokens, n.hidden));
            positive(pp + "[2]", n.forward_us);
            positive(pp + "[3]", n.backward_us);
            positive(pp + "[4]", n.weight_grad_us);
            for (std::size_t j = 0; j < i; ++j)
                if ((*grid)[j].tokens == n.tokens && (*grid)[j].hidden == n.hidden)
                    r.fail(pp, fmt::format("size {} × {} listed twice (also at [{}])", n.tokens, n.hidden, j));
        }
    }

    for (const auto& [dtype, e] : p.gemm) {
        const std::string path = "gemm." + dtype;
        if (!oneOf(kGemmDtypes, dtype))
            r.fail(path, fmt::format("unknown dtype; expected one of {}", joined(kGemmDtypes)));
        const double peak = dtype == "bf16"   ? g.peak_tflops_bf16
                            : dtype == "fp16" ? g.peak_tflops_fp16
                            : dtype == "fp8"  ? g.peak_tflops_fp8
                                              : g.peak_tflops_fp32;
        fraction(path + ".max_efficiency", e.max_efficiency);
        positive(path + ".k_half", e.k_half);
        if (e.tile_m < 1) r.fail(path + ".tile_m", fmt::format("expected a positive integer, got {}", e.tile_m));
        if (e.tile_n < 1) r.fail(path + ".tile_n", fmt::format("expected a positive integer, got {}", e.tile_n));
        nonNegative(path + ".overhead_us", e.overhead_us);
        nonNegative(path + ".rel_error", e.rel_error);
        for (std::size_t i = 0; i < e.points.size(); ++i) {
            const GemmPoint& pt = e.points[i];
            const std::string pp = fmt::format("{}.points[{}]", path, i);
            if (pt.m < 1 || pt.n < 1 || pt.k < 1)
                r.fail(pp, fmt::format("expected positive m, n, k, got [{}, {}, {}]", pt.m, pt.n, pt.k));
            positive(pp + "[3]", pt.tflops);
            if (pt.tflops > peak)
                r.fail(pp + "[3]", fmt::format("{} TFLOP/s is above the {} peak gpu.peak_tflops_{} ({})", pt.tflops,
                                               dtype, dtype, peak));
        }
    }

    fraction("attention.fwd_efficiency", p.attention.fwd_efficiency);
    fraction("attention.bwd_efficiency", p.attention.bwd_efficiency);
    for (std::size_t i = 0; i < p.attention.points.size(); ++i) {
        const AttentionPoint& a = p.attention.points[i];
        const std::string pp = fmt::format("attention.points[{}]", i);
        positive(pp + "[0]", double(a.head_dim));
        positive(pp + "[1]", double(a.seq));
        positive(pp + "[2]", double(a.batch_heads));
        positive(pp + "[3]", a.fwd_tflops);
        positive(pp + "[4]", a.bwd_tflops);
    }

    if (const PowerModel& pw = p.power; pw.modelled) {
        positive("power.clock_max_mhz", pw.clock_max_mhz);
        positive("power.clock_intercept_mhz", pw.clock_intercept_mhz);
        if (!(pw.clock_mhz_per_tflops < 0.0))
            r.fail("power.clock_mhz_per_tflops",
                   fmt::format("expected a negative slope (the clock falls as the load grows), got {}",
                               pw.clock_mhz_per_tflops));
        nonNegative("power.memory_busy_tflops", pw.memory_busy_tflops);
        nonNegative("power.idle_headroom_mhz", pw.idle_headroom_mhz);
        positive("power.attention_reference_mhz", pw.attention_reference_mhz);
        for (std::size_t i = 0; i < pw.attention.size(); ++i) {
            const AttentionClockExponent& a = pw.attention[i];
            const std::string pp = fmt::format("power.attention_exponent[{}]", i);
            if (a.head_dim < 1 || (i > 0 && a.head_dim <= pw.attention[i - 1].head_dim))
                r.fail(pp + "[0]", fmt::format("expected head_dims positive and ascending, got {}", a.head_dim));
            for (const auto& [k, x] : {std::pair{1, a.forward}, std::pair{2, a.backward}})
                if (!(x >= 0.0 && x <= 2.0))
                    r.fail(fmt::format("{}[{}]", pp, k), fmt::format("expected an exponent in [0, 2], got {}", x));
        }
    }

    distribution("launch.eager_host", p.launch.eager_host);
    distribution("launch.forward_host", p.launch.forward_host);
    distribution("launch.forward_host_ddp", p.launch.forward_host_ddp);
    distribution("launch.backward_host", p.launch.backward_host);
    nonNegative("launch.optimizer_host_per_tensor_us", p.launch.optimizer_host_per_tensor_us);
    nonNegative("launch.ddp_hook_host_us", p.launch.ddp_hook_host_us);
    nonNegative("launch.grad_accumulate_host_us", p.launch.grad_accumulate_host_us);
    distribution("launch.compiled_host", p.launch.compiled_host);
    distribution("launch.graph_host", p.launch.graph_host);
    distribution("launch.device_gap", p.launch.device_gap);
    const StepGaps& gaps = p.launch.step_gap_us;
    positive("launch.step_gap_us.gemm", gaps.gemm_us);
    positive("launch.step_gap_us.attention", gaps.attention_us);
    positive("launch.step_gap_us.memory", gaps.memory_us);
    positive("launch.step_gap_us.optimizer", gaps.optimizer_us);
    positive("launch.step_gap_us.copy", gaps.copy_us);
    for (const auto& [key, beside] : {std::pair{"launch.step_gap_beside_transfer_us", &p.launch.step_gap_beside_transfer_us},
                                      std::pair{"launch.step_gap_beside_waiting_us", &p.launch.step_gap_beside_waiting_us}}) {
        nonNegative(fmt::format("{}.gemm", key), beside->gemm_us);  // 0: not measured
        nonNegative(fmt::format("{}.attention", key), beside->attention_us);
        nonNegative(fmt::format("{}.memory", key), beside->memory_us);
        nonNegative(fmt::format("{}.optimizer", key), beside->optimizer_us);
        nonNegative(fmt::format("{}.copy", key), beside->copy_us);
    }
    const auto shapes = [&](const std::string& path, const std::vector<GemmShapeValue>& list,
                            const std::function<void(const std::string&, double)>& check) {
        for (std::size_t i = 0; i < list.size(); ++i) {
            const GemmShapeValue& g = list[i];
            const std::string gp = fmt::format("{}[{}]", path, i);
            if (g.m < 1 || g.n < 1 || g.k < 1)
                r.fail(gp, fmt::format("expected positive m, n, k, got [{}, {}, {}]", g.m, g.n, g.k));
            check(gp + "[3]", g.value);
        }
    };
    shapes("launch.gemm_gap_by_shape", p.launch.gemm_gap_by_shape, positive);
    shapes("launch.gemm_gap_beside_transfer_by_shape", p.launch.gemm_gap_beside_transfer_by_shape, positive);
    const CheckpointHost& ck = p.launch.checkpoint_host_us;
    nonNegative("launch.checkpoint_host_us.selective_forward", ck.selective_forward_us);
    nonNegative("launch.checkpoint_host_us.selective_backward", ck.selective_backward_us);
    nonNegative("launch.checkpoint_host_us.full_forward", ck.full_forward_us);
    nonNegative("launch.checkpoint_host_us.full_backward", ck.full_backward_us);
    distribution("launch.nccl_host", p.launch.nccl_host);
    if (const HostCostSpread& h = p.launch.host_cost_spread; !(h.p10 > 0 && h.p10 <= 1 && h.p90 >= 1))
        r.fail("launch.host_cost_spread", fmt::format("expected 0 < p10 <= 1 <= p90 (factors on the host costs), got "
                                                      "p10 {} and p90 {}", h.p10, h.p90));

    const NcclModel& n = p.nccl;
    for (int i = 0; i < 3; ++i) {
        nonNegative(fmt::format("nccl.ring_base_latency_us[{}]", i), n.ring_base_latency_us[i]);
        nonNegative(fmt::format("nccl.tree_base_latency_us[{}]", i), n.tree_base_latency_us[i]);
        nonNegative(fmt::format("nccl.nvlink_hop_latency_us[{}]", i), n.nvlink_hop_latency_us[i]);
        nonNegative(fmt::format("nccl.net_hop_latency_us[{}]", i), n.net_hop_latency_us[i]);
        fraction(fmt::format("nccl.proto_bw_fraction[{}]", i), n.proto_bw_fraction[i]);
    }
    positive("nccl.ring_busbw_gbps", n.ring_busbw_gbps);
    positive("nccl.nvls_busbw_gbps", n.nvls_busbw_gbps);

    for (std::size_t i = 0; i < p.collectives.size(); ++i) {
        const CollectiveFit& c = p.collectives[i];
        const std::string path = fmt::format("collectives[{}]", i);
        if (!oneOf(kCollectiveOps, c.op))
            r.fail(path + ".op", fmt::format("expected one of {}, got '{}'", joined(kCollectiveOps), c.op));
        if (c.ranks < 1) r.fail(path + ".ranks", fmt::format("expected a positive integer, got {}", c.ranks));
        if (c.nodes < 1 || c.nodes > c.ranks)
            r.fail(path + ".nodes", fmt::format("expected 1 to ranks ({}) nodes, got {}", c.ranks, c.nodes));
        if (!oneOf(kNcclAlgos, c.algo))
            r.fail(path + ".algo", fmt::format("expected one of {}, got '{}'", joined(kNcclAlgos), c.algo));
        if (!oneOf(kNcclProtos, c.proto))
            r.fail(path + ".proto", fmt::format("expected one of {}, got '{}'", joined(kNcclProtos), c.proto));
        if (c.dtype.empty()) r.fail(path + ".dtype", "expected a dtype name, got an empty string");
        nonNegative(path + ".rel_error", c.rel_error);
        if (c.segments.empty()) r.fail(path + ".segments", "expected at least one segment");
        for (std::size_t k = 0; k < c.segments.size(); ++k) {
            const CollectiveSegment& s = c.segments[k];
            const std::string sp = fmt::format("{}.segments[{}]", path, k);
            nonNegative(sp + ".lo_bytes", s.lo_bytes);
            if (!(s.hi_bytes > s.lo_bytes))
                r.fail(sp + ".hi_bytes", fmt::format("expected hi_bytes > lo_bytes ({}), got {}", s.lo_bytes, s.hi_bytes));
            if (k > 0 && s.lo_bytes != c.segments[k - 1].hi_bytes)
                r.fail(sp + ".lo_bytes",
                       fmt::format("segments must be ordered and contiguous: expected lo_bytes = the previous "
                                   "segment's hi_bytes ({}), got {}",
                                   c.segments[k - 1].hi_bytes, s.lo_bytes));
            nonNegative(sp + ".alpha_us", s.alpha_us);
            positive(sp + ".busbw_gbps", s.busbw_gbps);
            nonNegative(sp + ".rel_error", s.rel_error);
        }
    }

    positive("links.nvlink_gbps", p.links.nvlink_gbps);
    nonNegative("links.nvlink_latency_us", p.links.nvlink_latency_us);
    positive("links.pcie_h2d_gbps", p.links.pcie_h2d_gbps);
    positive("links.pcie_pageable_gbps", p.links.pcie_pageable_gbps);
    positive("links.nic_gbps", p.links.nic_gbps);
    positive("links.storage_gbps", p.links.storage_gbps);

    slowdown("interference.compute_slowdown", p.interference.compute_slowdown);
    slowdown("interference.comm_slowdown", p.interference.comm_slowdown);
    for (const auto& [name, c] : {std::pair{"beside_transfer", p.interference.beside_transfer},
                                  std::pair{"beside_waiting", p.interference.beside_waiting}})
        for (const auto& [cls, x] :
             {std::pair{"gemm", c.gemm}, std::pair{"attention", c.attention}, std::pair{"memory", c.memory}})
            if (x != 0) slowdown(fmt::format("interference.{}.{}", name, cls), x);  // 0: not measured
    const auto& sized = p.interference.beside_transfer_by_size;
    for (std::size_t k = 0; k < sized.size(); ++k) {
        const std::string sp = fmt::format("interference.beside_transfer_by_size[{}]", k);
        positive(sp + ".bytes", sized[k].bytes);
        if (k > 0 && !(sized[k].bytes > sized[k - 1].bytes))
            r.fail(sp + ".bytes", fmt::format("expected sizes in ascending order: more than the previous entry's {}, got {}",
                                              sized[k - 1].bytes, sized[k].bytes));
        for (const auto& [cls, x] : {std::pair{"gemm", sized[k].gemm}, std::pair{"attention", sized[k].attention},
                                     std::pair{"memory", sized[k].memory}})
            if (x != 0) slowdown(fmt::format("{}.{}", sp, cls), x);
    }
    shapes("interference.gemm_by_shape", p.interference.gemm_by_shape, slowdown);
    if (const Interference& i = p.interference;
        i.linger_tile_m < 0 || i.linger_tile_n < 0 || (i.linger_tile_m > 0) != (i.linger_tile_n > 0))
        r.fail("interference.linger_tile_m",
               fmt::format("expected linger_tile_m and linger_tile_n both positive (a tile's rows and columns) or both "
                           "0 (no lag), got {} and {}",
                           i.linger_tile_m, i.linger_tile_n));

    nonNegative("jitter.kernel_cv", p.jitter.kernel_cv);
    nonNegative("jitter.straggler_cv", p.jitter.straggler_cv);
    nonNegative("jitter.device_compute_cv", p.jitter.device_compute_cv);
    nonNegative("jitter.device_memory_cv", p.jitter.device_memory_cv);
    nonNegative("jitter.host_rank_cv", p.jitter.host_rank_cv);
}

struct BuiltinText {
    std::string_view name;
    std::string_view path;  // in the source tree
    std::string_view yaml;
};

// The texts of calibration/profiles/*.yaml, embedded by calibration/CMakeLists.txt.
std::span<const BuiltinText> builtinTexts() {
    static constexpr BuiltinText texts[] = {
#include "calibration/BuiltinProfiles.inc"
    };
    return texts;
}

std::string readFile(const std::filesystem::path& file, const char* what) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw inputError(file.string(), 0, "", fmt::format("cannot open the {} (does it exist?)", what));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

HardwareProfile parseProfile(std::string_view yaml, const std::string& source) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml));
    } catch (const YAML::ParserException& e) {
        throw inputError(source, e.mark.is_null() ? 0 : e.mark.line + 1, "", "YAML syntax error: " + e.msg);
    }
    if (!root.IsMap())
        throw inputError(source, root.Mark().is_null() ? 0 : root.Mark().line + 1, "",
                         "expected a hardware profile: a mapping that starts with `stepsim_profile: 1`, got " +
                             describeNode(root));
    YamlReader reader(source, YamlReader::Missing::error);
    ProfileDocument doc;
    YamlMapReader top(reader, root, "");
    top.readStruct(root, "", doc);
    validate(reader, doc);
    return doc.profile;
}

HardwareProfile loadProfile(const std::filesystem::path& file) {
    return parseProfile(readFile(file, "profile file"), file.string());
}

std::string writeProfile(const HardwareProfile& p) {
    ProfileDocument doc{1, p};
    YamlWriter w;
    w.comment(fmt::format("stepsim hardware profile {} ({})", p.name, p.source));
    describe(w, doc);
    return w.text();
}

std::vector<std::string> builtinProfileNames() {
    std::vector<std::string> names;
    for (const auto& b : builtinTexts()) names.emplace_back(b.name);
    return names;
}

HardwareProfile builtinProfile(const std::string& name) {
    // The built-in texts never change: each is parsed once (a measured profile holds hundreds of GEMM points, and
    // `stepsim validate` or a sweep resolves one per scenario).
    static std::mutex mutex;
    static std::map<std::string, HardwareProfile> parsed;
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = parsed.find(name); it != parsed.end()) return it->second;
    for (const auto& b : builtinTexts())
        if (b.name == name)
            return parsed.emplace(name, parseProfile(b.yaml, std::string(b.path) + " (built in)")).first->second;
    std::string known;
    for (const auto& n : builtinProfileNames()) known += (known.empty() ? "" : ", ") + n;
    throw InputError(fmt::format("no built-in profile '{}'; the built-ins are {}", name, known));
}

HardwareProfile resolveProfile(const ClusterSpec& cluster, const std::string& scenario_file) {
    const std::string& want = cluster.profile;
    // The default for H200 nodes (and for other node types) is the profile measured on real H200s.
    if (want == "builtin") return builtinProfile(cluster.node == "hgx-h100" ? "h100-sxm" : "h200x2");
    const auto names = builtinProfileNames();
    if (std::find(names.begin(), names.end(), want) != names.end()) return builtinProfile(want);
    std::filesystem::path file(want);
    if (file.is_relative() && !scenario_file.empty())
        file = std::filesystem::path(scenario_file).parent_path() / file;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
        std::string known;
        for (const auto& n : names) known += ", " + n;
        throw inputError(scenario_file, 0, "cluster.profile",
                         fmt::format("expected builtin{}, or a profile YAML file; no file {}", known, file.string()));
    }
    return loadProfile(file);
}

}  // namespace stepsim
