#include "sim/scenario/ProfileYaml.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <mutex>
#include <span>
#include <sstream>

#include "sim/base/Files.hpp"
#include "sim/base/InputError.hpp"
#include "sim/cost/ProfileDerive.hpp"
#include "sim/scenario/ProfileChecks.hpp"
#include "sim/scenario/YamlReader.hpp"
#include "sim/scenario/YamlWriter.hpp"
#include "sim/topology/Builders.hpp"

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

void readValue(YamlReader& r, const YAML::Node& n, const std::string& path, UnalignedRate& out) {
    readFlowList(r, n, path, out, "[multiple, m_tflops, n_tflops, k_tflops]", &UnalignedRate::multiple,
                 &UnalignedRate::m_tflops, &UnalignedRate::n_tflops, &UnalignedRate::k_tflops);
}

std::string formatValue(const UnalignedRate& p) {
    return formatFlowList(p, &UnalignedRate::multiple, &UnalignedRate::m_tflops, &UnalignedRate::n_tflops,
                          &UnalignedRate::k_tflops);
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

constexpr std::array<std::string_view, 37> kMemoryKernelKinds = {
    "elementwise",    "cast_up",           "cast_down",            "norm_forward",
    "norm_backward",  "optimizer",         "residual_add",         "optimizer_bf16",
    "log_softmax_forward", "log_softmax_backward", "log_softmax_forward_fp32", "log_softmax_backward_fp32",
    "optimizer_foreach", "optimizer_foreach_bf16", "norm_weight_grad", "rms_forward", "rms_backward",
    "rms_weight_grad", "gelu_forward", "fp8_abs", "fp8_amax", "fp8_amax_rows", "fp8_amax_cols", "fp8_scale_math",
    "fp8_upcast", "fp8_scale_mul", "fp8_clamp", "fp8_quantize", "fp8_transpose", "fp8_post_scale",
    "fp8_post_scale_mul", "bias_grad", "rope", "qkv_permute_cat", "qkv_permute_copy", "dropout", "dropout_backward"};

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
    v.optionalField("nvlink_gbps", g.nvlink_gbps, g.nvlink_gbps == 0.0);
    v.optionalField("pcie_gbps", g.pcie_gbps, g.pcie_gbps == 0.0);
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
void describe(V& v, GemmAlignment& a) {
    v.field("alignment", a.alignment);
    v.field("rates", a.rates);
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
    v.section("unaligned", g.unaligned);
}

template <class V>
void describe(V& v, AttentionRates& a) {
    v.field("fwd_efficiency", a.fwd_efficiency);
    v.field("bwd_efficiency", a.bwd_efficiency);
    v.field("points", a.points);
    v.field("dropout_forward_ratio", a.dropout_forward_ratio);
    v.field("dropout_backward_ratio", a.dropout_backward_ratio);
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
void describe(V& v, Fp8LinearHost& h) {
    v.field("tensorwise_forward_us", h.tensorwise_forward_us);
    v.field("tensorwise_backward_us", h.tensorwise_backward_us);
    v.field("rowwise_forward_us", h.rowwise_forward_us);
    v.field("rowwise_backward_us", h.rowwise_backward_us);
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
    v.field("ddp_find_unused_host_us", l.ddp_find_unused_host_us);
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
    v.section("fp8_linear_host_per_kernel", l.fp8_linear_host_per_kernel);
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
void describe(V& v, IoRates& io) {
    v.field("copy_alpha_us", io.copy_alpha_us);
    v.field("h2d_pinned_gbps", io.h2d_pinned_gbps);
    v.field("h2d_pageable_gbps", io.h2d_pageable_gbps);
    v.field("d2h_pinned_gbps", io.d2h_pinned_gbps);
    v.field("d2h_pageable_gbps", io.d2h_pageable_gbps);
    v.field("storage_write_gbps", io.storage_write_gbps);
    v.field("dcp_sync_overhead_ms", io.dcp_sync_overhead_ms);
    v.field("dcp_sync_write_gbps", io.dcp_sync_write_gbps);
    v.field("dcp_stage_overhead_ms", io.dcp_stage_overhead_ms);
    v.field("dcp_stage_gbps", io.dcp_stage_gbps);
    v.field("dcp_stage_pinned_gbps", io.dcp_stage_pinned_gbps);
    v.field("dcp_async_write_overhead_ms", io.dcp_async_write_overhead_ms);
    v.field("dcp_async_write_gbps", io.dcp_async_write_gbps);
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
    v.optionalField("limit_w", p.limit_w, p.limit_w == 0.0);
    v.optionalField("fixed_w", p.fixed_w, p.fixed_w == 0.0);
    v.optionalField("fixed_w_low", p.fixed_w_low, p.fixed_w_low == 0.0);
    v.optionalField("fixed_w_high", p.fixed_w_high, p.fixed_w_high == 0.0);
}

template <class V>
void describe(V& v, DerivationStep& d) {
    v.field("what", d.what);
    v.field("factor", d.factor);
    v.field("low", d.low);
    v.field("high", d.high);
    v.field("why", d.why);
}

template <class V>
void describe(V& v, ProfileDerivation& d) {
    v.field("from", d.from);
    v.field("extrapolated", d.extrapolated);
    v.field("notes", d.notes);
    v.sectionList("steps", d.steps);
}

template <class V>
void describe(V& v, CompilePhaseRates& c) {
    v.field("kernels_per_region", c.kernels_per_region);
    v.field("time_ratio", c.time_ratio);
}

template <class V>
void describe(V& v, CompiledOptimizerRates& o) {
    v.field("measured", o.measured);
    v.field("kernels_per_tensor", o.kernels_per_tensor);
    v.field("time_ratio", o.time_ratio);
    v.field("host_us", o.host_us);
    v.field("host_us_per_tensor", o.host_us_per_tensor);
    v.field("compile_s_per_tensor", o.compile_s_per_tensor);
}

template <class V>
void describe(V& v, CompiledLossRates& l) {
    v.field("measured", l.measured);
    v.field("forward_kernels", l.forward_kernels);
    v.field("backward_kernels", l.backward_kernels);
    v.field("forward_time_ratio", l.forward_time_ratio);
    v.field("backward_time_ratio", l.backward_time_ratio);
}

template <class V>
void describe(V& v, CompiledDynamicRates& d) {
    v.field("measured", d.measured);
    v.field("forward_kernels_ratio", d.forward_kernels_ratio);
    v.field("backward_kernels_ratio", d.backward_kernels_ratio);
    v.field("forward_time_ratio", d.forward_time_ratio);
    v.field("backward_time_ratio", d.backward_time_ratio);
    v.field("gemm_time_ratio", d.gemm_time_ratio);
    v.field("compile_time_ratio", d.compile_time_ratio);
}

template <class V>
void describe(V& v, CompiledFp8Phase& f) {
    v.field("kernels_per_cast", f.kernels_per_cast);
    v.field("time_ratio", f.time_ratio);
}

template <class V>
void describe(V& v, CompiledFp8Rates& f) {
    v.field("measured", f.measured);
    v.section("tensorwise_forward", f.tensorwise_forward);
    v.section("tensorwise_backward", f.tensorwise_backward);
    v.section("rowwise_forward", f.rowwise_forward);
    v.section("rowwise_backward", f.rowwise_backward);
}

template <class V>
void describe(V& v, CompileRates& c) {
    v.field("measured", c.measured);
    v.section("forward", c.forward);
    v.section("backward", c.backward);
    v.field("gemm_time_ratio", c.gemm_time_ratio);
    v.field("gemm_time_ratio_max_autotune", c.gemm_time_ratio_max_autotune);
    v.field("graph_host_us", c.graph_host_us);
    v.field("kernel_host_ratio", c.kernel_host_ratio);
    v.field("cudagraph_kernel_host_us", c.cudagraph_kernel_host_us);
    v.field("compile_s_per_block", c.compile_s_per_block);
    v.field("compile_s_per_block_max_autotune", c.compile_s_per_block_max_autotune);
    v.section("optimizer", c.optimizer);
    v.section("loss", c.loss);
    v.section("dynamic", c.dynamic);
    v.section("fp8", c.fp8);
}

template <class V>
void describe(V& v, OpsHostRates& o) {
    v.field("module_call_us", o.module_call_us);
    v.field("autograd_node_forward_us", o.autograd_node_forward_us);
    v.field("autograd_node_backward_us", o.autograd_node_backward_us);
    v.field("fsdp2_hook_us", o.fsdp2_hook_us);
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
    v.section("io", p.io);
    v.section("interference", p.interference);
    v.section("jitter", p.jitter);
    v.section("power", p.power);
    v.section("compile", p.compile);
    const OpsHostRates none;
    v.optionalSection("ops_host", p.ops_host,
                      p.ops_host.module_call_us == none.module_call_us &&
                          p.ops_host.autograd_node_forward_us == none.autograd_node_forward_us &&
                          p.ops_host.autograd_node_backward_us == none.autograd_node_backward_us &&
                          p.ops_host.fsdp2_hook_us == none.fsdp2_hook_us);
    v.optionalSection("derivation", p.derivation, p.derivation.empty());
}

namespace {

struct BuiltinText {
    std::string_view name;
    std::string_view path;  // in the source tree
    std::string_view yaml;
};

// The texts of calibration/profiles/*.yaml, embedded by calibration/CMakeLists.txt. Not constexpr: a derived
// profile's text is long enough that measuring it at compile time runs past clang's constexpr step limit.
std::span<const BuiltinText> builtinTexts() {
    static const BuiltinText texts[] = {
#include "calibration/BuiltinProfiles.inc"
    };
    return texts;
}

std::string readFile(const std::filesystem::path& file, const char* what) {
    return readInputFile(file, what, kMaxScenarioBytes);
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
    requireQuotesClosedOnTheirLine(reader, root, yaml);
    ProfileDocument doc;
    YamlMapReader top(reader, root, "");
    top.readStruct(root, "", doc);
    checkProfile(reader, doc.stepsim_profile, doc.profile);
    checkProfileMagnitudes(reader, root);  // after the section rules, whose messages are the more specific
    return doc.profile;
}

namespace {

// A datasheet delta file (`stepsim_profile_delta: 1`): the measured GPU's unrecorded facts under `measured`, the
// target's datasheet under `target` (ProfileDerive.hpp's DatasheetDelta; 0: the measured GPU's value).
struct DeltaMeasured {
    double power_limit_w = 0, fixed_w = 0, fixed_w_low = 0, fixed_w_high = 0;
};
struct DeltaDocument {
    int stepsim_profile_delta = 1;
    DatasheetDelta d;
    DeltaMeasured measured;
};

}  // namespace

template <class V>
void describe(V& v, DeltaMeasured& m) {
    v.field("power_limit_w", m.power_limit_w);
    v.field("fixed_w", m.fixed_w);
    v.field("fixed_w_low", m.fixed_w_low);
    v.field("fixed_w_high", m.fixed_w_high);
}

// The target GPU's datasheet (DatasheetDelta's target members).
struct DeltaTarget {
    DatasheetDelta* d;
};

template <class V>
void describe(V& v, DeltaTarget& t) {
    DatasheetDelta& d = *t.d;
    v.field("sms", d.sms);
    v.field("memory_gib", d.memory_gib);
    v.field("hbm_gbps", d.hbm_gbps);
    v.field("power_limit_w", d.power_limit_w);
    v.field("clock_max_mhz", d.clock_max_mhz);
    v.field("peak_tflops_bf16", d.peak_tflops_bf16);
    v.field("peak_tflops_fp16", d.peak_tflops_fp16);
    v.field("peak_tflops_fp8", d.peak_tflops_fp8);
    v.field("peak_tflops_fp32", d.peak_tflops_fp32);
    v.field("nvlink_gbps", d.nvlink_gbps);
}

template <class V>
void describe(V& v, DeltaDocument& doc) {
    DatasheetDelta& d = doc.d;
    v.field("stepsim_profile_delta", doc.stepsim_profile_delta);
    v.field("name", d.name);
    v.field("from", d.from);
    v.field("model", d.model);
    v.field("extrapolated", d.extrapolated);
    v.field("extrapolation_uncertainty", d.extrapolation_uncertainty);
    v.field("notes", d.notes);
    v.section("measured", doc.measured);
    DeltaTarget target{&d};
    v.section("target", target);
}

DatasheetDelta parseDatasheetDelta(std::string_view yaml, const std::string& source) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml));
    } catch (const YAML::ParserException& e) {
        throw inputError(source, e.mark.is_null() ? 0 : e.mark.line + 1, "", "YAML syntax error: " + e.msg);
    }
    if (!root.IsMap())
        throw inputError(source, root.Mark().is_null() ? 0 : root.Mark().line + 1, "",
                         "expected a datasheet delta: a mapping that starts with `stepsim_profile_delta: 1`, got " +
                             describeNode(root));
    YamlReader reader(source, YamlReader::Missing::error);
    DeltaDocument doc;
    YamlMapReader top(reader, root, "");
    top.readStruct(root, "", doc);
    if (doc.stepsim_profile_delta != 1)
        reader.fail("stepsim_profile_delta", fmt::format("expected 1, got {}", doc.stepsim_profile_delta));
    if (doc.d.name.empty()) reader.fail("name", "expected the derived profile's name");
    if (doc.d.from.empty()) reader.fail("from", "expected the measured profile (a built-in name or a profile YAML)");
    const DeltaMeasured& m = doc.measured;
    for (const auto& [key, x] : {std::pair{"measured.power_limit_w", m.power_limit_w}, std::pair{"measured.fixed_w", m.fixed_w},
                                 std::pair{"measured.fixed_w_low", m.fixed_w_low},
                                 std::pair{"measured.fixed_w_high", m.fixed_w_high},
                                 std::pair{"extrapolation_uncertainty", doc.d.extrapolation_uncertainty}})
        if (!(x >= 0)) reader.fail(key, fmt::format("expected a number >= 0, got {}", x));
    if (!(m.fixed_w_low <= m.fixed_w && m.fixed_w <= m.fixed_w_high))
        reader.fail("measured.fixed_w", fmt::format("expected fixed_w_low ({}) <= fixed_w <= fixed_w_high ({}), got {}",
                                                    m.fixed_w_low, m.fixed_w_high, m.fixed_w));
    if (m.power_limit_w > 0 && !(m.fixed_w_high < m.power_limit_w))
        reader.fail("measured.fixed_w_high",
                    fmt::format("expected less than measured.power_limit_w ({}), got {}", m.power_limit_w, m.fixed_w_high));
    if (!(doc.d.extrapolation_uncertainty < 1))
        reader.fail("extrapolation_uncertainty",
                    fmt::format("expected a fraction below 1, got {}", doc.d.extrapolation_uncertainty));
    doc.d.source_limit_w = m.power_limit_w;
    doc.d.fixed_w = m.fixed_w;
    doc.d.fixed_w_low = m.fixed_w_low;
    doc.d.fixed_w_high = m.fixed_w_high;
    return doc.d;
}

HardwareProfile deriveProfileFromFile(const std::filesystem::path& delta_file) {
    const DatasheetDelta d = parseDatasheetDelta(readFile(delta_file, "datasheet delta file"), delta_file.string());
    const auto names = builtinProfileNames();
    HardwareProfile measured;
    if (std::find(names.begin(), names.end(), d.from) != names.end()) {
        measured = builtinProfile(d.from);
    } else {
        std::filesystem::path from(d.from);
        if (from.is_relative()) from = delta_file.parent_path() / from;
        measured = loadProfile(from);
    }
    return deriveProfile(measured, d);
}

HardwareProfile loadProfile(const std::filesystem::path& file) {
    HardwareProfile p = parseProfile(readFile(file, "the profile file"), file.string());
    p.file = file.string();
    return p;
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
        if (b.name == name) {
            HardwareProfile p = parseProfile(b.yaml, std::string(b.path) + " (built in)");
            p.file = b.path;
            p.builtin = true;
            return parsed.emplace(name, std::move(p)).first->second;
        }
    std::string known;
    for (const auto& n : builtinProfileNames()) known += (known.empty() ? "" : ", ") + n;
    throw InputError(fmt::format("no built-in profile '{}'; the built-ins are {}", name, known));
}

namespace {

HardwareProfile resolveNamedProfile(const ClusterSpec& cluster, const std::string& scenario_file);

}  // namespace

HardwareProfile resolveProfile(const ClusterSpec& cluster, const std::string& scenario_file) {
    HardwareProfile p = resolveNamedProfile(cluster, scenario_file);
    // The host's own GPU: its power cap, HBM bandwidth and capacity (ProfileDerive.hpp), each step recorded in the
    // profile's derivation (`stepsim run` prints the profile's line; `profile show` the steps).
    const std::size_t before = p.derivation.steps.size();
    if (cluster.power_limit_w)
        scalePowerLimit(p, *cluster.power_limit_w, p.power.fixed_w_low > 0 ? p.power.fixed_w_low : p.power.fixed_w,
                        p.power.fixed_w_high > 0 ? p.power.fixed_w_high : p.power.fixed_w,
                        (scenario_file.empty() ? std::string() : scenario_file + ": ") + "cluster.power_limit_w");
    if (cluster.hbm_tbps) scaleHbmBandwidth(p, *cluster.hbm_tbps * 1000.0);
    if (cluster.hbm_gib) setHbmCapacity(p, *cluster.hbm_gib);
    if (p.derivation.steps.size() > before) {
        if (p.derivation.from.empty()) p.derivation.from = p.name;
        p.name += " (this cluster's host)";
    }
    return p;
}

namespace {

HardwareProfile resolveNamedProfile(const ClusterSpec& cluster, const std::string& scenario_file) {
    const std::string& want = cluster.profile;
    // `builtin`: the node's own default (NodeTemplate::default_profile); a node file's is the profile measured on
    // real H200s. A node with none is refused by the loader before this (ScenarioLoader.cpp).
    if (want == "builtin") {
        const std::optional<NodeTemplate> node = builtinNode(cluster.node);
        const std::string name = node ? node->default_profile : "h200x2";
        if (name.empty())
            throw inputError(scenario_file, 0, "cluster.profile",
                             fmt::format("node {} has no built-in profile of its {} GPUs: name one", cluster.node,
                                         node->gpu));
        return builtinProfile(name);
    }
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

}  // namespace

}  // namespace stepsim
