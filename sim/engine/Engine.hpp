#pragma once
// The discrete-event engine: replays every rank's Program over hosts, CUDA streams, GPUs and links.
//
// Model (DESIGN.md, "The engine's model"):
// - Host: issues its Program in order. A launch takes the op's host time (a mean: lognormal jitter of mean 1);
//   then the op joins its stream. `host_work` keeps the host busy; `host_sync` blocks it until an event.
// - Stream: FIFO; the head op starts once the previous one finished and any awaited event completed;
//   record_event completes when reached; step_end records the step's end on this rank. A stream waiting on an
//   event resumes after the recording stream's next kernel has started (that kernel reaches the SMs first, as on
//   the GPU).
// - GPU compute: kernels of one GPU running at once share its SMs equally (processor sharing); while an
//   NCCL kernel is resident on the GPU each compute kernel slows by its class's factor, larger while the NCCL
//   kernel spins waiting for its peers than while it moves data (`slowdown_waiting`, `slowdown_transfer`; the
//   larger of the two when kernels of both kinds are resident); a GEMM whose shape the profile measured beside a
//   resident NCCL kernel slows by its own factor instead (Op::beside_nccl), in either state. A GEMM launched beside
//   a resident NCCL kernel lost the SMs it holds from the start: when the NCCL kernel leaves, the CTAs it kept out
//   start, so the GEMM ends no sooner than its own time plus the time the SMs were held, up to one wave of its
//   output tiles (`linger_tile_m` × `linger_tile_n` over the SMs), and no later than beside the NCCL kernel
//   throughout (H200, run 108: a kernel holding 24 SMs, leaving mid-GEMM; of such GEMMs in the 1.4B DDP step's
//   traces this rule reads the time 1.1-2.8% short, a slowdown that lifts at once 4.7-7.1%). A kernel's cost is
//   its calibrated period on a busy stream (loops of back-to-back launches): the first `device_gap` of it,
//   by the kernel's class, is the launch gap, when the stream holds it but the GPU runs nothing of it, so its
//   span starts there (the profile's gaps inside a training step's mix: H200, 1.6–1.8 µs before memory-bound
//   kernels, copies and the optimizer, 2.3–2.5 before GEMMs and attention; a GEMM whose shape the profile measured
//   takes its own, Op::gap_s: 1.6 µs, or 3.3 after cuBLAS's semaphore memset; for a kernel that starts while an
//   NCCL kernel moves data, longer by `gap_beside_transfer` (a GEMM: its own, Op::gap_transfer_s), while one only
//   waits for its peers by `gap_beside_waiting`). Those holes are what an NCCL kernel beside a dense stream of
//   compute is exposed through.
// - Collective: an NCCL kernel becomes resident on a rank when it reaches its stream head, or, if a compute kernel
//   holds the SMs then, when that kernel ends (H200 traces: NCCL kernels start in the last µs of the kernel
//   running when they become ready), and stays, spinning, until the collective ends — the barrier that breaks
//   overlap windows. When every member has arrived it pays the latency α, then moves its data as the flows of
//   the chosen algorithm
//   (CollectiveAlgorithms.hpp: rail-aligned ring, tree, NVLS, ...), each bounded by its share of the calibrated
//   bus bandwidth (÷ comm_slowdown while its source GPU computes) and sharing links max-min fairly
//   (FlowNetwork.hpp). So a collective alone reproduces its calibration exactly.
// - Jitter: host launches, kernel durations (cv) and a per-rank, per-step straggler factor, each drawn from
//   per-rank generators seeded from (seed, rank): the same inputs and seed give the same run, bit for bit. And
//   each GPU's own speed, fixed for the run (deviceSpeedFactors): the ranks' compute and memory-bound kernels
//   run at the expected order statistics of the profile's device spread, so the slowest of N GPUs is as slow
//   as the slowest of N usually is. Likewise each rank's host, its cost per launch fixed for the run at the expected
//   order statistics of the profile's host spread between concurrent processes (hostSpeedFactors): a training loop
//   never waits for its GPU, so a faster rank's host runs ahead of the slowest one's and its GPU, paced by the
//   all-reduces, waits for the slowest in NCCL; a host-bound data-parallel step goes at its slowest host.
// - Power state: each rank's GPU runs a step at the clock its load sets under the power limit (PowerModel): the
//   load of the rank's previous step (tensor-core FLOP per second, plus the share of its time in memory-bound
//   kernels at the profile's weight) sets the next step's clock, as the board's limiter follows the recent draw;
//   the first step's from its kernels alone (their FLOP over their summed time: a GPU-bound step's load). Attention
//   kernels run at that clock (PowerModel::attentionFactor); the others' rates were timed in the power state a step
//   holds them in. Timeline::clock_mhz keeps each step's clock.
//
// The loop (run) pops an event, checks time is monotonic, advances the clock and dispatches on a switch:
// no virtual call and no allocation per event beyond amortised vector growth.
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/engine/EventQueue.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/engine/Timeline.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/net/FlowNetwork.hpp"
#include "sim/base/Program.hpp"

namespace stepsim {

struct EngineConfig {
    static constexpr std::array<double, kKernelClasses> filled(double x) {
        std::array<double, kKernelClasses> a{};
        a.fill(x);
        return a;
    }

    bool jitter = true;
    std::uint64_t seed = 1;
    double host_sigma = 0.0;      // lognormal σ of host launch times
    double kernel_cv = 0.0;       // coefficient of variation of kernel durations
    double straggler_cv = 0.0;    // per rank and step
    double device_compute_cv = 0.0;  // GPU-to-GPU spread, fixed for the run: GEMM and attention
    double device_memory_cv = 0.0;   // and memory-bound kernels (memory, optimizer, copy)
    double host_rank_cv = 0.0;       // host-to-host spread of the cost per launch, fixed for the run
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

// Reads the jitter and interference parameters of a profile.
EngineConfig engineConfig(const HardwareProfile& p, bool jitter, std::uint64_t seed);

// The slowdown of each class beside an NCCL kernel moving `bytes`: cfg.transfer_by_size interpolated in log bytes,
// held at its ends; cfg.slowdown_transfer without it.
std::array<double, kKernelClasses> transferSlowdown(const EngineConfig& cfg, double bytes);

// Each rank's kernel time factors by KernelClass for GPUs whose speeds spread with the given cvs: exp(cv·z) with z
// the expected normal order statistics of `ranks` draws (Blom: Φ⁻¹((i − 3/8) / (ranks + 1/4))), dealt to the
// ranks in a seeded shuffle. One GPU gets 1; the slowest of 2 is 0.59 cv slower than the median, of 1024 3.2 cv.
// The same GPU is slow for both kinds of kernel (one z per rank). Communication is left alone.
std::vector<std::array<double, kKernelClasses>> deviceSpeedFactors(int ranks, double compute_cv, double memory_cv,
                                                                   std::uint64_t seed);

// Each rank's factor on its host costs for hosts whose speeds spread with `cv`: exp(cv·z) with z the expected normal
// order statistics of `ranks` draws, dealt in a seeded shuffle of its own (a slow host is not tied to a slow GPU).
// One rank gets 1; of 2, the slower host's costs are exp(1.18 cv) the faster one's.
std::vector<double> hostSpeedFactors(int ranks, double cv, std::uint64_t seed);

class Engine {
public:
    Engine(const Workload& w, const CostModel& cost, const Fabric& fabric, EngineConfig cfg);
    Timeline run();

private:
    enum EventType : std::uint32_t { kHostWake, kKernelDone, kAlphaDone, kFlowDone, kStreamWake };

    struct HostState {
        std::uint32_t next = 0;
        std::int64_t pending = -1;      // op launched, joining its stream when the host wakes
        std::int64_t blocked_on = -1;   // event the host waits for
    };
    struct StreamState {
        int rank = 0;
        std::uint8_t index = 0;
        std::vector<std::uint32_t> queue;
        std::size_t head = 0;
        bool running = false;
        // What NCCL did on the GPU when the running kernel started: nothing resident, waiting, moving data.
        enum class Beside : std::uint8_t { none, waiting, moving } beside = Beside::none;
        std::int64_t blocked_on = -1;
        // The running kernel, as an activity: remaining work at full speed, current rate.
        std::uint32_t op = 0;
        Time start, last;
        double remaining = 0.0;
        double rate = 0.0;
        std::uint32_t version = 0;
        // Its work at full speed; for a GEMM started beside a resident NCCL kernel, one wave of its tiles (0 for any
        // other kernel, and once the NCCL kernel has left) and the slowdown it ran at beside the NCCL kernel.
        double work = 0.0;
        double wave_s = 0.0;
        double held_slow = 1.0;
    };
    struct GpuState {
        std::vector<std::uint32_t> computing;  // stream slots running compute kernels
        int comm_waiting = 0;                  // NCCL kernels resident here waiting for their peers
        std::vector<std::uint32_t> moving;     // collectives moving data here (the others resident wait)
        std::vector<std::uint32_t> sm_wait;    // NCCL kernels ready while a compute kernel held the SMs
        std::array<double, kKernelClasses> transfer = EngineConfig::filled(1.0);  // the largest of theirs
        std::vector<FlowId> flows;             // flows sourced here
    };
    struct Instance {
        int group = 0;
        std::uint32_t seq = 0;
        int arrived = 0;
        std::vector<std::uint32_t> member_slot;  // by position in the group
        Time first_arrival, start;
        CollectiveEstimate est;
        const CollectiveCall* call = nullptr;
        int step = 0;
        int flows_left = 0;
        std::array<double, kKernelClasses> transfer{};  // compute beside it while it moves data: transferSlowdown
    };

    void hostWake(int rank);
    void enqueue(int rank, std::uint32_t op);
    void tryStart(std::uint32_t slot);
    void startKernel(std::uint32_t slot, const Op& op);
    void finishKernel(std::uint32_t slot);
    void arrive(std::uint32_t slot, const Op& op);
    void startFlows(std::uint32_t inst);
    void flowDone(FlowId f);
    void finishCollective(std::uint32_t inst);
    void completeEvent(int rank, std::uint32_t event);
    void refreshCompute(int gpu);
    void refreshTransfer(int gpu);
    void refreshFlowCaps(int gpu);
    void rescheduleFlows();
    double flowCap(double base_Bps, int gpu) const;
    double drawHost(int rank, double mean_s);
    double drawKernelFactor(int rank, int step);
    double gaussian(int rank) { return normal_[rank](rng_[rank]); }

    std::uint32_t slotOf(int rank, std::uint8_t stream) const { return stream_base_[rank] + stream; }

    const Workload& w_;
    const CostModel& cost_;
    const Fabric& fabric_;
    EngineConfig cfg_;
    Time now_;
    EventQueue queue_;
    FlowNetwork net_;
    Timeline tl_;

    std::vector<HostState> hosts_;
    std::vector<std::uint32_t> stream_base_;
    std::vector<StreamState> streams_;
    std::vector<GpuState> gpus_;
    std::vector<std::vector<std::uint8_t>> event_done_;            // [rank][event]
    std::vector<std::vector<int>> group_pos_;                       // [group][rank] → position or -1
    std::vector<std::vector<std::uint32_t>> group_next_seq_;        // [group][position]
    std::vector<std::vector<std::uint32_t>> group_instances_;       // [group][seq] → instance
    std::vector<int> group_nodes_;                                  // [group] → nodes its ranks span
    std::vector<Instance> instances_;
    std::vector<std::uint32_t> flow_inst_;                          // flow → collective instance
    std::vector<double> flow_base_cap_;                             // flow → its bound alone (B/s)
    std::vector<std::mt19937_64> rng_;
    std::vector<std::normal_distribution<double>> normal_;         // N(0, 1) per rank (keeps its spare draw)
    double kernel_sigma_ = 0.0, straggler_sigma_ = 0.0;             // lognormal σ from the cvs
    std::array<Time, kKernelClasses> device_gap_{};                 // cfg_.device_gap_s, converted once
    std::vector<std::vector<double>> straggler_;                    // [rank][step]
    std::vector<std::array<double, kKernelClasses>> device_speed_;  // [rank][class]: deviceSpeedFactors
    std::vector<double> host_speed_;                                // [rank]: hostSpeedFactors
    // The power state per rank: the running step's clock, and the load it drew so far (PowerModel.hpp).
    struct PowerState {
        double clock_mhz = 0.0;
        StepLoad load;
        Time step_start, busy_since;  // busy_since: when the GPU last went from idle to computing
    };
    std::vector<PowerState> power_;
    void endPowerStep(int rank, int step);
};

}  // namespace stepsim
