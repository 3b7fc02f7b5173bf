#include "sim/engine/Engine.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <boost/math/distributions/normal.hpp>
#include <fmt/format.h>

#include "sim/net/CollectiveAlgorithms.hpp"

namespace stepsim {

namespace {
constexpr double kZ99 = 2.3263478740;  // standard normal quantile at 0.99

double lognormalSigmaFromCv(double cv) { return std::sqrt(std::log1p(cv * cv)); }
}  // namespace

EngineConfig engineConfig(const HardwareProfile& p, bool jitter, std::uint64_t seed) {
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

namespace {
// The expected normal order statistics of `ranks` draws (Blom: Φ⁻¹((i − 3/8) / (ranks + 1/4))), dealt to the
// ranks in a shuffle seeded by (seed, salt): each kind of spread deals its own.
std::vector<double> orderScores(int ranks, std::uint64_t seed, std::uint64_t salt) {
    const boost::math::normal_distribution<double> unit;
    std::vector<double> z(std::size_t(std::max(0, ranks)));
    for (std::size_t i = 0; i < z.size(); ++i)
        z[i] = boost::math::quantile(unit, (double(i + 1) - 0.375) / (double(ranks) + 0.25));
    // Fisher–Yates with our own draws: std::shuffle's order differs between standard libraries.
    std::seed_seq seq{std::uint64_t(seed), salt};
    std::mt19937_64 rng(seq);
    for (std::size_t i = z.size(); i > 1; --i) std::swap(z[i - 1], z[rng() % i]);
    return z;
}
}  // namespace

std::vector<std::array<double, kKernelClasses>> deviceSpeedFactors(int ranks, double compute_cv, double memory_cv,
                                                                   std::uint64_t seed) {
    const std::vector<double> z = orderScores(ranks, seed, 0xde51ce);
    std::vector<std::array<double, kKernelClasses>> out(z.size(), EngineConfig::filled(1.0));
    for (std::size_t r = 0; r < z.size(); ++r) {
        for (KernelClass k : {KernelClass::gemm, KernelClass::attention})
            out[r][std::size_t(k)] = std::exp(compute_cv * z[r]);
        for (KernelClass k : {KernelClass::memory, KernelClass::optimizer, KernelClass::copy})
            out[r][std::size_t(k)] = std::exp(memory_cv * z[r]);
    }
    return out;
}

std::vector<double> hostSpeedFactors(int ranks, double cv, std::uint64_t seed) {
    std::vector<double> out = orderScores(ranks, seed, 0x4057);
    for (double& f : out) f = std::exp(cv * f);
    return out;
}

Engine::Engine(const Workload& w, const CostModel& cost, const Fabric& fabric, EngineConfig cfg)
    : w_(w), cost_(cost), fabric_(fabric), cfg_(cfg), net_(fabric.links) {
    const int ranks = static_cast<int>(w.programs.size());
    if (ranks > fabric.gpus)
        throw std::invalid_argument(fmt::format("workload has {} ranks but the fabric {} GPUs", ranks, fabric.gpus));
    hosts_.resize(ranks);
    gpus_.resize(ranks);
    event_done_.resize(ranks);
    rng_.reserve(ranks);
    straggler_.resize(ranks);
    std::size_t total_ops = 0;
    for (int r = 0; r < ranks; ++r) {
        const Program& p = w.programs[r];
        stream_base_.push_back(static_cast<std::uint32_t>(streams_.size()));
        for (std::size_t s = 0; s < p.streams.size(); ++s) {
            StreamState st;
            st.rank = r;
            st.index = static_cast<std::uint8_t>(s);
            streams_.push_back(std::move(st));
        }
        event_done_[r].assign(p.events, 0);
        std::seed_seq seq{std::uint64_t(cfg.seed), std::uint64_t(r), std::uint64_t(0x5eed)};
        rng_.emplace_back(seq);
        normal_.emplace_back(0.0, 1.0);
        total_ops += p.ops.size();
    }
    group_pos_.resize(w.groups.size());
    group_next_seq_.resize(w.groups.size());
    group_instances_.resize(w.groups.size());
    for (std::size_t g = 0; g < w.groups.size(); ++g) {
        group_pos_[g].assign(ranks, -1);
        for (std::size_t i = 0; i < w.groups[g].ranks.size(); ++i) group_pos_[g][w.groups[g].ranks[i]] = int(i);
        group_next_seq_[g].assign(w.groups[g].ranks.size(), 0);
        std::vector<int> node_ids;
        for (int r : w.groups[g].ranks) node_ids.push_back(fabric.nodeOf(r));
        std::sort(node_ids.begin(), node_ids.end());
        group_nodes_.push_back(static_cast<int>(std::unique(node_ids.begin(), node_ids.end()) - node_ids.begin()));
    }
    kernel_sigma_ = lognormalSigmaFromCv(cfg.kernel_cv);
    for (std::size_t k = 0; k < kKernelClasses; ++k) device_gap_[k] = fromSeconds(cfg.device_gap_s[k]);
    straggler_sigma_ = lognormalSigmaFromCv(cfg.straggler_cv);
    device_speed_ = cfg.jitter ? deviceSpeedFactors(ranks, cfg.device_compute_cv, cfg.device_memory_cv, cfg.seed)
                               : std::vector(std::size_t(ranks), EngineConfig::filled(1.0));
    host_speed_ =
        cfg.jitter ? hostSpeedFactors(ranks, cfg.host_rank_cv, cfg.seed) : std::vector(std::size_t(ranks), 1.0);
    tl_.host_speed = host_speed_;
    tl_.ranks = ranks;
    tl_.step_end.assign(ranks, std::vector<Time>(std::max(1, w.steps)));
    tl_.clock_mhz.assign(ranks, std::vector<double>(std::max(1, w.steps), 0.0));
    // The first step's clock: the load of its kernels over their own time, as a GPU-bound step holds it.
    power_.resize(ranks);
    if (cfg_.power.modelled)
        for (int r = 0; r < ranks; ++r) {
            StepLoad kernels;
            for (const Op& op : w.programs[r].ops)
                if (op.kind == OpKind::kernel && op.step == 0) kernels.addKernel(op.cls, op.flops, op.work_s);
            power_[r].clock_mhz = cfg_.power.firstStepClock(kernels);
        }
    tl_.spans.reserve(total_ops);
    queue_.reserve(1024);
}

Timeline Engine::run() {
    for (int r = 0; r < static_cast<int>(hosts_.size()); ++r) queue_.push(Time{}, kHostWake, std::uint32_t(r));
    while (!queue_.empty()) {
        const Event e = queue_.pop();
        assert(e.time >= now_);
        now_ = e.time;
        ++tl_.events;
        switch (e.type) {
            case kHostWake: hostWake(int(e.target)); break;
            case kKernelDone:
                if (streams_[e.target].version == e.version) finishKernel(e.target);
                break;
            case kAlphaDone: startFlows(e.target); break;
            case kStreamWake: tryStart(e.target); break;
            case kFlowDone:
                if (net_.active(e.target) && net_.version(e.target) == e.version) flowDone(e.target);
                break;
        }
    }
    for (std::size_t s = 0; s < streams_.size(); ++s) {
        const StreamState& st = streams_[s];
        if (st.head < st.queue.size() || st.running)
            throw std::logic_error(fmt::format("deadlock: rank {} stream {} stopped with {} ops left", st.rank,
                                               int(st.index), st.queue.size() - st.head));
    }
    for (std::size_t r = 0; r < hosts_.size(); ++r)
        if (hosts_[r].next < w_.programs[r].ops.size())
            throw std::logic_error(fmt::format("deadlock: rank {} host stopped at op {}", r, hosts_[r].next));
    return std::move(tl_);
}

// A launch's host time: the op's mean host cost (the profile's are a phase's host time over its kernels) at the
// rank's host speed, times a lognormal factor of mean 1, exp(σZ − σ²/2), as the kernel and straggler factors are.
double Engine::drawHost(int rank, double mean_s) {
    if (mean_s <= 0.0) return 0.0;
    const double at_speed = mean_s * host_speed_[std::size_t(rank)];
    if (!cfg_.jitter || cfg_.host_sigma <= 0.0) return at_speed;
    const double hs = cfg_.host_sigma;
    return at_speed * std::exp(hs * gaussian(rank) - 0.5 * hs * hs);
}

double Engine::drawKernelFactor(int rank, int step) {
    if (!cfg_.jitter) return 1.0;
    auto& st = straggler_[rank];
    // Lognormal factors with mean 1: exp(σZ − σ²/2).
    const double ss = straggler_sigma_;
    while (static_cast<int>(st.size()) <= step)
        st.push_back(ss > 0 ? std::exp(ss * gaussian(rank) - 0.5 * ss * ss) : 1.0);
    const double ks = kernel_sigma_;
    return ks > 0 ? st[step] * std::exp(ks * gaussian(rank) - 0.5 * ks * ks) : st[step];
}

void Engine::hostWake(int rank) {
    HostState& h = hosts_[rank];
    const Program& p = w_.programs[rank];
    if (h.pending >= 0) {
        const auto op = static_cast<std::uint32_t>(h.pending);
        h.pending = -1;
        enqueue(rank, op);
    }
    while (h.next < p.ops.size() && h.pending < 0) {
        const std::uint32_t i = h.next;
        const Op& op = p.ops[i];
        if (op.kind == OpKind::host_work) {
            ++h.next;
            queue_.push(now_ + fromSeconds(drawHost(rank, op.host_s)), kHostWake, std::uint32_t(rank));
            return;
        }
        if (op.kind == OpKind::host_sync) {
            if (!event_done_[rank][op.event]) {
                h.blocked_on = op.event;
                return;
            }
            ++h.next;
            continue;
        }
        ++h.next;
        const Time d = fromSeconds(drawHost(rank, op.host_s));
        if (d == Time{}) {
            enqueue(rank, i);
            continue;
        }
        h.pending = i;
        queue_.push(now_ + d, kHostWake, std::uint32_t(rank));
    }
}

void Engine::enqueue(int rank, std::uint32_t op) {
    const std::uint32_t slot = slotOf(rank, w_.programs[rank].ops[op].stream);
    streams_[slot].queue.push_back(op);
    tryStart(slot);
}

void Engine::tryStart(std::uint32_t slot) {
    StreamState& st = streams_[slot];
    const Program& p = w_.programs[st.rank];
    while (!st.running && st.head < st.queue.size()) {
        const Op& op = p.ops[st.queue[st.head]];
        switch (op.kind) {
            case OpKind::record_event:
                ++st.head;
                completeEvent(st.rank, op.event);
                break;
            case OpKind::wait_event:
                if (!event_done_[st.rank][op.event]) {
                    st.blocked_on = op.event;
                    return;
                }
                st.blocked_on = -1;
                ++st.head;
                break;
            case OpKind::step_end:
                ++st.head;
                if (op.step >= 0 && op.step < static_cast<int>(tl_.step_end[st.rank].size())) {
                    tl_.step_end[st.rank][op.step] = now_;
                    endPowerStep(st.rank, op.step);
                }
                break;
            case OpKind::kernel: startKernel(slot, op); return;
            case OpKind::collective:
                // A compute kernel's CTAs hold the SMs: the NCCL kernel's blocks are placed once it ends.
                if (!gpus_[st.rank].computing.empty()) {
                    st.running = true;
                    st.op = st.queue[st.head];
                    gpus_[st.rank].sm_wait.push_back(slot);
                    return;
                }
                arrive(slot, op);
                return;
            case OpKind::host_work:
            case OpKind::host_sync: ++st.head; break;  // never enqueued; skip defensively
        }
    }
}

void Engine::completeEvent(int rank, std::uint32_t event) {
    if (event_done_[rank][event]) return;
    event_done_[rank][event] = 1;
    const std::uint32_t base = stream_base_[rank];
    const std::uint32_t n = static_cast<std::uint32_t>(w_.programs[rank].streams.size());
    // Streams waiting on the event resume after what runs now: a kernel next on the recording stream reaches the
    // SMs first, as on the GPU, where a stream's next kernel starts before a cross-stream wait resolves.
    for (std::uint32_t s = base; s < base + n; ++s)
        if (streams_[s].blocked_on == std::int64_t(event)) {
            streams_[s].blocked_on = -1;
            queue_.push(now_, kStreamWake, s);
        }
    HostState& h = hosts_[rank];
    if (h.blocked_on == std::int64_t(event)) {
        h.blocked_on = -1;
        queue_.push(now_, kHostWake, std::uint32_t(rank));
    }
}

// The step's clock goes into the timeline, and its load sets the next step's. The first step's idle time does not
// count: it is a warm-up (DDP's first iteration reduces its gradients after the backward, in registration order), and
// the clock the board settles at is the steady steps'.
void Engine::endPowerStep(int rank, int step) {
    PowerState& ps = power_[rank];
    tl_.clock_mhz[rank][step] = ps.clock_mhz;
    if (!cfg_.power.modelled) return;
    if (!gpus_[rank].computing.empty()) ps.load.busy_s += (now_ - std::exchange(ps.busy_since, now_)).seconds();
    ps.clock_mhz = cfg_.power.nextClock(ps.clock_mhz, ps.load, (now_ - ps.step_start).seconds(), step == 0);
    ps.load = StepLoad{};
    ps.step_start = now_;
}

void Engine::startKernel(std::uint32_t slot, const Op& op) {
    StreamState& st = streams_[slot];
    st.running = true;
    st.op = st.queue[st.head];
    st.start = now_;
    st.last = now_;
    st.remaining = op.work_s * drawKernelFactor(st.rank, op.step) * device_speed_[st.rank][std::size_t(op.cls)];
    if (cfg_.power.modelled) {
        PowerState& ps = power_[st.rank];
        if (op.cls == KernelClass::attention)  // its shape: {batch·heads, seq, head_dim}
            st.remaining *= cfg_.power.attentionFactor(op.gemm.k, op.phase == Phase::backward, ps.clock_mhz);
        ps.load.addKernel(op.cls, op.flops, st.remaining);
    }
    st.rate = 0.0;
    GpuState& g = gpus_[st.rank];
    st.beside = !g.moving.empty() ? StreamState::Beside::moving
                : g.comm_waiting > 0 ? StreamState::Beside::waiting : StreamState::Beside::none;
    st.work = st.remaining;
    st.wave_s = 0.0;
    st.held_slow = 1.0;
    if (op.cls == KernelClass::gemm && st.beside != StreamState::Beside::none && cfg_.linger_tile_m > 0) {
        const double tiles =
            std::ceil(double(op.gemm.m) / cfg_.linger_tile_m) * std::ceil(double(op.gemm.n) / cfg_.linger_tile_n);
        st.wave_s = st.work / std::max(1.0, std::ceil(tiles / cfg_.sms));
    }
    const bool was_idle = g.computing.empty();
    if (was_idle && cfg_.power.modelled) power_[st.rank].busy_since = now_;
    g.computing.push_back(slot);
    refreshCompute(st.rank);
    if (was_idle && !g.flows.empty()) refreshFlowCaps(st.rank);
}

void Engine::refreshCompute(int gpu) {
    GpuState& g = gpus_[gpu];
    if (g.computing.empty()) return;
    const double share = 1.0 / static_cast<double>(g.computing.size());
    const bool waiting = g.comm_waiting > 0;
    const bool resident = waiting || !g.moving.empty();
    for (std::uint32_t slot : g.computing) {
        StreamState& st = streams_[slot];
        const Op& op = w_.programs[st.rank].ops[st.op];
        const std::size_t cls = std::size_t(op.cls);
        const double by_class = std::max(waiting ? cfg_.slowdown_waiting[cls] : 1.0, g.transfer[cls]);
        const double slow = !resident ? 1.0 : op.beside_nccl > 0 ? double(op.beside_nccl) : by_class;
        bool lagged = false;
        if (resident) {
            if (st.wave_s > 0) st.held_slow = slow;
        } else if (st.wave_s > 0) {
            // The NCCL kernel that held SMs from the GEMM's launch has left, `held` into it: the CTAs it kept out start
            // now, so the GEMM ends no sooner than its own time plus that lag, up to one wave of its tiles, and no
            // later than beside the NCCL kernel throughout (run 108, gemm_linger_probe.py).
            const double held = (now_ - st.start).seconds();
            const double left = std::max(0.0, st.remaining - st.rate * (now_ - st.last).seconds());
            const double end = std::min(st.work + std::min(held, st.wave_s), st.work * st.held_slow);
            st.remaining = std::max(left, end - held);
            st.last = now_;
            st.wave_s = 0.0;
            lagged = true;
        }
        const double rate = share / slow;
        if (st.rate == rate && !lagged) continue;
        st.remaining = std::max(0.0, st.remaining - st.rate * (now_ - st.last).seconds());
        st.last = now_;
        st.rate = rate;
        ++st.version;
        queue_.push(now_ + fromSeconds(st.remaining / rate), kKernelDone, slot, st.version);
    }
}

// The factor of the largest collective moving data on this GPU (1 when none is).
void Engine::refreshTransfer(int gpu) {
    GpuState& g = gpus_[gpu];
    g.transfer.fill(1.0);
    for (std::uint32_t id : g.moving)
        for (std::size_t c = 0; c < kKernelClasses; ++c) g.transfer[c] = std::max(g.transfer[c], instances_[id].transfer[c]);
}

void Engine::finishKernel(std::uint32_t slot) {
    StreamState& st = streams_[slot];
    const Op& op = w_.programs[st.rank].ops[st.op];
    const std::size_t cls = std::size_t(op.cls);
    Time gap = op.gap_s > 0 ? fromSeconds(op.gap_s) : device_gap_[cls];
    if (st.beside == StreamState::Beside::moving)
        gap = op.gap_transfer_s > 0 ? fromSeconds(op.gap_transfer_s) : fromSeconds(gap.seconds() * cfg_.gap_beside_transfer[cls]);
    else if (st.beside == StreamState::Beside::waiting)
        gap = fromSeconds(gap.seconds() * cfg_.gap_beside_waiting[cls]);
    const Time busy_from = std::min(st.start + gap, now_);
    tl_.spans.push_back(Span{st.rank, st.index, op.cls, st.op, busy_from, now_});
    st.running = false;
    st.rate = 0.0;
    ++st.version;
    ++st.head;
    GpuState& g = gpus_[st.rank];
    g.computing.erase(std::find(g.computing.begin(), g.computing.end(), slot));
    if (g.computing.empty() && cfg_.power.modelled)
        power_[st.rank].load.busy_s += (now_ - power_[st.rank].busy_since).seconds();
    // NCCL kernels that waited for SMs take them now, before this stream's next kernel.
    if (!g.sm_wait.empty())
        for (const std::uint32_t c : std::exchange(g.sm_wait, {})) arrive(c, w_.programs[st.rank].ops[streams_[c].op]);
    refreshCompute(st.rank);
    if (g.computing.empty() && !g.flows.empty()) refreshFlowCaps(st.rank);
    tryStart(slot);
}

void Engine::arrive(std::uint32_t slot, const Op& op) {
    StreamState& st = streams_[slot];
    st.running = true;
    st.op = st.queue[st.head];
    st.start = now_;
    const Program& p = w_.programs[st.rank];
    const CollectiveCall& call = p.collectives[op.collective];
    const int g = call.group;
    const int pos = group_pos_[g][st.rank];
    if (pos < 0)
        throw std::logic_error(fmt::format("rank {} issued a collective on group {} it is not in", st.rank, g));
    const std::uint32_t seq = group_next_seq_[g][pos]++;
    auto& list = group_instances_[g];
    if (list.size() <= seq) {
        list.resize(seq + 1, UINT32_MAX);
    }
    if (list[seq] == UINT32_MAX) {
        list[seq] = static_cast<std::uint32_t>(instances_.size());
        Instance in;
        in.group = g;
        in.seq = seq;
        in.member_slot.assign(w_.groups[g].ranks.size(), UINT32_MAX);
        in.first_arrival = now_;
        in.call = &call;
        in.step = op.step;
        instances_.push_back(std::move(in));
    }
    const std::uint32_t id = list[seq];
    Instance& in = instances_[id];
    in.member_slot[pos] = slot;
    ++in.arrived;
    // The NCCL kernel is now resident on this GPU, slowing its compute kernels: waiting for its peers until the
    // last one arrives, then moving data.
    if (in.arrived < static_cast<int>(in.member_slot.size())) {
        ++gpus_[st.rank].comm_waiting;
        refreshCompute(st.rank);
        return;
    }
    in.transfer = transferSlowdown(cfg_, in.call->bytes);
    for (std::size_t i = 0; i < in.member_slot.size(); ++i) {
        const int r = streams_[in.member_slot[i]].rank;
        if (in.member_slot[i] != slot) --gpus_[r].comm_waiting;
        gpus_[r].moving.push_back(id);
        refreshTransfer(r);
        refreshCompute(r);
    }

    in.start = now_;
    in.est = cost_.collective(in.call->kind, static_cast<int>(w_.groups[g].ranks.size()), group_nodes_[g],
                              in.call->bytes);
    queue_.push(now_ + fromSeconds(in.est.alpha_s), kAlphaDone, id);
}

double Engine::flowCap(double base_Bps, int gpu) const {
    return base_Bps / (gpus_[gpu].computing.empty() ? 1.0 : cfg_.comm_slowdown);
}

void Engine::startFlows(std::uint32_t id) {
    Instance& in = instances_[id];
    const std::vector<FlowSpec> specs = collectiveFlows(in.call->kind, in.est.algo, w_.groups[in.group].ranks,
                                                        fabric_, in.call->bytes, in.est.busbw_Bps, in.est.factor);
    if (specs.empty()) {
        finishCollective(id);
        return;
    }
    in.flows_left = static_cast<int>(specs.size());
    for (const FlowSpec& s : specs) {
        const FlowId f = net_.add(now_, fabric_.route(s.src, s.dst), s.bytes, flowCap(s.cap_Bps, s.src),
                                  std::uint32_t(s.src));
        if (flow_inst_.size() <= f) flow_inst_.resize(f + 1), flow_base_cap_.resize(f + 1);
        flow_inst_[f] = id;
        flow_base_cap_[f] = s.cap_Bps;
        gpus_[s.src].flows.push_back(f);
        rescheduleFlows();
    }
}

void Engine::rescheduleFlows() {
    for (FlowId f : net_.changed()) {
        const Time t = net_.completion(f);
        if (t != Time::max()) queue_.push(t, kFlowDone, f, net_.version(f));
    }
}

void Engine::refreshFlowCaps(int gpu) {
    for (FlowId f : gpus_[gpu].flows) {
        net_.setCap(now_, f, flowCap(flow_base_cap_[f], gpu));
        rescheduleFlows();
    }
}

void Engine::flowDone(FlowId f) {
    const std::uint32_t id = flow_inst_[f];
    const int src = static_cast<int>(net_.owner(f));
    auto& fl = gpus_[src].flows;
    fl.erase(std::find(fl.begin(), fl.end(), f));
    net_.remove(now_, f);
    rescheduleFlows();
    if (--instances_[id].flows_left == 0) finishCollective(id);
}

void Engine::finishCollective(std::uint32_t id) {
    Instance& in = instances_[id];
    tl_.collectives.push_back(CollectiveRecord{in.group, in.seq, in.call->kind, in.call->bytes, in.step,
                                               in.first_arrival, in.start, now_, in.est.algo, in.est.proto});
    if (in.est.measured && !in.est.in_domain && tl_.warnings.size() < 64)
        tl_.warnings.push_back(fmt::format("{} of {} bytes on {} ranks is outside the profile's measured sizes",
                                           collectiveKindName(in.call->kind), in.call->bytes, in.member_slot.size()));
    for (std::uint32_t slot : in.member_slot) {
        StreamState& st = streams_[slot];
        tl_.spans.push_back(Span{st.rank, st.index, KernelClass::comm, st.op, st.start, now_});
        st.running = false;
        ++st.head;
        GpuState& g = gpus_[st.rank];
        g.moving.erase(std::find(g.moving.begin(), g.moving.end(), id));
        refreshTransfer(st.rank);
        refreshCompute(st.rank);
    }
    for (std::uint32_t slot : in.member_slot) tryStart(slot);
}

}  // namespace stepsim
