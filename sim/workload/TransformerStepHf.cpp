// model.implementation: hf. The kernels Hugging Face transformers' modeling code launches where they differ from this
// project's script, derived from op-graph captures of that code (tests/data/ops/hf-llama-4l, hf-qwen2-4l, hf-gpt2-4l,
// fp32 parameters under bf16 autocast; results/validation/ops-round1/captures/b-llama3.2-1b-bf16, bf16 parameters:
// transformers 5, PyTorch 2.11, use_cache off; docs/variants.md has the census).
// Bytes are each op's tensors as the capture writes them (inputs and outputs, shape × dtype), per element of the
// tensor named: N = Ts·h (the residual stream), e (a q or k tensor), T·f (the MLP's intermediate).
#include "sim/workload/TransformerStep.hpp"

namespace stepsim {

// LlamaRMSNorm (and Qwen2's, Mistral's, Gemma's, Phi-3's): x.to(fp32); x · rsqrt(mean(x²) + eps); weight · x.to(dtype):
// pow, mean, add, rsqrt, mul in fp32 (8N, 4N, tiny, tiny, 8N), the weight's mul in the stream's dtype (2re·N); where
// the stream is not fp32 (bf16 parameters: hf-llama3.2-1b-bf16's capture) a cast to fp32 first and one back before the
// weight's mul.
void TransformerStep::hfRmsNorm(const std::string& name) {
    const double N = double(t_.Ts) * double(t_.h), T = double(t_.Ts), h = double(t_.h), re = c_.re();
    if (re != 4) b_.mem(name + " to fp32", (re + 4) * N, MemKind::cast_up);
    b_.mem(name + " pow", 8 * N);
    b_.mem(name + " mean", 4 * N + 4 * T);
    b_.mem(name + " add eps", 8 * T);
    b_.mem(name + " rsqrt", 8 * T);
    b_.mem(name + " mul rsqrt", 8 * N + 4 * T);
    if (re != 4) b_.mem(name + " to dtype", (4 + re) * N, MemKind::cast_down);
    b_.mem(name + " mul weight", 2 * re * N + re * h);
}

// Its backward as autograd runs it: the weight's gradient (grad · x̂ in the stream's dtype, summed over the tokens in
// two kernels), then the input's through the multiply, the rsqrt, the mean and the pow in fp32 (14 ops, 15 kernels;
// the add that joins the residual gradient is the step's own residual grad add), the casts undone where the stream is
// not fp32.
void TransformerStep::hfRmsNormBackward(const std::string& name, const std::string& param) {
    const double N = double(t_.Ts) * double(t_.h), T = double(t_.Ts), h = double(t_.h), re = c_.re();
    if (input()) b_.mem(name + " backward mul weight", 2 * re * N + re * h);
    if (weight()) {
        b_.mem(name + " weight grad mul", 3 * re * N);
        b_.mem(name + " weight grad sum", re * N + re * h);
        b_.mem(name + " weight grad sum (second pass)", 2 * re * h);
        gradReady(paramIndex(param + ".weight"));
    }
    if (!input()) return;
    if (re != 4) b_.mem(name + " to dtype backward", (re + 4) * N, MemKind::cast_up);
    for (const auto& [what, bytes] : {std::pair{"mul x", 12 * N}, std::pair{"mul rsqrt", 8 * N + 4 * T},
                                      std::pair{"sum", 4 * N + 4 * T}, std::pair{"add paths", 12 * N},
                                      std::pair{"rsqrt pow", 8 * T}, std::pair{"rsqrt mul", 8 * T},
                                      std::pair{"rsqrt mul 2", 12 * T}, std::pair{"mean div", 8 * N},
                                      std::pair{"pow", 8 * N}, std::pair{"pow mul", 8 * N},
                                      std::pair{"mul", 12 * N}})
        b_.mem(name + " backward " + what, bytes);
    if (re != 4) b_.mem(name + " to fp32 backward", (4 + re) * N, MemKind::cast_down);
}

// apply_rotary_pos_emb: q·cos + rotate_half(q)·sin, k likewise; the cos and sin tables (1, 1, s, d) come from the
// model's rotary embedding once a forward, in the stream's dtype (fp32 under autocast: the products are fp32). Per
// tensor of e elements: mul (ce·e + rd·sd + ro·e), neg of a half (ce·e), cat (2ce·e), mul, add (3ro·e); ro the
// products' dtype. Then, with fewer KV heads, repeat_kv's copies of k and v to every query head (SDPA gets a mask, so
// no enable_gqa), and autocast's casts of q and k to bf16 for SDPA when the products are fp32.
void TransformerStep::hfRopeForward(int l) {
    const double sd = double(t_.s) * double(t_.d), ce = c_.ce, ro = c_.autocast ? 4.0 : ce;
    for (const auto& [x, heads] : {std::pair{"q", t_.heads}, std::pair{"k", t_.kv}}) {
        const double e = double(t_.T) * double(heads * t_.d);
        const std::string n = std::string("rope ") + x;
        b_.mem(L(l, (n + " mul cos").c_str()), ce * e + ro * sd + ro * e, MemKind::rope);
        b_.mem(L(l, (n + " neg").c_str()), ce * e, MemKind::rope);
        b_.mem(L(l, (n + " cat").c_str()), 2 * ce * e, MemKind::rope);
        b_.mem(L(l, (n + " mul sin").c_str()), ce * e + ro * sd + ro * e, MemKind::rope);
        b_.mem(L(l, (n + " add").c_str()), 3 * ro * e, MemKind::rope);
    }
    const double full = double(t_.T) * double(t_.heads * t_.d);
    if (t_.kv < t_.heads) {
        b_.mem(L(l, "repeat_kv k"), 2 * ro * full);
        b_.mem(L(l, "repeat_kv v"), 2 * ce * full);
    }
    if (ro != ce)
        for (const char* x : {"sdpa q cast", "sdpa k cast"}) b_.mem(L(l, x), (ro + ce) * full, MemKind::cast_down);
}

// Its backward, k's then q's: SDPA's casts undone, repeat_kv's sums (k's in the products' dtype), then per tensor the
// sin path (mul, cast, neg, two slice_backward: a fill and a copy each, add), the cos path (mul, cast) and the sum.
void TransformerStep::hfRopeBackward(int l) {
    const double sd = double(t_.s) * double(t_.d), ce = c_.ce, ro = c_.autocast ? 4.0 : ce;
    const double full = double(t_.T) * double(t_.heads * t_.d);
    if (ro != ce)
        for (const char* x : {"sdpa q cast backward", "sdpa k cast backward"})
            b_.mem(L(l, x), (ce + ro) * full, MemKind::cast_up);
    if (t_.kv < t_.heads) {
        // the v reduction is the step's "attn v grad head reduce"; k's runs in the products' dtype
        b_.mem(L(l, "attn k grad head reduce"), ro * double(t_.T) * double((t_.heads + t_.kv) * t_.d));
    }
    for (const auto& [x, heads] : {std::pair{"k", t_.kv}, std::pair{"q", t_.heads}}) {
        const double e = double(t_.T) * double(heads * t_.d);
        const std::string n = std::string("rope ") + x;
        auto k = [&](const char* what, double bytes, MemKind kind = MemKind::rope) {
            b_.mem(L(l, (n + " " + what).c_str()), bytes, kind);
        };
        k("mul sin backward", 2 * ro * e + ro * sd);
        if (ro != ce) k("sin path cast", (ro + ce) * e, MemKind::cast_down);
        k("neg backward", ce * e);
        for (const char* s : {"slice backward fill 1", "slice backward copy 1", "slice backward fill 2",
                              "slice backward copy 2"})
            k(s, 0.75 * ce * e);
        k("halves add", 3 * ce * e);
        k("mul cos backward", 2 * ro * e + ro * sd);
        if (ro != ce) k("cos path cast", (ro + ce) * e, MemKind::cast_down);
        k("grad add", 3 * ce * e);
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
        b_.mem(k, 8 * B * s);
    b_.mem("mask le", s * s);
    b_.mem("mask and", 2 * s * s);
    for (const char* k : {"mask index q", "mask index q 2", "mask index q 3", "mask index kv", "mask index kv 2",
                          "mask index kv 3"})
        b_.mem(k, 8 * B * s);
    b_.mem("mask eq", 8 * B * s + B * s * s);
    b_.mem("mask and 2", 2 * B * s * s);
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
    b_.mem("rotary positions to fp32", 12 * double(t_.s));
    b_.mem("rotary freqs bmm", 4 * sd);
    for (const char* k : {"rotary cat", "rotary cos", "rotary cos scale", "rotary sin", "rotary sin scale"})
        b_.mem(k, 8 * sd);
}

// NewGELUActivation (gelu_new): 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))) as eager ops; pow runs in fp32 under
// autocast, so from it on the ops are fp32 and so is the output (the next Linear's input is cast back). Bytes per
// element of T·f: mul 4, to fp32 6, pow 8, mul 8, add 10, mul 8, tanh 8, add 8, mul 10.
void TransformerStep::hfGeluNewForward(int l) {
    const double Tf = double(t_.T) * double(t_.f), ce = c_.ce, a = c_.autocast ? 4.0 : ce;
    b_.mem(L(l, "gelu_new half"), 2 * ce * Tf);
    if (c_.autocast) b_.mem(L(l, "gelu_new to fp32"), (ce + 4) * Tf, MemKind::cast_up);
    b_.mem(L(l, "gelu_new pow"), 2 * a * Tf);
    b_.mem(L(l, "gelu_new mul"), 2 * a * Tf);
    b_.mem(L(l, "gelu_new add"), (ce + 2 * a) * Tf);
    b_.mem(L(l, "gelu_new mul 2"), 2 * a * Tf);
    b_.mem(L(l, "gelu_new tanh"), 2 * a * Tf);
    b_.mem(L(l, "gelu_new add 2"), 2 * a * Tf);
    b_.mem(L(l, "gelu_new mul 3"), (ce + 2 * a) * Tf);
    if (c_.autocast) b_.mem(L(l, "mlp.proj input cast"), (4 + ce) * Tf, MemKind::cast_down);
}

// Its backward (14 kernels) after the projection's input cast is undone. Bytes per element of T·f: mul 10, mul 12,
// cast 6, tanh_backward 12, mul 8, cast 6, mul 8, pow 8, mul 8, mul 12, cast 6, add 6, mul 4, add 6.
void TransformerStep::hfGeluNewBackward(int l) {
    if (!input()) return;
    const double Tf = double(t_.T) * double(t_.f), ce = c_.ce, a = c_.autocast ? 4.0 : ce;
    if (c_.autocast) b_.mem(L(l, "mlp.proj input cast backward"), (ce + 4) * Tf, MemKind::cast_up);
    const double c = c_.autocast ? (4 + ce) : 0.0;  // the casts back to bf16 (none without autocast)
    b_.mem(L(l, "gelu_new backward mul"), (ce + 2 * a) * Tf);
    b_.mem(L(l, "gelu_new backward mul 2"), 3 * a * Tf);
    if (c > 0) b_.mem(L(l, "gelu_new backward cast"), c * Tf, MemKind::cast_down);
    b_.mem(L(l, "gelu_new tanh_backward"), 3 * a * Tf);
    b_.mem(L(l, "gelu_new backward mul 3"), 2 * a * Tf);
    if (c > 0) b_.mem(L(l, "gelu_new backward cast 2"), c * Tf, MemKind::cast_down);
    b_.mem(L(l, "gelu_new backward mul 4"), 2 * a * Tf);
    b_.mem(L(l, "gelu_new backward pow"), 2 * a * Tf);
    b_.mem(L(l, "gelu_new backward mul 5"), 2 * a * Tf);
    b_.mem(L(l, "gelu_new backward mul 6"), 3 * a * Tf);
    if (c > 0) b_.mem(L(l, "gelu_new backward cast 3"), c * Tf, MemKind::cast_down);
    b_.mem(L(l, "gelu_new backward add"), 3 * ce * Tf);
    b_.mem(L(l, "gelu_new backward mul 7"), 2 * ce * Tf);
    b_.mem(L(l, "gelu_new backward add 2"), 3 * ce * Tf);
}

}  // namespace stepsim
