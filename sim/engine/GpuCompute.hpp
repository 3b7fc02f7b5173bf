#pragma once
// GPU compute: the kernels running on each GPU, sharing its SMs, beside the NCCL kernels resident there.
//
// A kernel is an activity: its work (seconds at full speed: its calibrated time, at the GPU's own speed
// (deviceSpeedFactors), with its jitter (Jitter::kernelFactor), attention at the step's clock (PowerState)) and a rate.
// Kernels of one GPU running at once share its SMs equally (processor sharing): rate = 1 / (n · slowdown). While an
// NCCL kernel is resident on the GPU, each compute kernel slows by its class's factor, larger while the NCCL kernel
// spins waiting for its peers than while it moves data (`slowdown_waiting`, `slowdown_transfer`, the latter by the
// collective's size, transferSlowdown; the larger of the two when NCCL kernels of both kinds are resident); a GEMM
// whose shape the profile measured beside a resident NCCL kernel slows by its own factor instead (Op::beside_nccl),
// in either state (the profile's `interference` section, from calibration/pytorch/interference_training.py's records).
// When the set of kernels or NCCL kernels on a GPU changes, only that GPU's kernels are rerated and their completions
// rescheduled (stale ones are skipped by version).
//
// The lag rule: a GEMM launched beside a resident NCCL kernel lost the SMs it holds from the start. When the NCCL
// kernel leaves, `held` seconds into the GEMM, the CTAs it kept out start: the GEMM ends no sooner than its own time
// plus the time the SMs were held, up to one wave of its output tiles, and no later than beside the NCCL kernel
// throughout. From then on its work left is
//   max(left, min(work + min(held, wave), work · slowdown) − held),   wave = work / max(1, ⌈tiles / sms⌉),
//   tiles = ⌈m / linger_tile_m⌉ · ⌈n / linger_tile_n⌉
// (left: what its rate so far leaves; slowdown: its own beside the NCCL kernel; Interference::linger_tile_m, the tile
// of the GEMM kernels calibration/investigations/gemm_linger_probe.py traced).
//
// A kernel's cost is its calibrated period on a busy stream (loops of back-to-back launches): the first `device_gap`
// of it, by the kernel's class, is the launch gap, when the stream holds it but the GPU runs nothing of it, so its
// span starts there (the profile's gaps inside a training step's mix, LaunchRates::step_gap_us, from
// calibration/pytorch/kernel_gaps.py; a GEMM whose shape the profile measured takes its own, Op::gap_s, longer after
// cuBLAS's semaphore memset, from gemm_gaps.py). For a kernel that starts while an NCCL kernel moves data the gap is
// longer by `gap_beside_transfer` (a GEMM: its own, Op::gap_transfer_s), while one only waits for its peers by
// `gap_beside_waiting` (gemm_gaps.py --beside). Those holes are what an NCCL kernel beside a dense stream of compute
// is exposed through.
#include <array>
#include <cstdint>
#include <vector>

#include "sim/base/Program.hpp"
#include "sim/base/Time.hpp"
#include "sim/engine/EngineConfig.hpp"
#include "sim/engine/EngineContext.hpp"

namespace stepsim {

class Collectives;
class Jitter;
class PowerState;
class Streams;

class GpuCompute {
public:
    // `speed`: each GPU's kernel time factors by KernelClass (deviceSpeedFactors).
    GpuCompute(EngineContext& ctx, const EngineConfig& cfg, Streams& streams, Collectives& collectives,
               PowerState& power, Jitter& jitter, std::vector<std::array<double, kKernelClasses>> speed);

    // The kernel `op` at the head of stream `slot` starts.
    void startKernel(std::uint32_t slot, const Op& op);
    // kKernelDone: the event is the kernel's latest completion, and the kernel ends.
    bool current(std::uint32_t slot, std::uint32_t version) const { return kernels_[slot].version == version; }
    void finishKernel(std::uint32_t slot);

    // A compute kernel runs on the GPU (its CTAs hold the SMs).
    bool computing(int gpu) const { return !gpus_[gpu].computing.empty(); }
    // The NCCL kernel at the head of stream `slot` waits for the SMs: it joins its collective when the compute
    // kernels running now have ended.
    void waitForSms(int gpu, std::uint32_t slot) { gpus_[gpu].sm_wait.push_back(slot); }
    // An NCCL kernel becomes resident, waiting for its peers.
    void ncclWaits(int gpu);
    // Collective `id`'s NCCL kernel on `gpu` (waiting until now, or arriving last) moves data, slowing compute kernels
    // of each class by `transfer`; and it leaves.
    void ncclMoves(int gpu, std::uint32_t id, const std::array<double, kKernelClasses>& transfer, bool was_waiting);
    void ncclLeaves(int gpu, std::uint32_t id);

private:
    // What NCCL did on the GPU when a kernel started: nothing resident, waiting, moving data.
    enum class Beside : std::uint8_t { none, waiting, moving };
    // The running kernel of a stream slot, as an activity.
    struct Kernel {
        const Op* op = nullptr;   // the kernel, op `index` of `rank`'s Program, on its stream `stream`
        std::uint32_t index = 0;
        int rank = 0;
        std::uint8_t stream = 0;
        Beside beside = Beside::none;
        std::uint32_t version = 0;
        Time start, last;         // when it started; `remaining` as of `last`
        double remaining = 0.0;   // work left at full speed
        double rate = 0.0;
        // Its work at full speed; for a GEMM started beside a resident NCCL kernel, one wave of its tiles (0 for any
        // other kernel, and once the NCCL kernel has left) and the slowdown it ran at beside the NCCL kernel.
        double work = 0.0;
        double wave_s = 0.0;
        double held_slow = 1.0;
    };
    struct Moving {
        std::uint32_t id = 0;  // collective instance
        std::array<double, kKernelClasses> transfer{};
    };
    struct Gpu {
        std::vector<std::uint32_t> computing;  // stream slots running compute kernels
        int comm_waiting = 0;                  // NCCL kernels resident here waiting for their peers
        std::vector<Moving> moving;            // collectives moving data here
        std::vector<std::uint32_t> sm_wait;    // NCCL kernels ready while a compute kernel held the SMs
        std::array<double, kKernelClasses> transfer = EngineConfig::filled(1.0);  // the largest of the moving ones'
    };

    // Rerates the GPU's kernels (SM sharing, interference, the lag rule) and reschedules those that changed.
    void refresh(int gpu) {
        if (!gpus_[gpu].computing.empty()) rerate(gpu);
    }
    void rerate(int gpu);
    void refreshTransfer(int gpu);

    EngineContext& ctx_;
    const EngineConfig& cfg_;
    Streams& streams_;
    Collectives& collectives_;
    PowerState& power_;
    Jitter& jitter_;
    std::vector<std::array<double, kKernelClasses>> speed_;  // [gpu][class]: deviceSpeedFactors
    std::array<Time, kKernelClasses> device_gap_{};          // cfg_.device_gap_s, converted once
    std::vector<Gpu> gpus_;
    std::vector<Kernel> kernels_;                             // [slot]
};

}  // namespace stepsim
