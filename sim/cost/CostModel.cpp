#include "sim/cost/CostModel.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <tuple>

#include "sim/cost/GemmModel.hpp"

namespace stepsim {

namespace {
constexpr const char* kProtoNames[3] = {"LL", "LL128", "Simple"};
// NCCL tuning.cc: NVLS base latency (Simple); NVLS supports no other protocol.
constexpr double kNvlsLatencyUs = 23.0;
// NCCL tuning.cc hwLat (NCCL 2.19-2.21), Tree, per protocol LL / LL128 / Simple: per NVLink hop and per network
// hop. The profile's nvlink_hop / net_hop are the Ring rows.
constexpr double kTreeNvlinkHopUs[3] = {0.6, 1.25, 4.0};
constexpr double kTreeNetHopUs[3] = {5.0, 8.5, 14.0};
// NCCL tuning.cc treeCorrectionFactor: the tree's bandwidth multiplier per power of two of S/64 (64 B..256 MiB).
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
// NCCL_P2P_LL_THRESHOLD default: send/recv use LL up to this many bytes per peer.
constexpr double kP2pLlThresholdBytes = 16384.0;

int log2Floor(double x) {
    int l = -1;
    while (x >= 1.0) x /= 2.0, ++l;
    return l;
}

const char* dtypeKey(DType d) {
    switch (d) {
        case DType::fp32: return "fp32";
        case DType::bf16: return "bf16";
        case DType::fp16: return "fp16";
        case DType::fp8: return "fp8";
    }
    return "bf16";
}

std::string algoName(NcclAlgo a) {
    switch (a) {
        case NcclAlgo::auto_: return "auto";
        case NcclAlgo::ring: return "Ring";
        case NcclAlgo::tree: return "Tree";
        case NcclAlgo::nvls: return "NVLS";
        case NcclAlgo::collnet: return "CollNet";
    }
    return "auto";
}
std::string protoName(NcclProto p) {
    switch (p) {
        case NcclProto::auto_: return "auto";
        case NcclProto::ll: return "LL";
        case NcclProto::ll128: return "LL128";
        case NcclProto::simple: return "Simple";
    }
    return "auto";
}
bool sameName(const std::string& a, const std::string& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}
}  // namespace

CostModel::CostModel(const HardwareProfile& profile, NcclSpec nccl, bool nvls_capable_node, const NetworkSpec& network)
    : profile_(profile),
      nccl_(nccl),
      nvls_capable_(nvls_capable_node),
      network_(network),
      nics_per_node_(network.nics_per_node),
      nic_gbps_(std::min(profile.links.nic_gbps, network.nic_gbps / 8.0)) {}

double CostModel::peakFlops(DType dtype) const {
    const GpuRates& g = profile_.gpu;
    switch (dtype) {
        case DType::fp32: return g.peak_tflops_fp32 * 1e12;
        case DType::bf16: return g.peak_tflops_bf16 * 1e12;
        case DType::fp16: return g.peak_tflops_fp16 * 1e12;
        case DType::fp8: return g.peak_tflops_fp8 * 1e12;
    }
    return g.peak_tflops_bf16 * 1e12;
}

double CostModel::gemmSeconds(const GemmShape& s, DType dtype, bool* in_domain) const {
    const auto key = std::make_tuple(s.m, s.n, s.k, dtype);
    if (auto hit = gemm_memo_.find(key); hit != gemm_memo_.end()) {
        if (in_domain) *in_domain = hit->second.second;
        return hit->second.first;
    }
    bool inside = true;
    const double seconds = gemmUncached(s, dtype, inside);
    gemm_memo_.emplace(key, std::make_pair(seconds, inside));
    if (in_domain) *in_domain = inside;
    return seconds;
}

double CostModel::scaledMmSeconds(const GemmShape& s, const std::string& variant, bool* in_domain) const {
    auto it = profile_.gemm.find(variant);
    bool inside = it != profile_.gemm.end();
    if (!inside) it = profile_.gemm.find("fp8");
    if (it == profile_.gemm.end()) {
        if (in_domain) *in_domain = false;
        return 2.0 * double(s.m) * s.n * s.k / peakFlops(DType::fp8);
    }
    const GemmEstimate e = stepsim::gemmSeconds(s, it->second, peakFlops(DType::fp8), profile_.gpu.sms);
    if (in_domain) *in_domain = inside && e.in_domain;
    return e.seconds;
}

double CostModel::gemmUncached(const GemmShape& s, DType dtype, bool& in_domain) const {
    auto it = profile_.gemm.find(dtypeKey(dtype));
    if (it == profile_.gemm.end()) it = profile_.gemm.find("bf16");
    if (it == profile_.gemm.end()) {
        // No efficiency data at all: the datasheet peak is the only bound we have.
        in_domain = false;
        return 2.0 * double(s.m) * s.n * s.k / peakFlops(dtype);
    }
    const GemmEstimate e = stepsim::gemmSeconds(s, it->second, peakFlops(dtype), profile_.gpu.sms);
    in_domain = e.in_domain;
    return e.seconds;
}

CostModel::ByShape CostModel::gemmByShape(const GemmShape& s) const {
    const auto key = std::make_tuple(s.m, s.n, s.k);
    if (auto hit = shape_memo_.find(key); hit != shape_memo_.end()) return hit->second;
    ByShape v;
    const LaunchRates& l = profile_.launch;
    if (const GemmShapeValue* g = nearestShape(profile_.interference.gemm_by_shape, s)) v.beside_nccl = g->value;
    if (const GemmShapeValue* g = nearestShape(l.gemm_gap_by_shape, s)) v.gap_s = g->value * 1e-6;
    if (const GemmShapeValue* g = nearestShape(l.gemm_gap_beside_transfer_by_shape, s)) v.gap_transfer_s = g->value * 1e-6;
    return shape_memo_.emplace(key, v).first->second;
}

double CostModel::attentionSeconds(double flops, bool backward, DType dtype, const GemmShape& shape,
                                   bool* in_domain) const {
    const double floor_s = profile_.memory.min_kernel_us * 1e-6;
    const AttentionRates& a = profile_.attention;
    const AttentionPoint* best = nullptr;
    if (shape.k > 0) {
        bool same_dim = false;
        for (const AttentionPoint& p : a.points) same_dim = same_dim || p.head_dim == shape.k;
        double best_d = 0.0;
        for (const AttentionPoint& p : a.points) {
            if (same_dim && p.head_dim != shape.k) continue;
            const double d = std::abs(std::log2(double(shape.n) / p.seq)) +
                             std::abs(std::log2(double(shape.m) / p.batch_heads)) +
                             std::abs(std::log2(double(shape.k) / p.head_dim));
            if (!best || d < best_d) best = &p, best_d = d;
        }
        // A point more than a factor 2 away in sequence or batch·heads (or of another head_dim) is outside.
        if (in_domain)
            *in_domain = best && best->head_dim == shape.k && std::abs(std::log2(double(shape.n) / best->seq)) <= 1 &&
                         std::abs(std::log2(double(shape.m) / best->batch_heads)) <= 1;
    }
    if (best) return std::max(floor_s, flops / ((backward ? best->bwd_tflops : best->fwd_tflops) * 1e12));
    // Flash attention runs in bf16/fp16 even when the linears use fp8.
    const DType d = dtype == DType::fp8 ? DType::bf16 : dtype;
    const double eff = backward ? a.bwd_efficiency : a.fwd_efficiency;
    return std::max(floor_s, flops / (peakFlops(d) * eff));
}

namespace {

// The kind whose rate a kind not in the profile takes (MemoryRates::kernels); itself for the base kinds.
MemKind baseKind(MemKind k) {
    switch (k) {
        case MemKind::rms_forward: return MemKind::norm_forward;
        case MemKind::rms_backward: return MemKind::norm_backward;
        case MemKind::rms_weight_grad: return MemKind::norm_weight_grad;
        case MemKind::norm_weight_grad: return MemKind::norm_backward;
        case MemKind::optimizer_foreach_bf16: return MemKind::optimizer_foreach;
        case MemKind::gelu_forward: return MemKind::elementwise;
        case MemKind::fp8_abs:
        case MemKind::fp8_amax:
        case MemKind::fp8_amax_rows:
        case MemKind::fp8_amax_cols:
        case MemKind::fp8_scale_math:
        case MemKind::fp8_upcast:
        case MemKind::fp8_scale_mul:
        case MemKind::fp8_clamp:
        case MemKind::fp8_quantize:
        case MemKind::fp8_transpose:
        case MemKind::fp8_post_scale:
        case MemKind::fp8_post_scale_mul:
        case MemKind::bias_grad:
        case MemKind::rope:
        case MemKind::qkv_permute_cat:
        case MemKind::qkv_permute_copy:
        case MemKind::dropout:
        case MemKind::dropout_backward: return MemKind::elementwise;
        default: return k;
    }
}

// y at x on the line through (x0, y0) and (x1, y1) in log-log; beyond them (extrapolating) the slope is held
// between 0 and 1: a kernel neither gets faster as its size grows nor slower than in proportion to it.
double logLine(double x, double x0, double x1, double y0, double y1) {
    if (x0 == x1) return y0 * x / x0;
    const double slope = std::log(y1 / y0) / std::log(x1 / x0);
    if (x > x1) return y1 * std::exp(std::clamp(slope, 0.0, 1.0) * std::log(x / x1));
    if (x < x0) return y0 * std::exp(std::clamp(slope, 0.0, 1.0) * std::log(x / x0));
    return y0 * std::exp(slope * std::log(x / x0));
}

// The two neighbouring values of `v` (sorted, distinct) around x: the interval holding it, else the edge one.
std::pair<double, double> around(const std::vector<double>& v, double x) {
    if (v.size() == 1) return {v[0], v[0]};
    std::size_t i = 0;
    while (i + 2 < v.size() && x >= v[i + 1]) ++i;
    return {v[i], v[i + 1]};
}

}  // namespace

double normGridUs(const std::vector<NormPoint>& grid, double NormPoint::*pass, double rows, double hidden,
                  bool* in_domain) {
    std::vector<double> ts, hs;
    for (const NormPoint& p : grid) ts.push_back(double(p.tokens)), hs.push_back(double(p.hidden));
    std::sort(ts.begin(), ts.end());
    ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
    std::sort(hs.begin(), hs.end());
    hs.erase(std::unique(hs.begin(), hs.end()), hs.end());
    const auto at = [&](double t, double h) -> const NormPoint* {
        for (const NormPoint& p : grid)
            if (double(p.tokens) == t && double(p.hidden) == h) return &p;
        return nullptr;
    };
    const auto [t0, t1] = around(ts, rows);
    const auto [h0, h1] = around(hs, hidden);
    const NormPoint *a = at(t0, h0), *b = at(t1, h0), *c = at(t0, h1), *d = at(t1, h1);
    if (in_domain)
        *in_domain = rows >= ts.front() / 2 && rows <= ts.back() * 2 && hidden >= hs.front() / 2 &&
                     hidden <= hs.back() * 2;
    if (a && b && c && d) {
        const double lo = logLine(rows, t0, t1, a->*pass, b->*pass), hi = logLine(rows, t0, t1, c->*pass, d->*pass);
        return logLine(hidden, h0, h1, lo, hi);
    }
    // An irregular grid: the nearest point in log size, scaled by the elements.
    const NormPoint* best = nullptr;
    double best_d = 0.0;
    for (const NormPoint& p : grid) {
        const double dist = std::hypot(std::log(rows / double(p.tokens)), std::log(hidden / double(p.hidden)));
        if (!best || dist < best_d) best = &p, best_d = dist;
    }
    if (in_domain) *in_domain = best_d <= std::log(2.0);
    return best->*pass * rows * hidden / (double(best->tokens) * double(best->hidden));
}

double CostModel::memorySeconds(double bytes, MemKind kind) const {
    const MemoryRates& m = profile_.memory;
    double eff = m.read_write_efficiency, fixed_s = 0.0;
    for (MemKind k = kind;; k = baseKind(k)) {
        if (auto it = m.kernels.find(memKindName(k)); it != m.kernels.end()) {
            eff = it->second.efficiency;
            fixed_s = it->second.fixed_us * 1e-6;
            break;
        }
        if (baseKind(k) == k) break;
    }
    return std::max(m.min_kernel_us * 1e-6, fixed_s + bytes / (profile_.gpu.hbm_gbps * 1e9 * eff));
}

double CostModel::normSeconds(const Op& op, bool* in_domain) const {
    const NormGrid& g = profile_.memory.norms;
    const bool rms = op.mem == MemKind::rms_forward || op.mem == MemKind::rms_backward ||
                     op.mem == MemKind::rms_weight_grad;
    const bool fp32 = op.gemm.k == 4;  // 16-bit norms (bf16, fp16) take the bf16 grid
    const std::vector<NormPoint>& grid = rms ? (fp32 ? g.rms_fp32 : g.rms_bf16) : (fp32 ? g.layer_fp32 : g.layer_bf16);
    if (grid.empty() || op.gemm.m <= 0 || op.gemm.n <= 0) return memorySeconds(op.bytes, op.mem);
    double NormPoint::*pass = &NormPoint::forward_us;
    if (op.mem == MemKind::norm_backward || op.mem == MemKind::rms_backward) pass = &NormPoint::backward_us;
    if (op.mem == MemKind::norm_weight_grad || op.mem == MemKind::rms_weight_grad) pass = &NormPoint::weight_grad_us;
    const double us = normGridUs(grid, pass, double(op.gemm.m), double(op.gemm.n), in_domain);
    return std::max(profile_.memory.min_kernel_us, us) * 1e-6;
}

bool CostModel::price(Op& op, DType dtype) const {
    bool in_domain = true;
    switch (op.cls) {
        case KernelClass::gemm: {
            op.work_s = gemmSeconds(op.gemm, dtype, &in_domain);
            const ByShape b = gemmByShape(op.gemm);
            op.beside_nccl = static_cast<float>(b.beside_nccl);
            op.gap_s = static_cast<float>(b.gap_s);
            op.gap_transfer_s = static_cast<float>(b.gap_transfer_s);
            break;
        }
        case KernelClass::attention:
            op.work_s = attentionSeconds(op.flops, op.phase == Phase::backward, dtype, op.gemm, &in_domain);
            break;
        default: op.work_s = isNormKind(op.mem) ? normSeconds(op, &in_domain) : memorySeconds(op.bytes, op.mem); break;
    }
    return in_domain;
}

// The argmin of t = latency + S·F / busbw over the (algorithm, protocol) candidates the scenario allows.
struct CostModel::Candidates {
    std::string want_algo, want_proto;
    double bytes = 0.0, factor = 1.0;
    CollectiveEstimate best;
    double best_t = std::numeric_limits<double>::infinity();

    void consider(const std::string& algo, int p, double lat_us, double busbw_gbps) {
        if (want_algo != "auto" && !sameName(want_algo, algo)) return;
        if (want_proto != "auto" && !sameName(want_proto, kProtoNames[p])) return;
        if (!(busbw_gbps > 0.0)) return;
        CollectiveEstimate c;
        c.alpha_s = lat_us * 1e-6;
        c.busbw_Bps = busbw_gbps * 1e9;
        c.factor = factor;
        c.algo = algo;
        c.proto = kProtoNames[p];
        const double t = c.seconds(bytes);
        if (t < best_t) best_t = t, best = c;
    }
};

CollectiveEstimate CostModel::collective(CollectiveKind kind, int ranks, int nodes, double bytes) const {
    CollectiveEstimate best;
    best.factor = busBandwidthFactor(kind, ranks);
    if (ranks <= 1) {
        // A one-rank communicator copies nothing; NCCL still launches a kernel.
        best.alpha_s = profile_.memory.min_kernel_us * 1e-6;
        best.algo = "none";
        best.proto = "none";
        return best;
    }
    const std::string want_algo = algoName(nccl_.algo), want_proto = protoName(nccl_.proto);

    // 1. A calibrated fit for exactly this case.
    if (measuredCollective(best, kind, ranks, nodes, bytes, want_algo, want_proto)) return best;

    // 2. NCCL's model.
    nodes = std::clamp(nodes, 1, ranks);
    Candidates c{want_algo, want_proto, bytes, best.factor, best};
    switch (kind) {
        case CollectiveKind::all_reduce:
        case CollectiveKind::all_gather:
        case CollectiveKind::reduce_scatter:
        case CollectiveKind::broadcast: ringTreeNvls(c, kind, ranks, nodes); break;
        case CollectiveKind::alltoall:
        case CollectiveKind::sendrecv: p2p(c, kind, ranks, nodes); break;
    }
    if (!std::isfinite(c.best_t)) {
        // The forced algorithm/protocol does not exist for this collective: fall back to NCCL's choice.
        NcclSpec relaxed = nccl_;
        relaxed.algo = NcclAlgo::auto_;
        relaxed.proto = NcclProto::auto_;
        CollectiveEstimate e = CostModel(profile_, relaxed, nvls_capable_, network_).collective(kind, ranks, nodes, bytes);
        e.in_domain = false;
        return e;
    }
    return c.best;
}

bool CostModel::measuredCollective(CollectiveEstimate& best, CollectiveKind kind, int ranks, int nodes, double bytes,
                                   const std::string& want_algo, const std::string& want_proto) const {
    for (const CollectiveFit& fit : profile_.collectives) {
        if (fit.op != collectiveKindName(kind) || fit.ranks != ranks || fit.nodes != nodes) continue;
        if (!sameName(fit.algo, want_algo) || !sameName(fit.proto, want_proto)) continue;
        if (fit.segments.empty()) continue;
        const CollectiveSegment* seg = &fit.segments.front();
        for (const CollectiveSegment& s : fit.segments)
            if (bytes >= s.lo_bytes) seg = &s;
        best.alpha_s = seg->alpha_us * 1e-6;
        best.busbw_Bps = seg->busbw_gbps * 1e9;
        best.algo = fit.algo;
        best.proto = fit.proto;
        best.measured = true;
        best.in_domain = bytes >= fit.segments.front().lo_bytes && bytes <= fit.segments.back().hi_bytes;
        return true;
    }
    return false;
}

// Ring (every protocol), Tree (all_reduce) and NVLS (all_reduce on one NVSwitch node) for n ranks on 1 ≤ nodes ≤ n:
// the header's formulas.
void CostModel::ringTreeNvls(Candidates& c, CollectiveKind kind, int n, int nodes) const {
    const NcclModel& m = profile_.nccl;
    const int local = (n + nodes - 1) / nodes;
    const bool multi = nodes > 1;
    const double intra = m.ring_busbw_gbps;
    const double inter = std::min(nics_per_node_, local) * nic_gbps_;
    const double ring_bw = multi ? std::min(intra, inter) : intra;
    const bool ar = kind == CollectiveKind::all_reduce;
    const int steps = ar ? 2 * (n - 1) : n - 1;
    const int isteps = ar ? 2 * (nodes - 1) : nodes - 1;
    for (int p = 0; p < 3; ++p) {
        const double lat = m.ring_base_latency_us[p] + (steps - isteps) * m.nvlink_hop_latency_us[p] +
                           isteps * m.net_hop_latency_us[p];
        c.consider("Ring", p, lat, ring_bw * m.proto_bw_fraction[p]);
    }
    if (!ar) return;
    const int lg = log2Floor(c.bytes / 64.0);
    for (int p = 0; p < 3; ++p) {
        const double lat = m.tree_base_latency_us[p] +
                           2.0 * ((local - 1) * kTreeNvlinkHopUs[p] + log2Floor(nodes) * kTreeNetHopUs[p]);
        double b = 0.92 * ring_bw;
        if (p == 0) b /= 3.8;
        if (p == 1) b *= multi ? 120.0 / 128.0 : 7.0 / 9.0;
        const double corr = lg >= 0 && lg < 23 ? kTreeCorrection[p][lg] : 1.0;
        c.consider("Tree", p, lat, c.factor * b / 2.0 * corr);
    }
    const bool nvls_allowed = nccl_.nvls == Switch::on || (nccl_.nvls == Switch::auto_ && nvls_capable_);
    if (!multi && nvls_allowed) c.consider("NVLS", 2, kNvlsLatencyUs, m.nvls_busbw_gbps);
}

// NCCL's grouped send/recv (alltoall, sendrecv) for n ranks on 1 ≤ nodes ≤ n: the header's P2P formulas.
void CostModel::p2p(Candidates& c, CollectiveKind kind, int n, int nodes) const {
    const NcclModel& m = profile_.nccl;
    const int local = (n + nodes - 1) / nodes;
    const bool multi = nodes > 1;
    const double intra = m.ring_busbw_gbps;
    const double inter = std::min(nics_per_node_, local) * nic_gbps_;
    const bool a2a = kind == CollectiveKind::alltoall;
    double bw = intra;
    if (multi)
        bw = a2a ? std::min(intra, inter * (n - 1) / (double(local) * (n - local))) : std::min(intra, nic_gbps_);
    const double per_peer = a2a ? c.bytes / n : c.bytes;
    const int hops = a2a ? n - 1 : 1;
    for (int p : {0, 2}) {
        if (p == 0 && per_peer > kP2pLlThresholdBytes) continue;
        const double hop = multi ? m.net_hop_latency_us[p] : m.nvlink_hop_latency_us[p];
        c.consider("P2P", p, m.ring_base_latency_us[p] + hops * hop, bw * m.proto_bw_fraction[p]);
    }
}

}  // namespace stepsim
