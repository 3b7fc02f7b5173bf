#include "sim/metrics/Metrics.hpp"
#include "sim/metrics/IntervalSet.hpp"

#include "sim/metrics/Breakdown.hpp"
#include "sim/metrics/IoMetrics.hpp"
#include "sim/metrics/LinkUtilization.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/base/BusBandwidth.hpp"

namespace stepsim {
namespace {

// The three activity sets of one rank, over the whole run.
struct RankSets {
    IntervalSet comp, copy, comm;
};

// One rank in one step, in picoseconds.
struct Window {
    std::int64_t step = 0, comp = 0, copy = 0, comm = 0, overlap = 0;
    std::int64_t holes = 0;  // maximal idle intervals of the window (kernel gaps)
    std::int64_t exposed() const { return comm - overlap; }
    std::int64_t busy() const { return comp + comm - overlap; }
    std::int64_t idle() const { return step - busy(); }
    double ratio() const {
        const std::int64_t m = std::max(comp, comm);
        return m > 0 ? static_cast<double>(overlap) / static_cast<double>(m) : 0.0;
    }
};

double ms(std::int64_t ps) { return static_cast<double>(ps) * 1e-9; }

Window measure(const RankSets& sets, std::int64_t a, std::int64_t b) {
    Window w;
    w.step = b - a;
    if (b <= a) return w;
    const Interval win(a, b);
    const IntervalSet comp = sets.comp & win;
    const IntervalSet comm = sets.comm & win;
    w.comp = boost::icl::length(comp);
    w.comm = boost::icl::length(comm);
    w.copy = boost::icl::length(sets.copy & win);
    w.overlap = (w.comp > 0 && w.comm > 0) ? boost::icl::length(comp & comm) : 0;
    IntervalSet idle(win);
    idle -= comp;
    idle -= comm;
    w.holes = static_cast<std::int64_t>(boost::icl::interval_count(idle));
    return w;
}

void validate(const Timeline& tl, const Workload& wl, double peak_flops) {
    if (tl.ranks <= 0) throw std::invalid_argument("computeMetrics: the timeline has no ranks");
    if (static_cast<int>(tl.step_end.size()) != tl.ranks)
        throw std::invalid_argument(fmt::format("computeMetrics: step_end has {} ranks, the timeline {}",
                                                tl.step_end.size(), tl.ranks));
    const std::size_t steps = tl.step_end.front().size();
    if (steps == 0) throw std::invalid_argument("computeMetrics: no step finished");
    for (int r = 0; r < tl.ranks; ++r)
        if (tl.step_end[r].size() != steps)
            throw std::invalid_argument(fmt::format("computeMetrics: rank {} finished {} steps, rank 0 {}", r,
                                                    tl.step_end[r].size(), steps));
    for (int r = 0; r < tl.ranks; ++r)
        for (std::size_t k = 0; k < steps; ++k) {
            const Time prev = k == 0 ? Time{} : tl.step_end[r][k - 1];
            if (tl.step_end[r][k] < prev)
                throw std::invalid_argument(fmt::format(
                    "computeMetrics: rank {} step {} ends at {} ps, before the step began ({} ps): did it finish?", r,
                    k, tl.step_end[r][k].count(), prev.count()));
        }
    for (const Span& s : tl.spans)
        if (s.rank < 0 || s.rank >= tl.ranks)
            throw std::invalid_argument(fmt::format("computeMetrics: a span on rank {} of {}", s.rank, tl.ranks));
    for (const CollectiveRecord& c : tl.collectives)
        if (c.group < 0 || c.group >= static_cast<int>(wl.groups.size()))
            throw std::invalid_argument(fmt::format("computeMetrics: a collective of unknown group {}", c.group));
    if (!(peak_flops > 0.0)) throw std::invalid_argument("computeMetrics: peak_flops must be positive");
}

template <class T, class F>
double meanOf(const std::vector<T>& xs, F f) {
    double sum = 0.0;
    for (const T& x : xs) sum += f(x);
    return xs.empty() ? 0.0 : sum / static_cast<double>(xs.size());
}

// The steps the metrics average over, M = [first, steps) (Metrics.hpp), and the timeline's shape.
struct Measured {
    int ranks = 0, steps = 0, first = 0;
    double count = 0.0;  // |M|
};

Measured measuredSteps(const Timeline& tl, int checkpoint_interval) {
    Measured m;
    m.ranks = tl.ranks;
    m.steps = static_cast<int>(tl.step_end.front().size());
    m.first = steadyWindow(tl, checkpoint_interval).first;
    m.count = static_cast<double>(m.steps - m.first);
    return m;
}

// Each rank's activity sets over the whole run. Spans are taken by (rank, start): each set is then built by appending
// with a hint at its end (amortized constant time per span in the underlying std::set, instead of a log-time search).
std::vector<RankSets> rankSets(const Timeline& tl) {
    std::vector<std::size_t> order(tl.spans.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const Span& x = tl.spans[a];
        const Span& y = tl.spans[b];
        return x.rank != y.rank ? x.rank < y.rank : x.start < y.start;
    });
    std::vector<RankSets> sets(static_cast<std::size_t>(tl.ranks));
    for (std::size_t i : order) {
        const Span& s = tl.spans[i];
        if (s.end <= s.start) continue;
        const Interval iv(s.start.count(), s.end.count());
        RankSets& rs = sets[static_cast<std::size_t>(s.rank)];
        const auto append = [&](IntervalSet& set) { set.add(std::prev(set.end(), set.empty() ? 0 : 1), iv); };
        if (s.cls == KernelClass::comm) {
            append(rs.comm);
        } else {
            append(rs.comp);
            if (s.cls == KernelClass::copy) append(rs.copy);
        }
    }
    return sets;
}

// windows[r][s]: every rank's sets measured over each of its step windows.
std::vector<std::vector<Window>> stepWindows(const Timeline& tl, const std::vector<RankSets>& sets, const Measured& m) {
    std::vector<std::vector<Window>> windows(static_cast<std::size_t>(m.ranks));
    for (int r = 0; r < m.ranks; ++r) {
        const auto& ends = tl.step_end[static_cast<std::size_t>(r)];
        auto& row = windows[static_cast<std::size_t>(r)];
        row.reserve(static_cast<std::size_t>(m.steps));
        std::int64_t a = 0;
        for (int s = 0; s < m.steps; ++s) {
            const std::int64_t b = ends[static_cast<std::size_t>(s)].count();
            row.push_back(measure(sets[static_cast<std::size_t>(r)], a, b));
            a = b;
        }
    }
    return windows;
}

// Each rank's overlap, exposed communication and idle time: the mean over the measured steps of its windows.
std::vector<RankResults> perRank(const std::vector<std::vector<Window>>& windows, const Measured& m) {
    std::vector<RankResults> out;
    out.reserve(static_cast<std::size_t>(m.ranks));
    for (int r = 0; r < m.ranks; ++r) {
        const auto& row = windows[static_cast<std::size_t>(r)];
        RankResults rr;
        rr.rank = r;
        for (int s = m.first; s < m.steps; ++s) {
            const Window& w = row[static_cast<std::size_t>(s)];
            rr.step_time_ms += ms(w.step);
            rr.compute_busy_ms += ms(w.comp);
            rr.copy_busy_ms += ms(w.copy);
            rr.comm_busy_ms += ms(w.comm);
            rr.overlap_ms += ms(w.overlap);
            rr.overlap_ratio += w.ratio();
            rr.exposed_comm_ms += ms(w.exposed());
            rr.idle_ms += ms(w.idle());
        }
        for (double* f : {&rr.step_time_ms, &rr.compute_busy_ms, &rr.copy_busy_ms, &rr.comm_busy_ms, &rr.overlap_ms,
                          &rr.overlap_ratio, &rr.exposed_comm_ms, &rr.idle_ms})
            *f /= m.count;
        out.push_back(rr);
    }
    return out;
}

// gpu_busy_pct: the mean over every rank's measured windows of a positive length.
double gpuBusyPct(const std::vector<std::vector<Window>>& windows, const Measured& m) {
    double busy_pct_sum = 0.0;
    int busy_pct_n = 0;
    for (int r = 0; r < m.ranks; ++r)
        for (int s = m.first; s < m.steps; ++s) {
            const Window& w = windows[static_cast<std::size_t>(r)][static_cast<std::size_t>(s)];
            if (w.step > 0) {
                busy_pct_sum += 100.0 * static_cast<double>(w.busy()) / static_cast<double>(w.step);
                ++busy_pct_n;
            }
        }
    return busy_pct_n > 0 ? busy_pct_sum / busy_pct_n : 0.0;
}

// kernel_gap_us_mean: the idle time of every rank's measured windows over their holes.
double kernelGapUs(const std::vector<std::vector<Window>>& windows, const Measured& m) {
    std::int64_t idle = 0, holes = 0;
    for (int r = 0; r < m.ranks; ++r)
        for (int s = m.first; s < m.steps; ++s) {
            const Window& w = windows[static_cast<std::size_t>(r)][static_cast<std::size_t>(s)];
            idle += w.idle();
            holes += w.holes;
        }
    return holes > 0 ? static_cast<double>(idle) * 1e-6 / static_cast<double>(holes) : 0.0;
}

// Every step (warm-up included): the slowest rank's time, the other quantities' mean over ranks.
std::vector<StepResults> perStep(const std::vector<std::vector<Window>>& windows, const Measured& m) {
    std::vector<StepResults> out;
    out.reserve(static_cast<std::size_t>(m.steps));
    for (int s = 0; s < m.steps; ++s) {
        StepResults st;
        st.step = s;
        for (int r = 0; r < m.ranks; ++r) {
            const Window& w = windows[static_cast<std::size_t>(r)][static_cast<std::size_t>(s)];
            st.step_time_ms = std::max(st.step_time_ms, ms(w.step));
            st.compute_busy_ms += ms(w.comp);
            st.comm_busy_ms += ms(w.comm);
            st.overlap_ms += ms(w.overlap);
            st.exposed_comm_ms += ms(w.exposed());
            st.idle_ms += ms(w.idle());
        }
        for (double* f : {&st.compute_busy_ms, &st.comm_busy_ms, &st.overlap_ms, &st.exposed_comm_ms, &st.idle_ms})
            *f /= static_cast<double>(m.ranks);
        out.push_back(st);
    }
    return out;
}

// The means over ranks of the ranks' values, and the step time: the mean over measured steps of the slowest rank's.
void meansOverRanks(Results& out, const Measured& m) {
    for (int s = m.first; s < m.steps; ++s) out.step_time_ms += out.per_step[static_cast<std::size_t>(s)].step_time_ms;
    out.step_time_ms /= m.count;

    out.compute_busy_ms = meanOf(out.per_rank, [](const RankResults& r) { return r.compute_busy_ms; });
    out.copy_busy_ms = meanOf(out.per_rank, [](const RankResults& r) { return r.copy_busy_ms; });
    out.comm_busy_ms = meanOf(out.per_rank, [](const RankResults& r) { return r.comm_busy_ms; });
    out.overlap_ms = meanOf(out.per_rank, [](const RankResults& r) { return r.overlap_ms; });
    out.overlap_ratio = meanOf(out.per_rank, [](const RankResults& r) { return r.overlap_ratio; });
    out.exposed_comm_ms = meanOf(out.per_rank, [](const RankResults& r) { return r.exposed_comm_ms; });
    out.idle_ms = meanOf(out.per_rank, [](const RankResults& r) { return r.idle_ms; });
}

// The SM clock's mean over the measured steps and ranks, when the timeline recorded it for every rank.
std::optional<double> smClockMhz(const Timeline& tl, const Measured& m) {
    if (tl.clock_mhz.size() != static_cast<std::size_t>(m.ranks)) return std::nullopt;
    double clock_sum = 0.0;
    for (const std::vector<double>& c : tl.clock_mhz)
        for (int s = m.first; s < m.steps && s < static_cast<int>(c.size()); ++s) clock_sum += c[std::size_t(s)];
    if (clock_sum > 0.0) return clock_sum / (m.count * m.ranks);
    return std::nullopt;
}

// Tokens and samples per second and MFU from the step time; a zero step time leaves them 0, with a warning.
void throughput(Results& out, const Workload& wl, double peak_flops, int ranks) {
    const double step_s = out.step_time_ms * 1e-3;
    if (step_s > 0.0) {
        out.tokens_per_s_per_gpu = wl.tokens_per_step / step_s;
        out.tokens_per_s = out.tokens_per_s_per_gpu * ranks;
        out.samples_per_s = wl.samples_per_step * ranks / step_s;
        out.mfu = wl.model_flops_per_step / (step_s * peak_flops);
    } else {
        out.warnings.push_back("step time is zero: throughput and MFU are not defined and reported as 0");
    }
}

// The collectives of the measured steps: count and bytes per GPU and step, algbw and busbw, the barrier wait.
CollectiveResults collectiveResults(const Timeline& tl, const Workload& wl, const Measured& m) {
    double member_sum = 0.0, member_bytes = 0.0, sum_s = 0.0, sum_bus = 0.0, sum_t = 0.0;
    double wait_sum = 0.0, wait_max = 0.0;
    int instances = 0;
    for (const CollectiveRecord& c : tl.collectives) {
        if (c.step < m.first || c.step >= m.steps) continue;
        const int n = static_cast<int>(wl.groups[static_cast<std::size_t>(c.group)].ranks.size());
        member_sum += n;
        member_bytes += n * c.bytes;
        sum_s += c.bytes;
        sum_bus += c.bytes * busBandwidthFactor(c.kind, n);
        sum_t += (c.end - c.start).seconds();
        const double wait = ms((c.start - c.first_arrival).count());
        wait_sum += wait;
        wait_max = std::max(wait_max, wait);
        ++instances;
    }
    CollectiveResults col;
    // Per GPU of the whole job (a reduced run simulates fewer ranks than its groups hold: Workload::ranks).
    col.count = member_sum / (wl.ranks() * m.count);
    col.bytes = member_bytes / (wl.ranks() * m.count);
    if (sum_t > 0.0) {
        col.algbw_GBps = sum_s / sum_t * 1e-9;
        col.busbw_GBps = sum_bus / sum_t * 1e-9;
    }
    if (instances > 0) {
        col.barrier_wait_ms_mean = wait_sum / instances;
        col.barrier_wait_ms_max = wait_max;
    }
    return col;
}

}  // namespace

namespace {

// M as whole checkpoint intervals (Metrics.hpp's steadyWindow): the last n·N steps of those from `w.first` on.
SteadyWindow wholeIntervals(SteadyWindow w, int steps, int interval) {
    if (interval <= 0 || steps - 1 < interval) return w;
    const int n = (steps - w.first) / interval;
    if (n >= 1) {
        w.first = steps - n * interval;
    } else {
        w.steps_to_steady = std::max(w.steps_to_steady, interval - (steps - w.first));
        w.first = steps - interval;
    }
    return w;
}

}  // namespace

SteadyWindow steadyWindow(const Timeline& tl, int checkpoint_interval) {
    SteadyWindow w;
    const int steps = tl.step_end.empty() ? 0 : static_cast<int>(tl.step_end.front().size());
    if (steps <= 1) return w;
    w.first = 1;
    const bool hosts = tl.host_step_end.size() == tl.step_end.size();
    if (steps == 2 || !hosts) return wholeIntervals(w, steps, checkpoint_interval);
    const auto saves = [&](int s) { return checkpoint_interval > 0 && s % checkpoint_interval == 0; };
    // The mean window of steps 1 .. S−1 over the slowest rank: b(S−1) − b(0), over S − 1.
    Time b0, bl;
    for (const auto& b : tl.step_end) b0 = std::max(b0, b.front()), bl = std::max(bl, b.back());
    const double tol = kSteadyTolerance * double((bl - b0).count()) / (steps - 1);
    int last = 0;  // the last head-start step
    std::vector<double> lead(tl.step_end.size()), rate(tl.step_end.size(), 0.0);
    for (std::size_t r = 0; r < tl.step_end.size(); ++r) {
        if (tl.host_step_end[r].size() != tl.step_end[r].size()) return wholeIntervals(w, steps, checkpoint_interval);
        const auto l = [&](int s) { return double((tl.step_end[r][s] - tl.host_step_end[r][s]).count()); };
        for (int s = 1; s < steps; ++s)
            if (!saves(s) && l(s) < l(s - 1) - tol) {
                last = std::max(last, s);
                if (s == steps - 1) rate[r] = l(s - 1) - l(s);
            }
        lead[r] = l(steps - 1);
    }
    w.first = std::clamp(last + 1, 1, steps - 1);
    if (last == steps - 1)
        for (std::size_t r = 0; r < lead.size(); ++r)
            if (rate[r] > 0) w.steps_to_steady = std::max(w.steps_to_steady, int(std::ceil(lead[r] / rate[r])));
    return wholeIntervals(w, steps, checkpoint_interval);
}

std::vector<double> hostIssueMs(const Workload& wl, const std::vector<double>& host_speed, int first) {
    first = std::clamp(first, 0, std::max(0, wl.steps - 1));  // measured steps: [first, steps), as computeMetrics
    std::vector<double> out;
    for (std::size_t r = 0; r < wl.programs.size(); ++r) {
        double host_s = 0.0;
        for (const Op& op : wl.programs[r].ops)
            if (op.step >= first) host_s += op.host_s;
        const double speed = r < host_speed.size() ? host_speed[r] : 1.0;
        out.push_back(speed * host_s * 1e3 / double(std::max(1, wl.steps - first)));
    }
    return out;
}

// Results::pp_bubble_ratio.
double pipelineBubble(const Timeline& tl, const Workload& wl, const Measured& m) {
    const std::int64_t none = -1;
    std::vector<std::int64_t> first(std::size_t(m.steps), none), last(std::size_t(m.steps), none);
    std::vector<std::vector<IntervalSet>> busy(std::size_t(m.steps), std::vector<IntervalSet>(std::size_t(m.ranks)));
    for (const Span& s : tl.spans) {
        if (s.end <= s.start) continue;
        const Program& prog = wl.programs[std::size_t(s.rank)];
        const Op& op = prog.ops[s.op];
        if (op.phase != Phase::forward && op.phase != Phase::backward) continue;
        if (op.step < m.first || op.step >= m.steps) continue;
        const std::size_t k = std::size_t(op.step);
        // A stage's own collectives (tensor parallelism's, FSDP's) keep it busy as its kernels do: only the time it
        // waits for its pipeline neighbours, or runs nothing, is the bubble. The window is the compute's.
        if (s.cls == KernelClass::comm || op.kind != OpKind::kernel) {
            if (op.kind == OpKind::collective && prog.collectives[op.collective].kind != CollectiveKind::sendrecv)
                busy[k][std::size_t(s.rank)].add(Interval(s.start.count(), s.end.count()));
            continue;
        }
        first[k] = first[k] == none ? s.start.count() : std::min(first[k], s.start.count());
        last[k] = std::max(last[k], s.end.count());
        busy[k][std::size_t(s.rank)].add(Interval(s.start.count(), s.end.count()));
    }
    double sum = 0;
    int n = 0;
    for (int k = m.first; k < m.steps; ++k) {
        if (first[std::size_t(k)] == none) continue;
        const double w = double(last[std::size_t(k)] - first[std::size_t(k)]);
        const IntervalSet window(Interval(first[std::size_t(k)], last[std::size_t(k)]));
        for (const IntervalSet& b : busy[std::size_t(k)]) {
            sum += 1.0 - double(boost::icl::length(b & window)) / w;
            ++n;
        }
    }
    return n > 0 ? sum / n : 0.0;
}

Results computeMetrics(const Timeline& tl, const Workload& wl, double peak_flops) {
    validate(tl, wl, peak_flops);
    const Measured m = measuredSteps(tl, wl.checkpoint_interval);
    const std::vector<std::vector<Window>> windows = stepWindows(tl, rankSets(tl), m);
    Results out;
    out.measured_from_step = m.first;
    out.steps_to_steady = steadyWindow(tl, wl.checkpoint_interval).steps_to_steady;
    out.per_rank = perRank(windows, m);
    out.per_step = perStep(windows, m);
    meansOverRanks(out, m);
    out.gpu_busy_pct = gpuBusyPct(windows, m);
    out.kernel_gap_us_mean = kernelGapUs(windows, m);
    out.sm_clock_mhz = smClockMhz(tl, m);
    out.warnings = tl.warnings;
    throughput(out, wl, peak_flops, m.ranks);
    out.collectives = collectiveResults(tl, wl, m);
    out.input = inputResults(tl, wl);
    out.checkpoint = checkpointResults(tl, wl, wl.checkpoint_interval);
    out.link_utilization = linkUtilization(tl);
    if (wl.pipeline_stages > 1) out.pp_bubble_ratio = pipelineBubble(tl, wl, m);
    out.breakdown_ms = stepBreakdown(tl, wl, m.first);
    return out;
}

double nearestRankPercentile(std::vector<double> values, double p) {
    if (values.empty()) throw std::invalid_argument("nearestRankPercentile: no values");
    if (!(p > 0.0 && p <= 100.0)) throw std::invalid_argument("nearestRankPercentile: p must be in (0, 100]");
    std::sort(values.begin(), values.end());
    const double n = static_cast<double>(values.size());
    // ⌈p/100 · N⌉, guarding against p/100·N landing a hair above an integer in floating point.
    auto rank = static_cast<std::size_t>(std::ceil(p * n / 100.0 - 1e-9));
    rank = std::clamp<std::size_t>(rank, 1, values.size());
    return values[rank - 1];
}

namespace {
Spread spreadOf(const std::vector<double>& v) {
    Spread s{nearestRankPercentile(v, 50.0), nearestRankPercentile(v, 90.0), nearestRankPercentile(v, 99.0), 0.0};
    if (v.size() > 1) {
        const double m = meanOf(v, [](double x) { return x; });
        double ss = 0.0;
        for (double x : v) ss += (x - m) * (x - m);
        s.std = std::sqrt(ss / static_cast<double>(v.size() - 1));
    }
    return s;
}

Histogram histogramOf(const std::vector<double>& v, int bins) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    Histogram h;
    h.lo_ms = *lo;
    h.counts.assign(static_cast<std::size_t>(*hi > *lo ? bins : 1), 0);
    h.bin_ms = *hi > *lo ? (*hi - *lo) / bins : 0.0;
    for (double x : v) {
        const auto b = h.bin_ms > 0 ? static_cast<std::size_t>((x - *lo) / h.bin_ms) : 0;
        ++h.counts[std::min(b, h.counts.size() - 1)];
    }
    return h;
}

// The samples' means of the run's totals (step time, throughput, busy and overlap, collectives, memory, the pipeline
// bubble, the clock); the input pipeline's step classes and the link series the first sample's, checkpoint times the
// mean.
void meanTotals(Results& out, const std::vector<Results>& samples) {
    const auto mean = [&](auto field) {
        return meanOf(samples, [&](const Results& s) { return std::invoke(field, s); });
    };
    out.samples = static_cast<int>(samples.size());
    out.step_time_ms = mean(&Results::step_time_ms);
    out.tokens_per_s = mean(&Results::tokens_per_s);
    out.tokens_per_s_per_gpu = mean(&Results::tokens_per_s_per_gpu);
    out.samples_per_s = mean(&Results::samples_per_s);
    out.mfu = mean(&Results::mfu);
    out.compute_busy_ms = mean(&Results::compute_busy_ms);
    out.copy_busy_ms = mean(&Results::copy_busy_ms);
    out.comm_busy_ms = mean(&Results::comm_busy_ms);
    out.overlap_ms = mean(&Results::overlap_ms);
    out.overlap_ratio = mean(&Results::overlap_ratio);
    out.exposed_comm_ms = mean(&Results::exposed_comm_ms);
    out.idle_ms = mean(&Results::idle_ms);
    out.gpu_busy_pct = mean(&Results::gpu_busy_pct);
    out.kernel_gap_us_mean = mean(&Results::kernel_gap_us_mean);
    out.collectives.count = mean([](const Results& s) { return s.collectives.count; });
    out.collectives.bytes = mean([](const Results& s) { return s.collectives.bytes; });
    out.collectives.algbw_GBps = mean([](const Results& s) { return s.collectives.algbw_GBps; });
    out.collectives.busbw_GBps = mean([](const Results& s) { return s.collectives.busbw_GBps; });
    out.collectives.barrier_wait_ms_mean = mean([](const Results& s) { return s.collectives.barrier_wait_ms_mean; });
    out.collectives.barrier_wait_ms_max = mean([](const Results& s) { return s.collectives.barrier_wait_ms_max; });

    double mem_sum = 0.0;
    int mem_n = 0;
    for (const Results& s : samples)
        if (s.peak_memory_gib) {
            mem_sum += *s.peak_memory_gib;
            ++mem_n;
        }
    if (mem_n > 0) out.peak_memory_gib = mem_sum / mem_n;
    if (samples.front().pp_bubble_ratio)
        out.pp_bubble_ratio = mean([](const Results& s) { return s.pp_bubble_ratio.value_or(0.0); });
    if (samples.front().sm_clock_mhz) out.sm_clock_mhz = mean([](const Results& s) { return s.sm_clock_mhz.value_or(0.0); });
    // The input pipeline's step classes and the link series are the first sample's; checkpoint times the mean.
    out.input = samples.front().input;
    out.link_utilization = samples.front().link_utilization;
    out.checkpoint = samples.front().checkpoint;
    if (out.checkpoint) {
        out.checkpoint->blocking_ms = mean([](const Results& s) { return s.checkpoint ? s.checkpoint->blocking_ms : 0.0; });
        out.checkpoint->ms_per_step = mean([](const Results& s) { return s.checkpoint ? s.checkpoint->ms_per_step : 0.0; });
        out.checkpoint->write_ms = mean([](const Results& s) { return s.checkpoint ? s.checkpoint->write_ms : 0.0; });
    }
}

// The breakdown's parts, each the mean over the samples (0 in a sample without it), in first-seen order; the
// samples' warnings, each once.
void meanBreakdownAndWarnings(Results& out, const std::vector<Results>& samples) {
    for (const Results& s : samples)
        for (const BreakdownPart& p : s.breakdown_ms)
            if (std::none_of(out.breakdown_ms.begin(), out.breakdown_ms.end(),
                             [&](const BreakdownPart& q) { return q.part == p.part; }))
                out.breakdown_ms.push_back({p.part, 0.0});
    for (BreakdownPart& p : out.breakdown_ms)
        for (const Results& s : samples)
            for (const BreakdownPart& q : s.breakdown_ms)
                if (q.part == p.part) p.ms += q.ms / static_cast<double>(samples.size());

    std::set<std::string> seen;
    for (const Results& s : samples)
        for (const std::string& w : s.warnings)
            if (seen.insert(w).second) out.warnings.push_back(w);
}

// Each rank's and each step's figures, the mean over the samples.
void meanPerRankAndStep(Results& out, const std::vector<Results>& samples) {
    const Results& f = samples.front();
    out.per_rank = f.per_rank;
    for (std::size_t i = 0; i < f.per_rank.size(); ++i) {
        RankResults& r = out.per_rank[i];
        const auto m = [&](double RankResults::*field) {
            return meanOf(samples, [&](const Results& s) { return s.per_rank[i].*field; });
        };
        r.step_time_ms = m(&RankResults::step_time_ms);
        r.compute_busy_ms = m(&RankResults::compute_busy_ms);
        r.copy_busy_ms = m(&RankResults::copy_busy_ms);
        r.comm_busy_ms = m(&RankResults::comm_busy_ms);
        r.overlap_ms = m(&RankResults::overlap_ms);
        r.overlap_ratio = m(&RankResults::overlap_ratio);
        r.exposed_comm_ms = m(&RankResults::exposed_comm_ms);
        r.idle_ms = m(&RankResults::idle_ms);
    }
    out.per_step = f.per_step;
    for (std::size_t i = 0; i < f.per_step.size(); ++i) {
        StepResults& st = out.per_step[i];
        const auto m = [&](double StepResults::*field) {
            return meanOf(samples, [&](const Results& s) { return s.per_step[i].*field; });
        };
        st.step_time_ms = m(&StepResults::step_time_ms);
        st.compute_busy_ms = m(&StepResults::compute_busy_ms);
        st.comm_busy_ms = m(&StepResults::comm_busy_ms);
        st.overlap_ms = m(&StepResults::overlap_ms);
        st.exposed_comm_ms = m(&StepResults::exposed_comm_ms);
        st.idle_ms = m(&StepResults::idle_ms);
    }
}

// Each sample's own measured steps: the window the results name is the latest, the run's steps to steady the most;
// the noise band of the mean step, and the spread over the pooled measured steps.
void sampleSpreads(Results& out, const std::vector<Results>& samples) {
    out.measured_from_step = 0;
    for (const Results& s : samples) {
        out.measured_from_step = std::max(out.measured_from_step, s.measured_from_step);
        out.steps_to_steady = std::max(out.steps_to_steady, s.steps_to_steady);
    }
    {
        double sum = 0, ss = 0;
        for (const Results& s : samples) sum += s.step_time_ms;
        const double n = double(samples.size()), m = sum / n;
        for (const Results& s : samples) ss += (s.step_time_ms - m) * (s.step_time_ms - m);
        out.noise_band_ms = 1.96 * std::sqrt(ss / (n - 1)) / std::sqrt(n);
    }
    std::vector<double> times, exposed, idle;
    for (const Results& s : samples)
        for (std::size_t i = std::min(std::size_t(std::max(0, s.measured_from_step)), s.per_step.size() - 1);
             !s.per_step.empty() && i < s.per_step.size(); ++i) {
            times.push_back(s.per_step[i].step_time_ms);
            exposed.push_back(s.per_step[i].exposed_comm_ms);
            idle.push_back(s.per_step[i].idle_ms);
        }
    if (times.empty()) return;
    const Spread t = spreadOf(times);
    out.step_time_ms_p50 = t.p50;
    out.step_time_ms_p90 = t.p90;
    out.step_time_ms_p99 = t.p99;
    out.step_time_ms_std = t.std;
    out.exposed_comm_ms_spread = spreadOf(exposed);
    out.idle_ms_spread = spreadOf(idle);
    out.step_time_ms_histogram = histogramOf(times, kHistogramBins);
}

}  // namespace

Results aggregateSamples(const std::vector<Results>& samples) {
    if (samples.empty()) throw std::invalid_argument("aggregateSamples: no samples");
    if (samples.size() == 1) return samples.front();
    const Results& f = samples.front();
    for (const Results& s : samples)
        if (s.per_rank.size() != f.per_rank.size() || s.per_step.size() != f.per_step.size())
            throw std::invalid_argument("aggregateSamples: samples differ in ranks or steps");
    Results out;
    meanTotals(out, samples);
    meanBreakdownAndWarnings(out, samples);
    meanPerRankAndStep(out, samples);
    sampleSpreads(out, samples);
    return out;
}

}  // namespace stepsim
