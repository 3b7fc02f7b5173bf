// model.implementation: hf. The kernels Hugging Face transformers' modeling code launches where they differ from this
// project's script, derived from op-graph captures of that code (tests/data/ops/hf-llama-4l, hf-qwen2-4l, hf-gpt2-4l,
// fp32 parameters under bf16 autocast; results/validation/ops-round1/captures/b-llama3.2-1b-bf16, bf16 parameters:
// transformers 5, PyTorch 2.11, use_cache off; docs/variants.md has the census).
// Bytes are each op's tensors as the capture writes them (inputs and outputs, shape × dtype), per element of the
// tensor named: N = Ts·h (the residual stream), e (a q or k tensor), T·f (the MLP's intermediate).
#include "sim/workload/TransformerStep.hpp"

#include <string>
#include <string_view>

namespace stepsim {

namespace {
// The op just appended belongs to a chain torch.compile fuses into one kernel: `bytes` of the chain's external inputs
// and outputs are its (Op::fused_bytes; 0 for an intermediate). Under compile each chain moves what a fused op of its
// own would: its input once in the dtype it arrives in, its output once in the dtype its consumer reads, the values
// its backward needs (an RMSNorm's rstd) and small tables; Inductor's partitioner recomputes the rest in backward.
void fuse(ProgramBuilder& b, double bytes) { b.last().fused_bytes = float(bytes); }
}  // namespace

// LlamaRMSNorm (and Qwen2's, Mistral's, Gemma's, Phi-3's): x.to(fp32); x · rsqrt(mean(x²) + eps); weight · x.to(dtype):
// pow, mean, add, rsqrt, mul in fp32 (8N, 4N, tiny, tiny, 8N), the weight's mul in the stream's dtype (2re·N); where
// the stream is not fp32 (bf16 parameters: hf-llama3.2-1b-bf16's capture) a cast to fp32 first and one back before the
// weight's mul.
void TransformerStep::hfRmsNorm(const std::string& name) {
    const double N = double(t_.Ts) * double(t_.h), T = double(t_.Ts), h = double(t_.h), re = c_.re();
    // fused: x read (re·N), rstd written (4T), the weight read and the output written (re·h + re·N)
    if (re != 4) b_.mem(name + " to fp32", (re + 4) * N, MemKind::cast_up), fuse(b_, re * N);
    b_.mem(name + " pow", 8 * N), fuse(b_, re != 4 ? 0.0 : 4 * N);
    b_.mem(name + " mean", 4 * N + 4 * T), fuse(b_, 0);
    b_.mem(name + " add eps", 8 * T), fuse(b_, 0);
    b_.mem(name + " rsqrt", 8 * T), fuse(b_, 4 * T);
    b_.mem(name + " mul rsqrt", 8 * N + 4 * T), fuse(b_, 0);
    if (re != 4) b_.mem(name + " to dtype", (4 + re) * N, MemKind::cast_down), fuse(b_, 0);
    b_.mem(name + " mul weight", 2 * re * N + re * h), fuse(b_, re * N + re * h);
}

// Its backward as autograd runs it: the weight's gradient (grad · x̂ in the stream's dtype, summed over the tokens in
// two kernels), then the input's through the multiply, the rsqrt, the mean and the pow in fp32 (14 ops, 15 kernels;
// the add that joins the residual gradient is the step's own residual grad add), the casts undone where the stream is
// not fp32.
void TransformerStep::hfRmsNormBackward(const std::string& name, const std::string& param) {
    const double N = double(t_.Ts) * double(t_.h), T = double(t_.Ts), h = double(t_.h), re = c_.re();
    // fused: the gradient read (re·N), x read (re·N) with rstd, dx written (re·N), the weight's gradient (re·h, two
    // passes)
    if (input()) b_.mem(name + " backward mul weight", 2 * re * N + re * h), fuse(b_, re * N + re * h);
    if (weight()) {
        b_.mem(name + " weight grad mul", 3 * re * N), fuse(b_, (input() ? 1.0 : 2.0) * re * N + 4 * T);
        b_.mem(name + " weight grad sum", re * N + re * h), fuse(b_, re * h);
        b_.mem(name + " weight grad sum (second pass)", 2 * re * h), fuse(b_, 2 * re * h);
        gradReady(paramIndex(param + ".weight"));
    }
    if (!input()) return;
    if (re != 4) b_.mem(name + " to dtype backward", (re + 4) * N, MemKind::cast_up), fuse(b_, 0);
    for (const auto& [what, bytes] : {std::pair{"mul x", 12 * N}, std::pair{"mul rsqrt", 8 * N + 4 * T},
                                      std::pair{"sum", 4 * N + 4 * T}, std::pair{"add paths", 12 * N},
                                      std::pair{"rsqrt pow", 8 * T}, std::pair{"rsqrt mul", 8 * T},
                                      std::pair{"rsqrt mul 2", 12 * T}, std::pair{"mean div", 8 * N},
                                      std::pair{"pow", 8 * N}, std::pair{"pow mul", 8 * N},
                                      std::pair{"mul", 12 * N}}) {
        b_.mem(name + " backward " + what, bytes);
        const bool last = std::string_view(what) == "mul";
        const bool first = std::string_view(what) == "mul x";
        fuse(b_, last ? re * N : first && !weight() ? re * N + 4 * T : 0.0);
    }
    if (re != 4) b_.mem(name + " to fp32 backward", (4 + re) * N, MemKind::cast_down), fuse(b_, 0);
}

// apply_rotary_pos_emb: q·cos + rotate_half(q)·sin, k likewise; the cos and sin tables (1, 1, s, d) come from the
// model's rotary embedding once a forward, in the stream's dtype (fp32 under autocast: the products are fp32). Per
// tensor of e elements: mul (ce·e + rd·sd + ro·e), neg of a half (ce·e), cat (2ce·e), mul, add (3ro·e); ro the
// products' dtype. Then, with fewer KV heads, repeat_kv's copies of k and v to every query head (SDPA gets a mask, so
// no enable_gqa), and autocast's casts of q and k to bf16 for SDPA when the products are fp32.
// Fused (Op::fused_bytes), per tensor: x read (ce·e) with the tables (2ro·sd), the result written once in SDPA's
// dtype (ce), k's at every query head where repeat_kv copies it; v's copy is no part of the chain.
void TransformerStep::hfRopeForward(int l) {
    const double sd = double(t_.s) * double(t_.d), ce = c_.ce, ro = c_.autocast ? 4.0 : ce;
    const double full = double(t_.T) * double(t_.heads * t_.d);
    const bool repeat = t_.kv < t_.heads, cast = ro != ce;
    for (const auto& [x, heads] : {std::pair{"q", t_.heads}, std::pair{"k", t_.kv}}) {
        const double e = double(t_.T) * double(heads * t_.d);
        const std::string n = std::string("rope ") + x;
        const bool written_here = !cast && !(heads == t_.kv && repeat);  // the add is the chain's last op
        b_.mem(L(l, (n + " mul cos").c_str()), ce * e + ro * sd + ro * e, MemKind::rope), fuse(b_, ce * e + ro * sd);
        b_.mem(L(l, (n + " neg").c_str()), ce * e, MemKind::rope), fuse(b_, 0);
        b_.mem(L(l, (n + " cat").c_str()), 2 * ce * e, MemKind::rope), fuse(b_, 0);
        b_.mem(L(l, (n + " mul sin").c_str()), ce * e + ro * sd + ro * e, MemKind::rope), fuse(b_, ro * sd);
        b_.mem(L(l, (n + " add").c_str()), 3 * ro * e, MemKind::rope), fuse(b_, written_here ? ce * e : 0.0);
    }
    if (repeat) {
        b_.mem(L(l, "repeat_kv k"), 2 * ro * full), fuse(b_, cast ? 0.0 : ce * full);
        b_.mem(L(l, "repeat_kv v"), 2 * ce * full);
    }
    if (cast)
        for (const char* x : {"sdpa q cast", "sdpa k cast"})
            b_.mem(L(l, x), (ro + ce) * full, MemKind::cast_down), fuse(b_, ce * full);
}

// Its backward, k's then q's: SDPA's casts undone, repeat_kv's sums (k's in the products' dtype), then per tensor the
// sin path (mul, cast, neg, two slice_backward: a fill and a copy each, add), the cos path (mul, cast) and the sum.
// Fused (Op::fused_bytes), per tensor: SDPA's gradient read once in its dtype (ce; k's at every query head), the
// tables (2ro·sd), the gradient written in the projection's dtype (ce·e).
void TransformerStep::hfRopeBackward(int l) {
    const double sd = double(t_.s) * double(t_.d), ce = c_.ce, ro = c_.autocast ? 4.0 : ce;
    const double full = double(t_.T) * double(t_.heads * t_.d);
    const bool repeat = t_.kv < t_.heads, cast = ro != ce;
    if (cast)
        for (const char* x : {"sdpa q cast backward", "sdpa k cast backward"})
            b_.mem(L(l, x), (ce + ro) * full, MemKind::cast_up), fuse(b_, ce * full);
    if (repeat) {
        // the v reduction is the step's "attn v grad head reduce"; k's runs in the products' dtype
        b_.mem(L(l, "attn k grad head reduce"), ro * double(t_.T) * double((t_.heads + t_.kv) * t_.d));
        fuse(b_, cast ? 0.0 : ce * full);
    }
    for (const auto& [x, heads] : {std::pair{"k", t_.kv}, std::pair{"q", t_.heads}}) {
        const double e = double(t_.T) * double(heads * t_.d);
        const std::string n = std::string("rope ") + x;
        auto k = [&](const char* what, double bytes, double fused, MemKind kind = MemKind::rope) {
            b_.mem(L(l, (n + " " + what).c_str()), bytes, kind);
            fuse(b_, fused);
        };
        const bool read_here = !cast && !(heads == t_.kv && repeat);  // SDPA's gradient read by the chain's first op
        k("mul sin backward", 2 * ro * e + ro * sd, ro * sd + (read_here ? ce * e : 0.0));
        if (cast) k("sin path cast", (ro + ce) * e, 0, MemKind::cast_down);
        k("neg backward", ce * e, 0);
        for (const char* s : {"slice backward fill 1", "slice backward copy 1", "slice backward fill 2",
                              "slice backward copy 2"})
            k(s, 0.75 * ce * e, 0);
        k("halves add", 3 * ce * e, 0);
        k("mul cos backward", 2 * ro * e + ro * sd, ro * sd);
        if (cast) k("cos path cast", (ro + ce) * e, 0, MemKind::cast_down);
        k("grad add", 3 * ce * e, ce * e);
    }
}

// The causal mask transformers builds once a forward without a padding mask and use_cache off (the packed-sequence
// check on the position ids, then the (B, 1, s, s) boolean mask), and per layer SDPA's conversion of it to the
// compute dtype (two scalar tensors and a where over B·s² elements).
void TransformerStep::hfMaskForward() {
    const double B = double(t_.b), s = double(t_.s);
    for (const char* k : {"mask arange", "mask add", "mask sub", "mask cat", "mask sub 2", "mask ne", "mask cumsum",
                          "mask cumsum 2", "mask arange b", "mask arange 1", "mask arange q", "mask add q",
                          "mask arange kv", "mask add kv", "mask new_ones"})
        b_.mem(k, 8 * B * s), fuse(b_, 0);
    b_.mem("mask le", s * s), fuse(b_, 0);
    b_.mem("mask and", 2 * s * s), fuse(b_, 0);
    for (const char* k : {"mask index q", "mask index q 2", "mask index q 3", "mask index kv", "mask index kv 2",
                          "mask index kv 3"})
        b_.mem(k, 8 * B * s), fuse(b_, 0);
    b_.mem("mask eq", 8 * B * s + B * s * s), fuse(b_, 0);
    b_.mem("mask and 2", 2 * B * s * s), fuse(b_, B * s * s);  // fused: the (B, 1, s, s) mask written once
}

void TransformerStep::hfMaskLayer(int l) {
    for (const char* k : {"attn mask scalar", "attn mask scalar 2"}) b_.mem(L(l, k), c_.ce);
    const double Bss = double(t_.b) * double(t_.s) * double(t_.s);
    b_.mem(L(l, "attn mask where"), (1 + c_.ce) * Bss);
}

// LlamaRotaryEmbedding once a forward: inv_freq · positions (a cast, a bmm), cat, cos, sin, each times the
// attention scaling.
void TransformerStep::hfRotaryTables() {
    const double sd = double(t_.s) * double(t_.d);
    b_.mem("rotary positions to fp32", 12 * double(t_.s)), fuse(b_, 0);
    b_.mem("rotary freqs bmm", 4 * sd), fuse(b_, 0);
    for (const char* k : {"rotary cat", "rotary cos", "rotary cos scale", "rotary sin", "rotary sin scale"}) {
        b_.mem(k, 8 * sd);
        fuse(b_, std::string_view(k).ends_with("scale") ? 4 * sd : 0.0);  // fused: the two tables written
    }
}

// NewGELUActivation (gelu_new): 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))) as eager ops; pow runs in fp32 under
// autocast, so from it on the ops are fp32 and so is the output (the next Linear's input is cast back). Bytes per
// element of T·f: mul 4, to fp32 6, pow 8, mul 8, add 10, mul 8, tanh 8, add 8, mul 10.
// Fused (Op::fused_bytes): the fc output read and the projection's input written, in the compute dtype (4 bytes per
// element of T·f in bf16, against 76 eager).
void TransformerStep::hfGeluNewForward(int l) {
    const double Tf = double(t_.T) * double(t_.f), ce = c_.ce, a = c_.autocast ? 4.0 : ce;
    b_.mem(L(l, "gelu_new half"), 2 * ce * Tf), fuse(b_, ce * Tf);
    if (c_.autocast) b_.mem(L(l, "gelu_new to fp32"), (ce + 4) * Tf, MemKind::cast_up), fuse(b_, 0);
    for (const auto& [what, bytes] : {std::pair{"pow", 2 * a}, std::pair{"mul", 2 * a}, std::pair{"add", ce + 2 * a},
                                      std::pair{"mul 2", 2 * a}, std::pair{"tanh", 2 * a}, std::pair{"add 2", 2 * a}})
        b_.mem(L(l, (std::string("gelu_new ") + what).c_str()), bytes * Tf), fuse(b_, 0);
    b_.mem(L(l, "gelu_new mul 3"), (ce + 2 * a) * Tf), fuse(b_, c_.autocast ? 0.0 : ce * Tf);
    if (c_.autocast) b_.mem(L(l, "mlp.proj input cast"), (4 + ce) * Tf, MemKind::cast_down), fuse(b_, ce * Tf);
}

// Its backward (14 kernels) after the projection's input cast is undone. Bytes per element of T·f: mul 10, mul 12,
// cast 6, tanh_backward 12, mul 8, cast 6, mul 8, pow 8, mul 8, mul 12, cast 6, add 6, mul 4, add 6.
// Fused (Op::fused_bytes): the gradient and the saved fc output read, the fc's output gradient written, in the compute
// dtype (6 bytes per element of T·f in bf16).
void TransformerStep::hfGeluNewBackward(int l) {
    if (!input()) return;
    const double Tf = double(t_.T) * double(t_.f), ce = c_.ce, a = c_.autocast ? 4.0 : ce;
    const double c = c_.autocast ? (4 + ce) : 0.0;  // the casts back to bf16 (none without autocast)
    auto k = [&](const char* what, double bytes, double fused, MemKind kind = MemKind::elementwise) {
        b_.mem(L(l, what), bytes * Tf, kind);
        fuse(b_, fused * Tf);
    };
    if (c_.autocast) k("mlp.proj input cast backward", ce + 4, ce, MemKind::cast_up);
    k("gelu_new backward mul", ce + 2 * a, c_.autocast ? 0.0 : ce);
    k("gelu_new backward mul 2", 3 * a, ce);
    if (c > 0) k("gelu_new backward cast", c, 0, MemKind::cast_down);
    k("gelu_new tanh_backward", 3 * a, 0);
    k("gelu_new backward mul 3", 2 * a, 0);
    if (c > 0) k("gelu_new backward cast 2", c, 0, MemKind::cast_down);
    for (const char* what : {"gelu_new backward mul 4", "gelu_new backward pow", "gelu_new backward mul 5"})
        k(what, 2 * a, 0);
    k("gelu_new backward mul 6", 3 * a, 0);
    if (c > 0) k("gelu_new backward cast 3", c, 0, MemKind::cast_down);
    k("gelu_new backward add", 3 * ce, 0);
    k("gelu_new backward mul 7", 2 * ce, 0);
    k("gelu_new backward add 2", 3 * ce, ce);
}

}  // namespace stepsim
