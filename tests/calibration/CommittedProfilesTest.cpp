// The committed raw measurements, the files each profile's manifest (inputs.txt) lists, refit to the committed
// profiles (calibration/profiles/h200x2 and h200x1), field by field, and the fitted profiles pass the profile reader's consistency checks.
//
// The committed profile is its own base here, so only the fit itself is under test (fields that were not
// measured come back unchanged by construction and are compared too).
#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/fit/Manifest.hpp"
#include "sim/fit/ProfileFit.hpp"
#include "sim/fit/RawData.hpp"
#include "sim/scenario/ProfileYaml.hpp"

namespace stepsim {
namespace {

const std::string kProfiles = std::string(STEPSIM_SOURCE_DIR) + "/calibration/profiles/";

void near(double a, double b, const std::string& what) {
    EXPECT_NEAR(a, b, 1e-6 * std::max(1.0, std::abs(b))) << what;
}
void same(const Distribution& a, const Distribution& b, const std::string& what) {
    near(a.median_us, b.median_us, what + ".median_us");
    near(a.p99_us, b.p99_us, what + ".p99_us");
}

// The GPU, the memory-bound kernels, the GEMMs and attention.
void expectSameComputeRates(const HardwareProfile& a, const HardwareProfile& b) {
    EXPECT_EQ(a.gpu.model, b.gpu.model);
    EXPECT_EQ(a.gpu.sms, b.gpu.sms);
    near(a.gpu.memory_gib, b.gpu.memory_gib, "gpu.memory_gib");
    near(a.memory.read_write_efficiency, b.memory.read_write_efficiency, "memory.read_write_efficiency");
    near(a.memory.min_kernel_us, b.memory.min_kernel_us, "memory.min_kernel_us");
    ASSERT_EQ(a.memory.kernels.size(), b.memory.kernels.size());
    for (const auto& [kind, r] : a.memory.kernels) {
        ASSERT_TRUE(b.memory.kernels.count(kind)) << kind;
        near(r.efficiency, b.memory.kernels.at(kind).efficiency, "memory.kernels." + kind + ".efficiency");
        near(r.fixed_us, b.memory.kernels.at(kind).fixed_us, "memory.kernels." + kind + ".fixed_us");
    }
    ASSERT_EQ(a.gemm.size(), b.gemm.size());
    for (const auto& [dt, e] : a.gemm) {
        ASSERT_TRUE(b.gemm.count(dt)) << dt;
        const GemmEfficiency& f = b.gemm.at(dt);
        near(e.max_efficiency, f.max_efficiency, "gemm." + dt + ".max_efficiency");
        near(e.k_half, f.k_half, "gemm." + dt + ".k_half");
        EXPECT_EQ(e.tile_m, f.tile_m) << dt;
        EXPECT_EQ(e.tile_n, f.tile_n) << dt;
        near(e.overhead_us, f.overhead_us, "gemm." + dt + ".overhead_us");
        near(e.rel_error, f.rel_error, "gemm." + dt + ".rel_error");
        ASSERT_EQ(e.points.size(), f.points.size()) << dt;
        for (std::size_t i = 0; i < e.points.size(); ++i) {
            EXPECT_EQ(e.points[i].m, f.points[i].m);
            near(e.points[i].tflops, f.points[i].tflops, "gemm." + dt + ".points");
        }
        EXPECT_EQ(e.unaligned.alignment, f.unaligned.alignment) << dt;
        ASSERT_EQ(e.unaligned.rates.size(), f.unaligned.rates.size()) << dt;
        for (std::size_t i = 0; i < e.unaligned.rates.size(); ++i) {
            EXPECT_EQ(e.unaligned.rates[i].multiple, f.unaligned.rates[i].multiple) << dt;
            near(e.unaligned.rates[i].m_tflops, f.unaligned.rates[i].m_tflops, "gemm." + dt + ".unaligned.m_tflops");
            near(e.unaligned.rates[i].n_tflops, f.unaligned.rates[i].n_tflops, "gemm." + dt + ".unaligned.n_tflops");
            near(e.unaligned.rates[i].k_tflops, f.unaligned.rates[i].k_tflops, "gemm." + dt + ".unaligned.k_tflops");
        }
    }
    near(a.attention.fwd_efficiency, b.attention.fwd_efficiency, "attention.fwd_efficiency");
    near(a.attention.bwd_efficiency, b.attention.bwd_efficiency, "attention.bwd_efficiency");
    near(a.attention.dropout_forward_ratio, b.attention.dropout_forward_ratio, "attention.dropout_forward_ratio");
    near(a.attention.dropout_backward_ratio, b.attention.dropout_backward_ratio, "attention.dropout_backward_ratio");
    ASSERT_EQ(a.attention.points.size(), b.attention.points.size());
    for (std::size_t i = 0; i < a.attention.points.size(); ++i) {
        near(a.attention.points[i].fwd_tflops, b.attention.points[i].fwd_tflops, "attention.points.fwd_tflops");
        near(a.attention.points[i].bwd_tflops, b.attention.points[i].bwd_tflops, "attention.points.bwd_tflops");
    }
}

void expectSameLaunch(const HardwareProfile& a, const HardwareProfile& b) {
    same(a.launch.eager_host, b.launch.eager_host, "launch.eager_host");
    same(a.launch.graph_host, b.launch.graph_host, "launch.graph_host");
    same(a.launch.device_gap, b.launch.device_gap, "launch.device_gap");
    near(a.launch.step_gap_us.gemm_us, b.launch.step_gap_us.gemm_us, "launch.step_gap_us.gemm");
    near(a.launch.step_gap_us.attention_us, b.launch.step_gap_us.attention_us, "launch.step_gap_us.attention");
    near(a.launch.step_gap_us.memory_us, b.launch.step_gap_us.memory_us, "launch.step_gap_us.memory");
    near(a.launch.step_gap_us.optimizer_us, b.launch.step_gap_us.optimizer_us, "launch.step_gap_us.optimizer");
    near(a.launch.step_gap_us.copy_us, b.launch.step_gap_us.copy_us, "launch.step_gap_us.copy");
    for (auto [x, y, w] : {std::tuple{a.launch.step_gap_beside_transfer_us, b.launch.step_gap_beside_transfer_us, "transfer"},
                           std::tuple{a.launch.step_gap_beside_waiting_us, b.launch.step_gap_beside_waiting_us, "waiting"}}) {
        near(x.gemm_us, y.gemm_us, std::string("launch.step_gap_beside_") + w + "_us.gemm");
        near(x.memory_us, y.memory_us, std::string("launch.step_gap_beside_") + w + "_us.memory");
        near(x.copy_us, y.copy_us, std::string("launch.step_gap_beside_") + w + "_us.copy");
    }
    for (auto [x, y, w] : {std::tuple{&a.launch.gemm_gap_by_shape, &b.launch.gemm_gap_by_shape, "gemm_gap_by_shape"},
                           std::tuple{&a.launch.gemm_gap_beside_transfer_by_shape, &b.launch.gemm_gap_beside_transfer_by_shape,
                                      "gemm_gap_beside_transfer_by_shape"}}) {
        ASSERT_EQ(x->size(), y->size()) << w;
        for (std::size_t k = 0; k < x->size(); ++k) near((*x)[k].value, (*y)[k].value, fmt::format("launch.{}[{}]", w, k));
    }
    near(a.launch.host_cost_spread.p10, b.launch.host_cost_spread.p10, "launch.host_cost_spread.p10");
    near(a.launch.host_cost_spread.p90, b.launch.host_cost_spread.p90, "launch.host_cost_spread.p90");
    near(a.launch.checkpoint_host_us.selective_forward_us, b.launch.checkpoint_host_us.selective_forward_us,
         "launch.checkpoint_host_us.selective_forward");
    near(a.launch.checkpoint_host_us.full_backward_us, b.launch.checkpoint_host_us.full_backward_us,
         "launch.checkpoint_host_us.full_backward");
}

void expectSameCollectives(const HardwareProfile& a, const HardwareProfile& b) {
    ASSERT_EQ(a.collectives.size(), b.collectives.size());
    for (std::size_t i = 0; i < a.collectives.size(); ++i) {
        const auto &x = a.collectives[i], &y = b.collectives[i];
        const std::string w = "collectives[" + std::to_string(i) + "] " + x.op;
        EXPECT_EQ(x.op, y.op) << w;
        EXPECT_EQ(x.ranks, y.ranks) << w;
        EXPECT_EQ(x.algo, y.algo) << w;
        EXPECT_EQ(x.proto, y.proto) << w;
        EXPECT_EQ(x.dtype, y.dtype) << w;
        near(x.rel_error, y.rel_error, w + ".rel_error");
        ASSERT_EQ(x.segments.size(), y.segments.size()) << w;
        for (std::size_t j = 0; j < x.segments.size(); ++j) {
            near(x.segments[j].lo_bytes, y.segments[j].lo_bytes, w + ".lo_bytes");
            near(x.segments[j].hi_bytes, y.segments[j].hi_bytes, w + ".hi_bytes");
            near(x.segments[j].alpha_us, y.segments[j].alpha_us, w + ".alpha_us");
            near(x.segments[j].busbw_gbps, y.segments[j].busbw_gbps, w + ".busbw_gbps");
        }
    }
}

// The links, the interference factors and the jitter.
void expectSameLinksAndInterference(const HardwareProfile& a, const HardwareProfile& b) {
    near(a.links.nvlink_gbps, b.links.nvlink_gbps, "links.nvlink_gbps");
    near(a.links.pcie_h2d_gbps, b.links.pcie_h2d_gbps, "links.pcie_h2d_gbps");
    near(a.links.pcie_pageable_gbps, b.links.pcie_pageable_gbps, "links.pcie_pageable_gbps");
    near(a.interference.compute_slowdown, b.interference.compute_slowdown, "interference.compute_slowdown");
    near(a.interference.comm_slowdown, b.interference.comm_slowdown, "interference.comm_slowdown");
    for (auto [x, y, w] : {std::tuple{a.interference.beside_transfer, b.interference.beside_transfer, "beside_transfer"},
                           std::tuple{a.interference.beside_waiting, b.interference.beside_waiting, "beside_waiting"}}) {
        near(x.gemm, y.gemm, std::string("interference.") + w + ".gemm");
        near(x.attention, y.attention, std::string("interference.") + w + ".attention");
        near(x.memory, y.memory, std::string("interference.") + w + ".memory");
    }
    ASSERT_EQ(a.interference.beside_transfer_by_size.size(), b.interference.beside_transfer_by_size.size());
    for (std::size_t k = 0; k < a.interference.beside_transfer_by_size.size(); ++k) {
        const SizedSlowdown &x = a.interference.beside_transfer_by_size[k], &y = b.interference.beside_transfer_by_size[k];
        const std::string w = fmt::format("interference.beside_transfer_by_size[{}]", k);
        near(x.bytes, y.bytes, w + ".bytes");
        near(x.gemm, y.gemm, w + ".gemm");
        near(x.attention, y.attention, w + ".attention");
        near(x.memory, y.memory, w + ".memory");
    }
    near(a.jitter.kernel_cv, b.jitter.kernel_cv, "jitter.kernel_cv");
    near(a.jitter.device_compute_cv, b.jitter.device_compute_cv, "jitter.device_compute_cv");
    near(a.jitter.device_memory_cv, b.jitter.device_memory_cv, "jitter.device_memory_cv");
    near(a.jitter.host_rank_cv, b.jitter.host_rank_cv, "jitter.host_rank_cv");
}

void expectSameProfile(const HardwareProfile& a, const HardwareProfile& b) {
    expectSameComputeRates(a, b);
    expectSameLaunch(a, b);
    expectSameCollectives(a, b);
    expectSameLinksAndInterference(a, b);
}

// The committed profile refitted from the raw files its manifest (inputs.txt) lists, over itself as the base.
ProfileFitResult refit(const std::string& dir, const std::string& name) {
    const HardwareProfile committed = loadProfile(kProfiles + dir + "/profile.yaml");
    return fitProfile(readRaw(readManifest(kProfiles + dir + "/inputs.txt")), committed, name, committed.source);
}

TEST(CommittedProfiles, H200x2RawRefitsToCommittedProfile) {
    const auto fit = refit("h200x2", "h200x2");
    expectSameProfile(fit.profile, loadProfile(kProfiles + "h200x2/profile.yaml"));
}

TEST(CommittedProfiles, H200x1RawRefitsToCommittedProfile) {
    const auto fit = refit("h200x1", "h200x1");
    expectSameProfile(fit.profile, loadProfile(kProfiles + "h200x1/profile.yaml"));
}

TEST(CommittedProfiles, H200x2HeldOutCollectivesWithinFivePercent) {
    // Expectation (issue 6): fitted on 3 of 4 sizes, every 4th size is predicted to a median error <= 5%.
    const auto fit = refit("h200x2", "h200x2");
    EXPECT_LE(fit.heldout_collectives, 0.05);
    EXPECT_GE(fit.profile.collectives.size(), 6u);  // every op of the harness, NCCL's choice
}

TEST(CommittedProfiles, H200x2HostSpreadComesFromRun26) {
    // Expectation: the host spread is fitted, not carried over from the base: host_spread.jsonl's three runs of
    // two host-bound processes (24 half-second windows each) swing by 0.158, 0.080 and 0.131 between windows (0.127
    // pooled), but their run means differ by no more than the windows' noise: the lasting spread is 0.
    HardwareProfile base = loadProfile(kProfiles + "h200x2/profile.yaml");
    base.jitter.host_rank_cv = 0.5;
    const auto fit = fitProfile(readRaw({kProfiles + "h200x2/raw/host_spread.jsonl"}), base, "h200x2", "");
    EXPECT_EQ(fit.profile.jitter.host_rank_cv, 0.0);
    ASSERT_TRUE(fit.report.contains("host_spread"));
    EXPECT_NEAR(fit.report["host_spread"]["window_cv"].get<double>(), 0.1271, 5e-4);
    EXPECT_EQ(fit.report["host_spread"]["runs"].size(), 3u);
}

// Two processes whose windows alternate by ±1% around a lasting 10% gap: the lasting part is each process's half of
// the gap, log(1.1) / 2 · √2 (the sample spread of ±log(1.1)/2), the alternation's share of a run mean subtracted.
TEST(CommittedProfiles, HostSpreadKeepsALastingGap) {
    HardwareProfile base = loadProfile(kProfiles + "h200x2/profile.yaml");
    RawData raw;
    RawHostSpread h;
    h.file = "synthetic";
    h.window_s = 0.5;
    for (int w = 0; w < 24; ++w) h.windows.push_back({10.0 * (w % 2 ? 1.01 : 0.99), 11.0});
    raw.host_spread.push_back(h);
    const auto fit = fitProfile(raw, base, "h200x2", "");
    EXPECT_NEAR(fit.profile.jitter.host_rank_cv, std::log(1.1) / std::sqrt(2.0), 0.003);
}

TEST(CommittedProfiles, H200x2DdpHostCostsComeFromTheirRuns) {
    // Expectation: the DDP forward and hook are fitted from the host runs (the host files of inputs.txt), not carried
    // over: the one-GPU forward times the 27 paired ratios' median (1.039) and the hook from ddp_host.jsonl's 19
    // records.
    HardwareProfile base = loadProfile(kProfiles + "h200x2/profile.yaml");
    const HardwareProfile committed = base;
    base.launch.forward_host_ddp = {99.0, 99.0};
    base.launch.ddp_hook_host_us = 0.0;
    std::vector<std::filesystem::path> files;  // the manifest's host runs
    for (const auto& f : readManifest(kProfiles + "h200x2/inputs.txt"))
        if (f.filename().string().starts_with("host_overhead") || f.filename().string().starts_with("ddp_host"))
            files.push_back(f);
    const auto fit = fitProfile(readRaw(files), base, "h200x2", "");
    const LaunchRates& l = fit.profile.launch;
    near(l.forward_host_ddp.median_us, committed.launch.forward_host_ddp.median_us, "forward_host_ddp");
    near(l.ddp_hook_host_us, committed.launch.ddp_hook_host_us, "ddp_hook_host_us");
    EXPECT_NEAR(l.forward_host_ddp.median_us / l.forward_host.median_us, 1.039, 0.001);
    EXPECT_EQ(fit.report["launch"]["forward_host_ddp"]["ratios"].size(), 27u);
    EXPECT_EQ(fit.report["launch"]["ddp_hook_host_us"]["records"].size(), 19u);
}

TEST(CommittedProfiles, FittedProfilesPassTheReadersChecks) {
    // Expectation: what the fit writes is a valid profile (ProfileYaml's consistency checks) and round-trips.
    for (const std::string dir : {"h200x2", "h200x1"}) {
        const HardwareProfile p = loadProfile(kProfiles + dir + "/profile.yaml");
        const HardwareProfile q = parseProfile(writeProfile(p), dir);
        expectSameProfile(p, q);
    }
}

}  // namespace
}  // namespace stepsim
