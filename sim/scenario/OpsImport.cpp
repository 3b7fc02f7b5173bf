#include "sim/scenario/OpsImport.hpp"

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <zlib.h>

#include "sim/base/InputError.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/cost/OpCost.hpp"

namespace stepsim {

namespace {

using nlohmann::json;

std::string readBytes(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw inputError(file, 0, "", "cannot open the op graph file (does it exist?)");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string sha256Hex(const std::string& bytes) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int n = 0;
    EVP_Digest(bytes.data(), bytes.size(), md.data(), &n, EVP_sha256(), nullptr);
    std::string out;
    for (unsigned int i = 0; i < n; ++i) out += fmt::format("{:02x}", md[i]);
    return out;
}

// The bytes gunzipped when they are a gzip stream (magic 1f 8b), else as they are.
std::string gunzip(const std::string& file, const std::string& bytes) {
    if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f ||
        static_cast<unsigned char>(bytes[1]) != 0x8b)
        return bytes;
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw inputError(file, 0, "", "cannot start zlib's inflate");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(bytes.size());
    std::string out;
    std::array<char, 1 << 16> buf{};
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buf.data());
        z.avail_out = static_cast<uInt>(buf.size());
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf.data(), buf.size() - z.avail_out);
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
        throw inputError(file, 0, "", "cannot read the op graph (a corrupt or truncated gzip stream)");
    return out;
}

// Field access that names the field's path in the file on every error.
class Fields {
public:
    Fields(std::string file, long long b, long long s) : file_(std::move(file)), b_(b), s_(s) {}

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw inputError(file_, 0, path, what);
    }
    const json& at(const json& o, const std::string& path, const char* key) const {
        if (!o.is_object()) fail(path, "expected an object");
        const auto it = o.find(key);
        if (it == o.end()) fail(join(path, key), "missing (a required field of version 1: docs/ops-format.md)");
        return *it;
    }
    std::string str(const json& o, const std::string& path, const char* key) const {
        const json& v = at(o, path, key);
        if (!v.is_string()) fail(join(path, key), "expected a string, got " + v.dump());
        return v.get<std::string>();
    }
    long long integer(const json& v, const std::string& path) const {
        if (!v.is_number_integer()) fail(path, "expected an integer, got " + v.dump());
        return v.get<long long>();
    }
    // An index or null (-1).
    long long indexOrNull(const json& o, const std::string& path, const char* key) const {
        const json& v = at(o, path, key);
        return v.is_null() ? -1 : integer(v, join(path, key));
    }
    bool boolean(const json& o, const std::string& path, const char* key) const {
        const json& v = at(o, path, key);
        if (!v.is_boolean()) fail(join(path, key), "expected true or false, got " + v.dump());
        return v.get<bool>();
    }
    const json& array(const json& o, const std::string& path, const char* key) const {
        const json& v = at(o, path, key);
        if (!v.is_array()) fail(join(path, key), "expected a list, got " + v.dump().substr(0, 80));
        return v;
    }
    // A dimension or size: an integer, or (scaled graphs) a monomial of B and S.
    long long dim(const json& v, const std::string& path) const {
        if (v.is_number_integer()) return v.get<long long>();
        if (!v.is_string()) fail(path, "expected an integer or a monomial of B and S, got " + v.dump());
        try {
            return evalDimension(v.get<std::string>(), b_, s_);
        } catch (const std::invalid_argument& e) {
            fail(path, e.what());
        }
    }
    double size(const json& v, const std::string& path) const {
        if (v.is_number_float()) return v.get<double>();
        return double(dim(v, path));
    }
    std::vector<long long> dims(const json& o, const std::string& path, const char* key) const {
        const json& a = array(o, path, key);
        std::vector<long long> out;
        for (std::size_t i = 0; i < a.size(); ++i) out.push_back(dim(a[i], fmt::format("{}.{}[{}]", path, key, i)));
        return out;
    }
    static std::string join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }

private:
    std::string file_;
    long long b_, s_;
};

Phase phaseOf(const Fields& f, const std::string& text, const std::string& path) {
    if (text == "forward") return Phase::forward;
    if (text == "backward") return Phase::backward;
    if (text == "optimizer") return Phase::optimizer;
    f.fail(path, fmt::format("expected forward, backward or optimizer, got '{}'", text));
}

OpTensorKind kindOf(const Fields& f, const std::string& text, const std::string& path) {
    static const std::map<std::string, OpTensorKind> kinds = {{"param", OpTensorKind::param},
                                                              {"grad", OpTensorKind::grad},
                                                              {"optimizer_state", OpTensorKind::optimizer_state},
                                                              {"activation", OpTensorKind::activation},
                                                              {"temp", OpTensorKind::temp},
                                                              {"input", OpTensorKind::input},
                                                              {"buffer", OpTensorKind::buffer},
                                                              {"other", OpTensorKind::other}};
    const auto it = kinds.find(text);
    if (it == kinds.end())
        f.fail(path, fmt::format("expected param, grad, optimizer_state, activation, temp, input, buffer or other, "
                                 "got '{}'",
                                 text));
    return it->second;
}

OpTensorRef tensorRef(const Fields& f, const json& t, const std::string& path, std::size_t storages) {
    OpTensorRef r;
    r.t = int(f.integer(f.at(t, path, "t"), path + ".t"));
    if (r.t < 0 || std::size_t(r.t) >= storages)
        f.fail(path + ".t", fmt::format("expected a storage index below {} (the tensors list), got {}", storages, r.t));
    r.shape = f.dims(t, path, "shape");
    r.stride = f.dims(t, path, "stride");
    if (r.stride.size() != r.shape.size())
        f.fail(path + ".stride",
               fmt::format("expected {} strides (one per dimension), got {}", r.shape.size(), r.stride.size()));
    r.dtype = f.str(t, path, "dtype");
    r.offset = f.dim(f.at(t, path, "offset"), path + ".offset");
    return r;
}

std::vector<OpTensorArg> tensorArgs(const Fields& f, const json& op, const std::string& path, const char* key,
                                    std::size_t storages) {
    const json& a = f.array(op, path, key);
    std::vector<OpTensorArg> out;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const std::string p = fmt::format("{}.{}[{}]", path, key, i);
        OpTensorArg arg;
        if (a[i].is_array()) {
            arg.list = true;
            for (std::size_t j = 0; j < a[i].size(); ++j)
                arg.items.push_back(tensorRef(f, a[i][j], fmt::format("{}[{}]", p, j), storages));
        } else {
            arg.items.push_back(tensorRef(f, a[i], p, storages));
        }
        out.push_back(std::move(arg));
    }
    return out;
}

OpScalarArg scalarArg(const json& v) {
    OpScalarArg a;
    if (v.is_boolean())
        a.kind = OpScalarArg::Kind::boolean, a.number = v.get<bool>() ? 1.0 : 0.0;
    else if (v.is_number())
        a.kind = OpScalarArg::Kind::number, a.number = v.get<double>();
    else if (v.is_string())
        a.kind = OpScalarArg::Kind::string, a.text = v.get<std::string>();
    else if (v.is_array()) {
        a.kind = OpScalarArg::Kind::list;
        for (const json& x : v)
            if (x.is_number())
                a.list.push_back(x.get<double>());
            else if (x.is_boolean())
                a.list.push_back(x.get<bool>() ? 1.0 : 0.0);
    }
    return a;
}

std::vector<int> indexList(const Fields& f, const json& op, const std::string& path, const char* key,
                           std::size_t storages) {
    const json& a = f.array(op, path, key);
    std::vector<int> out;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const long long t = f.integer(a[i], fmt::format("{}.{}[{}]", path, key, i));
        if (t < 0 || std::size_t(t) >= storages)
            f.fail(fmt::format("{}.{}[{}]", path, key, i),
                   fmt::format("expected a storage index below {}, got {}", storages, t));
        out.push_back(int(t));
    }
    return out;
}

OpNode readOp(const Fields& f, const json& o, std::size_t i, const OpGraph& g) {
    const std::string path = fmt::format("ops[{}]", i);
    const std::size_t storages = g.tensors.size();
    OpNode n;
    n.op = f.str(o, path, "op");
    n.overload = f.str(o, path, "overload");
    n.phase = phaseOf(f, f.str(o, path, "phase"), path + ".phase");
    n.module = int(f.indexOrNull(o, path, "module"));
    if (n.module >= int(g.modules.size()))
        f.fail(path + ".module", fmt::format("expected a module index below {}, got {}", g.modules.size(), n.module));
    n.in = tensorArgs(f, o, path, "in", storages);
    n.out = tensorArgs(f, o, path, "out", storages);
    const json& args = f.at(o, path, "args");
    if (!args.is_object()) f.fail(path + ".args", "expected an object of arguments by position");
    for (const auto& [k, v] : args.items()) {
        try {
            n.args[std::stoi(k)] = scalarArg(v);
        } catch (const std::exception&) {
            f.fail(path + ".args", fmt::format("expected argument positions as keys, got '{}'", k));
        }
    }
    n.view = f.boolean(o, path, "view");
    if (const long long s = f.indexOrNull(o, path, "seq_nr"); s >= 0) n.seq_nr = s;
    n.fwd_op = int(f.indexOrNull(o, path, "fwd_op"));
    if (n.fwd_op >= int(i)) f.fail(path + ".fwd_op", fmt::format("expected an earlier op's index, got {}", n.fwd_op));
    n.recompute = f.boolean(o, path, "recompute");
    n.alloc = indexList(f, o, path, "alloc", storages);
    n.free = indexList(f, o, path, "free", storages);
    return n;
}

void readHeader(const Fields& f, const json& root, OpGraph& g) {
    if (f.str(root, "", "format") != "stepsim.ops")
        f.fail("format", fmt::format("expected \"stepsim.ops\" (an op graph), got \"{}\"", f.str(root, "", "format")));
    const long long version = f.integer(f.at(root, "", "version"), "version");
    if (version != 1)
        f.fail("version", fmt::format("this stepsim reads op graph version 1, the file is version {}", version));
    g.torch = f.str(root, "", "torch");
    g.device_name = f.str(f.at(root, "", "device"), "device", "name");
    const json& model = f.at(root, "", "model");
    g.source = f.str(model, "model", "source");
    if (const auto it = model.find("parameters"); it != model.end() && it->is_number())
        g.model_parameters = it->get<double>();
    const json& step = f.at(root, "", "step");
    g.dtype_policy = f.str(step, "step", "dtype_policy");
    g.optimizer = f.str(step, "step", "optimizer");
    g.optimizer_impl = f.str(step, "step", "optimizer_impl");
    g.loss = f.str(step, "step", "loss");
    g.activation_checkpointing = f.str(step, "step", "activation_checkpointing");
    const json& sym = f.at(root, "", "symbols");
    g.capture_b = f.integer(f.at(sym, "symbols", "B"), "symbols.B");
    // A model without a sequence (an image model) has no S.
    if (const auto it = sym.find("S"); it != sym.end() && !it->is_null()) g.capture_s = f.integer(*it, "symbols.S");
    g.scaled = f.boolean(root, "", "scaled");
}

}  // namespace

namespace {

// One term k*B^a*S^b (factors an integer, B, S, B^n or S^n joined by *).
long long evalMonomial(const std::string& term, const std::string& text, long long b, long long s) {
    const auto bad = [&] {
        return std::invalid_argument(
            fmt::format("expected a sum of monomials k*B^a*S^b (factors an integer, B, S, B^n "
                        "or S^n joined by *, terms by + or -), got '{}'",
                        text));
    };
    if (term.empty()) throw bad();
    long long v = 1;
    std::size_t at = 0;
    while (at <= term.size()) {
        const std::size_t end = std::min(term.find('*', at), term.size());
        const std::string factor = term.substr(at, end - at);
        if (factor.empty()) throw bad();
        if (factor[0] == 'B' || factor[0] == 'S') {
            long long e = 1;
            if (factor.size() > 1) {
                if (factor[1] != '^' || factor.size() < 3 ||
                    factor.find_first_not_of("0123456789", 2) != std::string::npos)
                    throw bad();
                e = std::stoll(factor.substr(2));
            }
            for (long long k = 0; k < e; ++k) v *= factor[0] == 'B' ? b : s;
        } else {
            if (factor.find_first_not_of("0123456789") != std::string::npos) throw bad();
            v *= std::stoll(factor);
        }
        at = end + 1;
    }
    return v;
}

}  // namespace

long long evalDimension(const std::string& text, long long b, long long s) {
    if (text.empty()) throw std::invalid_argument("expected a monomial of B and S, got an empty string");
    long long v = 0;
    std::size_t at = 0;
    int sign = 1;
    if (text[0] == '-') sign = -1, at = 1;
    while (true) {
        const std::size_t end = std::min(text.find_first_of("+-", at), text.size());
        v += sign * evalMonomial(text.substr(at, end - at), text, b, s);
        if (end == text.size()) break;
        sign = text[end] == '-' ? -1 : 1;
        at = end + 1;
    }
    return v;
}

OpGraph readOpGraph(const std::string& file, long long b, long long s) {
    const std::string bytes = readBytes(file);
    json root;
    try {
        root = json::parse(gunzip(file, bytes));
    } catch (const json::exception& e) {
        throw inputError(file, 0, "", fmt::format("not a JSON op graph: {}", e.what()));
    }
    OpGraph g;
    g.file = file;
    g.sha256 = sha256Hex(bytes);
    readHeader(Fields(file, 0, 0), root, g);
    g.b = b > 0 ? b : g.capture_b;
    g.s = s > 0 ? s : g.capture_s;
    if (g.capture_s == 0 && s > 0)
        throw inputError(file, 0, "symbols",
                         fmt::format("the capture has no sequence dimension (symbols has no S): "
                                     "a sequence length ({}) does not apply",
                                     s));
    if (!g.scaled && (g.b != g.capture_b || g.s != g.capture_s))
        throw inputError(file, 0, "scaled",
                         fmt::format("the capture is not scaled (one capture, no dimension marked as B or S): it runs "
                                     "only at its own micro-batch {} and sequence length {}, asked for {} and {}",
                                     g.capture_b, g.capture_s, g.b, g.s));
    const Fields f(file, g.b, g.s);
    const json& modules = f.array(root, "", "modules");
    for (std::size_t i = 0; i < modules.size(); ++i) {
        const std::string p = fmt::format("modules[{}]", i);
        g.modules.push_back(
            {f.str(modules[i], p, "path"), f.str(modules[i], p, "class"), int(f.indexOrNull(modules[i], p, "parent"))});
        // `calls` (how many times the module's forward ran): written by every capture, read where the host's cost
        // per module call applies; a graph without it counts none.
        if (modules[i].is_object() && modules[i].contains("calls"))
            g.modules.back().calls = int(f.integer(modules[i]["calls"], p + ".calls"));
    }
    const json& tensors = f.array(root, "", "tensors");
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const std::string p = fmt::format("tensors[{}]", i);
        const auto dev = tensors[i].find("device");
        const bool cpu = dev != tensors[i].end() && dev->is_string() && dev->get<std::string>() == "cpu";
        g.tensors.push_back({f.size(f.at(tensors[i], p, "bytes"), p + ".bytes"),
                             kindOf(f, f.str(tensors[i], p, "kind"), p + ".kind"), cpu});
    }
    const json& params = f.array(root, "", "params");
    for (std::size_t i = 0; i < params.size(); ++i) {
        const std::string p = fmt::format("params[{}]", i);
        OpParam q;
        q.name = f.str(params[i], p, "name");
        q.shape = f.dims(params[i], p, "shape");
        q.dtype = f.str(params[i], p, "dtype");
        q.module = int(f.indexOrNull(params[i], p, "module"));
        q.tensor = int(f.indexOrNull(params[i], p, "tensor"));
        q.grad_ready_op = int(f.indexOrNull(params[i], p, "grad_ready_op"));
        g.params.push_back(std::move(q));
    }
    const json& ops = f.array(root, "", "ops");
    if (ops.empty()) throw inputError(file, 0, "ops", "the graph has no ops (an empty capture)");
    g.ops.reserve(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) g.ops.push_back(readOp(f, ops[i], i, g));
    for (std::size_t i = 0; i < g.params.size(); ++i)
        if (g.params[i].grad_ready_op >= int(g.ops.size()))
            f.fail(fmt::format("params[{}].grad_ready_op", i),
                   fmt::format("expected an op index below {}, got {}", g.ops.size(), g.params[i].grad_ready_op));
    return g;
}

void readOpTimes(OpGraph& g, const std::string& file) {
    const std::string bytes = readBytes(file);
    json root;
    try {
        root = json::parse(gunzip(file, bytes));
    } catch (const json::exception& e) {
        throw inputError(file, 0, "", fmt::format("not a JSON op times table: {}", e.what()));
    }
    const Fields f(file, g.b, g.s);
    if (f.str(root, "", "format") != "stepsim.op_times")
        f.fail("format", fmt::format("expected \"stepsim.op_times\", got \"{}\"", f.str(root, "", "format")));
    const long long version = f.integer(f.at(root, "", "version"), "version");
    if (version != 1)
        f.fail("version", fmt::format("this stepsim reads op times version 1, the file is version {}", version));
    const std::string sha = f.str(root, "", "capture_sha256");
    if (sha != g.sha256)
        f.fail("capture_sha256",
               fmt::format("the table was timed for another capture ({}) than model.ops {} ({}): time "
                           "this capture (stepsim calibrate --ops {})",
                           sha, g.file, g.sha256, g.file));
    const json& sym = f.at(root, "", "symbols");
    const long long b = f.integer(f.at(sym, "symbols", "B"), "symbols.B");
    const auto sit = sym.find("S");
    const long long s = sit == sym.end() || sit->is_null() ? 0 : f.integer(*sit, "symbols.S");
    if (b != g.b || s != g.s)
        f.fail("symbols", fmt::format("the table was timed at B = {}, S = {}; the scenario runs the graph at "
                                      "training.micro_batch {} and model.seq_len {}: time it at those",
                                      b, s, g.b, g.s));
    const json& ops = f.array(root, "", "ops");
    g.times.assign(g.ops.size(), OpTime{});
    std::vector<bool> listed(g.ops.size(), false);
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const std::string p = fmt::format("ops[{}]", i);
        if (!ops[i].is_array() || ops[i].size() != 4 || !ops[i][0].is_number_integer())
            f.fail(p, "expected [op_index, kernels, device_us, host_us], got " + ops[i].dump());
        // A row of nulls: an op the timing could not run alone (a host tensor's, a .item()): priced by the model.
        const bool untimed = ops[i][1].is_null() && ops[i][2].is_null() && ops[i][3].is_null();
        if (!untimed && (!ops[i][1].is_number_integer() || !ops[i][2].is_number() || !ops[i][3].is_number()))
            f.fail(p, "expected [op_index, kernels, device_us, host_us] (or nulls: not timed), got " + ops[i].dump());
        const long long k = ops[i][0].get<long long>();
        if (k < 0 || std::size_t(k) >= g.ops.size())
            f.fail(p, fmt::format("expected an op index below {}, got {}", g.ops.size(), k));
        OpTime& t = g.times[std::size_t(k)];
        listed[std::size_t(k)] = true;
        if (untimed) continue;
        t = {true, int(ops[i][1].get<long long>()), ops[i][2].get<double>(), ops[i][3].get<double>()};
        if (t.kernels < 0 || t.device_us < 0 || t.host_us < 0)
            f.fail(p, "expected kernels and times >= 0, got " + ops[i].dump());
    }
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        if (!g.ops[i].view && !listed[i])
            f.fail("ops", fmt::format("op {} ({}) is not a view and has no row: the table must time every op", i,
                                      g.ops[i].op));
    g.times_file = file;
}

std::string opsSummary(const OpGraph& g, const HardwareProfile* profile, const NcclSpec& nccl) {
    std::string out = fmt::format(
        "# op graph {}: {} (torch {}, captured on {}), {} ops, {} parameters, B = {}, S = {} "
        "(captured at B = {}, S = {}{}); step: {}, {} {}, activation checkpointing {}\n",
        g.file, g.source, g.torch, g.device_name, g.ops.size(), g.params.size(), g.b, g.s, g.capture_b, g.capture_s,
        g.scaled ? ", scaled" : ", not scaled", g.dtype_policy, g.optimizer, g.optimizer_impl,
        g.activation_checkpointing);
    if (!g.times.empty()) out += fmt::format("# kernels and device times measured: {}\n", g.times_file);
    if (!profile) return out + "# (the profile does not resolve: no times)\n";
    const CostModel cost(*profile, nccl, false);
    const auto totals = opFamilyTotals(g, cost);
    out += fmt::format("# ops by family at profile {}:\n#   {:<19} {:>7} {:>8} {:>11} {:>11} {:>10}\n", profile->name,
                       "family", "ops", "kernels", "GB", "GFLOP", "ms");
    OpFamilyTotals all;
    for (std::size_t f = 0; f < kOpFamilies; ++f) {
        const OpFamilyTotals& t = totals[f];
        if (t.ops == 0) continue;
        out += fmt::format("#   {:<19} {:>7} {:>8} {:>11.3f} {:>11.1f} {:>10.3f}\n", opFamilyName(OpFamily(f)), t.ops,
                           t.kernels, t.bytes * 1e-9, t.flops * 1e-9, t.seconds * 1e3);
        all.ops += t.ops, all.kernels += t.kernels, all.bytes += t.bytes, all.flops += t.flops,
            all.seconds += t.seconds;
    }
    out += fmt::format("#   {:<19} {:>7} {:>8} {:>11.3f} {:>11.1f} {:>10.3f}\n", "total", all.ops, all.kernels,
                       all.bytes * 1e-9, all.flops * 1e-9, all.seconds * 1e3);
    return out;
}

}  // namespace stepsim
