#include "sim/scenario/TraceImport.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "sim/base/Files.hpp"
#include "sim/base/InputError.hpp"
#include "sim/cost/TraceHostCost.hpp"
#include "sim/scenario/TraceImportUnits.hpp"

namespace stepsim {

namespace {

using nlohmann::json;

// The whole file, gunzipped when it is gzip (zlib's gzread passes plain files through).
std::string readMaybeGzip(const std::string& file) {
    gzFile f = gzopen(file.c_str(), "rb");
    if (!f) throw inputError(file, 0, "", "cannot open the trace file");
    std::string out;
    std::array<char, 1 << 16> buf{};
    int n = 0;
    while ((n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0) {
        out.append(buf.data(), std::size_t(n));
        if (out.size() > kMaxTraceBytes) {
            gzclose(f);
            throw inputError(file, 0, "",
                             fmt::format("larger than {} MiB uncompressed: more than a profiler trace of one training "
                                         "step holds (trace a shorter run, or fewer steps)",
                                         kMaxTraceBytes >> 20));
        }
    }
    const bool bad = n < 0;
    gzclose(f);
    if (bad) throw inputError(file, 0, "", "cannot read the trace file (a corrupt gzip stream?)");
    return out;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool has(const std::string& s, std::initializer_list<const char*> subs) {
    for (const char* x : subs)
        if (s.find(x) != std::string::npos) return true;
    return false;
}

double num(const json& e, const char* key) {
    const auto it = e.find(key);
    if (it == e.end()) return 0.0;
    if (it->is_number()) return it->get<double>();
    if (it->is_string()) return std::stod(it->get<std::string>());
    return 0.0;
}

std::string idOf(const json& e, const char* key) {
    const auto it = e.find(key);
    if (it == e.end()) return "";
    return it->is_string() ? it->get<std::string>() : it->dump();
}

const json* arg(const json& e, const char* key) {
    const auto a = e.find("args");
    if (a == e.end() || !a->is_object()) return nullptr;
    const auto it = a->find(key);
    return it == a->end() ? nullptr : &*it;
}

// A host event: an op or annotation on a thread.
struct HostOp {
    std::string name;
    double ts = 0, end = 0;
    const json* ev = nullptr;
    long long seq = -1;  // args "Sequence number": the autograd node the op made (forward) or ran (backward)
};

struct Runtime {
    std::string name, tid;
    double ts = 0, end = 0;
};

struct Gpu {
    const json* ev = nullptr;
    std::string name, cat;
    long long correlation = -1;
    long long stream = 0;
    double ts = 0, end = 0;
};

// The element size of NCCL's dtype names as record_param_comms writes them.
double dtypeBytes(const std::string& d) {
    const std::string l = lower(d);
    if (has(l, {"double", "long", "int64", "float64"})) return 8;
    if (has(l, {"bfloat16", "half", "float16", "short"})) return 2;
    if (has(l, {"byte", "char", "bool", "uint8", "int8", "float8"})) return 1;
    return 4;
}

CollectiveKind collectiveOf(const std::string& name) {
    const std::string l = lower(name);
    if (has(l, {"allgather", "all_gather", "_allgather"})) return CollectiveKind::all_gather;
    if (has(l, {"reducescatter", "reduce_scatter"})) return CollectiveKind::reduce_scatter;
    if (has(l, {"broadcast"})) return CollectiveKind::broadcast;
    if (has(l, {"alltoall", "all_to_all"})) return CollectiveKind::alltoall;
    if (has(l, {"sendrecv", "send", "recv"})) return CollectiveKind::sendrecv;
    return CollectiveKind::all_reduce;
}

// The dims of "Input Dims" as vectors of longs (empty entries for scalars and lists).
std::vector<std::vector<long>> inputDims(const json& op) {
    std::vector<std::vector<long>> out;
    const json* d = arg(op, "Input Dims");
    if (!d || !d->is_array()) return out;
    for (const json& x : *d) {
        std::vector<long> v;
        if (x.is_array())
            for (const json& y : x)
                if (y.is_number_integer()) v.push_back(y.get<long>());
        out.push_back(v);
    }
    return out;
}

// C[m×n] = A[m×k]·B[k×n] of an aten matrix product, or false.
bool gemmShape(const HostOp& op, GemmShape& s) {
    const auto d = inputDims(*op.ev);
    const auto two = [&](const std::vector<long>& a, const std::vector<long>& b, long batch) {
        if (a.size() < 2 || b.size() < 2) return false;
        s = {batch * a[a.size() - 2], b.back(), a.back()};
        return true;
    };
    if (op.name == "aten::mm" && d.size() >= 2) return two(d[0], d[1], 1);
    if (op.name == "aten::addmm" && d.size() >= 3) return two(d[1], d[2], 1);
    if ((op.name == "aten::bmm" && d.size() >= 2) || (op.name == "aten::baddbmm" && d.size() >= 3)) {
        const auto& a = op.name == "aten::bmm" ? d[0] : d[1];
        const auto& b = op.name == "aten::bmm" ? d[1] : d[2];
        return a.size() == 3 && two(a, b, a[0]);
    }
    return false;
}

// The step window: the last ProfilerStep#N, else the last Optimizer.step; and the one before it (or none).
struct Window {
    double start = 0, end = 0;
    std::string name;
    bool has_prev = false;
    double prev_start = 0, prev_end = 0;
};

Window stepWindow(const std::string& file, const std::vector<HostOp>& all, double first_host_ts) {
    std::vector<const HostOp*> steps, opt;
    for (const HostOp& h : all) {
        if (h.name.rfind("ProfilerStep#", 0) == 0) steps.push_back(&h);
        if (h.name.rfind("Optimizer.step#", 0) == 0) opt.push_back(&h);
    }
    const auto byTs = [](const HostOp* a, const HostOp* b) { return a->ts < b->ts; };
    std::sort(steps.begin(), steps.end(), byTs);
    std::sort(opt.begin(), opt.end(), byTs);
    Window w;
    if (!steps.empty()) {
        const HostOp& s = *steps.back();
        w = {s.ts, s.end, s.name, false, 0, 0};
        if (steps.size() > 1) w.has_prev = true, w.prev_start = steps[steps.size() - 2]->ts, w.prev_end = steps[steps.size() - 2]->end;
        return w;
    }
    if (!opt.empty()) {
        const HostOp& s = *opt.back();
        w.name = "Optimizer.step";
        w.end = s.end;
        w.start = first_host_ts;
        if (opt.size() > 1) {
            const HostOp& p = *opt[opt.size() - 2];
            w.start = p.end;
            w.has_prev = true;
            w.prev_end = p.end;
            w.prev_start = opt.size() > 2 ? opt[opt.size() - 3]->end : first_host_ts;
        }
        return w;
    }
    throw inputError(file, 0, "traceEvents",
                     "no step boundary: neither a ProfilerStep#N event (torch.profiler with a schedule and "
                     "prof.step() after each step) nor an Optimizer.step annotation");
}

// What the host ops around a launch say: its phase, its GEMM shape, its collective's arguments, the autograd node
// it runs in backward (its evaluate_function's sequence number), and the parameters a norm's or an embedding's
// backward op makes gradients for (the op, its elements and tensors).
struct Context {
    Phase phase = Phase::other;
    bool gemm = false;
    GemmShape shape;
    const json* comm = nullptr;
    long long seq = -1;
    const json* param_op = nullptr;
    double param_numel = 0;
    int param_tensors = 0;
};

double product(const std::vector<long>& d) {
    double n = d.empty() ? 0.0 : 1.0;
    for (long x : d) n *= double(x);
    return n;
}

// aten::native_layer_norm_backward(grad, input, shape, mean, rstd, weight, bias, mask): its weight's and bias's
// elements; aten::embedding_dense_backward(grad, indices, num_weights, ...): num_weights × the gradient's last dim.
bool paramOp(const HostOp& h, double& numel, int& tensors) {
    if (h.name != "aten::native_layer_norm_backward" && h.name != "aten::embedding_dense_backward") return false;
    const auto d = inputDims(*h.ev);
    if (h.name == "aten::native_layer_norm_backward" && d.size() >= 7) {
        numel = product(d[5]) + product(d[6]);
        tensors = int(!d[5].empty()) + int(!d[6].empty());
        return numel > 0;
    }
    if (h.name == "aten::embedding_dense_backward" && !d.empty() && !d[0].empty()) {
        const json* c = arg(*h.ev, "Concrete Inputs");
        if (!c || !c->is_array() || c->size() < 3 || !(*c)[2].is_string()) return false;
        try {
            numel = std::stod((*c)[2].get<std::string>()) * double(d[0].back());
        } catch (const std::exception&) {
            return false;
        }
        tensors = 1;
        return numel > 0;
    }
    return false;
}

// For each runtime event (sorted by time on each thread), the host ops enclosing it on its thread.
std::vector<Context> contexts(const std::vector<Runtime>& rt, std::map<std::string, std::vector<HostOp>>& by_tid) {
    std::vector<Context> out(rt.size());
    std::map<std::string, std::vector<std::size_t>> rt_by_tid;
    for (std::size_t i = 0; i < rt.size(); ++i) rt_by_tid[rt[i].tid].push_back(i);
    for (auto& [tid, idx] : rt_by_tid) {
        std::vector<HostOp>& ops = by_tid[tid];
        std::sort(ops.begin(), ops.end(), [](const HostOp& a, const HostOp& b) { return a.ts != b.ts ? a.ts < b.ts : a.end > b.end; });
        std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return rt[a].ts < rt[b].ts; });
        std::vector<const HostOp*> stack;
        std::size_t next = 0;
        for (std::size_t i : idx) {
            while (next < ops.size() && ops[next].ts <= rt[i].ts) {
                while (!stack.empty() && stack.back()->end < ops[next].ts) stack.pop_back();
                stack.push_back(&ops[next++]);
            }
            while (!stack.empty() && stack.back()->end < rt[i].ts) stack.pop_back();
            Context& c = out[i];
            for (const HostOp* h : stack) {
                if (h->end < rt[i].ts) continue;
                if (h->name.rfind("autograd::engine::evaluate_function", 0) == 0) c.phase = Phase::backward, c.seq = h->seq;
                if (paramOp(*h, c.param_numel, c.param_tensors)) c.param_op = h->ev;
                if (h->name.rfind("Optimizer.step", 0) == 0) c.phase = Phase::optimizer;
                GemmShape s;
                if (gemmShape(*h, s)) c.gemm = true, c.shape = s;
                if (arg(*h->ev, "In msg nelems")) c.comm = h->ev;
            }
        }
    }
    return out;
}

bool isSync(const std::string& n) {
    return n.find("Synchronize") != std::string::npos || n == "cudaMemcpy" || n == "cuMemcpyDtoH_v2";
}

struct Parsed {
    std::map<std::string, std::vector<HostOp>> host_by_tid;
    std::vector<HostOp> host;
    std::vector<Runtime> runtime;
    std::unordered_map<long long, std::size_t> runtime_of;  // correlation → runtime index
    std::vector<Gpu> gpu;
    double first_host_ts = 1e300;
};

Parsed collect(const json& events) {
    Parsed p;
    for (const json& e : events) {
        if (!e.is_object() || e.value("ph", "") != "X") continue;
        const std::string cat = e.value("cat", "");
        const std::string name = e.value("name", "");
        const double ts = num(e, "ts"), end = ts + num(e, "dur");
        if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
            Gpu g{&e, name, cat, -1, 0, ts, end};
            if (const json* c = arg(e, "correlation")) g.correlation = c->is_number() ? c->get<long long>() : -1;
            if (const json* s = arg(e, "stream")) g.stream = s->is_number() ? s->get<long long>() : 0;
            p.gpu.push_back(g);
        } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
            const json* c = arg(e, "correlation");
            if (c && c->is_number()) p.runtime_of[c->get<long long>()] = p.runtime.size();
            p.runtime.push_back({name, idOf(e, "tid"), ts, end});
            p.first_host_ts = std::min(p.first_host_ts, ts);
        } else if (cat == "cpu_op" || cat == "user_annotation") {
            HostOp h{name, ts, end, &e, -1};
            if (const json* q = arg(e, "Sequence number"); q && q->is_number_integer()) h.seq = q->get<long long>();
            p.host_by_tid[idOf(e, "tid")].push_back(h);
            p.host.push_back(h);
            p.first_host_ts = std::min(p.first_host_ts, ts);
        }
    }
    return p;
}

// The device gap of each GPU activity (TraceStep.hpp): from the later of its launch and its stream's previous
// activity's end; over kMaxGapUs it waited on something else (another stream, the host), and 0 is kept.
constexpr double kMaxGapUs = 50.0;

void deviceGaps(std::vector<TraceActivity>& acts, const std::map<std::pair<long long, double>, double>& prev_end_of,
                const std::vector<long long>& raw_stream) {
    for (std::size_t i = 0; i < acts.size(); ++i) {
        TraceActivity& a = acts[i];
        const auto it = prev_end_of.find({raw_stream[i], a.start_us});
        const double prev = it == prev_end_of.end() ? -1e300 : it->second;
        const double gap = a.start_us - std::max(a.launch_us, prev);
        a.gap_us = gap >= 0 && gap <= kMaxGapUs ? gap : 0.0;
    }
}

// The forward op that made each autograd node: its start on the host (the first op of that sequence number in the
// step before the backward's first node).
std::map<long long, double> nodesMade(const std::vector<HostOp>& host, const Window& w) {
    double first_node = w.end;
    for (const HostOp& h : host)
        if (h.ts >= w.start && h.ts <= w.end && h.name.rfind("autograd::engine::evaluate_function", 0) == 0)
            first_node = std::min(first_node, h.ts);
    std::map<long long, double> made;
    for (const HostOp& h : host)
        if (h.seq >= 0 && h.ts >= w.start && h.ts < first_node) {
            const auto [it, added] = made.try_emplace(h.seq, h.ts);
            if (!added) it->second = std::min(it->second, h.ts);
        }
    return made;
}

}  // namespace

std::pair<KernelClass, bool> classifyKernel(const std::string& name) {
    const std::string l = lower(name);
    if (has(l, {"nccl"})) return {KernelClass::comm, true};
    if (has(l, {"flash", "fmha", "attention", "attn", "sdpa", "cudnn::fusion"})) return {KernelClass::attention, true};
    if (has(l, {"adam", "multi_tensor_apply", "sgd"})) return {KernelClass::optimizer, true};
    if (has(l, {"gemm", "cutlass", "cublas", "nvjet", "xmma", "wgmma", "matmul"})) return {KernelClass::gemm, true};
    if (has(l, {"memcpy", "memset"})) return {KernelClass::copy, true};
    if (has(l, {"elementwise", "reduce", "norm", "softmax", "loss", "nll", "embedding", "index", "copy", "fill",
                "cat", "triton", "gelu", "silu", "cross_entropy", "scatter", "gather", "vectorized", "unrolled",
                "where", "cast", "gammabeta", "cub::", "radix", "segment", "grad_weight", "arange"}))
        return {KernelClass::memory, true};
    return {KernelClass::other, false};
}

namespace {

// Each stream's activities by start: the previous one's end, for the device gaps.
std::map<std::pair<long long, double>, double> previousEnds(const Parsed& p) {
    std::map<std::pair<long long, double>, double> prev_end_of;
    std::map<long long, std::vector<const Gpu*>> by_stream;
    for (const Gpu& g : p.gpu) by_stream[g.stream].push_back(&g);
    for (auto& [s, v] : by_stream) {
        std::sort(v.begin(), v.end(), [](const Gpu* a, const Gpu* b) { return a->ts < b->ts; });
        for (std::size_t i = 1; i < v.size(); ++i) prev_end_of[{s, v[i]->ts}] = v[i - 1]->end;
    }
    return prev_end_of;
}

// The GPU activities launched inside the step window `w`, in launch order, each with its launch; the step's time
// from them (t.unmatched, t.step_from_previous, t.step_us).
struct Launches {
    std::vector<std::pair<double, std::size_t>> order;  // (launch time, index into p.gpu)
    std::vector<const Runtime*> launch_of;              // [index into p.gpu]
};

Launches stepLaunches(const std::string& file, const Parsed& p, const Window& w, TraceStep& t) {
    Launches l;
    double prev_gpu_end = 0.0, gpu_end = 0.0;
    l.launch_of.assign(p.gpu.size(), nullptr);
    for (std::size_t i = 0; i < p.gpu.size(); ++i) {
        const Gpu& g = p.gpu[i];
        const auto it = g.correlation >= 0 ? p.runtime_of.find(g.correlation) : p.runtime_of.end();
        const Runtime* r = it == p.runtime_of.end() ? nullptr : &p.runtime[it->second];
        l.launch_of[i] = r;
        const double launch = r ? r->ts : g.ts;
        if (w.has_prev && launch >= w.prev_start && launch <= w.prev_end) prev_gpu_end = std::max(prev_gpu_end, g.end);
        if (launch < w.start || launch > w.end) continue;
        if (!r) ++t.unmatched;
        gpu_end = std::max(gpu_end, g.end);
        l.order.push_back({launch, i});
    }
    if (l.order.empty())
        throw inputError(file, 0, "traceEvents",
                         fmt::format("no GPU activity launched inside the step ({}, {:.0f}-{:.0f} us)", w.name, w.start, w.end));
    std::stable_sort(l.order.begin(), l.order.end());
    t.step_from_previous = w.has_prev && prev_gpu_end > 0;
    t.step_us = t.step_from_previous ? gpu_end - prev_gpu_end : std::max(gpu_end, w.end) - w.start;
    return l;
}

// A collective's name, bytes, dtype and process group, from its kernel's args or its record_param_comms'.
void commFields(TraceActivity& a, const Gpu& g, const Context& c) {
        a.collective = collectiveOf(g.name);
        const json& src = arg(*g.ev, "In msg nelems") ? *g.ev : c.comm ? *c.comm : *g.ev;
        const json* n = arg(src, "In msg nelems");
        const json* d = arg(src, "dtype");
        a.comm_dtype = d && d->is_string() ? d->get<std::string>() : "";
        a.comm_bytes = n && n->is_number() ? n->get<double>() * dtypeBytes(a.comm_dtype) : 0.0;
        for (const char* k : {"Process Group Name", "Process Group Description"})
            if (const json* pg = arg(src, k); pg && pg->is_string()) a.process_group = pg->get<std::string>();
}

// The step's activities in launch order (t.streams, t.activities): each classified, with its phase, its gradient's
// parameters, its GEMM's shape, its collective's fields.
struct StepActivities {
    std::vector<long long> raw_stream;  // each activity's stream id in the trace
    std::vector<long long> node_seq;    // each activity's autograd node in backward (-1: none)
    std::map<long, int> m_count;        // the forward GEMMs' m, counted
};

StepActivities stepActivities(const Parsed& p, const Launches& l, const std::vector<Context>& ctx, TraceStep& t) {
    StepActivities s;
    std::map<long long, int> stream_index;
    bool seen_backward = false;
    std::vector<const json*> param_seen;
    for (const auto& [launch, i] : l.order) {
        const Gpu& g = p.gpu[i];
        TraceActivity a;
        a.name = g.name;
        std::tie(a.cls, a.known) = classifyKernel(g.cat == "kernel" ? g.name : g.cat);
        if (g.cat != "kernel") a.cls = KernelClass::copy, a.known = true;
        const auto [sit, added] = stream_index.try_emplace(g.stream, int(t.streams.size()));
        if (added) t.streams.push_back(fmt::format("stream {}", g.stream));
        a.stream = sit->second;
        s.raw_stream.push_back(g.stream);
        const Runtime* r = l.launch_of[i];
        a.launch_us = launch;
        a.launch_end_us = r ? r->end : launch;
        a.start_us = g.ts;
        a.dur_us = g.end - g.ts;
        const Context c = r ? ctx[std::size_t(r - p.runtime.data())] : Context{};
        a.phase = c.phase;
        if (a.phase == Phase::backward) seen_backward = true;
        if (a.phase == Phase::other && !seen_backward) a.phase = Phase::forward;
        if (a.cls == KernelClass::optimizer) a.phase = Phase::optimizer;
        s.node_seq.push_back(a.phase == Phase::backward ? c.seq : -1);
        if (c.param_op && std::find(param_seen.begin(), param_seen.end(), c.param_op) == param_seen.end()) {
            param_seen.push_back(c.param_op);
            a.grad_numel = c.param_numel;
            a.grad_tensors = c.param_tensors;
        }
        if (a.cls == KernelClass::gemm && c.gemm) {
            a.shape = c.shape;
            if (a.phase == Phase::forward) ++s.m_count[c.shape.m];
        }
        if (a.cls == KernelClass::comm) commFields(a, g, c);
        t.activities.push_back(std::move(a));
    }
    return s;
}

// What the activities make of the step: its tokens (the forward GEMMs' most common m), the weight-gradient GEMMs, the
// repeated units, the collectives seen on the host only, the host's syncs.
void stepFindings(TraceStep& t, const Parsed& p, const Window& w, const StepActivities& s) {
    // A backward GEMM reducing over the tokens makes a weight gradient.
    int best = 0;
    for (const auto& [m, n] : s.m_count)
        if (n > best) best = n, t.tokens = m;
    for (TraceActivity& a : t.activities) {
        a.weight_grad = t.tokens > 0 && a.cls == KernelClass::gemm && a.phase == Phase::backward &&
                        a.shape.k == t.tokens && a.shape.m > 0 && a.shape.n > 0;
        if (a.weight_grad) a.grad_numel = double(a.shape.m) * double(a.shape.n), a.grad_tensors = 1;
    }
    findTraceUnits(t, s.node_seq, nodesMade(p.host, w));
    bool nccl = false;
    for (const TraceActivity& a : t.activities) nccl = nccl || a.cls == KernelClass::comm;
    for (const HostOp& h : p.host)
        if (!nccl && h.ts >= w.start && h.ts <= w.end && h.name == "record_param_comms") ++t.host_collectives;
    for (const Runtime& r : p.runtime)
        if (r.ts >= w.start && r.ts <= w.end && isSync(r.name)) t.syncs.push_back({r.name, r.ts, r.end});
    std::sort(t.syncs.begin(), t.syncs.end(), [](const TraceSync& a, const TraceSync& b) { return a.start_us < b.start_us; });
}

}  // namespace

TraceStep importTrace(const std::string& file) {
    json j;
    try {
        j = json::parse(readMaybeGzip(file));
    } catch (const json::exception& e) {
        throw inputError(file, 0, "", fmt::format("not a JSON profiler trace: {}", e.what()));
    }
    const json* events = j.is_object() && j.contains("traceEvents") ? &j["traceEvents"] : nullptr;
    if (!events || !events->is_array())
        throw inputError(file, 0, "traceEvents", "missing: a Chrome/Kineto trace has a traceEvents array");
    Parsed p = collect(*events);
    if (p.gpu.empty())
        throw inputError(file, 0, "traceEvents",
                         "no GPU activity (no kernel, gpu_memcpy or gpu_memset event): profile with "
                         "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]");
    TraceStep t;
    t.file = file;
    if (j.contains("deviceProperties") && j["deviceProperties"].is_array() && !j["deviceProperties"].empty())
        t.gpu = j["deviceProperties"][0].value("name", "");
    const Window w = stepWindow(file, p.host, p.first_host_ts);
    t.boundary = w.name;
    t.cpu_start_us = w.start;
    t.cpu_end_us = w.end;

    const std::map<std::pair<long long, double>, double> prev_end_of = previousEnds(p);
    const std::vector<Context> ctx = contexts(p.runtime, p.host_by_tid);
    const Launches l = stepLaunches(file, p, w, t);
    const StepActivities s = stepActivities(p, l, ctx, t);
    deviceGaps(t.activities, prev_end_of, s.raw_stream);
    stepFindings(t, p, w, s);
    return t;
}

std::string traceSummary(const TraceStep& t, const LaunchRates* launch, bool data_parallel) {
    constexpr std::array<const char*, kKernelClasses> names = {"gemm", "attention", "memory", "optimizer",
                                                               "copy", "comm", "other"};
    std::array<int, kKernelClasses> count{};
    std::array<double, kKernelClasses> us{};
    int unknown = 0, shaped = 0, grads = 0;
    double unknown_us = 0, grad_elems = 0;
    std::map<std::string, int> colls;
    for (const TraceActivity& a : t.activities) {
        count[std::size_t(a.cls)]++;
        us[std::size_t(a.cls)] += a.dur_us;
        if (!a.known) ++unknown, unknown_us += a.dur_us;
        if (a.cls == KernelClass::gemm && a.shape.m > 0) ++shaped;
        if (a.weight_grad) ++grads, grad_elems += double(a.shape.m) * double(a.shape.n);
        if (a.cls == KernelClass::comm)
            colls[fmt::format("{} {:.0f} B {} pg '{}'", collectiveKindName(a.collective), a.comm_bytes, a.comm_dtype,
                              a.process_group)]++;
    }
    std::string s = fmt::format("# trace {}: GPU '{}', step {} ({} GPU activities, {} streams)\n", t.file, t.gpu,
                                t.boundary, t.activities.size(), t.streams.size());
    s += fmt::format("#   trace step time {:.3f} ms ({}), host window {:.3f} ms\n", t.step_us * 1e-3,
                     t.step_from_previous ? "GPU end minus the previous step's" : "from the step's start",
                     (t.cpu_end_us - t.cpu_start_us) * 1e-3);
    for (std::size_t k = 0; k < kKernelClasses; ++k)
        if (count[k] > 0) s += fmt::format("#   {:<9} {:>5} kernels {:>9.3f} ms\n", names[k], count[k], us[k] * 1e-3);
    for (std::size_t i = 0; i < t.streams.size(); ++i) {
        int n = 0;
        for (const TraceActivity& a : t.activities) n += a.stream == int(i);
        s += fmt::format("#   {}: {} activities\n", t.streams[i], n);
    }
    for (const auto& [c, n] : colls) s += fmt::format("#   collective {} x{}\n", c, n);
    s += fmt::format("#   GEMMs with shapes {}; weight gradients from backward GEMMs {} ({:.0f} parameters; tokens {})\n",
                     shaped, grads, grad_elems, t.tokens);
    s += fmt::format("#   unknown kernels {} ({:.3f} ms): kept with their measured durations, class other, never "
                     "rescaled\n", unknown, unknown_us * 1e-3);
    if (t.units > 0) {
        std::vector<double> unit_params(std::size_t(t.units), 0.0);
        double root = 0;
        for (const TraceParam& p : t.params) (p.unit < 0 ? root : unit_params[std::size_t(p.unit)]) += p.numel;
        std::string per;
        for (double n : unit_params) per += fmt::format("{}{:.0f}", per.empty() ? "" : ", ", n);
        s += fmt::format("#   repeated blocks (FSDP units) {}, {} forward activities each; parameters per block {}; "
                         "root {:.0f}\n", t.units, t.unit_activities, per, root);
    } else {
        s += fmt::format("#   repeated blocks (FSDP units): none ({})\n", t.units_note);
    }
    {
        double n = 0;
        int tensors = 0;
        for (const TraceParam& p : t.params) n += p.numel, tensors += p.tensors;
        s += fmt::format("#   parameters found from their gradients' ops {} ({} tensors)\n", n, tensors);
    }
    if (t.unmatched > 0) s += fmt::format("#   {} activities without a launch found: launched at their start\n", t.unmatched);
    if (t.host_collectives > 0)
        s += fmt::format("#   {} collectives issued by the host ran no NCCL kernel (one rank): kept as the host and GPU "
                         "work they did; no larger data-parallel world can be asked of this trace\n", t.host_collectives);
    if (!t.syncs.empty()) s += fmt::format("#   host synchronizations {}\n", t.syncs.size());
    if (launch) {
        const TraceHostCosts h(t, *launch, data_parallel);
        const double traced = TraceHostCosts::tracedStep(t), prof = h.profileStep(t);
        s += fmt::format("#   host time a step: traced {:.3f} ms, the profile's {:.3f} ms; the profiler's overhead "
                         "{:.3f} ms (model.trace_host: profile replaces the traced host costs)\n",
                         traced * 1e-3, prof * 1e-3, (traced - prof) * 1e-3);
    }
    s += fmt::format("#   source rates: {}\n", t.source_profile.empty() ? "no built-in profile of this GPU" : t.source_profile);
    return s;
}

}  // namespace stepsim
