#include "sim/workload/CompileTransform.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/cost/CostModel.hpp"

namespace stepsim {

bool usesCudaGraphs(CompileMode mode) {
    return mode == CompileMode::reduce_overhead || mode == CompileMode::max_autotune;
}

namespace {

constexpr std::uint8_t kCompute = 0;  // ProgramBuilder's kComputeStream

// The loss's kernels (cross-entropy's log-softmax, its casts, nll_loss, the loss scaling): outside torch.compile(model).
bool isLossOp(const std::string& name) {
    return name.find("loss") != std::string::npos || name.find("log_softmax") != std::string::npos ||
           name.find("logits") != std::string::npos;
}

// A kernel the compiled model runs: forward or backward, on the compute stream, not the loss's and not a copy of the
// data-parallel wrapper (class copy).
bool inTerritory(const Op& op, const Program& p) {
    if (op.kind != OpKind::kernel || op.stream != kCompute) return false;
    if (op.phase != Phase::forward && op.phase != Phase::backward) return false;
    if (op.cls == KernelClass::copy || op.cls == KernelClass::comm) return false;
    return !isLossOp(p.names[op.name]);
}

struct Span {
    std::size_t begin = 0, end = 0;  // [first territory op, last territory op + 1)
    int step = 0;
    Phase phase = Phase::forward;
};

// One span per micro-step's forward and backward: territory ops of one step and phase, in program order.
std::vector<Span> findSpans(const Program& p) {
    std::vector<Span> spans;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (!inTerritory(op, p)) continue;
        if (spans.empty() || spans.back().step != op.step || spans.back().phase != op.phase)
            spans.push_back({i, i + 1, op.step, op.phase});
        else
            spans.back().end = i + 1;
    }
    return spans;
}

// Marks a graph start before the GEMMs at fractions j/(pieces) of the span's GEMMs, j = 1 .. pieces−1.
void splitByGemms(const Program& p, const Span& s, int pieces, std::vector<char>& start) {
    if (pieces <= 1) return;
    std::vector<std::size_t> gemms;
    for (std::size_t i = s.begin; i < s.end; ++i)
        if (p.ops[i].kind == OpKind::kernel && p.ops[i].cls == KernelClass::gemm && inTerritory(p.ops[i], p))
            gemms.push_back(i);
    for (int j = 1; j < pieces; ++j) {
        const std::size_t g = gemms.size() * std::size_t(j) / std::size_t(pieces);
        if (g > 0 && g < gemms.size()) start[gemms[g]] = 1;
    }
}

// The graph starts: each span's first op, the graph breaks, and the splits of compiled DDP and FSDP2 (not after a
// collective of `inline_group`, which runs inside the graph).
std::vector<char> graphStarts(const Program& p, const std::vector<Span>& spans, const Scenario& sc, int inline_group) {
    std::vector<char> start(p.ops.size(), 0);
    const bool fsdp = sc.parallel.data == DataParallel::fsdp2;
    const bool ddp_split = sc.parallel.data == DataParallel::ddp &&
                           sc.compile.optimize_ddp == DdpCompileStrategy::ddp_optimizer;
    for (std::size_t k = 0; k < spans.size(); ++k) {
        const Span& s = spans[k];
        start[s.begin] = 1;
        splitByGemms(p, s, sc.compile.graph_breaks + 1, start);
        bool after_collective = false;
        for (std::size_t i = s.begin; i < s.end; ++i) {
            const Op& op = p.ops[i];
            if (op.kind == OpKind::collective) {
                if (p.collectives[op.collective].group != inline_group) after_collective = true;
            } else if (after_collective && inTerritory(op, p)) {
                if (fsdp || (ddp_split && s.phase == Phase::backward)) start[i] = 1;
                after_collective = false;
            }
        }
        // DDPOptimizer splits the forward as the backward: one piece per bucket (the next span is this one's backward).
        if (ddp_split && s.phase == Phase::forward && k + 1 < spans.size() && spans[k + 1].step == s.step) {
            int buckets = 0;
            for (std::size_t i = spans[k + 1].begin; i < spans[k + 1].end; ++i)
                buckets += p.ops[i].kind == OpKind::collective ? 1 : 0;
            splitByGemms(p, s, buckets, start);
        }
    }
    return start;
}

// What the rewrite needs of the scenario and the profile.
struct Rates {
    const CompileRates& c;
    const CostModel& cost;  // the memory-bound rate of a decomposed chain's fused bytes, padded GEMMs
    DType compute;
    bool cuda_graphs;
    double gemm_ratio;
    bool sync_collectives;
    const CompiledFp8Phase* fp8_forward = nullptr;  // fp8.enabled: the compiled Float8Linear's cast rates
    const CompiledFp8Phase* fp8_backward = nullptr;
};

// A kernel of an FP8 linear's casts to FP8 and their scales and layouts (Fp8Linear.hpp).
bool fp8Cast(const Op& op) { return op.mem >= MemKind::fp8_abs && op.mem <= MemKind::fp8_post_scale_mul; }

double kernelHost(const Rates& r, double eager_host_s) {
    return r.cuda_graphs ? r.c.cudagraph_kernel_host_us * 1e-6 : r.c.kernel_host_ratio * eager_host_s;
}

// The ops p.ops[idx...] as `k` kernels of their summed work and bytes × `ratio`, launched at the compiled rate. An op
// of a decomposed chain (Op::fused_bytes ≥ 0: Hugging Face's eager RMSNorm, rotary products, gelu_new, mask) adds not
// its eager time but its share of the chain's external bytes; those bytes together are priced as one elementwise
// kernel at the profile's memory-bound rate (CostModel::memorySeconds):
//   W = ratio · Σ_{own ops} work_s + memorySeconds(Σ_{chain ops} fused_bytes),  each fused kernel W / k.
// `ratio` (compile.*.time_ratio) is fitted on blocks whose every op is one eager kernel already
// (calibration/pytorch/compile_kernels.py): what Inductor saves across such ops (a norm and its cast, a residual add
// and the next norm). A decomposed chain's saving is its intermediates', priced by the bytes that remain. Checked on
// round faithful-round1's three compiled rows (docs/compile.md, "Hugging Face's decomposed ops").
void emitKernels(Program& p, const std::vector<std::size_t>& idx, long k, double ratio, const Rates& r,
                 std::vector<Op>& out) {
    const Op first = p.ops[idx.front()];
    double work = 0, bytes = 0, host = 0, flops = 0, chain_bytes = 0;
    bool chain = false;
    for (std::size_t i : idx) {
        const Op& op = p.ops[i];
        if (op.fused_bytes >= 0) {
            chain = true;
            chain_bytes += double(op.fused_bytes);
        } else {
            work += op.work_s;
            bytes += op.bytes;
        }
        host += op.host_s;
        flops += op.flops;
    }
    work *= ratio;
    bytes *= ratio;
    if (chain) {
        work += r.cost.memorySeconds(chain_bytes);
        bytes += chain_bytes;
    }
    const double n = double(idx.size());
    const std::uint32_t name =
        p.intern(idx.size() == 1 ? "triton " + p.names[first.name]
                                 : fmt::format("triton fused {} (+{})", p.names[first.name], idx.size() - 1));
    for (long j = 0; j < k; ++j) {
        Op op = first;
        op.name = name;
        op.mem = MemKind::elementwise;
        op.work_s = work / double(k);
        op.bytes = bytes / double(k);
        op.flops = flops / double(k);
        op.host_s = kernelHost(r, host / n);
        out.push_back(op);
    }
}

// Emits the fused kernels of the region p.ops[b, e) (all memory-bound, one phase). `target` is the running target of
// kernels per phase, so the counts round to kernels_per_region on average. A region's FP8 casts (fp8.enabled) become
// the compiled Float8Linear's: kernels_per_cast per cast (one fp8_quantize kernel each), at most the eager kernels,
// their time × time_ratio (CompiledFp8Rates); the rest of the region fuses by the general rule.
void emitRegion(Program& p, std::size_t b, std::size_t e, const Rates& r, double& target, long& emitted,
                std::vector<Op>& out) {
    const bool backward = p.ops[b].phase == Phase::backward;
    const CompilePhaseRates& pr = backward ? r.c.backward : r.c.forward;
    const CompiledFp8Phase* f8 = backward ? r.fp8_backward : r.fp8_forward;
    std::vector<std::size_t> rest, casts;
    int quantized = 0;
    for (std::size_t i = b; i < e; ++i) {
        const bool cast = f8 && fp8Cast(p.ops[i]);
        (cast ? casts : rest).push_back(i);
        if (cast && p.ops[i].mem == MemKind::fp8_quantize) ++quantized;
    }
    if (!rest.empty()) {
        // A region never becomes more kernels than it had: Inductor does not split one eager kernel (the DDP hooks'
        // copies cut a backward into many one-kernel regions).
        target += pr.kernels_per_region;
        const long want = std::lround(target) - emitted;
        const long k = std::clamp(want, 1L, long(rest.size()));
        emitted += k;
        if (k != want) target = double(emitted);  // a capped (or raised) region carries no debt to the next
        emitKernels(p, rest, k, pr.time_ratio, r, out);
    }
    if (!casts.empty()) {
        const long k = std::clamp(std::lround(f8->kernels_per_cast * quantized), 1L, long(casts.size()));
        emitKernels(p, casts, k, f8->time_ratio, r, out);
    }
}

// Inductor's pad_mm pass (torch._inductor.config.shape_padding, on by default) pads a GEMM's dimensions that are not a
// multiple of 8 elements in 16-bit (4 in fp32) and slices the result, the pads fused into the producers: GPT-2's
// unpadded vocabulary (50257) runs its LM head's GEMMs at the aligned rate, not the unaligned one (GemmModel.hpp). The
// op's time × padded time / its own time (1 where every dimension is aligned). Round faithful-round1's compiled GPT-2
// (26.1 ms measured) is shorter than its three LM-head GEMMs at the unaligned rate and the rest of its step.
double paddedGemmRatio(const GemmShape& g, const Rates& r) {
    const long a = r.compute == DType::fp32 ? 4 : 8;
    const auto pad = [a](long x) { return (x + a - 1) / a * a; };
    const GemmShape padded{pad(g.m), pad(g.n), pad(g.k)};
    if (padded == g || g.m <= 0 || g.n <= 0 || g.k <= 0) return 1.0;
    const double own = r.cost.gemmSeconds(g, r.compute);
    return own > 0 ? r.cost.gemmSeconds(padded, r.compute) / own : 1.0;
}

Op hostWork(Program& p, const Op& at, const std::string& name, double seconds) {
    Op op;
    op.kind = OpKind::host_work;
    op.cls = KernelClass::other;
    op.phase = at.phase;
    op.step = at.step;
    op.stream = kCompute;
    op.name = p.intern(name);
    op.host_s = seconds;
    return op;
}

bool fusible(const Op& op, const Program& p) { return inTerritory(op, p) && op.cls == KernelClass::memory; }

// The rewrite: graph calls, fused regions, GEMM and attention launches, synchronous collectives. Returns the graphs.
int rewrite(Program& p, const std::vector<Span>& spans, const std::vector<char>& start, const Rates& r) {
    std::vector<Op> out;
    out.reserve(p.ops.size());
    std::vector<char> in_span(p.ops.size(), 0);
    for (const Span& s : spans) std::fill(in_span.begin() + long(s.begin), in_span.begin() + long(s.end), 1);
    double target[2] = {0, 0};
    long emitted[2] = {0, 0};
    int graphs = 0;
    const std::string graph_name = r.cuda_graphs ? "CUDA graph replay" : "compiled graph call";
    for (std::size_t i = 0; i < p.ops.size();) {
        const Op op = p.ops[i];
        if (start[i]) {
            out.push_back(hostWork(p, op, graph_name, r.c.graph_host_us * 1e-6));
            ++graphs;
        }
        if (fusible(op, p)) {
            std::size_t e = i + 1;
            while (e < p.ops.size() && fusible(p.ops[e], p) && !start[e] && p.ops[e].phase == op.phase) ++e;
            const int ph = op.phase == Phase::backward ? 1 : 0;
            emitRegion(p, i, e, r, target[ph], emitted[ph], out);
            i = e;
            continue;
        }
        Op o = op;
        if (inTerritory(o, p)) {
            if (o.cls == KernelClass::gemm) o.work_s *= r.gemm_ratio * paddedGemmRatio(o.gemm, r);
            o.host_s = kernelHost(r, o.host_s);
        }
        out.push_back(o);
        if (r.sync_collectives && o.kind == OpKind::collective && in_span[i]) {
            // The graph waits for the collective where it was issued (wait_tensor right after it).
            Op rec = hostWork(p, o, "record", 0.0);
            rec.kind = OpKind::record_event;
            rec.stream = o.stream;
            rec.event = p.events++;
            Op wait = rec;
            wait.kind = OpKind::wait_event;
            wait.stream = kCompute;
            out.push_back(rec);
            out.push_back(wait);
        }
        ++i;
    }
    p.ops = std::move(out);
    return graphs;
}

// The collectives the fusion merges: all-reduces (DDP's buckets) and all-gathers (FSDP2's blocks). Reduce-scatters are
// left alone: FSDP2 waits for each one before the next block's (its buffers), so holding one back for the next would
// wait on itself.
bool mergeable(CollectiveKind k) { return k == CollectiveKind::all_reduce || k == CollectiveKind::all_gather; }

// comm_fusion_depth: chunks of `depth` consecutive collectives of one kind, group and stream in a step merge into one.
// An all-reduce is issued where the chunk's last was (the done events recorded after the earlier ones move after it);
// an all_gather where the first was (the later ones' data has arrived with it).
void fuseCollectives(Program& p, int depth) {
    if (depth <= 1) return;
    // Chunks by collective op index.
    std::vector<std::size_t> coll;
    for (std::size_t i = 0; i < p.ops.size(); ++i)
        if (p.ops[i].kind == OpKind::collective && mergeable(p.collectives[p.ops[i].collective].kind)) coll.push_back(i);
    // Collectives that may merge: one step, kind, process group and stream.
    auto sameKey = [&](std::size_t i, std::size_t j) {
        const Op& a = p.ops[i];
        const Op& b = p.ops[j];
        const CollectiveCall& ca = p.collectives[a.collective];
        const CollectiveCall& cb = p.collectives[b.collective];
        return a.step == b.step && a.stream == b.stream && ca.kind == cb.kind && ca.group == cb.group;
    };
    std::vector<char> drop(p.ops.size(), 0);
    std::vector<std::size_t> merged_into(p.ops.size(), 0);
    for (std::size_t a = 0; a < coll.size();) {
        std::size_t b = a + 1;
        while (b < coll.size() && b - a < std::size_t(depth) && sameKey(coll[b], coll[a])) ++b;
        const bool reduction = p.collectives[p.ops[coll[a]].collective].kind == CollectiveKind::all_reduce;
        const std::size_t keep = reduction ? coll[b - 1] : coll[a];
        CollectiveCall& kept = p.collectives[p.ops[keep].collective];
        for (std::size_t j = a; j < b; ++j) {
            if (coll[j] == keep) continue;
            kept.bytes += p.collectives[p.ops[coll[j]].collective].bytes;
            drop[coll[j]] = 1;
            merged_into[coll[j]] = keep;
        }
        p.ops[keep].bytes = kept.bytes;
        a = b;
    }
    std::vector<Op> out;
    std::vector<std::vector<Op>> held(p.ops.size());  // done-event records moved after their merged reduction
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        if (drop[i] == 2) continue;
        if (drop[i] == 1) {
            const std::size_t keep = merged_into[i];
            if (keep > i && i + 1 < p.ops.size() && p.ops[i + 1].kind == OpKind::record_event &&
                p.ops[i + 1].stream == p.ops[i].stream) {
                held[keep].push_back(p.ops[i + 1]);
                drop[i + 1] = 2;  // moved, not lost
            }
            continue;
        }
        out.push_back(p.ops[i]);
        for (const Op& h : held[i]) out.push_back(h);
    }
    p.ops = std::move(out);
}

// The ops of p.ops[b, e) as `k` kernels of their summed work × ratio (their bytes likewise, their FLOPs shared), named
// `name`, each launched at kernelHost of the eager ops' mean launch cost; `host_s` (≥ 0) replaces that launch cost.
void emitFused(Program& p, std::size_t b, std::size_t e, long k, double ratio, const std::string& name,
               const Rates& r, std::vector<Op>& out, double host_s = -1.0) {
    const Op first = p.ops[b];
    double work = 0, bytes = 0, host = 0, flops = 0;
    for (std::size_t i = b; i < e; ++i)
        if (p.ops[i].kind == OpKind::kernel) {
            work += p.ops[i].work_s, bytes += p.ops[i].bytes, host += p.ops[i].host_s, flops += p.ops[i].flops;
        }
    const std::uint32_t id = p.intern(name);
    for (long j = 0; j < k; ++j) {
        Op op = first;
        op.name = id;
        op.mem = MemKind::elementwise;
        op.work_s = work * ratio / double(k);
        op.bytes = bytes * ratio / double(k);
        op.flops = flops / double(k);
        op.host_s = host_s >= 0 ? host_s : kernelHost(r, host / double(e - b));
        out.push_back(op);
    }
}

bool lossKernel(const Op& op, const Program& p) {
    return op.kind == OpKind::kernel && op.stream == kCompute && op.cls != KernelClass::comm &&
           (op.phase == Phase::forward || op.phase == Phase::backward) && isLossOp(p.names[op.name]);
}

// compile.loss: each run of the loss's kernels (one step, one phase) becomes the measured compiled loss's kernels
// (forward_kernels, backward_kernels, rounded, at most the run's), their time × the measured ratio. Part of the model's
// graph: no graph call of its own.
void compileLoss(Program& p, const Rates& r) {
    const CompiledLossRates& l = r.c.loss;
    std::vector<Op> out;
    out.reserve(p.ops.size());
    for (std::size_t i = 0; i < p.ops.size();) {
        if (!lossKernel(p.ops[i], p)) {
            out.push_back(p.ops[i++]);
            continue;
        }
        std::size_t e = i + 1;
        while (e < p.ops.size() && lossKernel(p.ops[e], p) && p.ops[e].phase == p.ops[i].phase &&
               p.ops[e].step == p.ops[i].step)
            ++e;
        const bool bwd = p.ops[i].phase == Phase::backward;
        const long k = std::clamp(std::lround(bwd ? l.backward_kernels : l.forward_kernels), 1L, long(e - i));
        emitFused(p, i, e, k, bwd ? l.backward_time_ratio : l.forward_time_ratio,
                  bwd ? "triton fused loss backward" : "triton fused loss", r, out);
        i = e;
    }
    p.ops = std::move(out);
}

// compile.optimizer: the foreach AdamW step's passes (the "adamw ..." kernels of the optimizer phase, the step counts'
// kernel excepted) become kernels_per_tensor × tensors kernels of their time × time_ratio; the optimizer.step host op
// (Python's per-tensor loop) becomes the compiled step's call, host_us + host_us_per_tensor × tensors, and the
// kernels' own launches are part of it. GradScaler's and clipping's kernels stay eager.
void compileOptimizer(Program& p, const Rates& r, std::size_t tensors) {
    const CompiledOptimizerRates& o = r.c.optimizer;
    const auto pass = [&](const Op& op) {
        const std::string& n = p.names[op.name];
        return op.kind == OpKind::kernel && op.phase == Phase::optimizer && n.rfind("adamw ", 0) == 0 &&
               n != "adamw step count";
    };
    const long k = std::max(1L, std::lround(o.kernels_per_tensor * double(tensors)));
    std::vector<Op> out;
    out.reserve(p.ops.size());
    for (std::size_t i = 0; i < p.ops.size();) {
        Op op = p.ops[i];
        if (op.kind == OpKind::host_work && op.phase == Phase::optimizer && p.names[op.name] == "optimizer.step") {
            op.name = p.intern("compiled optimizer.step");
            op.host_s = (o.host_us + o.host_us_per_tensor * double(tensors)) * 1e-6;
        }
        if (!pass(op)) {
            out.push_back(op);
            ++i;
            continue;
        }
        std::size_t e = i + 1;
        while (e < p.ops.size() && pass(p.ops[e]) && p.ops[e].step == op.step) ++e;
        emitFused(p, i, e, k, o.time_ratio, "triton compiled adamw", r, out, 0.0);
        i = e;
    }
    p.ops = std::move(out);
}

// The keys whose measurement the profile lacks, or which were measured only for other settings.
void checkMeasured(const Scenario& sc, const CompileRates& c, const std::string& profile) {
    const auto missing = [&](const char* key, const char* what) {
        throw inputError(sc.source, 0, key,
                         fmt::format("profile {} has no measurement of {} (fit one with calibration/pytorch/"
                                     "compile_parts.py's records: docs/compile.md)",
                                     profile, what));
    };
    if (sc.compile.optimizer && !c.optimizer.measured) missing("compile.optimizer", "a compiled optimizer step");
    if (sc.compile.loss && !c.loss.measured) missing("compile.loss", "a compiled loss");
    if (sc.compile.dynamic == std::optional<bool>(true) && !c.dynamic.measured)
        missing("compile.dynamic", "dynamic shapes");
    if (fp8Training(sc) && !c.fp8.measured)
        throw inputError(sc.source, 0, "fp8.enabled",
                         fmt::format("profile {} has no measurement of FP8 linears under torch.compile (compile.fp8: fit "
                                     "it from calibration/pytorch/fp8_compiled.py's records, docs/variants.md)",
                                     profile));
    // The compiled optimizer step's combinations not measured are rows of sim/base/Support.hpp.
}

}  // namespace

CompileReport compileProgram(Program& p, const Scenario& sc, const HardwareProfile& profile, std::size_t tensors,
                             int inline_group) {
    CompileRates c = profile.compile;
    if (!c.measured)
        throw inputError(sc.source, 0, "compile.enabled",
                         fmt::format("profile {} has no torch.compile measurements (its compile section); fit one with "
                                     "calibration/pytorch/compile_kernels.py's records (docs/compile.md)",
                                     profile.name));
    checkMeasured(sc, c, profile.name);
    const bool dynamic = sc.compile.dynamic == std::optional<bool>(true);
    if (dynamic) {  // kernels compiled for symbolic shapes: the static rates × the measured dynamic/static ratios
        const CompiledDynamicRates& d = c.dynamic;
        c.forward.kernels_per_region *= d.forward_kernels_ratio;
        c.backward.kernels_per_region *= d.backward_kernels_ratio;
        c.forward.time_ratio *= d.forward_time_ratio;
        c.backward.time_ratio *= d.backward_time_ratio;
        c.gemm_time_ratio *= d.gemm_time_ratio;
        c.gemm_time_ratio_max_autotune *= d.gemm_time_ratio;
        c.compile_s_per_block *= d.compile_time_ratio;
        c.compile_s_per_block_max_autotune *= d.compile_time_ratio;
    }
    const bool autotune = sc.compile.mode == CompileMode::max_autotune ||
                          sc.compile.mode == CompileMode::max_autotune_no_cudagraphs;
    const CostModel cost(profile, sc.nccl, false);
    const DType gemm_dtype = sc.training.compute_dtype == DType::fp8 ? DType::bf16 : sc.training.compute_dtype;
    Rates r{c, cost, gemm_dtype, usesCudaGraphs(sc.compile.mode),
            autotune ? c.gemm_time_ratio_max_autotune : c.gemm_time_ratio,
            !sc.compile.async_collectives};
    if (fp8Training(sc)) {
        const bool rowwise = sc.fp8.recipe == Fp8Recipe::rowwise;
        r.fp8_forward = rowwise ? &c.fp8.rowwise_forward : &c.fp8.tensorwise_forward;
        r.fp8_backward = rowwise ? &c.fp8.rowwise_backward : &c.fp8.tensorwise_backward;
    }
    if (sc.compile.loss) compileLoss(p, r);
    if (sc.compile.optimizer) compileOptimizer(p, r, tensors);
    const std::vector<Span> spans = findSpans(p);
    const std::vector<char> start = graphStarts(p, spans, sc, inline_group);
    CompileReport report;
    const int graphs = rewrite(p, spans, start, r);
    fuseCollectives(p, sc.compile.comm_fusion_depth);
    report.graphs_per_step = graphs / std::max(1, sc.sim.steps);
    report.compile_time_s =
        (autotune ? c.compile_s_per_block_max_autotune : c.compile_s_per_block) * double(sc.model.layers);
    if (sc.compile.optimizer) report.compile_time_s += c.optimizer.compile_s_per_tensor * double(tensors);
    return report;
}

}  // namespace stepsim
