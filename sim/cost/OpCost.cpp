#include "sim/cost/OpCost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

namespace stepsim {

namespace {

const std::map<std::string, double>& dtypeSizes() {
    static const std::map<std::string, double> sizes = {{"float32", 4},
                                                        {"float", 4},
                                                        {"bfloat16", 2},
                                                        {"float16", 2},
                                                        {"half", 2},
                                                        {"float64", 8},
                                                        {"double", 8},
                                                        {"int64", 8},
                                                        {"long", 8},
                                                        {"int32", 4},
                                                        {"int", 4},
                                                        {"int16", 2},
                                                        {"int8", 1},
                                                        {"uint8", 1},
                                                        {"bool", 1},
                                                        {"complex64", 8},
                                                        {"complex128", 16},
                                                        {"float8_e4m3fn", 1},
                                                        {"float8_e5m2", 1},
                                                        {"float8_e4m3fnuz", 1},
                                                        {"float8_e5m2fnuz", 1},
                                                        {"uint16", 2},
                                                        {"uint32", 4},
                                                        {"uint64", 8}};
    return sizes;
}

DType computeDtype(const std::string& d) {
    if (d == "float32" || d == "float" || d == "float64") return DType::fp32;
    if (d == "float16" || d == "half") return DType::fp16;
    if (d.rfind("float8", 0) == 0) return DType::fp8;
    return DType::bf16;
}

bool isFloat(const std::string& d) {
    return d.rfind("float", 0) == 0 || d == "bfloat16" || d == "half" || d == "double";
}

// The distinct elements a tensor argument touches: a dimension of stride 0 (broadcast) once.
double distinctBytes(const OpTensorRef& r) {
    double n = 1;
    for (std::size_t i = 0; i < r.shape.size(); ++i)
        if (r.stride[i] != 0)
            n *= double(r.shape[i]);
        else if (r.shape[i] == 0)
            n = 0;
    return n * dtypeBytes(r.dtype);
}

double fullBytes(const OpTensorRef& r) {
    return double(r.numel()) * dtypeBytes(r.dtype);
}

bool contiguous(const OpTensorRef& r) {
    long long expect = 1;
    for (std::size_t i = r.shape.size(); i-- > 0;) {
        if (r.shape[i] == 1) continue;
        if (r.stride[i] != expect) return false;
        expect *= r.shape[i];
    }
    return true;
}

double argBytes(const std::vector<OpTensorArg>& args, std::size_t from = 0) {
    double b = 0;
    for (std::size_t i = from; i < args.size(); ++i)
        for (const OpTensorRef& r : args[i].items) b += distinctBytes(r);
    return b;
}

const OpTensorRef* tensor(const std::vector<OpTensorArg>& args, std::size_t i) {
    return i < args.size() && !args[i].items.empty() && !args[i].list ? &args[i].items.front() : nullptr;
}

std::string bare(const std::string& op) {
    return op.rfind("aten::", 0) == 0 ? op.substr(6) : op;
}

// In-place ops (a trailing '_') write their first argument; others their outputs.
double writtenBytes(const OpNode& n) {
    double w = 0;
    for (const OpTensorArg& a : n.out)
        for (const OpTensorRef& r : a.items) w += fullBytes(r);
    if (w == 0 && !n.in.empty() && bare(n.op).ends_with("_"))
        for (const OpTensorRef& r : n.in.front().items) w += fullBytes(r);
    return w;
}

double readBytes(const OpNode& n) {
    return argBytes(n.in);
}

const std::set<std::string>& noKernelOps() {
    static const std::set<std::string> s = {"empty",
                                            "empty_like",
                                            "empty_strided",
                                            "new_empty",
                                            "new_empty_strided",
                                            "resize_",
                                            "set_",
                                            "detach",
                                            "detach_",
                                            "alias",
                                            "lift_fresh",
                                            "_unsafe_view",
                                            "view",
                                            "reshape",
                                            "_reshape_alias",
                                            "as_strided",
                                            "t",
                                            "transpose",
                                            "permute",
                                            "expand",
                                            "unsqueeze",
                                            "squeeze",
                                            "slice",
                                            "select",
                                            "unbind",
                                            "split",
                                            "split_with_sizes",
                                            "chunk",
                                            "narrow",
                                            "diagonal",
                                            "view_as",
                                            "expand_as",
                                            "unfold",
                                            "_nested_tensor_from_mask_left_aligned",
                                            "record_stream",
                                            "resize_as_",
                                            "size",
                                            "stride",
                                            "sym_size"};
    return s;
}

bool isSdpa(const std::string& b) {
    return b.find("_scaled_dot_product_") == 0 || b.find("_flash_attention_") == 0 ||
           b.find("_efficient_attention_") == 0 || b.find("_cudnn_attention") == 0;
}

// The position of is_causal in each SDPA op's schema (native_functions.yaml).
int causalPosition(const std::string& b) {
    static const std::map<std::string, int> pos = {{"_scaled_dot_product_flash_attention", 4},
                                                   {"_scaled_dot_product_efficient_attention", 6},
                                                   {"_scaled_dot_product_cudnn_attention", 6},
                                                   {"_scaled_dot_product_flash_attention_backward", 11},
                                                   {"_scaled_dot_product_efficient_attention_backward", 11},
                                                   {"_scaled_dot_product_cudnn_attention_backward", 14},
                                                   {"_flash_attention_forward", 7},
                                                   {"_flash_attention_backward", 10},
                                                   {"_efficient_attention_forward", 8},
                                                   {"_efficient_attention_backward", 11}};
    const auto it = pos.find(b);
    return it == pos.end() ? -1 : it->second;
}

bool causalOf(const OpGraph& g, const OpNode& n) {
    const int p = causalPosition(bare(n.op));
    if (const auto it = n.args.find(p); p >= 0 && it != n.args.end() && it->second.kind == OpScalarArg::Kind::boolean)
        return it->second.number != 0;
    if (n.fwd_op >= 0 && std::size_t(n.fwd_op) < g.ops.size() && n.fwd_op != -1) {
        const OpNode& f = g.ops[std::size_t(n.fwd_op)];
        if (&f != &n) {
            const int q = causalPosition(bare(f.op));
            if (const auto it = f.args.find(q); q >= 0 && it != f.args.end()) return it->second.number != 0;
        }
    }
    return false;
}

// multi_tensor_apply's launches over `lists` tensor lists (MultiTensorApply.cuh): a launch when the tensors reach
// depth_to_max_tensors or the blocks (65536-element chunks) reach 320.
int multiTensorLaunches(const std::vector<long long>& numels, int lists) {
    constexpr std::array<int, 5> max_tensors = {110, 64, 48, 36, 30};
    constexpr long long chunk = 65536, max_blocks = 320;
    const int cap = max_tensors[std::size_t(std::clamp(lists, 1, 5) - 1)];
    int launches = 0, tensors = 0;
    long long blocks = 0;
    std::size_t last = numels.size();
    while (last > 0 && numels[last - 1] == 0) --last;
    for (std::size_t t = 0; t < last; ++t) {
        if (numels[t] == 0) continue;
        ++tensors;
        const long long chunks = (numels[t] + chunk - 1) / chunk;
        for (long long c = 0; c < chunks; ++c) {
            ++blocks;
            const bool tensor_done = c == chunks - 1;
            if ((tensors == cap && tensor_done) || blocks == max_blocks || (t + 1 == last && tensor_done)) {
                ++launches;
                blocks = 0;
                tensors = tensor_done ? 0 : 1;  // a tensor cut mid-way carries on into the next launch
            }
        }
    }
    return launches;
}

OpKernel mem(const std::string& name, double bytes, MemKind kind, DType dtype, KernelClass cls = KernelClass::memory) {
    OpKernel k;
    k.name = name;
    k.cls = cls;
    k.mem = kind;
    k.bytes = bytes;
    k.dtype = dtype;
    return k;
}

OpKernel gemmKernel(const std::string& name, long long m, long long n, long long k, const std::string& dtype) {
    OpKernel g;
    g.name = name;
    g.cls = KernelClass::gemm;
    g.shape = {long(m), long(n), long(k)};
    g.flops = 2.0 * double(m) * double(n) * double(k);
    g.bytes = (double(m) * double(k) + double(k) * double(n) + double(m) * double(n)) * dtypeBytes(dtype);
    g.dtype = computeDtype(dtype);
    return g;
}

long long prodLeading(const std::vector<long long>& s, std::size_t keep) {
    long long p = 1;
    for (std::size_t i = 0; i + keep < s.size(); ++i) p *= s[i];
    return p;
}

std::vector<OpKernel> gemmKernels(const OpNode& n, const std::string& b) {
    const auto in = [&](std::size_t i) { return tensor(n.in, i); };
    const std::string name = n.op;
    const OpTensorRef* a = nullptr;
    const OpTensorRef* w = nullptr;
    if (b == "addmm" || b == "baddbmm" || b == "addbmm")
        a = in(1), w = in(2);
    else
        a = in(0), w = in(1);
    if (!a || !w) return {};
    const std::string dt = a->dtype;
    if (b == "linear") {
        const long long k = a->shape.back(), nn = w->shape.front();
        return {gemmKernel(name, prodLeading(a->shape, 1), nn, k, dt)};
    }
    if (b == "convolution" || b == "_convolution" || b == "cudnn_convolution") {
        const OpTensorRef* o = tensor(n.out, 0);
        if (!o || o->shape.size() < 3 || w->shape.size() < 3) return {};
        long long spatial = 1, kernel = 1;
        for (std::size_t i = 2; i < o->shape.size(); ++i) spatial *= o->shape[i];
        for (std::size_t i = 1; i < w->shape.size(); ++i) kernel *= w->shape[i];
        return {gemmKernel(name, o->shape[0] * spatial, w->shape[0], kernel, dt)};
    }
    if (a->shape.size() == 3 && w->shape.size() == 3)  // bmm, baddbmm: the batch folded into m
        return {gemmKernel(name, a->shape[0] * a->shape[1], w->shape[2], a->shape[2], dt)};
    if (a->shape.size() >= 2 && w->shape.size() == 2)
        return {gemmKernel(name, prodLeading(a->shape, 1), w->shape[1], a->shape.back(), dt)};
    return {};
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding,
// groups, output_mask): the input gradient (m = N·spatial_in, n = C_in, k = C_out·kernel), the weight gradient
// (m = C_out, n = C_in·kernel / groups, k = N·spatial_out), the bias gradient a reduction of grad_output.
std::vector<OpKernel> convBackward(const OpNode& n) {
    const OpTensorRef *go = tensor(n.in, 0), *x = tensor(n.in, 1), *w = tensor(n.in, 2);
    if (!go || !x || !w || go->shape.size() < 3) return {};
    std::vector<double> mask = {1, 1, 1};
    if (const auto it = n.args.find(10); it != n.args.end() && it->second.list.size() == 3) mask = it->second.list;
    long long sin = 1, sout = 1, kernel = 1;
    for (std::size_t i = 2; i < x->shape.size(); ++i) sin *= x->shape[i];
    for (std::size_t i = 2; i < go->shape.size(); ++i) sout *= go->shape[i];
    for (std::size_t i = 1; i < w->shape.size(); ++i) kernel *= w->shape[i];
    std::vector<OpKernel> out;
    const std::string dt = go->dtype;
    const long long window = kernel / std::max<long long>(1, w->shape[1]);  // the kernel's spatial size
    if (mask[0] != 0)
        out.push_back(gemmKernel(n.op + " (input grad)", x->shape[0] * sin, x->shape[1], w->shape[0] * window, dt));
    if (mask[1] != 0) out.push_back(gemmKernel(n.op + " (weight grad)", w->shape[0], kernel, go->shape[0] * sout, dt));
    if (mask[2] != 0)
        out.push_back(mem(n.op + " (bias grad)", distinctBytes(*go), MemKind::bias_grad, computeDtype(dt)));
    return out;
}

std::vector<OpKernel> attentionKernels(const OpGraph& g, const OpNode& n, const std::string& b) {
    const bool backward = b.ends_with("_backward");
    const OpTensorRef* q = tensor(n.in, backward ? 1 : 0);
    const OpTensorRef* k = tensor(n.in, backward ? 2 : 1);
    if (!q || !k || q->shape.size() != 4 || k->shape.size() != 4) return {};
    // _scaled_dot_product_*: (B, H, S, D); _flash/_efficient_attention_*: (B, S, H, D).
    const bool bshd = b.find("_scaled_dot_product_") != 0;
    const long long B = q->shape[0], H = bshd ? q->shape[2] : q->shape[1], Sq = bshd ? q->shape[1] : q->shape[2],
                    Sk = bshd ? k->shape[1] : k->shape[2], D = q->shape[3];
    const bool causal = causalOf(g, n);
    const double fwd = (causal ? 2.0 : 4.0) * double(B) * double(H) * double(Sq) * double(Sk) * double(D);
    const double e = dtypeBytes(q->dtype);
    OpKernel a;
    a.name = n.op;
    a.cls = KernelClass::attention;
    a.flops = backward ? 2.5 * fwd : fwd;
    a.shape = {long(B * H), long(Sq), long(D)};
    a.bytes = readBytes(n) + writtenBytes(n);
    a.dtype = computeDtype(q->dtype);
    const double rows = double(B) * double(H) * double(Sq);
    std::vector<OpKernel> out;
    const bool cudnn = b.find("cudnn") != std::string::npos;
    const bool flash = b.find("flash") != std::string::npos;
    if (cudnn) out.push_back(mem(n.op + " (stats memset)", 4 * rows, MemKind::elementwise, a.dtype));
    if (backward)
        out.push_back(
            mem(n.op + " (dO*O preprocess)", 2 * rows * double(D) * e + 4 * rows, MemKind::elementwise, a.dtype));
    out.push_back(a);
    if (backward && (flash || cudnn))
        out.push_back(
            mem(n.op + " (dQ accumulator convert)", rows * double(D) * (4 + e), MemKind::elementwise, a.dtype));
    return out;
}

// The dtype an op computes in: its first floating input's (else its first output's).
std::string opDtype(const OpNode& n) {
    for (const auto* side : {&n.in, &n.out})
        for (const OpTensorArg& a : *side)
            for (const OpTensorRef& r : a.items)
                if (isFloat(r.dtype)) return r.dtype;
    return "float32";
}

std::vector<OpKernel> foreachKernels(const OpNode& n, const std::string& b, Phase phase) {
    std::vector<long long> numels;
    int lists = 0;
    std::string dt;
    for (const OpTensorArg& a : n.in)
        if (a.list) {
            ++lists;
            if (numels.empty())
                for (const OpTensorRef& r : a.items) numels.push_back(r.numel()), dt = dt.empty() ? r.dtype : dt;
        }
    const bool inplace = b.ends_with("_");
    if (!inplace)
        for (const OpTensorArg& a : n.out) lists += a.list ? 1 : 0;
    if (numels.empty()) return {};
    const bool fused = b.find("_fused_") == 0;
    const double bytes = readBytes(n) + writtenBytes(n) +
                         (fused ? 2.0 * argBytes({n.in.begin() + std::min<std::size_t>(2, n.in.size()),
                                                  n.in.begin() + std::min<std::size_t>(4, n.in.size())})
                                : 0.0);
    const double e = dtypeBytes(dt);
    const MemKind kind = fused ? (e == 2 ? MemKind::optimizer_bf16 : MemKind::optimizer)
                               : (e == 2 ? MemKind::optimizer_foreach_bf16 : MemKind::optimizer_foreach);
    const KernelClass cls = phase == Phase::optimizer ? KernelClass::optimizer : KernelClass::memory;
    const int launches = std::max(1, multiTensorLaunches(numels, lists));
    std::vector<OpKernel> out;
    for (int i = 0; i < launches; ++i) {
        out.push_back(mem(n.op, bytes / launches, kind, computeDtype(dt), cls));
        out.back().split = launches;
    }
    if (b == "_foreach_norm")
        out.push_back(
            mem(n.op + " (cleanup)", 4.0 * double(numels.size()) * 2, MemKind::elementwise, computeDtype(dt), cls));
    return out;
}

OpKernel normKernel(const std::string& name, const OpTensorRef& x, MemKind kind, double bytes) {
    OpKernel k = mem(name, bytes, kind, computeDtype(x.dtype));
    const long long hidden = x.shape.empty() ? 1 : x.shape.back();
    k.shape = {long(x.numel() / std::max<long long>(1, hidden)), long(hidden), long(dtypeBytes(x.dtype))};
    return k;
}

std::vector<OpKernel> normKernels(const OpNode& n, const std::string& b) {
    const bool rms = b.find("rms") != std::string::npos;
    const bool backward = b.ends_with("_backward");
    const OpTensorRef* x = tensor(n.in, backward ? 1 : 0);
    if (!x) return {};
    const double io = readBytes(n) + writtenBytes(n);
    if (!backward) return {normKernel(n.op, *x, rms ? MemKind::rms_forward : MemKind::norm_forward, io)};
    std::vector<OpKernel> out = {
        normKernel(n.op + " (input grad)", *x, rms ? MemKind::rms_backward : MemKind::norm_backward, io)};
    std::size_t outs = 0;
    for (const OpTensorArg& a : n.out) outs += a.items.size();
    if (outs > 1)
        out.push_back(
            normKernel(n.op + " (weight grad)", *x, rms ? MemKind::rms_weight_grad : MemKind::norm_weight_grad, io));
    return out;
}

}  // namespace

const char* opFamilyName(OpFamily f) {
    constexpr const char* names[] = {
        "view",      "gemm",  "attention",          "elementwise", "cast", "copy", "cat_split", "pad_scatter",
        "reduction", "index", "embedding_backward", "softmax",     "loss", "norm", "dropout",   "foreach",
        "sync",      "other"};
    return names[static_cast<int>(f)];
}

double dtypeBytes(const std::string& dtype) {
    const auto it = dtypeSizes().find(dtype);
    return it == dtypeSizes().end() ? 0.0 : it->second;
}

namespace {

// The aten ops (their bare names) of each family that is a plain list of names; opFamily applies them in its order.
// clang-format off
const std::set<std::string>& gemmOps() {
    static const std::set<std::string> names = {
        "mm", "addmm", "bmm", "baddbmm", "addbmm", "linear", "matmul", "convolution", "_convolution",
        "cudnn_convolution", "convolution_backward",
    };
    return names;
}

const std::set<std::string>& indexOps() {
    static const std::set<std::string> names = {
        "embedding", "index", "index_select", "gather", "_unsafe_index", "index_put_", "index_put",
        "_index_put_impl_", "index_add_", "index_add", "scatter", "scatter_", "scatter_add", "scatter_add_",
        "scatter_reduce", "masked_select", "take",
    };
    return names;
}

const std::set<std::string>& catSplitOps() {
    static const std::set<std::string> names = {
        "cat", "stack", "split_with_sizes_copy", "split_copy", "_chunk_cat", "unbind_copy", "chunk_cat",
    };
    return names;
}

const std::set<std::string>& padScatterOps() {
    static const std::set<std::string> names = {
        "slice_backward", "select_backward", "constant_pad_nd", "index_select_backward", "as_strided_backward",
        "diagonal_backward", "slice_scatter", "select_scatter",
    };
    return names;
}

const std::set<std::string>& reductionOps() {
    static const std::set<std::string> names = {
        "sum", "mean", "amax", "amin", "max", "min", "norm", "linalg_vector_norm", "var", "std", "var_mean", "argmax",
        "argmin", "any", "all", "prod", "logsumexp", "cumsum", "_log_softmax_backward",
    };
    return names;
}

const std::set<std::string>& elementwiseOps() {
    static const std::set<std::string> names = {
        "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "neg", "exp", "log", "pow", "rsqrt", "sqrt",
        "silu", "silu_", "silu_backward", "gelu", "gelu_backward", "tanh", "tanh_backward", "sigmoid",
        "sigmoid_backward", "relu", "relu_", "threshold_backward", "where", "masked_fill", "masked_fill_", "clamp",
        "clamp_", "clamp_min", "clamp_max", "fill_", "zero_", "zeros", "ones", "full", "zeros_like", "ones_like",
        "full_like", "new_zeros", "new_ones", "new_full", "arange", "scalar_tensor", "reciprocal", "abs", "sign",
        "sin", "cos", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "bitwise_and",
        "bitwise_or", "bitwise_not", "addcmul", "addcmul_", "addcdiv", "addcdiv_", "lerp", "lerp_", "triu", "tril",
        "erf", "exp_", "mul_", "rsub", "hardtanh", "hardtanh_backward", "leaky_relu", "maximum", "minimum", "floor",
        "ceil", "round", "remainder", "fmod", "isinf", "isnan", "nan_to_num", "pow_", "sqrt_", "div_", "rand",
        "rand_like", "randn", "bernoulli_", "uniform_", "normal_", "square", "erfinv", "log1p", "expm1", "softplus",
        "softplus_backward", "elu", "mish", "mish_backward", "hardswish", "hardswish_backward", "hardsigmoid", "lerp",
        "_to_dtype",
    };
    return names;
}
// clang-format on

}  // namespace

OpFamily opFamily(const OpNode& n) {
    const std::string b = bare(n.op);
    if (n.view || noKernelOps().count(b)) return OpFamily::view;
    if (gemmOps().count(b)) return OpFamily::gemm;
    if (isSdpa(b)) return OpFamily::attention;
    if (b.find("_foreach_") == 0 || b.find("_fused_adam") == 0 || b.find("_fused_sgd") == 0 ||
        b == "_amp_foreach_non_finite_check_and_unscale_")
        return OpFamily::foreach;
    if (b == "_local_scalar_dense" || b == "item") return OpFamily::sync;
    if (b == "native_layer_norm" || b == "native_layer_norm_backward" || b == "_fused_rms_norm" ||
        b == "_fused_rms_norm_backward" || b == "native_group_norm" || b == "native_group_norm_backward")
        return OpFamily::norm;
    if (b == "native_dropout" || b == "native_dropout_backward") return OpFamily::dropout;
    if (b == "_softmax" || b == "_log_softmax" || b == "_softmax_backward_data" || b == "_log_softmax_backward_data")
        return OpFamily::softmax;
    if (b.find("nll_loss") == 0 || b.find("cross_entropy") == 0) return OpFamily::loss;
    if (b == "embedding_dense_backward") return OpFamily::embedding_backward;
    if (indexOps().count(b)) return OpFamily::index;
    if (catSplitOps().count(b)) return OpFamily::cat_split;
    if (padScatterOps().count(b)) return OpFamily::pad_scatter;
    if (reductionOps().count(b)) return OpFamily::reduction;
    if (b == "_to_copy" || b == "copy_" || b == "clone" || b == "contiguous" || b == "_copy_from" || b == "to" ||
        b == "lift_fresh_copy") {
        const OpTensorRef* i = tensor(n.in, b == "copy_" ? 1 : 0);
        const OpTensorRef* o = b == "copy_" ? tensor(n.in, 0) : tensor(n.out, 0);
        if (i && o && i->dtype != o->dtype) return OpFamily::cast;
        return OpFamily::copy;
    }
    if (elementwiseOps().count(b)) return OpFamily::elementwise;
    return OpFamily::other;
}

std::vector<OpKernel> opKernels(const OpGraph& g, const OpNode& n) {
    const OpFamily f = opFamily(n);
    // An op on host tensors only (the optimizer's step counts, their .item()) launches nothing on the GPU.
    bool any = false, gpu = false;
    for (const auto* side : {&n.in, &n.out})
        for (const OpTensorArg& a : *side)
            for (const OpTensorRef& r : a.items) {
                any = true;
                gpu = gpu || r.t < 0 || std::size_t(r.t) >= g.tensors.size() || !g.tensors[std::size_t(r.t)].cpu;
            }
    if (any && !gpu) return {};
    const std::string b = bare(n.op);
    const std::string dt = opDtype(n);
    const DType d = computeDtype(dt);
    const double rd = readBytes(n), wr = writtenBytes(n);
    const bool fp32 = dtypeBytes(dt) == 4;
    switch (f) {
        case OpFamily::view:
            return {};
        case OpFamily::gemm:
            return b == "convolution_backward" ? convBackward(n) : gemmKernels(n, b);
        case OpFamily::attention:
            return attentionKernels(g, n, b);
        case OpFamily::foreach:
            return foreachKernels(n, b, n.phase);
        case OpFamily::sync:
            return {mem(n.op + " (copy to host)", 8, MemKind::elementwise, d, KernelClass::copy)};
        case OpFamily::norm:
            return normKernels(n, b);
        case OpFamily::dropout:
            return {mem(n.op, rd + wr, b.ends_with("_backward") ? MemKind::dropout_backward : MemKind::dropout, d)};
        case OpFamily::softmax: {
            const bool back = b.ends_with("_backward_data");
            const MemKind k = back ? (fp32 ? MemKind::log_softmax_backward_fp32 : MemKind::log_softmax_backward)
                                   : (fp32 ? MemKind::log_softmax_forward_fp32 : MemKind::log_softmax_forward);
            return {mem(n.op, rd + wr, k, d)};
        }
        case OpFamily::loss: {
            const OpTensorRef* x = tensor(n.in, b.find("backward") != std::string::npos ? 1 : 0);
            const OpTensorRef* t = tensor(n.in, b.find("backward") != std::string::npos ? 2 : 1);
            const double picked = t ? double(t->numel()) * ((x ? dtypeBytes(x->dtype) : 4) + dtypeBytes(t->dtype)) : 8;
            if (b.find("backward") == std::string::npos) return {mem(n.op, picked + wr, MemKind::elementwise, d)};
            return {mem(n.op + " (zero the gradient)", wr, MemKind::elementwise, d),
                    mem(n.op + " (targets' entries)", picked, MemKind::elementwise, d)};
        }
        case OpFamily::embedding_backward: {
            const OpTensorRef* go = tensor(n.in, 0);
            const OpTensorRef* idx = tensor(n.in, 1);
            const double ib = idx ? fullBytes(*idx) : 0;
            return {mem(n.op + " (zero the table)", wr, MemKind::elementwise, d),
                    mem(n.op + " (sort the indices)", 4 * 2 * 2 * ib, MemKind::elementwise, d),
                    mem(n.op + " (reduce the rows)", (go ? distinctBytes(*go) : 0) * 2 + ib, MemKind::elementwise, d)};
        }
        case OpFamily::index: {
            const bool scatter = b.find("scatter") != std::string::npos || b.find("index_put") != std::string::npos ||
                                 b.find("index_add") != std::string::npos;
            double idx = 0, moved = 0;
            for (const OpTensorArg& a : n.in)
                for (const OpTensorRef& r : a.items)
                    if (!isFloat(r.dtype) && r.dtype != "bool") idx += distinctBytes(r);
            if (scatter) {
                const OpTensorRef* v = tensor(n.in, n.in.size() - 1);
                moved = v ? distinctBytes(*v) : 0;
            } else {
                moved = wr;
            }
            return {mem(n.op, 2 * moved + idx, MemKind::elementwise, d)};
        }
        case OpFamily::cast: {
            const OpTensorRef* i = tensor(n.in, b == "copy_" ? 1 : 0);
            const OpTensorRef* o = b == "copy_" ? tensor(n.in, 0) : tensor(n.out, 0);
            const bool up = i && o && dtypeBytes(o->dtype) > dtypeBytes(i->dtype);
            const double bytes = (i ? distinctBytes(*i) : 0) + (o ? fullBytes(*o) : wr);
            return {mem(n.op, bytes, up ? MemKind::cast_up : MemKind::cast_down, d)};
        }
        case OpFamily::copy: {
            const OpTensorRef* i = tensor(n.in, b == "copy_" ? 1 : 0);
            const OpTensorRef* o = b == "copy_" ? tensor(n.in, 0) : tensor(n.out, 0);
            const double bytes = (i ? distinctBytes(*i) : 0) + (o ? fullBytes(*o) : wr);
            if (i && o && contiguous(*i) && contiguous(*o) && distinctBytes(*i) == fullBytes(*i))
                return {mem(n.op, bytes, MemKind::elementwise, d, KernelClass::copy)};
            return {mem(n.op, bytes, MemKind::elementwise, d)};
        }
        case OpFamily::reduction: {
            // A sum over every dimension but the last into a vector (a Linear's bias gradient): bias_grad's rate.
            const OpTensorRef *x = tensor(n.in, 0), *o = tensor(n.out, 0);
            const bool bias =
                b == "sum" && x && o && x->shape.size() >= 2 && o->shape.size() == 1 && o->shape[0] == x->shape.back();
            return {mem(n.op, rd + wr, bias ? MemKind::bias_grad : MemKind::elementwise, d)};
        }
        case OpFamily::elementwise: {
            MemKind k = MemKind::elementwise;
            if (b == "gelu") k = MemKind::gelu_forward;
            const OpTensorRef *x = tensor(n.in, 0), *y = tensor(n.in, 1);
            if ((b == "add" || b == "add_") && x && y && x->dtype != y->dtype) k = MemKind::residual_add;
            return {mem(n.op, rd + wr, k, d)};
        }
        case OpFamily::pad_scatter:
            return {mem(n.op + " (fill)", wr, MemKind::elementwise, d),
                    mem(n.op + " (copy into the slice)", 2 * rd, MemKind::elementwise, d)};
        case OpFamily::cat_split:
        case OpFamily::other:
            return {mem(n.op, rd + wr, MemKind::elementwise, d)};
    }
    return {};
}

Op priceKernel(const CostModel& cost, const OpKernel& k, Phase phase, bool& in_domain) {
    Op op;
    op.kind = OpKind::kernel;
    op.cls = k.cls;
    op.mem = k.mem;
    op.phase = phase;
    op.gemm = k.shape;
    op.flops = k.flops;
    op.bytes = k.bytes * k.split;
    in_domain = cost.price(op, k.dtype);
    op.bytes = k.bytes;
    op.work_s /= k.split;
    return op;
}

std::array<OpFamilyTotals, kOpFamilies> opFamilyTotals(const OpGraph& g, const CostModel& cost) {
    std::array<OpFamilyTotals, kOpFamilies> out{};
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        const OpNode& n = g.ops[i];
        OpFamilyTotals& t = out[std::size_t(opFamily(n))];
        ++t.ops;
        const std::vector<OpKernel> ks = opKernels(g, n);
        double seconds = 0;
        for (const OpKernel& k : ks) {
            bool inside = true;
            seconds += priceKernel(cost, k, n.phase, inside).work_s;
            t.bytes += k.bytes;
            t.flops += k.flops;
        }
        const bool timed = !g.times.empty() && g.times[i].measured;
        t.kernels += timed ? std::size_t(g.times[i].kernels) : ks.size();
        t.seconds += timed ? g.times[i].device_us * 1e-6 : seconds;
    }
    return out;
}

}  // namespace stepsim
