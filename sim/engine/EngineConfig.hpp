#pragma once
// The engine's parameters: the jitter, interference, launch-gap and power numbers of a hardware profile, in the form
// the engine's parts read them (by KernelClass, in seconds), and the run's seed.
//
// The profile reaches the engine by one route, the CostModel: the engine prices collectives with it, and
// engineConfig reads these numbers from the profile it was built on (CostModel::profile), so the two cannot differ.
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/cost/CostModel.hpp"

namespace stepsim {

struct EngineConfig {
    static constexpr std::array<double, kKernelClasses> filled(double x) {
        std::array<double, kKernelClasses> a{};
        a.fill(x);
        return a;
    }

    bool jitter = true;
    bool link_usage = false;      // record every link's load over time (LinkUsage.hpp): Timeline::link_samples
    std::uint64_t seed = 1;
    double host_sigma = 0.0;      // lognormal σ of host launch times
    double kernel_cv = 0.0;       // coefficient of variation of kernel durations
    double straggler_cv = 0.0;    // per rank and step
    double device_compute_cv = 0.0;  // GPU-to-GPU spread, fixed for the run: GEMM and attention
    double device_memory_cv = 0.0;   // and memory-bound kernels (memory, optimizer, copy)
    double host_rank_cv = 0.0;       // host-to-host spread of the cost per launch, fixed for the run
    // The scenario's slow GPUs, hosts, processes and links (jitter.stragglers; Jitter.hpp). They apply with the
    // profile's noise off too: jitter.enabled turns off the drawn noise, not the scenario's stragglers.
    std::vector<StragglerSpec> stragglers;
    // Slowdown of a compute kernel beside a resident NCCL kernel, by KernelClass: moving data, waiting for peers.
    std::array<double, kKernelClasses> slowdown_transfer = filled(1.0);
    std::array<double, kKernelClasses> slowdown_waiting = filled(1.0);
    // slowdown_transfer by the collective's bytes, ascending (empty: slowdown_transfer at every size).
    std::vector<std::pair<double, std::array<double, kKernelClasses>>> transfer_by_size;
    double comm_slowdown = 1.0;
    // A GEMM launched beside a resident NCCL kernel lags, once it leaves, by the time the SMs were held, up to one
    // wave of output tiles of this size over `sms`; 0: no lag (Interference::linger_tile_m).
    int linger_tile_m = 0, linger_tile_n = 0;
    int sms = 132;
    // Launch gap at the start of each kernel's period on its stream, by KernelClass.
    std::array<double, kKernelClasses> device_gap_s{};
    // How much longer that gap is when the kernel starts beside a resident NCCL kernel moving data, or only
    // waiting for its peers, by KernelClass (a GEMM with Op::gap_transfer_s takes its own beside one moving data).
    std::array<double, kKernelClasses> gap_beside_transfer = filled(1.0);
    std::array<double, kKernelClasses> gap_beside_waiting = filled(1.0);
    // The clock each rank's step holds under the power limit, and attention's time at it (not modelled: 1).
    PowerModel power;
};

// Reads the jitter, interference, launch-gap and power parameters of the cost model's profile.
EngineConfig engineConfig(const CostModel& cost, bool jitter, std::uint64_t seed);

// The slowdown of each class beside an NCCL kernel moving `bytes`: cfg.transfer_by_size interpolated in log bytes,
// held at its ends; cfg.slowdown_transfer without it.
std::array<double, kKernelClasses> transferSlowdown(const EngineConfig& cfg, double bytes);

}  // namespace stepsim
