#include "sim/fit/RawData.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/base/InputError.hpp"

namespace stepsim {
namespace {

using nlohmann::json;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

struct Line {
    const std::string& file;
    int line;
    const json& j;

    const json& at(const std::string& key) const {
        auto it = j.find(key);
        if (it == j.end() || it->is_null())
            throw inputError(file, line, key, "missing (record kind " + j.value("kind", std::string("?")) + ")");
        return *it;
    }
    double num(const std::string& key) const { return number(j, key, key); }
    // A number in the object at `object` ("sustained.power_w"), named by its path.
    double num(const std::string& object, const std::string& key) const {
        const json& o = at(object);
        if (!o.is_object()) throw inputError(file, line, object, "expected an object, got " + o.dump());
        return number(o, key, object + "." + key);
    }
    // The number at `key` of `in` (this record or an object in it), an error naming it `path`.
    double number(const json& in, const std::string& key, const std::string& path) const {
        auto it = in.find(key);
        if (it == in.end() || it->is_null())
            throw inputError(file, line, path, "missing (record kind " + j.value("kind", std::string("?")) + ")");
        if (!it->is_number()) throw inputError(file, line, path, "expected a number, got " + it->dump());
        return it->get<double>();
    }
    std::string str(const std::string& key) const {
        const json& v = at(key);
        if (!v.is_string()) throw inputError(file, line, key, "expected a string, got " + v.dump());
        return v.get<std::string>();
    }
    // A GEMM's (m, n, k), each a positive integer.
    std::tuple<long, long, long> shape() const {
        const long m = static_cast<long>(num("m")), n = static_cast<long>(num("n")), k = static_cast<long>(num("k"));
        if (m < 1 || n < 1 || k < 1)
            throw inputError(file, line, "m", "expected positive m, n, k, got " + std::to_string(m) + ", " +
                                                  std::to_string(n) + ", " + std::to_string(k));
        return {m, n, k};
    }
    RawTimes times(const std::string& key = "time_us") const {
        const json& t = at(key);
        if (!t.is_object()) throw inputError(file, line, key, "expected an object {median, p10, p90, p99, ...}");
        Line sub{file, line, t};
        RawTimes r;
        r.median = sub.num("median");
        r.p10 = t.value("p10", r.median);
        r.p90 = t.value("p90", r.median);
        r.p99 = t.value("p99", r.median);
        r.mean = t.value("mean", r.median);
        r.n = t.value("n", 0);
        if (!(r.median > 0)) throw inputError(file, line, key + ".median", "expected a positive time in microseconds");
        return r;
    }
};


// One parser per record kind: reads the record `L` into `d`, or throws an InputError naming file, line and key.
using Parser = void (*)(const Line& L, RawData& d);

// The harness's metadata: the GPUs it saw. A PyTorch-side tool's metadata (torch version, one GPU name, no "gpus"):
// nothing the fit needs.
void parseMetadata(const Line& L, RawData& d) {
    if (!L.j.contains("gpus")) return;
    const json& gpus = L.at("gpus");
    if (!gpus.is_array() || gpus.empty()) throw inputError(L.file, L.line, "gpus", "expected a non-empty list");
    const Line g{L.file, L.line, gpus.front()};
    if (d.gpu_model.empty()) d.gpu_model = g.str("name");
    if (gpus.front().contains("sms")) d.sms = static_cast<int>(g.num("sms"));
    if (gpus.front().contains("memory_gib")) d.memory_gib = g.num("memory_gib");
    d.gpu_count = std::max(d.gpu_count, static_cast<int>(gpus.size()));
}

void parseCollective(const Line& L, RawData& d) {
    const json& j = L.j;
    RawCollective c;
    c.op = L.str("op");
    c.dtype = L.str("dtype");
    c.bytes = L.num("bytes");
    c.ranks = static_cast<int>(L.num("ranks"));
    c.nodes = j.value("nodes", 1);
    // NCCL spells them Ring/LL128; profiles use lower case (sim/scenario/EnumNames.cpp).
    c.algo = lower(j.value("algo", std::string("auto")));
    c.proto = lower(j.value("proto", std::string("auto")));
    c.time = L.times();
    c.busbw_gbps = j.value("busbw_GBps", 0.0);
    d.collectives.push_back(c);
}

void parseGemm(const Line& L, RawData& d) {
    const json& j = L.j;
    RawGemm g;
    g.dtype = L.str("dtype");
    g.m = static_cast<long>(L.num("m"));
    g.n = static_cast<long>(L.num("n"));
    g.k = static_cast<long>(L.num("k"));
    if (j.contains("fast_accum")) g.fast_accum = j.at("fast_accum").get<bool>();
    g.source = j.value("source", std::string("stepsim-bench"));
    g.scaling = j.value("scaling", std::string());
    g.time = L.times();
    // gemm_training_shapes.py --step times each shape twice: alternated with memory-bound adds (time_us)
    // and back to back (back_to_back_us). The back-to-back time is the one that matches the GEMMs of real
    // training steps (calibration/profiles/h200x2/NOTES.md, GEMMs), so it is the one fitted.
    if (g.source == "pytorch-step") {
        const double b2b = L.num("back_to_back_us");
        if (!(b2b > 0)) throw inputError(L.file, L.line, "back_to_back_us", "expected a positive time in microseconds");
        g.time = RawTimes{};
        g.time.median = g.time.mean = g.time.p10 = g.time.p90 = g.time.p99 = b2b;
    }
    g.tflops = 2.0 * double(g.m) * double(g.n) * double(g.k) / (g.time.median * 1e6);
    g.cv = j.value("cv", 0.0);
    d.gemms.push_back(g);
}

void parseMemory(const Line& L, RawData& d) {
    d.memory.push_back({L.str("op"), L.num("size_bytes"), L.num("bytes_moved"), L.times()});
}

void parseTransfer(const Line& L, RawData& d) {
    d.transfers.push_back({L.str("op"), L.num("size_bytes"), L.num("bytes_moved"), L.times()});
}

void parseIoCopy(const Line& L, RawData& d) {
    const std::string dir = L.str("direction");
    if (dir != "h2d" && dir != "d2h") throw inputError(L.file, L.line, "direction", "expected h2d or d2h, got '" + dir + "'");
    const json& pinned = L.at("pinned");
    if (!pinned.is_boolean()) throw inputError(L.file, L.line, "pinned", "expected true or false");
    d.io_copies.push_back({dir, pinned.get<bool>(), L.num("bytes"), L.num("device_us"), L.num("host_us")});
}

void parseIoDisk(const Line& L, RawData& d) {
    const double s = L.num("seconds");
    d.io_saves.push_back({"disk", L.num("bytes"), s * 1e3, s * 1e3, 0, 0, 0});
}

void parseIoDcp(const Line& L, RawData& d) {
    RawIoSave v{L.str("mode"), L.num("bytes"), L.num("blocking_ms"), L.num("total_ms"), L.j.value("rep", 0), 0, 0};
    if (v.mode != "sync" && v.mode != "async_default" && v.mode != "async_pinned")
        throw inputError(L.file, L.line, "mode", "expected sync, async_default or async_pinned, got '" + v.mode + "'");
    if (L.j.contains("launch_us_during")) {
        v.launch_us_during = L.num("launch_us_during");
        v.launch_us_after = L.num("launch_us_after");
    }
    d.io_saves.push_back(v);
}

void parseLaunch(const Line& L, RawData& d) {
    const json& j = L.j;
    RawLaunch l;
    l.op = L.str("op");
    l.time = L.times();
    // A training step's gaps are summed by the simulator, so the fit takes their mean, never the median.
    if (l.op.starts_with("step_gap") && !j.at("time_us").contains("mean"))
        throw inputError(L.file, L.line, "time_us.mean", "expected the mean gap in microseconds (kernel_gaps.py writes it)");
    if (l.op == "step_gap_gemm_shape" || l.op == "step_gap_gemm_shape_beside_nccl") {
        std::tie(l.m, l.n, l.k) = L.shape();
        l.form = j.value("form", "");
    }
    if (j.contains("comm_bytes")) l.comm_bytes = L.num("comm_bytes");
    if (l.op == "step_gap_gemm_shape_beside_nccl" || l.op.starts_with("step_gap_unit_")) {
        l.mode = L.str("mode");
        const bool alone = l.op.starts_with("step_gap_unit_") && l.mode == "alone";
        if (!alone && l.mode != "transfer" && l.mode != "waiting")
            throw inputError(L.file, L.line, "mode", std::string("expected transfer, waiting") +
                                                         (l.op.starts_with("step_gap_unit_") ? " or alone" : "") +
                                                         ", got \"" + l.mode + "\"");
    }
    l.rank = j.value("rank", 0);
    l.file = L.file;
    d.launches.push_back(std::move(l));
}

void parseInterference(const Line& L, RawData& d) {
    RawInterference r;
    r.comm_bytes = L.num("comm_bytes");
    r.device = L.j.value("device", 0);
    r.gemm_alone_us = L.num("gemm_alone_us");
    r.gemm_with_comm_us = L.num("gemm_with_comm_us");
    r.comm_alone_us = L.num("comm_alone_us");
    r.comm_with_gemm_us = L.num("comm_with_gemm_us");
    d.interference.push_back(r);
}

void checkClass(const Line& L, const std::string& cls) {
    if (cls != "gemm" && cls != "attention" && cls != "memory")
        throw inputError(L.file, L.line, "class", "expected gemm, attention or memory, got '" + cls + "'");
}

// interference_training.py: the all-reduce's own rate beside compute (mode resident), or a kernel's time alone and
// beside the all-reduces (transfer, waiting, bucketed).
void parseInterferenceTraining(const Line& L, RawData& d) {
    const json& j = L.j;
    if (L.str("mode") == "resident") {
        RawCommBeside c{L.str("class"), L.str("op"), L.num("comm_bytes"), L.num("comm_alone_us"), L.num("comm_slowdown")};
        checkClass(L, c.cls);
        if (!(c.comm_bytes > 0) || !(c.comm_alone_us > 0))
            throw inputError(L.file, L.line, "comm_alone_us", "expected a positive size and time alone");
        if (!(c.slowdown > 0)) throw inputError(L.file, L.line, "comm_slowdown", "expected a positive ratio");
        d.comm_beside.push_back(std::move(c));
        return;
    }
    // A record without with_comm_us is a kernel the all-reduce chain did not cover: nothing to fit.
    if (!j.contains("with_comm_us")) return;
    RawStepInterference r{L.str("mode"), L.str("class"), L.str("op"), L.num("alone_us"), L.num("with_comm_us")};
    if (r.mode != "transfer" && r.mode != "waiting" && r.mode != "bucketed")
        throw inputError(L.file, L.line, "mode", "expected transfer, waiting, bucketed or resident, got '" + r.mode + "'");
    if (j.contains("comm_with_compute_us") && j.contains("comm_alone_us"))
        r.comm_slowdown = L.num("comm_with_compute_us") / L.num("comm_alone_us");
    if (j.contains("comm_bytes")) r.comm_bytes = L.num("comm_bytes");
    checkClass(L, r.cls);
    if (j.contains("m") || j.contains("n") || j.contains("k")) {
        if (r.cls != "gemm") throw inputError(L.file, L.line, "m", "a shape (m, n, k) is a GEMM's; class is " + r.cls);
        std::tie(r.m, r.n, r.k) = L.shape();
    }
    if (!(r.alone_us > 0) || !(r.with_comm_us > 0))
        throw inputError(L.file, L.line, "alone_us", "expected positive times in microseconds");
    d.step_interference.push_back(std::move(r));
}

void parseDeviceSpeed(const Line& L, RawData& d) {
    RawDeviceSpeed s{L.str("set"), static_cast<int>(L.num("rank")), L.num("gemm_tflops"), L.num("memory_gbps")};
    if (!(s.gemm_tflops > 0) || !(s.memory_gbps > 0))
        throw inputError(L.file, L.line, "gemm_tflops", "expected positive rates (TFLOP/s and GB/s)");
    d.device_speed.push_back(std::move(s));
}

void parseHostSpread(const Line& L, RawData& d) {
    RawHostSpread h{L.file, L.num("window_s"), {}};
    const json& w = L.at("windows");
    const std::size_t procs = static_cast<std::size_t>(L.num("procs"));
    if (!w.is_array() || w.empty())
        throw inputError(L.file, L.line, "windows", "expected a list of windows, got " + w.dump());
    for (const json& win : w) {
        if (!win.is_array() || win.size() != procs || procs < 2)
            throw inputError(L.file, L.line, "windows",
                             fmt::format("expected each window to list one step time per process ({}, at least "
                                         "2), got {}",
                                         procs, win.dump()));
        std::vector<double> ms;
        for (const json& x : win) {
            if (!x.is_number() || !(x.get<double>() > 0))
                throw inputError(L.file, L.line, "windows", "expected positive step times in ms, got " + x.dump());
            ms.push_back(x.get<double>());
        }
        h.windows.push_back(std::move(ms));
    }
    d.host_spread.push_back(std::move(h));
}

void parseDdpHost(const Line& L, RawData& d) {
    RawDdpHost h{L.str("id"), L.num("param_tensors"), L.num("buckets"), L.j.value("gradient_as_bucket_view", false),
                 {}, {}};
    const auto phases = [&](const std::string& side) {
        return RawDdpHost::Phases{L.num(side, "forward_us"), L.num(side, "backward_us"), L.num(side, "forward_launches"),
                                  L.num(side, "backward_launches")};
    };
    h.plain = phases("plain");
    h.ddp = phases("ddp");
    for (const RawDdpHost::Phases* ph : {&h.plain, &h.ddp})
        if (!(ph->forward_us > 0) || !(ph->backward_us > 0) || !(ph->backward_launches > 0))
            throw inputError(L.file, L.line, ph == &h.plain ? "plain" : "ddp",
                             "expected positive host times (µs) and launch counts");
    if (!(h.param_tensors > 0))
        throw inputError(L.file, L.line, "param_tensors", "expected a positive count of parameter tensors");
    d.ddp_host.push_back(std::move(h));
}

void parseDdpFindUnused(const Line& L, RawData& d) {
    RawDdpFindUnused f{L.num("layers"), L.num("param_tensors"), L.num("forward_host_us", "ddp"),
                       L.num("forward_host_us", "find_unused")};
    if (!(f.param_tensors > 0))
        throw inputError(L.file, L.line, "param_tensors", "expected a positive count of parameter tensors");
    if (!(f.ddp_us > 0) || !(f.find_unused_us > 0))
        throw inputError(L.file, L.line, "forward_host_us", "expected positive host times (µs)");
    d.ddp_find_unused.push_back(f);
}

void parseKernel(const Line& L, RawData& d) {
    const json& j = L.j;
    RawKernel k;
    k.op = L.str("op");
    k.dtype = j.value("dtype", std::string());
    if (j.contains("flops")) k.flops = L.num("flops");
    if (j.contains("bytes")) k.bytes = L.num("bytes");
    k.time = L.times();
    if (j.contains("shape") && j["shape"].is_object()) {
        const json& shape = j["shape"];
        k.seq = shape.value("seq", 0L);
        k.head_dim = shape.value("head_dim", 0L);
        k.batch = shape.value("batch", 0L);
        k.heads = shape.value("heads", 0L);
        k.causal = shape.value("causal", false);
        k.tokens = shape.value("tokens", 0L);
        k.hidden = shape.value("hidden", 0L);
    }
    d.kernels.push_back(k);
}

void parseDispatch(const Line& L, RawData& d) { d.dispatch.push_back({L.str("op"), L.times()}); }

void parseHostOverhead(const Line& L, RawData& d) {
    const json& j = L.j;
    RawHostOverhead h;
    h.file = L.file;
    h.ddp = j.value("ddp", false);
    h.forward_us_per_kernel = L.num("forward_us_per_kernel");
    h.backward_us_per_kernel = L.num("backward_us_per_kernel");
    h.optimizer_us_per_param_tensor = L.num("optimizer_us_per_param_tensor");
    const json& per = L.at("per_layer");
    auto perLayer = [&](const std::string& key) {
        if (!per.is_object() || !per.contains(key) || !per.at(key).is_number())
            throw inputError(L.file, L.line, "per_layer." + key, "expected a number");
        return per.at(key).get<double>();
    };
    h.backward_us_per_layer = perLayer("backward_us");
    h.param_tensors_per_layer = perLayer("param_tensors");
    if (j.contains("allreduce_issue_us")) h.allreduce_issue_us = L.num("allreduce_issue_us");
    if (per.is_object() && per.contains("backward_sync_us")) {
        h.backward_sync_us_per_layer = perLayer("backward_sync_us");
        h.backward_nosync_us_per_layer = perLayer("backward_nosync_us");
    }
    d.host.push_back(h);
}

void parseCheckpointHost(const Line& L, RawData& d) {
    RawCheckpointHost c;
    c.plain_forward_us_per_kernel = L.num("plain_forward_us_per_kernel");
    if (!(c.plain_forward_us_per_kernel > 0))
        throw inputError(L.file, L.line, "plain_forward_us_per_kernel", "expected a positive time in microseconds");
    for (const char* mode : {"selective", "full"}) {
        const json& m = L.at(mode);
        auto num = [&](const char* key) {
            if (!m.is_object() || !m.contains(key) || !m.at(key).is_number())
                throw inputError(L.file, L.line, std::string(mode) + "." + key, "expected a number");
            return m.at(key).get<double>();
        };
        (std::string(mode) == "selective" ? c.selective : c.full) =
            {num("forward_extra_us_per_layer"), num("backward_extra_us_per_layer"), num("recomputed_kernels_per_layer")};
    }
    d.checkpoint_host.push_back(c);
}

void parseFp8LinearHost(const Line& L, RawData& d) {
    RawFp8LinearHost h{L.str("recipe"), L.times("forward_us").median, L.times("backward_us").median,
                       static_cast<int>(L.num("forward_kernels")), static_cast<int>(L.num("backward_kernels"))};
    if (h.forward_kernels < 1 || h.backward_kernels < 1)
        throw inputError(L.file, L.line, "forward_kernels", "expected at least one kernel forward and backward");
    d.fp8_linear_host.push_back(h);
}

void parseAccumulateHost(const Line& L, RawData& d) {
    RawAccumulateHost a{L.num("accumulate_us_per_param_tensor"), L.num("accumulate_over_backward_kernel")};
    if (!(a.over_backward_kernel >= 0))
        throw inputError(L.file, L.line, "accumulate_over_backward_kernel", "expected a ratio >= 0");
    d.accumulate_host.push_back(a);
}

// power_duty.py's mixes: the load, clock and power held, and the busy and memory-bound shares of the cycle (a record
// without them: RawPowerPoint).
void parsePowerDuty(const Line& L, RawData& d) {
    RawPowerPoint q;
    q.load_tflops = L.num("sustained", "load_tflops");
    q.clock_mhz = L.num("sustained", "sm_clock_mhz");
    q.power_w = L.num("sustained", "power_w");
    const double compute = L.num("sustained", "compute_fraction");
    if (L.at("sustained").contains("busy_fraction")) {
        q.memory_fraction = L.num("sustained", "memory_fraction");
        q.busy_fraction = L.num("sustained", "busy_fraction");
        if (!(q.busy_fraction > 0.0 && q.busy_fraction <= 1.0 + 1e-9) ||
            !(q.memory_fraction >= 0.0 && q.memory_fraction <= q.busy_fraction + 1e-9))
            throw inputError(L.file, L.line, "sustained.busy_fraction", "expected 0 < memory_fraction <= busy_fraction <= 1");
    } else if (L.num("counts", "idle_ms") > 0) {
        if (L.num("counts", "memory") > 0)
            throw inputError(L.file, L.line, "sustained.busy_fraction",
                             "missing: an idle mix with memory-bound kernels needs its busy and memory shares");
        q.busy_fraction = compute;
    } else {
        q.memory_fraction = 1.0 - compute;
    }
    const json& ref = L.at("reference_clock");
    if (!ref.is_object() || ref.empty())
        throw inputError(L.file, L.line, "reference_clock", "expected an object {class: {sm_clock_mhz, ...}}");
    for (const auto& [cls, c] : ref.items()) {
        if (!c.is_object()) throw inputError(L.file, L.line, "reference_clock." + cls, "expected an object {sm_clock_mhz, ...}");
        q.rested_clock_mhz = std::max(q.rested_clock_mhz, L.number(c, "sm_clock_mhz", "reference_clock." + cls + ".sm_clock_mhz"));
    }
    if (!(q.clock_mhz > 0) || !(q.power_w > 0))
        throw inputError(L.file, L.line, "sustained.sm_clock_mhz", "expected a positive clock (MHz) and power (W)");
    d.power.push_back(q);
}

// An attention power_loaded record's kernel: its shape and pass, its times under the load and alone, and the clocks
// of the power point `q`.
RawAttentionClock attentionClock(const Line& L, const RawPowerPoint& q, double time_us, double burst_us) {
    RawAttentionClock a;
    a.time_us = time_us;
    a.burst_us = burst_us;
    a.file = L.file;
    a.load = L.j.value("load", std::string());
    a.rank = L.j.value("rank", 0);
    a.head_dim = static_cast<long>(L.num("head_dim"));
    a.batch = static_cast<long>(L.num("batch"));
    a.heads = static_cast<long>(L.num("heads"));
    a.kv_heads = static_cast<long>(L.num("kv_heads"));
    a.seq = static_cast<long>(L.num("seq"));
    if (a.head_dim < 1) throw inputError(L.file, L.line, "head_dim", "expected a positive integer");
    const std::string pass = L.str("pass");
    if (pass != "forward" && pass != "forward_backward")
        throw inputError(L.file, L.line, "pass", "expected forward or forward_backward, got '" + pass + "'");
    a.forward_backward = pass == "forward_backward";
    a.clock_mhz = q.clock_mhz;
    a.burst_clock_mhz = q.rested_clock_mhz;
    return a;
}

// power_duty.py's kernels under a held background load: a power point, and for attention its clock record.
void parsePowerLoaded(const Line& L, RawData& d) {
    const std::string cls = L.str("class");
    if (cls != "gemm" && cls != "attention")
        throw inputError(L.file, L.line, "class", "expected gemm or attention, got '" + cls + "'");
    RawPowerPoint q{L.num("load_tflops"), L.num("memory_fraction"), L.num("sm_clock_mhz"), L.num("power_w"), 1.0,
                    L.num("burst_clock", "sm_clock_mhz")};
    if (!(q.clock_mhz > 0) || !(q.power_w > 0) || !(q.rested_clock_mhz > 0))
        throw inputError(L.file, L.line, "sm_clock_mhz", "expected positive clocks (MHz) and power (W)");
    const double time = L.num("time_us"), burst = L.num("burst_us");
    if (!(time > 0) || !(burst > 0))
        throw inputError(L.file, L.line, "time_us", "expected positive times in microseconds (time_us, burst_us)");
    if (cls == "attention") d.attention_clock.push_back(attentionClock(L, q, time, burst));
    d.power.push_back(q);
}

void parseCompileBlock(const Line& L, RawData& d) {
    RawCompileBlock b;
    b.mode = L.str("mode");
    b.mlp = L.str("mlp");
    b.norm = L.str("norm");
    b.dtype = L.str("dtype");
    b.hidden = static_cast<long>(L.num("hidden"));
    auto phase = [&](const char* version, const char* phase) {
        const json& v = L.at(version);
        const std::string path = std::string(version) + "." + phase;
        if (!v.is_object() || !v.contains(phase) || !v.at(phase).is_object())
            throw inputError(L.file, L.line, path, "expected an object {other, other_ms, regions, gemm_ms}");
        const json& o = v.at(phase);
        RawCompileBlock::Phase p{L.number(o, "other", path + ".other"), L.number(o, "other_ms", path + ".other_ms"),
                                 L.number(o, "regions", path + ".regions"), L.number(o, "gemm_ms", path + ".gemm_ms")};
        if (!(p.other_ms > 0) || !(p.gemm_ms > 0))
            throw inputError(L.file, L.line, path, "expected positive kernel times (other_ms, gemm_ms)");
        return p;
    };
    b.eager_forward = phase("eager", "forward");
    b.eager_backward = phase("eager", "backward");
    b.compiled_forward = phase("compiled", "forward");
    b.compiled_backward = phase("compiled", "backward");
    if (!(b.eager_forward.regions > 0) || !(b.eager_backward.regions > 0))
        throw inputError(L.file, L.line, "eager.forward.regions", "expected at least one region of fusible kernels");
    b.compile_s = L.num("compile_s");
    const auto dyn = L.j.find("dynamic");
    if (dyn == L.j.end()) {
        d.compile_blocks.push_back(b);
        return;
    }
    if (!dyn->is_boolean()) throw inputError(L.file, L.line, "dynamic", "expected true or false, got " + dyn->dump());
    d.compile_dynamic_blocks.emplace_back(dyn->get<bool>(), b);
}

void parseCompileOptimizer(const Line& L, RawData& d) {
    RawCompileOptimizer o{L.str("impl"),      L.num("tensors"), L.num("params"), L.num("kernels"),
                          L.num("kernel_ms"), L.num("host_us"), 0};
    if (o.impl != "foreach" && o.impl != "fused" && o.impl != "compiled")
        throw inputError(L.file, L.line, "impl", "expected foreach, fused or compiled, got " + o.impl);
    if (!(o.tensors > 0) || !(o.kernels > 0) || !(o.kernel_ms > 0) || !(o.host_us > 0))
        throw inputError(L.file, L.line, "kernel_ms", "expected positive tensors, kernels, kernel_ms and host_us");
    if (o.impl == "compiled") o.compile_s = L.num("compile_s");
    d.compile_optimizer.push_back(o);
}

void parseCompileLoss(const Line& L, RawData& d) {
    const json& c = L.at("compiled");
    if (!c.is_boolean()) throw inputError(L.file, L.line, "compiled", "expected true or false, got " + c.dump());
    RawCompileLoss l{c.get<bool>(), L.num("tokens"), L.num("forward", "kernels"), L.num("forward", "ms"),
                     L.num("backward", "kernels"), L.num("backward", "ms")};
    if (!(l.forward_ms > 0) || !(l.backward_ms > 0) || !(l.forward_kernels > 0) || !(l.backward_kernels > 0))
        throw inputError(L.file, L.line, "forward.ms", "expected positive kernel counts and times per phase");
    d.compile_loss.push_back(l);
}

void parseFp8CompiledLinear(const Line& L, RawData& d) {
    const json& b = L.at("bias");
    if (!b.is_boolean()) throw inputError(L.file, L.line, "bias", "expected true or false, got " + b.dump());
    const std::string version = L.str("version");
    if (version != "eager" && version != "compiled")
        throw inputError(L.file, L.line, "version", "expected eager or compiled, got '" + version + "'");
    const auto phase = [&](const char* p, const char* what) { return L.number(L.at(p).at("other"), what, std::string(p) + ".other." + what); };
    RawFp8CompiledLinear r{L.str("recipe"), b.get<bool>(), version == "compiled", L.num("tokens"), L.num("in"),
                           L.num("out"), phase("forward", "kernels"), phase("forward", "us"),
                           phase("backward", "kernels"), phase("backward", "us")};
    if (!(r.forward_us > 0) || !(r.backward_us > 0) || !(r.forward_kernels > 0) || !(r.backward_kernels > 0))
        throw inputError(L.file, L.line, "forward.other", "expected positive cast kernel counts and times per phase");
    d.fp8_compiled_linear.push_back(r);
}

void parseCompileHost(const Line& L, RawData& d) {
    RawCompileHost h{L.str("mode"), static_cast<int>(L.num("blocks")), L.num("kernels"), L.num("graphs"),
                     L.num("host_us")};
    if (!(h.host_us > 0) || !(h.kernels > 0))
        throw inputError(L.file, L.line, "host_us", "expected a positive host time and kernel count");
    d.compile_host.push_back(h);
}

void parseError(const Line& L, RawData& d) {
    d.errors.push_back(L.j.value("group", std::string("?")) + ": " + L.j.value("message", std::string()));
}

void parseSkipped(const Line&, RawData& d) { ++d.skipped; }

void parseNothing(const Line&, RawData&) {}

const std::map<std::string, Parser, std::less<>> kParsers = {
    {"metadata", parseMetadata},
    {"collective", parseCollective},
    {"gemm", parseGemm},
    {"memory", parseMemory},
    {"transfer", parseTransfer},
    {"copy", parseIoCopy},
    {"copy_pair", parseNothing},  // read by hand (NOTES.md): two copies on one PCIe link share it
    {"disk", parseIoDisk},
    {"dcp", parseIoDcp},
    {"env", parseNothing},
    {"note", parseNothing},
    {"launch", parseLaunch},
    {"interference", parseInterference},
    {"interference_training", parseInterferenceTraining},
    {"device_speed", parseDeviceSpeed},
    {"host_spread", parseHostSpread},
    {"ddp_host", parseDdpHost},
    {"ddp_find_unused", parseDdpFindUnused},
    {"kernel", parseKernel},
    {"dispatch", parseDispatch},
    {"host_overhead", parseHostOverhead},
    {"checkpoint_host", parseCheckpointHost},
    {"accumulate_host", parseAccumulateHost},
    {"fp8_linear_host", parseFp8LinearHost},
    {"power_duty", parsePowerDuty},
    {"power_loaded", parsePowerLoaded},
    {"compile_block", parseCompileBlock},
    {"compile_host", parseCompileHost},
    {"compile_optimizer", parseCompileOptimizer},
    {"compile_loss", parseCompileLoss},
    {"fp8_compiled_linear", parseFp8CompiledLinear},
    {"compile_recompile", parseNothing},  // read by hand (NOTES.md): a new shape's first call, dynamic or not
    {"fp8_compiled", parseNothing},       // read by hand (NOTES.md): compiled FP8 linears, not modelled yet
    {"pinned_alloc", parseNothing},       // read by hand (NOTES.md): pinned host allocation against a copy into it
    {"error", parseError},
    {"skipped", parseSkipped},
    {"group_done", parseNothing},
    {"run_done", parseNothing},
};

}  // namespace

void readRaw(const std::filesystem::path& path, RawData& d) {
    const std::string file = path.string();
    std::ifstream in(path);
    if (!in) throw inputError(file, 0, "", "cannot read the raw measurement file");
    d.files.push_back(file);
    std::string text;
    int lineNo = 0, records = 0;
    while (std::getline(in, text)) {
        ++lineNo;
        if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
        json j;
        try {
            j = json::parse(text);
        } catch (const json::parse_error& e) {
            throw inputError(file, lineNo, "", std::string("not a JSON object: ") + e.what());
        }
        if (!j.is_object()) throw inputError(file, lineNo, "", "expected one JSON object per line");
        const Line L{file, lineNo, j};
        const std::string kind = L.str("kind");
        const auto parser = kParsers.find(kind);
        if (parser == kParsers.end()) throw inputError(file, lineNo, "kind", "unknown record kind '" + kind + "'");
        parser->second(L, d);
        ++records;
    }
    // A file without one measurement fits nothing: the profile would be its base, silently.
    if (records == 0) throw inputError(file, 0, "", "no measurement in this file (expected JSON Lines of raw records)");
}

RawData readRaw(const std::vector<std::filesystem::path>& files) {
    RawData d;
    for (const auto& f : files) readRaw(f, d);
    return d;
}

}  // namespace stepsim
