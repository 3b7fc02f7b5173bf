#include "sim/engine/EngineConfig.hpp"

#include <cmath>

namespace stepsim {

namespace {
constexpr double kZ99 = 2.3263478740;  // standard normal quantile at 0.99
}  // namespace

EngineConfig engineConfig(const CostModel& cost, bool jitter, std::uint64_t seed) {
    const HardwareProfile& p = cost.profile();
    EngineConfig c;
    c.jitter = jitter;
    c.seed = seed;
    const Distribution& d = p.launch.eager_host;
    c.host_sigma = (d.median_us > 0 && d.p99_us > d.median_us) ? std::log(d.p99_us / d.median_us) / kZ99 : 0.0;
    c.kernel_cv = p.jitter.kernel_cv;
    c.straggler_cv = p.jitter.straggler_cv;
    c.device_compute_cv = p.jitter.device_compute_cv;
    c.device_memory_cv = p.jitter.device_memory_cv;
    c.host_rank_cv = p.jitter.host_rank_cv;
    c.comm_slowdown = p.interference.comm_slowdown;
    c.linger_tile_m = p.interference.linger_tile_m;
    c.linger_tile_n = p.interference.linger_tile_n;
    c.sms = p.gpu.sms;
    // By class where the profile measured a training step's kernels beside NCCL, else the one factor.
    const auto slowdowns = [&](const ClassSlowdown& m) {
        const double base = p.interference.compute_slowdown;
        const auto pick = [&](double x) { return x > 0 ? x : base; };
        std::array<double, kKernelClasses> a = EngineConfig::filled(base);
        a[std::size_t(KernelClass::gemm)] = pick(m.gemm);
        a[std::size_t(KernelClass::attention)] = pick(m.attention);
        for (KernelClass k : {KernelClass::memory, KernelClass::optimizer, KernelClass::copy})
            a[std::size_t(k)] = pick(m.memory);
        return a;
    };
    c.slowdown_transfer = slowdowns(p.interference.beside_transfer);
    c.slowdown_waiting = slowdowns(p.interference.beside_waiting);
    // By size where measured; a class a size lacks takes beside_transfer's (or the one factor).
    for (const SizedSlowdown& s : p.interference.beside_transfer_by_size) {
        const ClassSlowdown& all = p.interference.beside_transfer;
        const auto or_all = [](double x, double y) { return x > 0 ? x : y; };
        c.transfer_by_size.emplace_back(s.bytes, slowdowns({or_all(s.gemm, all.gemm), or_all(s.attention, all.attention),
                                                            or_all(s.memory, all.memory)}));
    }
    // Gaps inside a training step's mix where the profile has them, else the back-to-back launch gap (and that
    // for collectives and markers).
    const StepGaps& g = p.launch.step_gap_us;
    const double launch_us = p.launch.device_gap.median_us;
    const auto gap = [&](double step_us) { return (step_us > 0 ? step_us : launch_us) * 1e-6; };
    c.device_gap_s.fill(launch_us * 1e-6);
    c.device_gap_s[std::size_t(KernelClass::gemm)] = gap(g.gemm_us);
    c.device_gap_s[std::size_t(KernelClass::attention)] = gap(g.attention_us);
    c.device_gap_s[std::size_t(KernelClass::memory)] = gap(g.memory_us);
    c.device_gap_s[std::size_t(KernelClass::optimizer)] = gap(g.optimizer_us);
    c.device_gap_s[std::size_t(KernelClass::copy)] = gap(g.copy_us);
    // Longer beside a resident NCCL kernel, moving data or waiting, where measured (the ratio to the gap alone; 1
    // where not).
    const auto longer = [&](const StepGaps& b) {
        const auto ratio = [](double beside_us, double alone_us) { return beside_us > 0 && alone_us > 0 ? beside_us / alone_us : 1.0; };
        std::array<double, kKernelClasses> r = EngineConfig::filled(1.0);
        r[std::size_t(KernelClass::gemm)] = ratio(b.gemm_us, g.gemm_us);
        r[std::size_t(KernelClass::attention)] = ratio(b.attention_us, g.attention_us);
        r[std::size_t(KernelClass::memory)] = ratio(b.memory_us, g.memory_us);
        r[std::size_t(KernelClass::optimizer)] = ratio(b.optimizer_us, g.optimizer_us);
        r[std::size_t(KernelClass::copy)] = ratio(b.copy_us, g.copy_us);
        return r;
    };
    c.gap_beside_transfer = longer(p.launch.step_gap_beside_transfer_us);
    c.gap_beside_waiting = longer(p.launch.step_gap_beside_waiting_us);
    c.power = p.power;
    return c;
}

std::array<double, kKernelClasses> transferSlowdown(const EngineConfig& cfg, double bytes) {
    const auto& t = cfg.transfer_by_size;
    if (t.empty()) return cfg.slowdown_transfer;
    if (bytes <= t.front().first) return t.front().second;
    if (bytes >= t.back().first) return t.back().second;
    std::size_t k = 1;
    while (t[k].first < bytes) ++k;
    const double w = std::log(bytes / t[k - 1].first) / std::log(t[k].first / t[k - 1].first);
    std::array<double, kKernelClasses> out{};
    for (std::size_t c = 0; c < kKernelClasses; ++c) out[c] = t[k - 1].second[c] + w * (t[k].second[c] - t[k - 1].second[c]);
    return out;
}

}  // namespace stepsim
