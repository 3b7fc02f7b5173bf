#include "calibration/fit/ProfileFit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include <Eigen/Dense>

#include "calibration/fit/AlphaBetaFit.hpp"
#include "calibration/fit/GemmFit.hpp"
#include "sim/base/InputError.hpp"
#include "sim/base/Statistics.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

// Every 4th point (index 3, 7, ...) is held out.
bool heldOut(std::size_t i) { return i % 4 == 3; }

json segmentsJson(const CollectiveFit& f) {
    json a = json::array();
    for (const auto& s : f.segments)
        a.push_back({{"lo_bytes", s.lo_bytes}, {"hi_bytes", s.hi_bytes}, {"alpha_us", s.alpha_us},
                     {"busbw_gbps", s.busbw_gbps}, {"rel_error", s.rel_error}});
    return a;
}

// Order of the profile's collective list: NCCL's own choice before forced variants, bf16 before other dtypes
// (CostModel takes the first fit matching op/ranks/nodes/algo/proto).
int dtypeRank(const std::string& d) { return d == "bf16" ? 0 : d == "fp32" ? 1 : 2; }

struct SeriesKey {
    std::string op;
    int ranks, nodes;
    std::string algo, proto, dtype;
    auto tie() const {
        return std::make_tuple(op, ranks, nodes, algo == "auto" ? 0 : 1, algo, proto, dtypeRank(dtype), dtype);
    }
    bool operator<(const SeriesKey& o) const { return tie() < o.tie(); }
};

// α-β line through (size, time) records with β reported as GB/s and α in µs.
struct LineFit {
    double alpha_us = 0, gbps = 0, rel_error = 0, lo = 0, hi = 0;
    int n = 0;
};
LineFit fitRate(std::vector<SizeTime> pts) {
    LineFit r;
    std::sort(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.bytes < b.bytes; });
    if (pts.size() < 2) return r;
    const AlphaBetaLine l = fitLine(pts, 1.0);
    r.alpha_us = l.alpha_us;
    r.gbps = 1.0 / (l.us_per_byte * 1e3);
    std::vector<double> e;
    for (const auto& p : pts) e.push_back(std::abs(l.predict(p.bytes) - p.us) / p.us);
    r.rel_error = median(e);
    r.lo = pts.front().bytes;
    r.hi = pts.back().bytes;
    r.n = static_cast<int>(pts.size());
    return r;
}
json lineJson(const LineFit& l) {
    return {{"alpha_us", l.alpha_us}, {"GBps", l.gbps}, {"rel_error", l.rel_error}, {"domain_bytes", {l.lo, l.hi}}, {"n", l.n}};
}

Distribution dist(const RawTimes& t) { return {t.median, std::max(t.p99, t.median)}; }

// Values measured per GEMM shape, by (m, n, k).
using ByShape = std::map<std::array<long, 3>, std::vector<double>>;

// The median per shape, never below `floor`, in ascending shape order.
std::vector<GemmShapeValue> medianByShape(const ByShape& v, double floor) {
    std::vector<GemmShapeValue> out;
    for (const auto& [mnk, x] : v) out.push_back({mnk[0], mnk[1], mnk[2], std::max(floor, median(x))});
    return out;
}

json shapeReport(const std::vector<GemmShapeValue>& list) {
    std::vector<double> all;
    for (const auto& g : list) all.push_back(g.value);
    return {{"shapes", all.size()}, {"median", median(all)},
            {"range", {*std::min_element(all.begin(), all.end()), *std::max_element(all.begin(), all.end())}}};
}

// The clock line through the loads held at the power limit: capped points draw at least 97% of the highest power
// seen and hold the clock more than 20 MHz under the rested one. For each whole memory_busy_tflops W in 0..400, an
// ordinary least-squares fit of clock = intercept + slope · E / u + idle_headroom · (1 − u) / u, where E = load + W ·
// memory_fraction (per second of the cycle) and u its busy fraction: the load over the busy time, and the headroom
// idle time leaves. The W of least squared error is kept. Without a capped point idle for at least 3% of its cycle
// the headroom cannot be told from the line: the idle mixes are left out, the line is fitted through E alone (u = 1)
// and idle_headroom is 0 (PowerModel: the load is then taken over the whole step).
struct ClockLine {
    double intercept = 0, slope = 0, memory_busy = 0, idle_headroom = 0, rms = 0;
    std::size_t points = 0, idle_points = 0;
};

std::optional<ClockLine> fitClockLine(const std::vector<RawPowerPoint>& pts, double clockMax) {
    double powerMax = 0;
    for (const RawPowerPoint& q : pts) powerMax = std::max(powerMax, q.power_w);
    std::vector<const RawPowerPoint*> capped;
    std::size_t idle = 0;
    for (const RawPowerPoint& q : pts)
        if (q.power_w >= 0.97 * powerMax && q.clock_mhz < clockMax - 20.0) {
            capped.push_back(&q);
            idle += q.busy_fraction < 0.97;
        }
    if (idle == 0) std::erase_if(capped, [](const RawPowerPoint* q) { return q->busy_fraction < 0.97; });
    const auto cols = static_cast<Eigen::Index>(idle > 0 ? 3 : 2);
    if (capped.size() < std::size_t(cols) + 1) return std::nullopt;
    const auto n = static_cast<Eigen::Index>(capped.size());
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) y(i) = capped[std::size_t(i)]->clock_mhz;
    std::optional<ClockLine> best;
    for (int memE = 0; memE <= 400; ++memE) {
        Eigen::MatrixXd A(n, cols);
        for (Eigen::Index i = 0; i < n; ++i) {
            const RawPowerPoint& q = *capped[std::size_t(i)];
            A(i, 0) = 1.0;
            A(i, 1) = (q.load_tflops + memE * q.memory_fraction) / q.busy_fraction;
            if (cols == 3) A(i, 2) = (1.0 - q.busy_fraction) / q.busy_fraction;
        }
        const Eigen::VectorXd c = A.colPivHouseholderQr().solve(y);
        const double rms = std::sqrt((A * c - y).squaredNorm() / double(n));
        if (!std::isfinite(rms) || !(c(1) < 0.0)) continue;
        if (!best || rms < best->rms)
            best = ClockLine{c(0), c(1), double(memE), cols == 3 ? c(2) : 0.0, rms, capped.size(), idle};
    }
    return best;
}

// Attention's clock exponent by head_dim: s = loaded time / burst time, x = ln(burst clock / loaded clock), the
// least-squares slope through the origin of ln s on x (Σ x ln s / Σ x²) over the records at least 30 MHz under their
// burst clock. The forward from "forward" records; the backward from each "forward_backward" record less the forward
// of the same file, rank, load and shape (both times), at the forward_backward record's clocks. A pass with no usable
// record takes the other pass's exponent.
json fitAttentionExponents(const std::vector<RawAttentionClock>& recs, std::vector<AttentionClockExponent>& out) {
    struct Sums { double xs = 0, xx = 0; int n = 0; };
    std::map<long, std::array<Sums, 2>> byDim;  // [0] forward, [1] backward
    const auto add = [&](long headDim, int pass, double time, double burst, double clock, double burstClock) {
        if (!(time > 0) || !(burst > 0) || !(burstClock - clock >= 30.0)) return;
        const double x = std::log(burstClock / clock);
        Sums& s = byDim[headDim][pass];
        s.xs += x * std::log(time / burst), s.xx += x * x, ++s.n;
    };
    using Shape = std::tuple<std::string, int, std::string, long, long, long, long, long>;
    const auto shape = [](const RawAttentionClock& a) {
        return Shape{a.file, a.rank, a.load, a.batch, a.heads, a.kv_heads, a.seq, a.head_dim};
    };
    std::map<Shape, const RawAttentionClock*> forwards;
    for (const RawAttentionClock& a : recs)
        if (!a.forward_backward) {
            forwards[shape(a)] = &a;
            add(a.head_dim, 0, a.time_us, a.burst_us, a.clock_mhz, a.burst_clock_mhz);
        }
    for (const RawAttentionClock& a : recs)
        if (auto it = forwards.find(shape(a)); a.forward_backward && it != forwards.end())
            add(a.head_dim, 1, a.time_us - it->second->time_us, a.burst_us - it->second->burst_us, a.clock_mhz, a.burst_clock_mhz);
    out.clear();
    json j = json::array();
    for (const auto& [headDim, s] : byDim) {
        if (s[0].n == 0 && s[1].n == 0) continue;
        AttentionClockExponent e{headDim, s[0].n ? s[0].xs / s[0].xx : s[1].xs / s[1].xx,
                                 s[1].n ? s[1].xs / s[1].xx : s[0].xs / s[0].xx};
        out.push_back(e);
        j.push_back({{"head_dim", headDim}, {"forward", e.forward}, {"backward", e.backward},
                     {"forward_records", s[0].n}, {"backward_records", s[1].n}});
    }
    return j;
}

}  // namespace

ProfileFitResult fitProfile(const RawData& raw, const HardwareProfile& base, const std::string& name,
                            const std::string& source) {
    ProfileFitResult out;
    HardwareProfile& p = out.profile;
    p = base;
    p.name = name;
    p.source = source;
    json& rep = out.report;
    rep["profile"] = name;
    rep["inputs"] = raw.files;
    rep["run_errors"] = raw.errors;
    rep["skipped_measurements"] = raw.skipped;
    std::vector<std::string> kept;

    // GPU.
    if (!raw.gpu_model.empty()) p.gpu.model = raw.gpu_model;
    if (raw.sms) p.gpu.sms = *raw.sms;
    if (raw.memory_gib) p.gpu.memory_gib = *raw.memory_gib;
    rep["gpu"] = {{"model", p.gpu.model}, {"sms", p.gpu.sms}, {"memory_gib", p.gpu.memory_gib}, {"gpus_in_run", raw.gpu_count},
                  {"peaks", "datasheet (base profile)"}};

    // Collectives.
    std::map<SeriesKey, std::vector<SizeTime>> series;
    for (const auto& c : raw.collectives)
        series[{c.op, c.ranks, c.nodes, c.algo, c.proto, c.dtype}].push_back({c.bytes, c.time.median});
    p.collectives.clear();
    json cj = json::array();
    std::vector<double> heldAll;
    for (auto& [key, pts] : series) {
        std::sort(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.bytes < b.bytes; });
        pts.erase(std::unique(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.bytes == b.bytes; }), pts.end());
        if (pts.size() < 8) continue;
        const double factor = ncclBusFactor(key.op, key.ranks);
        CollectiveFit f;
        f.op = key.op;
        f.ranks = key.ranks;
        f.nodes = key.nodes;
        f.algo = key.algo;
        f.proto = key.proto;
        f.dtype = key.dtype;
        // Held-out check first: fit on 3 of 4 sizes, predict the 4th.
        std::vector<SizeTime> train, test;
        for (std::size_t i = 0; i < pts.size(); ++i) (heldOut(i) ? test : train).push_back(pts[i]);
        CollectiveFit trial = f;
        fitSegments(train, factor, trial);
        std::vector<double> held;
        for (const auto& t : test) held.push_back(std::abs(predictMicros(trial, factor, t.bytes) - t.us) / t.us);
        heldAll.insert(heldAll.end(), held.begin(), held.end());
        fitSegments(pts, factor, f);
        cj.push_back({{"op", f.op}, {"ranks", f.ranks}, {"nodes", f.nodes}, {"algo", f.algo}, {"proto", f.proto},
                      {"dtype", f.dtype}, {"points", pts.size()}, {"domain_bytes", {pts.front().bytes, pts.back().bytes}},
                      {"rel_error", f.rel_error}, {"heldout_rel_error", median(held)}, {"segments", segmentsJson(f)}});
        p.collectives.push_back(f);
    }
    out.heldout_collectives = median(heldAll);
    rep["collectives"] = cj;
    rep["collectives_heldout_median_rel_error"] = out.heldout_collectives;
    rep["collectives_heldout_points"] = heldAll.size();
    if (p.collectives.empty()) kept.push_back("collectives");

    // GEMMs: PyTorch's own GEMM calls over the transformer grid (gemm_training_shapes.py --step) when there are
    // any for the dtype, else stepsim-bench's cuBLASLt points, else stepsim_torch_bench.py's. At the same shapes
    // cuBLASLt's first heuristic in TN layout ran a median 11% (up to 2.2x) slower than the kernels PyTorch picks,
    // and the training steps' GEMMs matched PyTorch's within 2-5% (calibration/profiles/h200x2/NOTES.md, GEMMs).
    struct GemmSel { std::string key, dtype; std::optional<bool> fast; };
    // FP16 has BF16's peak but its own kernels and power draw (raw/gemm_training_shapes_fp16_run83.jsonl: the grid's
    // back-to-back calls a median 6% slower).
    const std::vector<GemmSel> sel = {{"bf16", "bf16", std::nullopt},
                                      {"fp16", "fp16", std::nullopt},
                                      {"fp8", "fp8_e4m3", true},
                                      {"fp8_no_fast_accum", "fp8_e4m3", false}};
    json gj = json::object();
    std::vector<double> gemmHeld;
    for (const auto& s : sel) {
        std::vector<GemmPoint> pts;
        std::string from;
        for (const std::string src : {"pytorch-step", "stepsim-bench", "pytorch"}) {
            for (const auto& g : raw.gemms)
                if (g.source == src && g.dtype == s.dtype && (!s.fast || g.fast_accum.value_or(true) == *s.fast))
                    pts.push_back({g.m, g.n, g.k, g.tflops});
            if (!pts.empty()) {
                from = src;
                break;
            }
        }
        // GEMMs timed in the forms a training step launches them, back to back (gemm_training_shapes.py): shapes
        // the harness's grid does not cover (narrow models, weight gradients with few long tiles). They anchor the
        // model where they were measured but take no part in fitting it or in the held-out check, which stay on
        // one consistent source.
        std::vector<GemmPoint> anchors;
        for (const auto& g : raw.gemms)
            if (g.source == "pytorch-loop" && g.dtype == s.dtype && !s.fast) anchors.push_back({g.m, g.n, g.k, g.tflops});
        if (pts.size() < 4) continue;
        const double peak = s.dtype == "bf16" ? p.gpu.peak_tflops_bf16
                            : s.dtype == "fp16" ? p.gpu.peak_tflops_fp16
                                                : p.gpu.peak_tflops_fp8;
        std::vector<GemmPoint> train, test;
        for (std::size_t i = 0; i < pts.size(); ++i) (heldOut(i) ? test : train).push_back(pts[i]);
        const GemmEfficiency trial = fitGemm(train, peak, p.gpu.sms);
        const double heldModel = gemmModelError(test, trial, peak, p.gpu.sms);
        const double heldCorrected = gemmCorrectedError(test, trial, peak, p.gpu.sms);
        if (s.key != "fp8_no_fast_accum")  // the check covers the dtypes the profile carries
            for (const auto& t : test) gemmHeld.push_back(gemmCorrectedError({t}, trial, peak, p.gpu.sms));
        GemmEfficiency e = fitGemm(pts, peak, p.gpu.sms);
        e.points.insert(e.points.end(), anchors.begin(), anchors.end());
        long mlo = pts[0].m, mhi = mlo, nlo = pts[0].n, nhi = nlo, klo = pts[0].k, khi = klo;
        double best = 0;
        for (const auto& q : pts) {
            mlo = std::min(mlo, q.m); mhi = std::max(mhi, q.m);
            nlo = std::min(nlo, q.n); nhi = std::max(nhi, q.n);
            klo = std::min(klo, q.k); khi = std::max(khi, q.k);
            best = std::max(best, q.tflops);
        }
        gj[s.key] = {{"source", from}, {"points", pts.size()}, {"anchor_points", anchors.size()}, {"peak_tflops", peak}, {"max_efficiency", e.max_efficiency},
                     {"k_half", e.k_half}, {"tile", {e.tile_m, e.tile_n}}, {"overhead_us", e.overhead_us},
                     {"rel_error", e.rel_error}, {"heldout_model_rel_error", heldModel},
                     {"heldout_corrected_rel_error", heldCorrected}, {"best_tflops", best},
                     {"domain", {{"m", {mlo, mhi}}, {"n", {nlo, nhi}}, {"k", {klo, khi}}}}};
        if (s.key != "fp8_no_fast_accum") p.gemm[s.key] = e;  // the profile's dtypes; the rest is report only
    }
    out.heldout_gemm = median(gemmHeld);
    rep["gemm"] = gj;
    rep["gemm_heldout_median_rel_error"] = out.heldout_gemm;
    if (!gj.contains("bf16")) kept.push_back("gemm.bf16");
    if (!gj.contains("fp8")) kept.push_back("gemm.fp8");
    if (!gj.contains("fp16")) kept.push_back("gemm.fp16");

    // Memory: β of the copy kernel above the L2, and the shortest kernel.
    {
        std::vector<SizeTime> copy;
        json mj = json::object();
        std::map<std::string, std::vector<SizeTime>> byOp;
        for (const auto& m : raw.memory) byOp[m.op].push_back({m.bytes_moved, m.time.median});
        for (auto& [op, pts] : byOp) {
            std::vector<SizeTime> big;
            for (const auto& q : pts)
                if (q.bytes >= 128.0 * (1 << 20)) big.push_back(q);
            if (big.size() >= 2) mj[op] = lineJson(fitRate(big));
        }
        if (byOp.count("copy_kernel")) {
            std::vector<SizeTime> big;
            for (const auto& q : byOp["copy_kernel"])
                if (q.bytes >= 128.0 * (1 << 20)) big.push_back(q);
            if (big.size() >= 2) {
                const LineFit l = fitRate(big);
                p.memory.read_write_efficiency = std::min(1.0, l.gbps / p.gpu.hbm_gbps);
                mj["read_write_efficiency"] = p.memory.read_write_efficiency;
                mj["from"] = "copy_kernel, bytes read + written, sizes >= 128 MiB moved (beyond the L2)";
            }
        } else {
            kept.push_back("memory.read_write_efficiency");
        }
        bool minSet = false;
        for (const auto& l : raw.launches)
            if (l.op == "device_period") {
                p.memory.min_kernel_us = l.time.median;
                mj["min_kernel_us"] = l.time.median;
                mj["min_kernel_from"] = "launch device_period: start-to-start of back-to-back empty kernels";
                minSet = true;
            }
        if (!minSet) kept.push_back("memory.min_kernel_us");
        rep["memory"] = mj;
    }

    // Launch.
    {
        json lj = json::object();
        std::set<std::string> got;
        for (const auto& l : raw.launches) {
            lj[l.op] = {{"median_us", l.time.median}, {"p10_us", l.time.p10}, {"p90_us", l.time.p90}, {"p99_us", l.time.p99}};
            if (l.op == "device_gap") p.launch.device_gap = dist(l.time), got.insert("device_gap");
            if (l.op == "graph_host_launch") {
                // cudaGraphLaunch of the harness's 100-kernel graph: host cost per kernel.
                RawTimes t = l.time;
                t.median /= 100.0;
                t.p99 /= 100.0;
                p.launch.graph_host = dist(t);
                got.insert("graph_host");
            }
        }
        // Gaps inside a training step's mix (kernel_gaps.py, its gaps beside NCCL not fitted): before each class of
        // operation, the median over runs of each run's mean gap (the simulator sums them; the mean is what adds up).
        {
            constexpr std::pair<const char*, double StepGaps::*> kClasses[] = {
                {"gemm", &StepGaps::gemm_us},           {"attention", &StepGaps::attention_us},
                {"memory", &StepGaps::memory_us},       {"optimizer", &StepGaps::optimizer_us},
                {"copy", &StepGaps::copy_us}};
            json gj = json::object();
            for (const auto& [cls, field] : kClasses) {
                std::vector<double> means;
                for (const auto& l : raw.launches)
                    if (l.op == std::string("step_gap_") + cls) means.push_back(l.time.mean);
                if (means.empty()) {
                    kept.push_back(std::string("launch.step_gap_us.") + cls);
                    continue;
                }
                p.launch.step_gap_us.*field = median(means);
                gj[cls] = {{"mean_us", p.launch.step_gap_us.*field}, {"runs", means}};
            }
            if (!gj.empty()) lj["step_gap_us"] = gj;
            // Before a GEMM, by its shape (gemm_gaps.py): the median over runs of each run's mean gap.
            ByShape gaps;
            for (const auto& l : raw.launches)
                if (l.op == "step_gap_gemm_shape") gaps[{l.m, l.n, l.k}].push_back(l.time.mean);
            if (!gaps.empty()) {
                p.launch.gemm_gap_by_shape = medianByShape(gaps, 0.0);
                lj["gemm_gap_by_shape"] = shapeReport(p.launch.gemm_gap_by_shape);
            } else {
                kept.push_back("launch.gemm_gap_by_shape");
            }
            // Beside a resident NCCL kernel, moving data or waiting for its peer (gemm_gaps.py --beside): each class's
            // ratio of the mean gap beside to the mean alone over the units of one run and rank, the median over runs
            // and ranks, times the gap alone above. A class the units lack (attention, the optimizer): 0, the gap alone.
            const auto alone_of = [&](const RawLaunch& b, const std::string& op) -> const RawLaunch* {
                for (const auto& a : raw.launches)
                    if (a.op == op && a.file == b.file && a.rank == b.rank &&
                        (op.starts_with("step_gap_unit_") ? a.mode == "alone" : a.form == b.form && a.m == b.m && a.n == b.n && a.k == b.k))
                        return &a;
                return nullptr;
            };
            for (const auto& [mode, gapsBeside] : {std::pair{std::string("transfer"), &p.launch.step_gap_beside_transfer_us},
                                                  std::pair{std::string("waiting"), &p.launch.step_gap_beside_waiting_us}}) {
                const std::string key = "step_gap_beside_" + mode + "_us";
                json bj = json::object();
                for (const auto& [cls, field] : kClasses) {
                    const std::string op = std::string("step_gap_unit_") + cls;
                    std::vector<double> ratios;
                    for (const auto& b : raw.launches)
                        if (b.op == op && b.mode == mode)
                            if (const RawLaunch* a = alone_of(b, op); a && a->time.mean > 0) ratios.push_back(b.time.mean / a->time.mean);
                    if (ratios.empty() || !(p.launch.step_gap_us.*field > 0)) {
                        kept.push_back("launch." + key + "." + cls);
                        continue;
                    }
                    (*gapsBeside).*field = p.launch.step_gap_us.*field * median(ratios);
                    bj[cls] = {{"mean_us", (*gapsBeside).*field}, {"ratios", ratios}};
                }
                if (!bj.empty()) lj[key] = bj;
            }
            // By GEMM shape beside an NCCL kernel moving data: each shape's ratio beside to alone within a run, rank
            // and form, the median over them, times the shape's gap alone (gemm_gap_by_shape).
            ByShape ratios;
            for (const auto& b : raw.launches)
                if (b.op == "step_gap_gemm_shape_beside_nccl" && b.mode == "transfer")
                    if (const RawLaunch* a = alone_of(b, "step_gap_gemm_shape"); a && a->time.mean > 0)
                        ratios[{b.m, b.n, b.k}].push_back(b.time.mean / a->time.mean);
            std::vector<GemmShapeValue> beside;
            for (const GemmShapeValue& g : p.launch.gemm_gap_by_shape)
                if (auto it = ratios.find({g.m, g.n, g.k}); it != ratios.end())
                    beside.push_back({g.m, g.n, g.k, g.value * median(it->second)});
            if (!beside.empty()) {
                p.launch.gemm_gap_beside_transfer_by_shape = std::move(beside);
                lj["gemm_gap_beside_transfer_by_shape"] = shapeReport(p.launch.gemm_gap_beside_transfer_by_shape);
            } else {
                kept.push_back("launch.gemm_gap_beside_transfer_by_shape");
            }
        }
        for (const auto& d : raw.dispatch) {
            lj["pytorch_" + d.op] = {{"median_us", d.time.median}, {"p99_us", d.time.p99}};
            if (d.op == "eager_host") p.launch.eager_host = dist(d.time), got.insert("eager_host");
        }
        // Eager PyTorch's host cost per kernel (host_overhead.py), the median over its runs: forward, backward and
        // optimizer from the one-GPU runs, the forward under DDP from its ratio to the one-GPU forward (below). DDP's
        // hook per parameter tensor: from ddp_host.py's validation models where present (below); else from runs
        // that timed the backward with and without gradient sync alternately, (sync − no_sync)
        // per layer and tensor, put in the profile's units (× the profile's backward cost per kernel / the run's
        // no_sync cost per kernel, its kernel count from the one-GPU run before it in the file: the host's speed
        // moved ~2× between and within machine starts), less the copy back the model prices apart (one eager
        // op). Without such runs, from the backward's growth between a DDP run and the one-GPU run before it in
        // the same file, the noisier way. A run times medians only: p99 keeps the base's spread.
        {
            struct Alternate {
                double extra_per_tensor;
                std::optional<double> nosync_per_kernel;
            };
            std::vector<double> fwd, bwd, opt, fwdDdp, fwdRatio, hook, nccl;
            std::vector<Alternate> alternates;
            const RawHostOverhead* single = nullptr;
            for (const auto& h : raw.host) {
                if (!h.ddp) {
                    fwd.push_back(h.forward_us_per_kernel);
                    bwd.push_back(h.backward_us_per_kernel);
                    opt.push_back(h.optimizer_us_per_param_tensor);
                    single = &h;
                    continue;
                }
                fwdDdp.push_back(h.forward_us_per_kernel);
                if (h.allreduce_issue_us) nccl.push_back(*h.allreduce_issue_us);
                const bool paired = single && single->file == h.file;
                if (paired && single->forward_us_per_kernel > 0)
                    fwdRatio.push_back(h.forward_us_per_kernel / single->forward_us_per_kernel);
                if (h.backward_sync_us_per_layer && h.param_tensors_per_layer > 0) {
                    Alternate a{(*h.backward_sync_us_per_layer - *h.backward_nosync_us_per_layer) / h.param_tensors_per_layer,
                                std::nullopt};
                    if (paired && single->backward_us_per_kernel > 0 && single->backward_us_per_layer > 0)
                        a.nosync_per_kernel = *h.backward_nosync_us_per_layer /
                                              (single->backward_us_per_layer / single->backward_us_per_kernel);
                    alternates.push_back(a);
                }
                if (paired && h.param_tensors_per_layer > 0)
                    hook.push_back((h.backward_us_per_layer - single->backward_us_per_layer) / h.param_tensors_per_layer);
                single = nullptr;
            }
            auto set = [&](const char* name, Distribution& d, const std::vector<double>& v) {
                if (v.empty()) return;
                const double spread = d.median_us > 0 ? d.p99_us / d.median_us : 1.0;
                d.median_us = median(v);
                d.p99_us = d.median_us * spread;
                lj[name] = {{"median_us", d.median_us}, {"p99_us", d.p99_us}, {"runs", v.size()}, {"from", "host_overhead"}};
                got.insert(name);
            };
            set("forward_host", p.launch.forward_host, fwd);
            // Activation checkpointing per checkpointed layer (checkpoint_host records): the extra host time less
            // the recomputed kernels' launches at the rounds' forward cost per kernel (the simulator prices them
            // apart, at the forward's rate), in the profile's units (× the profile's forward cost per kernel / the
            // rounds'), the median over runs.
            if (!raw.checkpoint_host.empty()) {
                std::vector<double> sf, sb, ff, fb;
                for (const RawCheckpointHost& c : raw.checkpoint_host) {
                    const double plain = c.plain_forward_us_per_kernel;
                    const double scale = p.launch.forward_host.median_us / plain;
                    auto bwd = [&](const RawCheckpointHost::Mode& m) {
                        return std::max(0.0, (m.backward_extra_us - m.recomputed_kernels * plain) * scale);
                    };
                    sf.push_back(std::max(0.0, c.selective.forward_extra_us * scale));
                    sb.push_back(bwd(c.selective));
                    ff.push_back(std::max(0.0, c.full.forward_extra_us * scale));
                    fb.push_back(bwd(c.full));
                }
                CheckpointHost& ck = p.launch.checkpoint_host_us;
                ck = {median(sf), median(sb), median(ff), median(fb)};
                lj["checkpoint_host_us"] = {{"selective_forward", sf}, {"selective_backward", sb},
                                            {"full_forward", ff}, {"full_backward", fb}};
                got.insert("checkpoint_host_us");
            }
            set("backward_host", p.launch.backward_host, bwd);
            // AccumulateGrad's add per parameter tensor: the runs' median ratio to their own backward cost per kernel,
            // times the profile's (the host's speed moves both; the ratio carries across machine starts).
            if (!raw.accumulate_host.empty()) {
                std::vector<double> ratio, us;
                for (const RawAccumulateHost& a : raw.accumulate_host)
                    ratio.push_back(a.over_backward_kernel), us.push_back(a.us_per_param_tensor);
                p.launch.grad_accumulate_host_us = median(ratio) * p.launch.backward_host.median_us;
                lj["grad_accumulate_host_us"] = {{"value", p.launch.grad_accumulate_host_us},
                                                 {"over_backward_kernel", ratio}, {"us_per_param_tensor", us}};
                got.insert("grad_accumulate_host_us");
            }
            // The forward under DDP: the profile's forward cost per kernel times the median ratio of a DDP forward to
            // the one-GPU forward timed beside it (a DDP run and the one-GPU run before it in its file; ddp_host.py's
            // validation models, plain and under DDP in turn), as the host's speed moves ~2x between runs; the
            // median of the DDP runs' own costs only without such pairs.
            for (const RawDdpHost& d : raw.ddp_host) fwdRatio.push_back(d.ddp.forward_us / d.plain.forward_us);
            if (!fwdRatio.empty() && p.launch.forward_host.median_us > 0) {
                Distribution& d = p.launch.forward_host_ddp;
                const double spread = d.median_us > 0 ? d.p99_us / d.median_us : 1.0;
                d.median_us = p.launch.forward_host.median_us * median(fwdRatio);
                d.p99_us = d.median_us * spread;
                lj["forward_host_ddp"] = {{"median_us", d.median_us}, {"p99_us", d.p99_us},
                                          {"from", "forward_host times the paired ratios' median"},
                                          {"ratios", fwdRatio}, {"unpaired_runs", fwdDdp}};
                got.insert("forward_host_ddp");
            } else {
                set("forward_host_ddp", p.launch.forward_host_ddp, fwdDdp);
            }
            set("nccl_host", p.launch.nccl_host, nccl);
            if (!opt.empty()) {
                p.launch.optimizer_host_per_tensor_us = median(opt);
                lj["optimizer_host_per_tensor_us"] = p.launch.optimizer_host_per_tensor_us;
                got.insert("optimizer_host_per_tensor_us");
            }
            // The spread of the host's speed: each run's cost per kernel over the median of its kind (forward,
            // backward, DDP forward), pooled; its 10th and 90th percentile, from 8 ratios on.
            std::vector<double> ratios;
            for (const auto* v : {&fwd, &bwd, &fwdDdp})
                if (const double m = median(*v); m > 0)
                    for (double x : *v) ratios.push_back(x / m);
            if (ratios.size() >= 8) {
                p.launch.host_cost_spread = {std::min(1.0, quantile(ratios, 0.1)), std::max(1.0, quantile(ratios, 0.9))};
                lj["host_cost_spread"] = {{"p10", p.launch.host_cost_spread.p10}, {"p90", p.launch.host_cost_spread.p90},
                                          {"ratios", ratios}};
                got.insert("host_cost_spread");
            }
            // The hook from the validation's own models where ddp_host.py timed them (what DDP adds to the backward
            // per parameter tensor, in the profile's units: × the profile's backward cost per kernel / the record's
            // plain one; less the copy back, one eager op unless the gradients are the buckets' views, and the
            // tensor's share of its buckets' all-reduce issue, which the model prices apart), the median over the
            // records; else from the tiny model's runs that timed the backward with and without gradient sync
            // alternately; else from its paired runs.
            std::vector<double> hookAlternate, hookModels;
            for (const Alternate& a : alternates) {
                const double scale = a.nosync_per_kernel && *a.nosync_per_kernel > 0
                                         ? p.launch.backward_host.median_us / *a.nosync_per_kernel
                                         : 1.0;
                hookAlternate.push_back(a.extra_per_tensor * scale - p.launch.eager_host.median_us);
            }
            nlohmann::json models = nlohmann::json::array();
            for (const RawDdpHost& d : raw.ddp_host) {
                const double plain_per_launch = d.plain.backward_us / d.plain.backward_launches;
                const double scale = p.launch.backward_host.median_us / plain_per_launch;
                const double per_tensor = (d.ddp.backward_us - d.plain.backward_us) / d.param_tensors * scale;
                const double apart = (d.gradient_as_bucket_view ? 0.0 : p.launch.eager_host.median_us) +
                                     p.launch.nccl_host.median_us * d.buckets / d.param_tensors;
                hookModels.push_back(per_tensor - apart);
                models.push_back({{"id", d.id}, {"us_per_tensor", per_tensor}, {"hook_us", hookModels.back()}});
            }
            if (!hookModels.empty()) {
                p.launch.ddp_hook_host_us = std::max(0.0, median(hookModels));
                lj["ddp_hook_host_us"] = {{"value", p.launch.ddp_hook_host_us},
                                          {"from", "ddp_host: the validation's models, plain and under DDP in turn"},
                                          {"records", models}, {"tiny_model_sync_vs_no_sync_not_used", hookAlternate},
                                          {"pairs_not_used", hook}};
                got.insert("ddp_hook_host_us");
            } else if (!hookAlternate.empty()) {
                p.launch.ddp_hook_host_us = std::max(0.0, median(hookAlternate));
                lj["ddp_hook_host_us"] = {{"value", p.launch.ddp_hook_host_us}, {"from", "sync vs no_sync"},
                                          {"runs", hookAlternate}, {"pairs_not_used", hook}};
                got.insert("ddp_hook_host_us");
            } else if (!hook.empty()) {
                p.launch.ddp_hook_host_us = std::max(0.0, median(hook));
                lj["ddp_hook_host_us"] = {{"value", p.launch.ddp_hook_host_us}, {"from", "paired runs"}, {"pairs", hook}};
                got.insert("ddp_hook_host_us");
            }
        }
        for (const std::string f : {"device_gap", "graph_host", "eager_host", "forward_host", "forward_host_ddp",
                                    "backward_host", "optimizer_host_per_tensor_us", "ddp_hook_host_us", "nccl_host",
                                    "grad_accumulate_host_us",
                                    "checkpoint_host_us", "host_cost_spread"})
            if (!got.count(f)) kept.push_back("launch." + f);
        kept.push_back("launch.compiled_host");
        rep["launch"] = lj;
    }

    // Attention as training runs it: SDPA's default backend on q, k, v viewed from a fused QKV projection
    // (calibration/pytorch/attention_default.py), one point per shape; the efficiencies are the medians.
    // Without those records, PyTorch's flash backend (stepsim_torch_bench.py) gives the efficiencies alone.
    bool sdpa = false;
    {
        std::map<std::tuple<long, long, long>, AttentionPoint> pts;
        std::vector<double> fwd, bwd;
        for (const auto& k : raw.kernels) {
            if (!k.flops || !k.causal || (k.op != "sdpa_default_fwd" && k.op != "sdpa_default_bwd")) continue;
            AttentionPoint& a = pts[{k.head_dim, k.seq, k.batch * k.heads}];
            a.head_dim = k.head_dim;
            a.seq = k.seq;
            a.batch_heads = k.batch * k.heads;
            const double tflops = *k.flops / (k.time.median * 1e6);
            (k.op == "sdpa_default_fwd" ? a.fwd_tflops : a.bwd_tflops) = tflops;
            (k.op == "sdpa_default_fwd" ? fwd : bwd).push_back(tflops / p.gpu.peak_tflops_bf16);
        }
        p.attention.points.clear();
        for (const auto& [key, a] : pts)
            if (a.fwd_tflops > 0 && a.bwd_tflops > 0) p.attention.points.push_back(a);
        if (!p.attention.points.empty()) {
            sdpa = true;
            p.attention.fwd_efficiency = std::min(1.0, median(fwd));
            p.attention.bwd_efficiency = std::min(1.0, median(bwd));
            rep["attention"] = {{"fwd_efficiency", p.attention.fwd_efficiency},
                                {"bwd_efficiency", p.attention.bwd_efficiency},
                                {"points", p.attention.points.size()},
                                {"from", "SDPA default backend, q/k/v viewed from a fused QKV projection, causal"}};
        }
    }
    // Attention (PyTorch flash attention, causal), when the default backend was not measured.
    if (!sdpa) {
        std::vector<double> fwd, bwd;
        json aj = json::array();
        for (const auto& k : raw.kernels) {
            if (!k.flops || (k.op != "flash_attn_fwd" && k.op != "flash_attn_bwd")) continue;
            const double eff = *k.flops / (k.time.median * 1e6) / p.gpu.peak_tflops_bf16;
            aj.push_back({{"op", k.op}, {"seq", k.seq}, {"causal", k.causal}, {"efficiency", eff}});
            if (!k.causal) continue;
            (k.op == "flash_attn_fwd" ? fwd : bwd).push_back(eff);
        }
        if (!fwd.empty()) p.attention.fwd_efficiency = std::min(1.0, median(fwd));
        else kept.push_back("attention.fwd_efficiency");
        if (!bwd.empty()) p.attention.bwd_efficiency = std::min(1.0, median(bwd));
        else kept.push_back("attention.bwd_efficiency");
        rep["attention"] = {{"fwd_efficiency", p.attention.fwd_efficiency}, {"bwd_efficiency", p.attention.bwd_efficiency},
                            {"from", "median over causal shapes of achieved/peak_tflops_bf16 (PyTorch SDPA flash)"},
                            {"shapes", aj}};
    }

    // The clock under the power limit and attention's sensitivity to it (PowerModel; power_duty.py's power_duty
    // and power_loaded records): the rested clock is the highest read beside a rested time; the clock line through
    // the held loads that reached the limit (fitClockLine); attention's exponents by head_dim (fitAttentionExponents)
    // against the median burst clock of its records. Without such records the profile has no power model.
    if (raw.power.empty()) {
        p.power.modelled = false;
    } else {
        PowerModel& pm = p.power;
        pm.clock_max_mhz = 0;
        for (const RawPowerPoint& q : raw.power) pm.clock_max_mhz = std::max(pm.clock_max_mhz, q.rested_clock_mhz);
        json pj = {{"points", raw.power.size()}, {"clock_max_mhz", pm.clock_max_mhz}};
        if (const std::optional<ClockLine> line = fitClockLine(raw.power, pm.clock_max_mhz)) {
            pm.clock_intercept_mhz = line->intercept;
            pm.clock_mhz_per_tflops = line->slope;
            pm.memory_busy_tflops = line->memory_busy;
            pm.idle_headroom_mhz = line->idle_headroom;
            // Without attention records the clock is still reported; attention keeps its calibrated rate.
            std::vector<double> burst;
            for (const RawAttentionClock& a : raw.attention_clock) burst.push_back(a.burst_clock_mhz);
            pm.attention_reference_mhz = burst.empty() ? pm.clock_max_mhz : median(burst);
            pj["attention"] = fitAttentionExponents(raw.attention_clock, pm.attention);
            pm.modelled = true;
            pj["clock_intercept_mhz"] = pm.clock_intercept_mhz;
            pj["clock_mhz_per_tflops"] = pm.clock_mhz_per_tflops;
            pj["memory_busy_tflops"] = pm.memory_busy_tflops;
            pj["idle_headroom_mhz"] = pm.idle_headroom_mhz;
            pj["rms_mhz"] = line->rms;
            pj["capped_points"] = line->points;
            pj["idle_capped_points"] = line->idle_points;
            pj["attention_reference_mhz"] = pm.attention_reference_mhz;
            pj["attention_records"] = raw.attention_clock.size();
            pj["rule"] = "clock = intercept + slope * (load + memory_busy * memory_fraction) / busy + idle_headroom * "
                         "(1 - busy) / busy, least squares over the loads at >= 97% of the highest power and > 20 MHz "
                         "under the rested clock (without an idle one among them: idle_headroom 0, the idle mixes left "
                         "out)";
        } else {
            pm.modelled = false;
            pj["not_fitted"] = "fewer than 3 held loads at the power limit (>= 97% of the highest power, > 20 MHz "
                               "under the rested clock)";
        }
        pj["modelled"] = pm.modelled;
        rep["power"] = pj;
    }

    // Memory-bound kernel kinds (MemoryRates::kernels): t = fixed_us + bytes / (hbm_gbps · efficiency), one
    // relative-error α-β line through every size of the PyTorch ops of that kind.
    {
        // The optimizer kinds come from AdamW's step over GPT models' own tensors (0.16 to 2.0 billion parameters),
        // fused after 1 s of GEMMs at the power limit as it runs after a step's backward, foreach at rest
        // (stepsim_torch_bench.py's adamw groups, raw/torch_adamw_gpt_run92.jsonl).
        // The foreach step's time is fitted whole, and the model launches it as eight passes: each pass carries an
        // eighth of the fitted fixed cost (`passes`).
        struct Kind {
            std::string name;
            std::vector<std::string> ops;
            int passes = 1;
        };
        const std::vector<Kind> kinds = {
            {"elementwise", {"residual_add", "gelu_tanh", "silu"}},
            {"cast_up", {"cast_bf16_to_fp32"}},
            {"cast_down", {"cast_fp32_to_bf16"}},
            {"norm_forward", {"layer_norm_fwd"}},
            {"norm_backward", {"layer_norm_bwd"}},
            {"optimizer", {"adamw_fused_step_gpt_heated"}},
            {"residual_add", {"residual_add_fp32_bf16"}},
            {"optimizer_bf16", {"adamw_fused_step_bf16_gpt_heated"}},
            {"log_softmax_forward", {"log_softmax_fwd_bf16"}},
            {"log_softmax_backward", {"log_softmax_bwd_bf16"}},
            {"log_softmax_forward_fp32", {"log_softmax_fwd_fp32"}},
            {"log_softmax_backward_fp32", {"log_softmax_bwd_fp32"}},
            {"optimizer_foreach", {"adamw_foreach_step_gpt"}, 8},
            {"optimizer_foreach_bf16", {"adamw_foreach_step_bf16_gpt"}, 8},
            {"gelu_forward", {"gelu_tanh"}},
        };
        json kj = json::object();
        for (const auto& [kind, ops, passes] : kinds) {
            std::vector<SizeTime> pts;
            for (const auto& k : raw.kernels)
                if (k.bytes && !k.flops && std::find(ops.begin(), ops.end(), k.op) != ops.end())
                    pts.push_back({*k.bytes, k.time.median});
            if (pts.size() < 3) {
                kept.push_back("memory.kernels." + kind);
                continue;
            }
            const LineFit l = fitRate(pts);
            p.memory.kernels[kind] = {std::min(1.0, l.gbps / p.gpu.hbm_gbps), l.alpha_us / passes};
            json j = lineJson(l);
            j["passes"] = passes;
            j["efficiency"] = p.memory.kernels[kind].efficiency;
            j["ops"] = ops;
            kj[kind] = j;
        }
        rep["memory_kernels"] = kj;
    }

    // The norms' kernels over a grid of sizes (MemoryRates::norms; stepsim_torch_bench.py group norms, ops
    // {layer,rms}_norm_{fwd,bwd,bwd_weight}_{fp32,bf16}): at each size the median over the records (machine
    // starts), a size kept where all three kernels were timed.
    {
        json nj = json::object();
        NormGrid& g = p.memory.norms;
        const std::array<std::tuple<const char*, const char*, const char*, std::vector<NormPoint>*>, 4> grids = {{
            {"layer_fp32", "layer", "fp32", &g.layer_fp32},
            {"layer_bf16", "layer", "bf16", &g.layer_bf16},
            {"rms_fp32", "rms", "fp32", &g.rms_fp32},
            {"rms_bf16", "rms", "bf16", &g.rms_bf16},
        }};
        for (const auto& [name, norm, dtype, grid] : grids) {
            const std::array<std::string, 3> ops = {std::string(norm) + "_norm_fwd_" + dtype,
                                                    std::string(norm) + "_norm_bwd_" + dtype,
                                                    std::string(norm) + "_norm_bwd_weight_" + dtype};
            std::map<std::pair<long, long>, std::array<std::vector<double>, 3>> at;
            for (const auto& k : raw.kernels)
                for (std::size_t i = 0; i < ops.size(); ++i)
                    if (k.tokens > 0 && k.hidden > 0 && k.op == ops[i])
                        at[{k.tokens, k.hidden}][i].push_back(k.time.median);
            std::vector<NormPoint> pts;
            for (const auto& [size, v] : at)
                if (!v[0].empty() && !v[1].empty() && !v[2].empty())
                    pts.push_back({size.first, size.second, median(v[0]), median(v[1]), median(v[2])});
            if (pts.empty()) {
                kept.push_back(std::string("memory.norms.") + name);
                continue;
            }
            *grid = std::move(pts);
            nj[name] = {{"sizes", grid->size()}, {"ops", ops}};
        }
        rep["norms"] = nj;
    }

    // Other PyTorch kernels: achieved bandwidth, reported (memory-bound kernels are priced from HBM rates).
    {
        json kj = json::array();
        for (const auto& k : raw.kernels)
            if (k.bytes && !k.flops)
                kj.push_back({{"op", k.op}, {"time_us", k.time.median}, {"GBps", *k.bytes / (k.time.median * 1e3)},
                              {"fraction_of_hbm", *k.bytes / (k.time.median * 1e3) / p.gpu.hbm_gbps}});
        rep["pytorch_kernels"] = kj;
    }

    // Links.
    {
        json tj = json::object();
        std::map<std::string, std::vector<SizeTime>> byOp;
        for (const auto& t : raw.transfers) byOp[t.op].push_back({t.bytes_moved, t.time.median});
        for (auto& [op, pts] : byOp)
            if (pts.size() >= 2) tj[op] = lineJson(fitRate(pts));
        auto rate = [&](const std::string& op, double& field, const std::string& name) {
            if (byOp.count(op) && byOp[op].size() >= 2) field = fitRate(byOp[op]).gbps;
            else kept.push_back(name);
        };
        rate("peer_ce", p.links.nvlink_gbps, "links.nvlink_gbps");
        rate("h2d_pinned", p.links.pcie_h2d_gbps, "links.pcie_h2d_gbps");
        rate("h2d_pageable", p.links.pcie_pageable_gbps, "links.pcie_pageable_gbps");
        kept.push_back("links.nvlink_latency_us");
        kept.push_back("links.nic_gbps");
        kept.push_back("links.storage_gbps");
        rep["links"] = tj;
    }

    // Interference: sizes whose all-reduce alone lasts at least half the GEMM. Shorter collectives mostly wait
    // for SMs the GEMM holds (their "slowdown" is a start delay of up to one GEMM), which a rate factor
    // cannot represent; the report keeps every size.
    {
        json ij = json::array();
        std::vector<double> gs, cs;
        for (const auto& r : raw.interference) {
            const double g = r.gemm_with_comm_us / r.gemm_alone_us, c = r.comm_with_gemm_us / r.comm_alone_us;
            const bool used = r.comm_alone_us >= 0.5 * r.gemm_alone_us;
            ij.push_back({{"comm_bytes", r.comm_bytes}, {"device", r.device}, {"gemm_alone_us", r.gemm_alone_us},
                          {"comm_alone_us", r.comm_alone_us}, {"gemm_slowdown", g}, {"comm_slowdown", c}, {"used", used}});
            if (used) gs.push_back(g), cs.push_back(c);
        }
        if (!gs.empty()) {
            p.interference.compute_slowdown = std::max(1.0, median(gs));
            p.interference.comm_slowdown = std::max(1.0, median(cs));
        } else {
            kept.push_back("interference.compute_slowdown");
            if (raw.comm_beside.empty()) kept.push_back("interference.comm_slowdown");
        }
        rep["interference"] = {{"compute_slowdown", p.interference.compute_slowdown},
                               {"comm_slowdown", p.interference.comm_slowdown},
                               {"rule", "median over records whose all-reduce alone lasts >= half the GEMM"},
                               {"records", ij}};
        // The bench's all-reduces start beside a GEMM that holds every SM and wait for it (a 64 MiB one took exactly
        // one GEMM's period), a wait the engine models apart: where interference_training.py timed the all-reduce's
        // own rate with its kernel resident before the compute (mode resident), that rate is the factor.
        if (!raw.comm_beside.empty()) {
            std::vector<double> all;
            json byClass = json::object(), recs = json::array();
            std::map<std::string, std::vector<double>> classes;
            for (const RawCommBeside& c : raw.comm_beside) {
                all.push_back(c.slowdown);
                classes[c.cls].push_back(c.slowdown);
                recs.push_back({{"class", c.cls}, {"op", c.op}, {"comm_bytes", c.comm_bytes},
                                {"comm_alone_us", c.comm_alone_us}, {"comm_slowdown", c.slowdown}});
            }
            for (const auto& [cls, v] : classes)
                byClass[cls] = {{"median", median(v)}, {"records", v.size()},
                                {"range", {*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())}}};
            p.interference.comm_slowdown = std::max(1.0, median(all));
            rep["interference"]["comm_slowdown"] = p.interference.comm_slowdown;
            rep["interference"]["comm_rule"] = "median over the resident all-reduces beside compute (interference_training.py --modes resident)";
            rep["interference"]["resident"] = {{"by_class", byClass}, {"records", recs}};
        }
    }

    // A training step's kernels beside bucket-sized all-reduces (interference_training.py): the median slowdown
    // by class, apart for an NCCL kernel moving data and one waiting for its peer. Classes not measured keep 0
    // (the engine then takes compute_slowdown).
    {
        // The median slowdown per class of `recs` into `dst` (never below 1), and what went into it.
        const auto byClass = [](const std::vector<const RawStepInterference*>& recs, ClassSlowdown& dst) {
            json out = json::object();
            for (auto [cls, field] : {std::pair{"gemm", &ClassSlowdown::gemm}, std::pair{"attention", &ClassSlowdown::attention},
                                      std::pair{"memory", &ClassSlowdown::memory}}) {
                std::vector<double> v;
                for (const auto* r : recs)
                    if (r->cls == cls) v.push_back(r->with_comm_us / r->alone_us);
                if (v.empty()) continue;
                dst.*field = std::max(1.0, median(v));
                out[cls] = {{"slowdown", dst.*field}, {"records", v.size()},
                            {"range", {*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())}}};
            }
            return out;
        };
        json sj = json::object();
        for (auto [mode, dst] : {std::pair{"transfer", &p.interference.beside_transfer},
                                 std::pair{"waiting", &p.interference.beside_waiting}}) {
            std::vector<const RawStepInterference*> recs;
            for (const auto& r : raw.step_interference)
                if (r.mode == mode) recs.push_back(&r);
            json fitted = byClass(recs, *dst);
            if (!fitted.empty()) sj[mode] = fitted;
        }
        // Beside a moving all-reduce the slowdown grows with its size (more channels, more HBM traffic): with
        // records at two sizes or more, the median per class at each size too.
        std::map<double, std::vector<const RawStepInterference*>> sizes;
        for (const auto& r : raw.step_interference)
            if (r.mode == "transfer" && r.comm_bytes > 0) sizes[r.comm_bytes].push_back(&r);
        if (sizes.size() >= 2) {
            p.interference.beside_transfer_by_size.clear();
            for (const auto& [bytes, recs] : sizes) {
                SizedSlowdown s;
                s.bytes = bytes;
                json sz = byClass(recs, s);
                sz["bytes"] = bytes;
                p.interference.beside_transfer_by_size.push_back(s);
                sj["transfer_by_size"].push_back(sz);
            }
        } else {
            kept.push_back("interference.beside_transfer_by_size");
        }
        // By GEMM shape: the waiting mode holds the NCCL kernel resident through every call, the state a step's
        // GEMMs overlapped by a bucket's all-reduce are in (moving data or waiting: the two differ by about 0.01 in the
        // median, calibration/profiles/h200x2/NOTES.md, Interference). The median per shape; every record also feeds
        // the class medians above.
        ByShape shapes;
        for (const auto& r : raw.step_interference)
            if (r.mode == "waiting" && r.m > 0) shapes[{r.m, r.n, r.k}].push_back(r.with_comm_us / r.alone_us);
        if (!shapes.empty()) {
            p.interference.gemm_by_shape = medianByShape(shapes, 1.0);
            sj["gemm_by_shape"] = shapeReport(p.interference.gemm_by_shape);
        } else {
            kept.push_back("interference.gemm_by_shape");
        }
        // Bucketed records (each call followed by a bucket's all-reduce, as DDP issues them) are reported, not
        // fitted: the all-reduce beside a long GEMM ran ~3.5x its time alone, beside short memory-bound kernels
        // ~1.05x, where the profile's one comm_slowdown applies to every kernel (calibration/profiles/h200x2/NOTES.md,
        // Interference).
        for (const auto& r : raw.step_interference)
            if (r.mode == "bucketed")
                sj["bucketed"][r.cls].push_back({{"op", r.op}, {"compute_slowdown", r.with_comm_us / r.alone_us},
                                                 {"comm_slowdown", r.comm_slowdown}});
        if (!sj.contains("transfer")) kept.push_back("interference.beside_transfer");
        if (!sj.contains("waiting")) kept.push_back("interference.beside_waiting");
        if (!sj.empty()) rep["interference_training"] = sj;
        // The base profile's, from calibration/investigations/gemm_linger_probe.py, not fitted here.
        kept.push_back("interference.linger_tile_m");
        kept.push_back("interference.linger_tile_n");
    }

    // Jitter: kernel duration CV from BF16 GEMMs longer than 200 µs.
    {
        std::vector<double> cv;
        for (const auto& g : raw.gemms)
            if (g.source == "stepsim-bench" && g.dtype == "bf16" && g.time.median > 200 && g.cv > 0) cv.push_back(g.cv);
        if (!cv.empty()) {
            p.jitter.kernel_cv = median(cv);
            rep["jitter"] = {{"kernel_cv", p.jitter.kernel_cv}, {"from", "median CV of BF16 GEMMs > 200 us"}, {"n", cv.size()}};
        } else {
            kept.push_back("jitter.kernel_cv");
        }
        kept.push_back("jitter.straggler_cv");
    }
    // GPU-to-GPU spread: per set, the sample variance of the ranks' log rates; the cv is the root of their mean.
    {
        std::map<std::string, std::vector<const RawDeviceSpeed*>> sets;
        for (const auto& s : raw.device_speed) sets[s.set].push_back(&s);
        const auto logVariance = [](const std::vector<const RawDeviceSpeed*>& v, double RawDeviceSpeed::*rate) {
            double mean = 0, ss = 0;
            for (const auto* s : v) mean += std::log(s->*rate) / double(v.size());
            for (const auto* s : v) ss += std::pow(std::log(s->*rate) - mean, 2);
            return ss / double(v.size() - 1);
        };
        double vc = 0, vm = 0;
        int used = 0;
        nlohmann::json sj = nlohmann::json::array();
        for (const auto& [name, v] : sets) {
            if (v.size() < 2) continue;
            const double c = logVariance(v, &RawDeviceSpeed::gemm_tflops), m = logVariance(v, &RawDeviceSpeed::memory_gbps);
            vc += c, vm += m, ++used;
            sj.push_back({{"set", name}, {"gpus", v.size()}, {"gemm_cv", std::sqrt(c)}, {"memory_cv", std::sqrt(m)}});
        }
        if (used > 0) {
            p.jitter.device_compute_cv = std::sqrt(vc / used);
            p.jitter.device_memory_cv = std::sqrt(vm / used);
            rep["device_speed"] = {{"device_compute_cv", p.jitter.device_compute_cv},
                                   {"device_memory_cv", p.jitter.device_memory_cv},
                                   {"rule", "root mean over sets of the sample variance of the ranks' log rates"},
                                   {"sets", sj}};
        } else {
            kept.push_back("jitter.device_compute_cv");
            kept.push_back("jitter.device_memory_cv");
        }
    }
    // Host-to-host spread: per window, the sample variance of the processes' log step times (of two processes it
    // estimates one process's variance); the cv is the root of their mean over every window of every record.
    {
        double ss = 0;
        std::size_t windows = 0;
        nlohmann::json runs = nlohmann::json::array();
        for (const RawHostSpread& h : raw.host_spread) {
            double run_ss = 0;
            for (const std::vector<double>& w : h.windows) {
                double mean = 0, v = 0;
                for (double ms : w) mean += std::log(ms) / double(w.size());
                for (double ms : w) v += std::pow(std::log(ms) - mean, 2) / double(w.size() - 1);
                run_ss += v;
            }
            ss += run_ss;
            windows += h.windows.size();
            runs.push_back({{"file", h.file},
                            {"processes", h.windows.front().size()},
                            {"windows", h.windows.size()},
                            {"cv", std::sqrt(run_ss / double(h.windows.size()))}});
        }
        if (windows > 0) {
            p.jitter.host_rank_cv = std::sqrt(ss / double(windows));
            rep["host_spread"] = {
                {"host_rank_cv", p.jitter.host_rank_cv},
                {"rule", "root mean over windows of the sample variance of the processes' log step times"},
                {"runs", runs}};
        } else {
            kept.push_back("jitter.host_rank_cv");
        }
    }
    kept.push_back("nccl (NCCL tuning model constants)");
    kept.push_back("gpu peaks and hbm_gbps (datasheet)");
    rep["kept_from_base"] = kept;
    return out;
}

}  // namespace stepsim
