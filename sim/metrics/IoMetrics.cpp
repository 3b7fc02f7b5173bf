#include "sim/metrics/IoMetrics.hpp"

#include "sim/metrics/Metrics.hpp"

#include <algorithm>
#include <map>

namespace stepsim {

namespace {
double us(Time a, Time b) { return (b - a).micros(); }
}  // namespace

std::optional<InputResults> inputResults(const Timeline& tl, const Workload& wl) {
    bool any = false;
    for (const TransferRecord& t : tl.transfers)
        any = any || wl.programs[t.rank].transfers[t.call].kind == TransferKind::h2d;
    if (!any || tl.step_end.empty()) return std::nullopt;
    const int steps = static_cast<int>(tl.step_end.front().size());
    InputResults out;
    out.steps.resize(steps);
    for (int k = 0; k < steps; ++k) out.steps[k].step = k;
    // The step a time falls in on a rank: the first whose end is at or after it.
    auto stepOf = [&](int rank, Time t) {
        const auto& ends = tl.step_end[rank];
        return static_cast<int>(std::lower_bound(ends.begin(), ends.end(), t) - ends.begin());
    };
    double h2d_us = 0, h2d_bytes = 0;
    const int first = steadyWindow(tl, wl.checkpoint_interval).first;  // the measured steps, as computeMetrics
    for (const TransferRecord& t : tl.transfers) {
        const TransferCall& c = wl.programs[t.rank].transfers[t.call];
        if (c.kind != TransferKind::h2d) continue;
        const int k = stepOf(t.rank, t.end);
        if (k >= steps) continue;
        const double d = us(t.start, t.end);
        StepIoClass& s = out.steps[k];
        s.max_h2d_us = std::max(s.max_h2d_us, d);
        if (d > kH2dBoundCopyUs && c.bytes / (d * 1e-6) < kH2dBoundGBps * 1e9) s.h2d_bound = true;
        if (k >= first) h2d_us += d, h2d_bytes += c.bytes;
    }
    // Gaps between consecutive compute-stream kernels, by rank, in start order.
    std::map<int, std::vector<std::pair<Time, Time>>> kernels;
    for (const Span& s : tl.spans)
        if (s.stream == 0 && s.cls != KernelClass::comm) kernels[s.rank].push_back({s.start, s.end});
    for (auto& [rank, v] : kernels) {
        std::sort(v.begin(), v.end());
        Time reach = v.empty() ? Time{} : v.front().second;
        for (std::size_t i = 1; i < v.size(); ++i) {
            const int k = stepOf(rank, v[i].first);
            if (k < steps && v[i].first > reach) {
                StepIoClass& s = out.steps[k];
                const double gap = us(reach, v[i].first);
                s.max_kernel_gap_us = std::max(s.max_kernel_gap_us, gap);
                if (gap > kComputeIdleGapUs) s.compute_idle = true;
            }
            reach = std::max(reach, v[i].second);
        }
    }
    const double n = double(std::max(1, steps - first)) * double(std::max(1, tl.ranks));
    out.h2d_ms = h2d_us * 1e-3 / n;
    out.h2d_GBps = h2d_us > 0 ? h2d_bytes / (h2d_us * 1e-6) / 1e9 : 0.0;
    return out;
}

std::optional<CheckpointResults> checkpointResults(const Timeline& tl, const Workload& wl, int interval_steps) {
    struct One {
        Time first_issue = Time::max(), block_end, write_start = Time::max(), write_end;
        double plan_s = 0, staged = 0, written = 0;
    };
    std::map<std::pair<int, int>, One> by;  // (rank, checkpoint)
    for (const TransferRecord& t : tl.transfers) {
        const TransferCall& c = wl.programs[t.rank].transfers[t.call];
        if (c.checkpoint < 0) continue;
        One& o = by[{t.rank, c.checkpoint}];
        if (c.kind == TransferKind::d2h) {
            o.first_issue = std::min(o.first_issue, t.issued);
            o.plan_s = c.seconds;
            o.staged += c.bytes;
        } else {
            o.write_start = std::min(o.write_start, t.start);
            o.write_end = std::max(o.write_end, t.end);
            o.written += c.bytes;
        }
        if (c.blocking) o.block_end = std::max(o.block_end, t.end);
    }
    if (by.empty()) return std::nullopt;
    CheckpointResults out;
    double blocking = 0, write = 0, n = 0;
    for (const auto& [key, o] : by) {
        if (o.first_issue == Time::max() || o.write_start == Time::max()) continue;
        blocking += us(o.first_issue, o.block_end) * 1e-3 + o.plan_s * 1e3;
        write += us(o.write_start, o.write_end) * 1e-3;
        out.staged_bytes += o.staged;
        out.written_bytes += o.written;
        n += 1;
    }
    if (n == 0) return std::nullopt;
    out.count = static_cast<int>(n / std::max(1, tl.ranks));
    out.blocking_ms = blocking / n;
    out.write_ms = write / n;
    out.staged_bytes /= n;
    out.written_bytes /= n;
    out.ms_per_step = interval_steps > 0 ? out.blocking_ms / interval_steps : 0.0;
    return out;
}

}  // namespace stepsim
