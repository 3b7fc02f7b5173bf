// ProfileYaml: exact round trip of every field, the built-in profiles, and rejection of incomplete or
// inconsistent profiles with messages that name the file, line and key.
#include "sim/scenario/ProfileYaml.hpp"

#include <filesystem>
#include <fstream>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"

namespace stepsim {
namespace {

using ::testing::HasSubstr;

// Every member compared one by one, written out by hand so a member that ProfileYaml forgets shows up; one helper
// per section of the profile.
void expectSameShapes(const std::vector<GemmShapeValue>& x, const std::vector<GemmShapeValue>& y) {
    ASSERT_EQ(x.size(), y.size());
    for (std::size_t k = 0; k < x.size(); ++k)
        EXPECT_EQ(std::tie(x[k].m, x[k].n, x[k].k, x[k].value), std::tie(y[k].m, y[k].n, y[k].k, y[k].value));
}

auto dist(const Distribution& d) { return std::tie(d.median_us, d.p99_us); }

void expectSameGpuAndMemory(const HardwareProfile& a, const HardwareProfile& b) {
    EXPECT_EQ(std::tie(a.gpu.model, a.gpu.sms, a.gpu.memory_gib, a.gpu.hbm_gbps, a.gpu.peak_tflops_bf16,
                       a.gpu.peak_tflops_fp16, a.gpu.peak_tflops_fp8, a.gpu.peak_tflops_fp32),
              std::tie(b.gpu.model, b.gpu.sms, b.gpu.memory_gib, b.gpu.hbm_gbps, b.gpu.peak_tflops_bf16,
                       b.gpu.peak_tflops_fp16, b.gpu.peak_tflops_fp8, b.gpu.peak_tflops_fp32));
    EXPECT_EQ(std::tie(a.memory.read_write_efficiency, a.memory.min_kernel_us),
              std::tie(b.memory.read_write_efficiency, b.memory.min_kernel_us));
    ASSERT_EQ(a.memory.kernels.size(), b.memory.kernels.size());
    for (const auto& [kind, k] : a.memory.kernels) {
        ASSERT_EQ(b.memory.kernels.count(kind), 1u) << kind;
        EXPECT_EQ(std::tie(k.efficiency, k.fixed_us),
                  std::tie(b.memory.kernels.at(kind).efficiency, b.memory.kernels.at(kind).fixed_us));
    }
}

void expectSameGemmAndAttention(const HardwareProfile& a, const HardwareProfile& b) {
    ASSERT_EQ(a.gemm.size(), b.gemm.size());
    for (const auto& [dtype, ga] : a.gemm) {
        ASSERT_EQ(b.gemm.count(dtype), 1u) << dtype;
        const GemmEfficiency& gb = b.gemm.at(dtype);
        EXPECT_EQ(std::tie(ga.max_efficiency, ga.k_half, ga.tile_m, ga.tile_n, ga.overhead_us, ga.rel_error),
                  std::tie(gb.max_efficiency, gb.k_half, gb.tile_m, gb.tile_n, gb.overhead_us, gb.rel_error))
            << dtype;
        ASSERT_EQ(ga.points.size(), gb.points.size()) << dtype;
        for (std::size_t i = 0; i < ga.points.size(); ++i)
            EXPECT_EQ(std::tie(ga.points[i].m, ga.points[i].n, ga.points[i].k, ga.points[i].tflops),
                      std::tie(gb.points[i].m, gb.points[i].n, gb.points[i].k, gb.points[i].tflops));
    }
    EXPECT_EQ(std::tie(a.attention.fwd_efficiency, a.attention.bwd_efficiency),
              std::tie(b.attention.fwd_efficiency, b.attention.bwd_efficiency));
}

void expectSameLaunch(const HardwareProfile& a, const HardwareProfile& b) {
    EXPECT_EQ(dist(a.launch.eager_host), dist(b.launch.eager_host));
    EXPECT_EQ(dist(a.launch.forward_host), dist(b.launch.forward_host));
    EXPECT_EQ(dist(a.launch.forward_host_ddp), dist(b.launch.forward_host_ddp));
    EXPECT_EQ(dist(a.launch.backward_host), dist(b.launch.backward_host));
    EXPECT_EQ(a.launch.optimizer_host_per_tensor_us, b.launch.optimizer_host_per_tensor_us);
    EXPECT_EQ(a.launch.ddp_hook_host_us, b.launch.ddp_hook_host_us);
    EXPECT_EQ(dist(a.launch.compiled_host), dist(b.launch.compiled_host));
    EXPECT_EQ(dist(a.launch.graph_host), dist(b.launch.graph_host));
    EXPECT_EQ(dist(a.launch.device_gap), dist(b.launch.device_gap));
    const auto gaps = [](const StepGaps& g) { return std::tie(g.gemm_us, g.attention_us, g.memory_us, g.optimizer_us, g.copy_us); };
    EXPECT_EQ(gaps(a.launch.step_gap_us), gaps(b.launch.step_gap_us));
    EXPECT_EQ(gaps(a.launch.step_gap_beside_transfer_us), gaps(b.launch.step_gap_beside_transfer_us));
    EXPECT_EQ(gaps(a.launch.step_gap_beside_waiting_us), gaps(b.launch.step_gap_beside_waiting_us));
    const auto ck = [](const CheckpointHost& c) {
        return std::tie(c.selective_forward_us, c.selective_backward_us, c.full_forward_us, c.full_backward_us);
    };
    EXPECT_EQ(ck(a.launch.checkpoint_host_us), ck(b.launch.checkpoint_host_us));
    EXPECT_EQ(dist(a.launch.nccl_host), dist(b.launch.nccl_host));
    EXPECT_EQ(std::tie(a.launch.host_cost_spread.p10, a.launch.host_cost_spread.p90),
              std::tie(b.launch.host_cost_spread.p10, b.launch.host_cost_spread.p90));
    expectSameShapes(a.launch.gemm_gap_by_shape, b.launch.gemm_gap_by_shape);
    expectSameShapes(a.launch.gemm_gap_beside_transfer_by_shape, b.launch.gemm_gap_beside_transfer_by_shape);
}

void expectSameNccl(const HardwareProfile& a, const HardwareProfile& b) {
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(a.nccl.ring_base_latency_us[i], b.nccl.ring_base_latency_us[i]);
        EXPECT_EQ(a.nccl.tree_base_latency_us[i], b.nccl.tree_base_latency_us[i]);
        EXPECT_EQ(a.nccl.nvlink_hop_latency_us[i], b.nccl.nvlink_hop_latency_us[i]);
        EXPECT_EQ(a.nccl.net_hop_latency_us[i], b.nccl.net_hop_latency_us[i]);
        EXPECT_EQ(a.nccl.proto_bw_fraction[i], b.nccl.proto_bw_fraction[i]);
    }
    EXPECT_EQ(a.nccl.ring_busbw_gbps, b.nccl.ring_busbw_gbps);
    EXPECT_EQ(a.nccl.nvls_busbw_gbps, b.nccl.nvls_busbw_gbps);
    ASSERT_EQ(a.collectives.size(), b.collectives.size());
    for (std::size_t i = 0; i < a.collectives.size(); ++i) {
        const CollectiveFit& ca = a.collectives[i];
        const CollectiveFit& cb = b.collectives[i];
        EXPECT_EQ(std::tie(ca.op, ca.ranks, ca.nodes, ca.algo, ca.proto, ca.dtype, ca.rel_error),
                  std::tie(cb.op, cb.ranks, cb.nodes, cb.algo, cb.proto, cb.dtype, cb.rel_error));
        ASSERT_EQ(ca.segments.size(), cb.segments.size());
        for (std::size_t k = 0; k < ca.segments.size(); ++k) {
            const CollectiveSegment& sa = ca.segments[k];
            const CollectiveSegment& sb = cb.segments[k];
            EXPECT_EQ(std::tie(sa.lo_bytes, sa.hi_bytes, sa.alpha_us, sa.busbw_gbps, sa.rel_error),
                      std::tie(sb.lo_bytes, sb.hi_bytes, sb.alpha_us, sb.busbw_gbps, sb.rel_error));
        }
    }
}

void expectSameLinksAndInterference(const HardwareProfile& a, const HardwareProfile& b) {
    EXPECT_EQ(std::tie(a.links.nvlink_gbps, a.links.nvlink_latency_us, a.links.pcie_h2d_gbps,
                       a.links.pcie_pageable_gbps, a.links.nic_gbps, a.links.storage_gbps),
              std::tie(b.links.nvlink_gbps, b.links.nvlink_latency_us, b.links.pcie_h2d_gbps,
                       b.links.pcie_pageable_gbps, b.links.nic_gbps, b.links.storage_gbps));
    EXPECT_EQ(std::tie(a.interference.compute_slowdown, a.interference.comm_slowdown),
              std::tie(b.interference.compute_slowdown, b.interference.comm_slowdown));
    const ClassSlowdown &ta = a.interference.beside_transfer, &tb = b.interference.beside_transfer;
    const ClassSlowdown &wa = a.interference.beside_waiting, &wb = b.interference.beside_waiting;
    EXPECT_EQ(std::tie(ta.gemm, ta.attention, ta.memory, wa.gemm, wa.attention, wa.memory),
              std::tie(tb.gemm, tb.attention, tb.memory, wb.gemm, wb.attention, wb.memory));
    ASSERT_EQ(a.interference.beside_transfer_by_size.size(), b.interference.beside_transfer_by_size.size());
    for (std::size_t k = 0; k < a.interference.beside_transfer_by_size.size(); ++k) {
        const SizedSlowdown &x = a.interference.beside_transfer_by_size[k], &y = b.interference.beside_transfer_by_size[k];
        EXPECT_EQ(std::tie(x.bytes, x.gemm, x.attention, x.memory), std::tie(y.bytes, y.gemm, y.attention, y.memory));
    }
    expectSameShapes(a.interference.gemm_by_shape, b.interference.gemm_by_shape);
    EXPECT_EQ(std::tie(a.interference.linger_tile_m, a.interference.linger_tile_n),
              std::tie(b.interference.linger_tile_m, b.interference.linger_tile_n));
}

void expectSameJitterAndPower(const HardwareProfile& a, const HardwareProfile& b) {
    EXPECT_EQ(std::tie(a.jitter.kernel_cv, a.jitter.straggler_cv, a.jitter.device_compute_cv, a.jitter.device_memory_cv),
              std::tie(b.jitter.kernel_cv, b.jitter.straggler_cv, b.jitter.device_compute_cv, b.jitter.device_memory_cv));
    EXPECT_EQ(std::tie(a.power.modelled, a.power.clock_max_mhz, a.power.clock_intercept_mhz, a.power.clock_mhz_per_tflops,
                       a.power.memory_busy_tflops, a.power.idle_headroom_mhz, a.power.attention_reference_mhz),
              std::tie(b.power.modelled, b.power.clock_max_mhz, b.power.clock_intercept_mhz, b.power.clock_mhz_per_tflops,
                       b.power.memory_busy_tflops, b.power.idle_headroom_mhz, b.power.attention_reference_mhz));
    ASSERT_EQ(a.power.attention.size(), b.power.attention.size());
    for (std::size_t i = 0; i < a.power.attention.size(); ++i)
        EXPECT_EQ(std::tie(a.power.attention[i].head_dim, a.power.attention[i].forward, a.power.attention[i].backward),
                  std::tie(b.power.attention[i].head_dim, b.power.attention[i].forward, b.power.attention[i].backward));
}

void expectSameProfile(const HardwareProfile& a, const HardwareProfile& b) {
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.source, b.source);
    expectSameGpuAndMemory(a, b);
    expectSameGemmAndAttention(a, b);
    expectSameLaunch(a, b);
    expectSameNccl(a, b);
    expectSameLinksAndInterference(a, b);
    expectSameJitterAndPower(a, b);
}

// A profile with every member away from its default, and doubles that need all 17 digits.
HardwareProfile oddProfile() {
    HardwareProfile p;
    p.name = "odd: profile";
    p.source = "stepsim calibrate --out x.yaml";
    p.gpu = {"Test GPU", 114, 79.5, 2039.123456789, 987.6543210987654, 0.1 + 0.2, 1979.5, 19.5};
    p.memory = {0.87654321, 1.25};
    p.gemm["bf16"] = {0.7777777777777777, 300.5, 64, 128, 3.3, {{4096, 4096, 4096, 778.2641372103878}, {1, 2, 3, 1e-9}},
                      0.0312};
    p.gemm["fp32"] = {0.5, 64, 32, 32, 7, {}, 0};
    p.attention = {0.6123, 0.4321};
    p.memory.kernels["cast_up"] = {0.45, 6.01};
    p.memory.kernels["optimizer"] = {0.906, 45.375};
    p.launch.eager_host = {9.329955000012546, 10.041749999984972};
    p.launch.forward_host = {29.5, 31.7};
    p.launch.forward_host_ddp = {34.4, 37.25};
    p.launch.backward_host = {51.59, 55.51};
    p.launch.optimizer_host_per_tensor_us = 15.046;
    p.launch.ddp_hook_host_us = 26.33;
    p.launch.compiled_host = {2.5, 3.5};
    p.launch.graph_host = {0.25, 0.75};
    p.launch.device_gap = {1.5, 2.5};
    p.launch.step_gap_us = {2.27, 2.5, 1.78125, 1.6, 1.25};
    p.launch.step_gap_beside_transfer_us = {3.25, 4.015, 2.4146784940473633, 0, 1.98};
    p.launch.step_gap_beside_waiting_us = {2.3, 0, 1.7456, 0, 1.25 / 3.0};
    p.launch.checkpoint_host_us = {360.5, 424.25, 481.75, 0.0};
    p.launch.nccl_host = {24, 31};
    p.launch.host_cost_spread = {0.5658154706132512, 1.0 / 3.0 + 1.6};
    p.nccl = {{1, 2, 3}, {4, 5, 6}, {0.1, 0.2, 0.3}, {7, 8, 9}, {0.4, 0.9, 0.95}, 123.456, 456.789};
    p.collectives.push_back({"all_reduce", 8, 1, "ring", "simple", "bf16",
                             {{0, 1048576, 14.5, 56.84, 0.01}, {1048576, 4294967296.0, 20.25, 348.123, 0.02}}, 0.015});
    p.collectives.push_back({"all_gather", 16, 2, "auto", "auto", "fp32", {{8, 1e12, 30, 40, 0}}, 0});
    p.links = {451.5, 0.75, 54.68054566957162, 19.5, 47.5, 4.5};
    p.interference = {1.0979, 1.7484, {1.2270666074902217, 1.13, 1.177}, {1.419, 1.1527658356248518, 1.1375}, {}};
    for (auto [bytes, gemm] : {std::pair{4194304.0, 1.016330101419165}, std::pair{134217728.0, 1.402383894833783}}) {
        SizedSlowdown s;
        s.bytes = bytes;
        s.gemm = gemm;
        s.memory = 1.26;
        p.interference.beside_transfer_by_size.push_back(s);
    }
    p.interference.gemm_by_shape = {{8192, 2048, 2048, 1.4187}, {2048, 2048, 8192, 1.0 / 3.0 + 1.5}};
    p.interference.linger_tile_m = 128;
    p.interference.linger_tile_n = 192;
    p.launch.gemm_gap_by_shape = {{8192, 2048, 2048, 3.2683}, {8192, 768, 768, 1.0 / 3.0 + 1.3}};
    p.launch.gemm_gap_beside_transfer_by_shape = {{8192, 2048, 2048, 4.7716}, {8192, 768, 768, 1.0 / 3.0 + 1.6}};
    p.jitter = {0.015, 0.004, 0.0085, 0.00025};
    p.power = {true, 1980.5, 2316.9125, -1.34985, 160.25, 1025.875, 1979.5};
    p.power.attention = {{64, 0.95, 0.8125}, {128, 0.74, 0.7531}};
    p.power.limit_w = 690.5;
    p.power.fixed_w = 123.25;
    p.power.fixed_w_low = 100.5;
    p.power.fixed_w_high = 300.75;
    return p;
}

std::string errorOf(const std::string& yaml) {
    try {
        parseProfile(yaml, "p.yaml");
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

// The text of `writeProfile(builtin h200)` with the first line containing `needle` replaced by `with`.
std::string h200With(const std::string& needle, const std::string& with) {
    std::string text = writeProfile(builtinProfile("h200-sxm"));
    const auto at = text.find(needle);
    EXPECT_NE(at, std::string::npos) << needle;
    const auto bol = text.rfind('\n', at) + 1;
    const auto eol = text.find('\n', at);
    return text.replace(bol, eol - bol, with);
}

// The 1-based line of the first line of `text` that contains `needle`.
int lineOf(const std::string& text, const std::string& needle) {
    const auto at = text.find(needle);
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

TEST(ProfileYaml, RoundTripKeepsEveryFieldExactly) {
    const HardwareProfile p = oddProfile();
    expectSameProfile(parseProfile(writeProfile(p), "rt.yaml"), p);
}

TEST(ProfileYaml, BuiltinProfilesAreListed) {
    EXPECT_EQ(builtinProfileNames(), (std::vector<std::string>{"h200x2", "h200-sxm", "h100-sxm", "h100-sxm-derived",
                                                             "b200-extrapolated"}));
}

TEST(ProfileYaml, EachBuiltinProfileParsesAndRoundTrips) {
    for (const auto& name : builtinProfileNames()) {
        SCOPED_TRACE(name);
        const HardwareProfile p = builtinProfile(name);
        EXPECT_EQ(p.name, name);
        expectSameProfile(parseProfile(writeProfile(p), name), p);
    }
}

TEST(ProfileYaml, H200HoldsTheMeasuredGemmPoints) {
    // shared/data/h200x2-pytorch-micro.jsonl: 11 BF16 and 11 FP8 GEMM shapes.
    const HardwareProfile p = builtinProfile("h200-sxm");
    ASSERT_EQ(p.gemm.at("bf16").points.size(), 11u);
    ASSERT_EQ(p.gemm.at("fp8").points.size(), 11u);
    const GemmPoint& big = p.gemm.at("bf16").points[1];
    EXPECT_EQ(std::tie(big.m, big.n, big.k), std::make_tuple(8192L, 8192L, 8192L));
    EXPECT_EQ(big.tflops, 780.566104406536);
    EXPECT_EQ(p.gpu.hbm_gbps, 4800.0);
    EXPECT_EQ(p.launch.eager_host.median_us, 9.33);
}

TEST(ProfileYaml, H100HasDatasheetRatesAndNoPoints) {
    const HardwareProfile p = builtinProfile("h100-sxm");
    EXPECT_EQ(p.gpu.hbm_gbps, 3350.0);
    EXPECT_EQ(p.gpu.memory_gib, 80.0);
    EXPECT_TRUE(p.gemm.at("bf16").points.empty());
}

TEST(ProfileYaml, UnknownBuiltinNameListsTheBuiltins) {
    try {
        builtinProfile("b200");
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "no built-in profile 'b200'; the built-ins are h200x2, h200-sxm, h100-sxm, h100-sxm-derived, "
                               "b200-extrapolated");
    }
}

TEST(ProfileYaml, MissingFieldIsRejected) {
    const std::string text = h200With("  hbm_gbps:", "");
    EXPECT_EQ(errorOf(text), fmt::format("p.yaml:{}: gpu.hbm_gbps: missing (every key is required here)",
                                         lineOf(text, "  model: ")));
}

TEST(ProfileYaml, MissingSectionIsRejected) {
    std::string text = writeProfile(builtinProfile("h100-sxm"));
    text = text.substr(0, text.find("power:"));
    EXPECT_EQ(errorOf(text), "p.yaml:2: power: missing (every key is required here; also missing: compile)");
}

TEST(ProfileYaml, P99BelowMedianIsRejected) {
    HardwareProfile p = builtinProfile("h200-sxm");
    p.launch.eager_host = {9, 8};
    const std::string text = writeProfile(p);
    EXPECT_EQ(errorOf(text), fmt::format("p.yaml:{}: launch.eager_host.p99_us: expected p99_us >= median_us (9), got 8",
                                         lineOf(text, "p99_us: 8")));
}

TEST(ProfileYaml, EfficiencyOutsideZeroOneIsRejected) {
    HardwareProfile p = builtinProfile("h200-sxm");
    p.memory.read_write_efficiency = 1.2;
    const std::string text = writeProfile(p);
    EXPECT_EQ(errorOf(text), fmt::format("p.yaml:{}: memory.read_write_efficiency: expected a fraction in (0, 1], got 1.2",
                                         lineOf(text, "read_write_efficiency:")));
}

TEST(ProfileYaml, NegativeRateIsRejected) {
    HardwareProfile p = builtinProfile("h200-sxm");
    p.links.nic_gbps = -48;
    const std::string text = writeProfile(p);
    EXPECT_EQ(errorOf(text), fmt::format("p.yaml:{}: links.nic_gbps: expected a positive number, got -48",
                                         lineOf(text, "nic_gbps:")));
}

// A class's slowdown beside NCCL is 0 (not measured) or a factor >= 1; anything else names its key.
TEST(ProfileYaml, ClassSlowdownBelowOneIsRejected) {
    HardwareProfile p = builtinProfile("h200-sxm");
    p.interference.beside_waiting.memory = 0.9;
    const std::string text = writeProfile(p);
    EXPECT_EQ(errorOf(text), fmt::format("p.yaml:{}: interference.beside_waiting.memory: expected a slowdown factor >= 1, got 0.9",
                                         lineOf(text, "memory: 0.9")));
}

TEST(ProfileYaml, TransferSizesOutOfOrderAreRejected) {
    HardwareProfile p = oddProfile();
    std::swap(p.interference.beside_transfer_by_size[0], p.interference.beside_transfer_by_size[1]);
    EXPECT_THAT(errorOf(writeProfile(p)),
                HasSubstr("interference.beside_transfer_by_size[1].bytes: expected sizes in ascending order: more than "
                          "the previous entry's 134217728, got 4194304"));
}

TEST(ProfileYaml, GemmSlowdownBelowOneOrWithoutAShapeIsRejected) {
    HardwareProfile p = oddProfile();
    p.interference.gemm_by_shape[1].value = 0.9;
    EXPECT_THAT(errorOf(writeProfile(p)),
                HasSubstr("interference.gemm_by_shape[1][3]: expected a slowdown factor >= 1, got 0.9"));
    p = oddProfile();
    p.interference.gemm_by_shape[0].n = 0;
    EXPECT_THAT(errorOf(writeProfile(p)),
                HasSubstr("interference.gemm_by_shape[0]: expected positive m, n, k, got [8192, 0, 2048]"));
    std::string yaml = writeProfile(oddProfile());
    const std::string entry = "[8192, 2048, 2048, 1.4187]";
    ASSERT_NE(yaml.find(entry), std::string::npos);
    yaml.replace(yaml.find(entry), entry.size(), "[8192, 2048, 1.4187]");
    EXPECT_THAT(errorOf(yaml), HasSubstr("interference.gemm_by_shape[0]: expected [m, n, k, value], got"));
}

TEST(ProfileYaml, LingerTileWithOneSideOrNegativeIsRejected) {
    HardwareProfile p = oddProfile();
    p.interference.linger_tile_n = 0;
    EXPECT_THAT(errorOf(writeProfile(p)),
                HasSubstr("interference.linger_tile_m: expected linger_tile_m and linger_tile_n both positive (a "
                          "tile's rows and columns) or both 0 (no lag), got 128 and 0"));
    p.interference.linger_tile_m = -128;
    EXPECT_THAT(errorOf(writeProfile(p)), HasSubstr("got -128 and 0"));
}

TEST(ProfileYaml, NegativeGapBesideNcclIsRejected) {
    HardwareProfile p = oddProfile();
    p.launch.step_gap_beside_transfer_us.memory_us = -1;
    EXPECT_THAT(errorOf(writeProfile(p)), HasSubstr("launch.step_gap_beside_transfer_us.memory: expected"));
    p = oddProfile();
    p.launch.step_gap_beside_waiting_us.copy_us = -0.5;
    EXPECT_THAT(errorOf(writeProfile(p)), HasSubstr("launch.step_gap_beside_waiting_us.copy: expected"));
}

TEST(ProfileYaml, HostCostSpreadThatDoesNotHoldOneIsRejected) {
    HardwareProfile p = oddProfile();
    p.launch.host_cost_spread.p10 = 1.2;
    EXPECT_THAT(errorOf(writeProfile(p)),
                HasSubstr("launch.host_cost_spread: expected 0 < p10 <= 1 <= p90 (factors on the host costs), got p10 1.2"));
    p.launch.host_cost_spread = {0.0, 2.0};
    EXPECT_THAT(errorOf(writeProfile(p)), HasSubstr("launch.host_cost_spread: expected 0 < p10"));
}

TEST(ProfileYaml, PowerModelThatCannotHoldIsRejected) {
    HardwareProfile p = oddProfile();
    p.power.clock_mhz_per_tflops = 0.5;
    EXPECT_THAT(errorOf(writeProfile(p)),
                HasSubstr("power.clock_mhz_per_tflops: expected a negative slope (the clock falls as the load grows), "
                          "got 0.5"));
    p = oddProfile();
    p.power.idle_headroom_mhz = -10;
    EXPECT_THAT(errorOf(writeProfile(p)), HasSubstr("power.idle_headroom_mhz"));
    p = oddProfile();
    p.power.attention = {{128, 0.7, 0.7}, {64, 0.9, 0.9}};
    EXPECT_THAT(errorOf(writeProfile(p)),
                HasSubstr("power.attention_exponent[1][0]: expected head_dims positive and ascending, got 64"));
    p.power.attention = {{64, 0.9, 2.5}};
    EXPECT_THAT(errorOf(writeProfile(p)), HasSubstr("power.attention_exponent[0][2]: expected an exponent in [0, 2]"));
    p.power.modelled = false;  // not modelled: the numbers are not read
    EXPECT_EQ(errorOf(writeProfile(p)), "");
}

TEST(ProfileYaml, GemmGapThatIsNotPositiveIsRejected) {
    HardwareProfile p = oddProfile();
    p.launch.gemm_gap_by_shape[1].value = 0;
    EXPECT_THAT(errorOf(writeProfile(p)), HasSubstr("launch.gemm_gap_by_shape[1][3]: expected a positive"));
    p = oddProfile();
    p.launch.gemm_gap_beside_transfer_by_shape[0].value = -2;
    EXPECT_THAT(errorOf(writeProfile(p)), HasSubstr("launch.gemm_gap_beside_transfer_by_shape[0][3]: expected a positive"));
}

TEST(ProfileYaml, GemmPointAbovePeakIsRejected) {
    HardwareProfile p = builtinProfile("h200-sxm");
    p.gemm["bf16"].points[0].tflops = 1000;
    EXPECT_THAT(errorOf(writeProfile(p)),
                HasSubstr("gemm.bf16.points[0][3]: 1000 TFLOP/s is above the bf16 peak gpu.peak_tflops_bf16 (989)"));
}

TEST(ProfileYaml, NonContiguousSegmentsAreRejected) {
    HardwareProfile p = oddProfile();
    p.collectives[0].segments[1].lo_bytes = 2097152;
    const std::string text = writeProfile(p);
    EXPECT_EQ(errorOf(text),
              fmt::format("p.yaml:{}: collectives[0].segments[1].lo_bytes: segments must be ordered and contiguous: "
                          "expected lo_bytes = the previous segment's hi_bytes (1048576), got 2097152",
                          lineOf(text, "lo_bytes: 2097152")));
}

TEST(ProfileYaml, UnorderedSegmentIsRejected) {
    HardwareProfile p = oddProfile();
    p.collectives[1].segments[0].hi_bytes = 4;
    EXPECT_THAT(errorOf(writeProfile(p)),
                HasSubstr("collectives[1].segments[0].hi_bytes: expected hi_bytes > lo_bytes (8), got 4"));
}

TEST(ProfileYaml, UnknownKeyIsRejected) {
    const std::string text = h200With("kernel_cv:", "  kernel_cov: 0.01");
    EXPECT_EQ(errorOf(text), fmt::format("p.yaml:{}: jitter.kernel_cov: unknown key; allowed in jitter: kernel_cv, "
                                         "straggler_cv, device_compute_cv, device_memory_cv, host_rank_cv (did you "
                                         "mean 'kernel_cv'?)",
                                         lineOf(text, "kernel_cov:")));
}

TEST(ProfileYaml, UnknownGemmDtypeIsRejected) {
    HardwareProfile p = oddProfile();
    p.gemm["int8"] = p.gemm["fp32"];
    EXPECT_THAT(errorOf(writeProfile(p)),
                HasSubstr("gemm.int8: unknown key; allowed in gemm: bf16, fp16, fp8, fp32, fp8_tensorwise, "
                          "fp8_tensorwise_fast_accum, fp8_rowwise, fp8_rowwise_fast_accum"));
}

TEST(ProfileYaml, NegativeHostSpreadIsRejected) {
    const std::string text = h200With("host_rank_cv:", "  host_rank_cv: -0.1");
    EXPECT_EQ(errorOf(text), fmt::format("p.yaml:{}: jitter.host_rank_cv: expected a number >= 0, got -0.1",
                                         lineOf(text, "host_rank_cv:")));
}

TEST(ProfileYaml, OtherVersionIsRejected) {
    const std::string text = h200With("stepsim_profile:", "stepsim_profile: 2");
    EXPECT_EQ(errorOf(text), "p.yaml:2: stepsim_profile: unsupported profile version 2; this stepsim reads version 1");
}

TEST(ProfileYaml, MissingFileIsAnInputError) {
    EXPECT_THROW(loadProfile("/nonexistent/profile.yaml"), InputError);
}

TEST(ProfileYaml, BuiltinResolvesToTheNodesProfile) {
    ClusterSpec c;
    c.node = "hgx-h100";
    EXPECT_EQ(resolveProfile(c, "").name, "h100-sxm-derived");
    c.node = "hgx-h200";
    EXPECT_EQ(resolveProfile(c, "").name, "h200x2");
    c.node = "my-topology.yaml";
    EXPECT_EQ(resolveProfile(c, "").name, "h200x2");
}

TEST(ProfileYaml, BuiltinNameResolvesToThatProfile) {
    ClusterSpec c;
    c.node = "hgx-h200";
    c.profile = "h100-sxm";
    EXPECT_EQ(resolveProfile(c, "scenarios/x.yaml").name, "h100-sxm");
}

TEST(ProfileYaml, PathResolvesRelativeToTheScenarioFolder) {
    const auto dir = std::filesystem::temp_directory_path() / "stepsim-profile-test";
    std::filesystem::create_directories(dir / "profiles");
    std::ofstream(dir / "profiles" / "mine.yaml") << writeProfile(oddProfile());
    ClusterSpec c;
    c.profile = "profiles/mine.yaml";
    EXPECT_EQ(resolveProfile(c, (dir / "run.yaml").string()).name, "odd: profile");
    std::filesystem::remove_all(dir);
}

TEST(ProfileYaml, MissingProfilePathNamesTheScenarioKey) {
    ClusterSpec c;
    c.profile = "nope.yaml";
    try {
        resolveProfile(c, "scenarios/run.yaml");
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "scenarios/run.yaml: cluster.profile: expected builtin, h200x2, h200-sxm, h100-sxm, "
                               "h100-sxm-derived, b200-extrapolated, or a profile YAML file; no file "
                               "scenarios/nope.yaml");
    }
}

// A host of the profile's GPU with another power cap and HBM (cluster.power_limit_w, hbm_gib, hbm_tbps): the profile
// carried to it by ProfileDerive.hpp, each step in its derivation; a profile that records no limit refuses a cap.
TEST(ProfileYaml, ClusterHostKeysCarryTheProfile) {
    ClusterSpec c;
    c.node = "hgx-h100";
    c.power_limit_w = 500;
    c.hbm_gib = 96;
    c.hbm_tbps = 2.4;
    const HardwareProfile base = resolveProfile(ClusterSpec{.node = "hgx-h100"}, "");
    const HardwareProfile p = resolveProfile(c, "");
    EXPECT_EQ(p.name, "h100-sxm-derived (this cluster's host)");
    EXPECT_DOUBLE_EQ(p.gpu.hbm_gbps, 2400);
    EXPECT_DOUBLE_EQ(p.gpu.memory_gib, 96);
    EXPECT_DOUBLE_EQ(p.power.limit_w, 500);
    EXPECT_LT(p.gemm.at("bf16").max_efficiency, base.gemm.at("bf16").max_efficiency);
    EXPECT_EQ(p.derivation.steps.size(), base.derivation.steps.size() + 3);
    EXPECT_EQ(p.derivation.from, "h200x2");
    ClusterSpec h200;
    h200.power_limit_w = 500;
    EXPECT_THROW(resolveProfile(h200, "x.yaml"), InputError);  // h200x2 records no limit
}

TEST(ProfileYaml, DerivedProfilesRoundTripTheirDerivation) {
    for (const char* name : {"h100-sxm-derived", "b200-extrapolated"}) {
        SCOPED_TRACE(name);
        const HardwareProfile p = builtinProfile(name);
        EXPECT_FALSE(p.derivation.steps.empty());
        EXPECT_EQ(p.derivation.from, "h200x2");
        EXPECT_EQ(p.derivation.extrapolated, std::string(name) == "b200-extrapolated");
        const HardwareProfile q = parseProfile(writeProfile(p), "round trip");
        EXPECT_EQ(q.derivation.steps.size(), p.derivation.steps.size());
        EXPECT_DOUBLE_EQ(q.power.fixed_w_high, p.power.fixed_w_high);
    }
}

TEST(ProfileYaml, DatasheetDeltaNamesItsBadKey) {
    const std::string ok = "stepsim_profile_delta: 1\nname: x\nfrom: h200x2\nmodel: m\nextrapolated: false\n"
                           "extrapolation_uncertainty: 0\nnotes: n\n"
                           "measured: {power_limit_w: 700, fixed_w: 123, fixed_w_low: 123, fixed_w_high: 367}\n"
                           "target: {sms: 0, memory_gib: 80, hbm_gbps: 3350, power_limit_w: 700, clock_max_mhz: 0, "
                           "peak_tflops_bf16: 0, peak_tflops_fp16: 0, peak_tflops_fp8: 0, peak_tflops_fp32: 0, "
                           "nvlink_gbps: 0}\n";
    EXPECT_DOUBLE_EQ(parseDatasheetDelta(ok, "d.yaml").hbm_gbps, 3350);
    std::string bad = ok;
    bad.replace(bad.find("fixed_w: 123"), 12, "fixed_w: 400");
    try {
        parseDatasheetDelta(bad, "d.yaml");
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("measured.fixed_w"), std::string::npos) << e.what();
    }
    std::string missing = ok;
    missing.erase(missing.find("notes: n\n"), 9);
    EXPECT_THROW(parseDatasheetDelta(missing, "d.yaml"), InputError);
}

}  // namespace
}  // namespace stepsim
