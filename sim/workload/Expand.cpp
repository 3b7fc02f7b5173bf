#include "sim/workload/Expand.hpp"

#include <algorithm>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "sim/base/InputError.hpp"
#include "sim/workload/Transformer.hpp"

namespace stepsim {

namespace {

constexpr std::uint8_t kCompute = 0;
constexpr std::uint8_t kComm = 1;
constexpr double kMiB = 1024.0 * 1024.0;

double elementBytes(DType d) {
    switch (d) {
        case DType::fp32: return 4;
        case DType::bf16:
        case DType::fp16: return 2;
        case DType::fp8: return 1;
    }
    return 4;
}

// Rejects what the scenario asks that this version does not model, rather than ignoring it.
void checkSupported(const Scenario& sc) {
    const std::string& f = sc.source;
    auto unsupported = [&](const std::string& key, const std::string& what) {
        throw inputError(f, 0, key, what + " is not modelled yet by this stepsim version");
    };
    if (sc.model.type != "transformer") unsupported("model.type", "'" + sc.model.type + "'");
    if (sc.parallel.data != DataParallel::ddp) unsupported("parallel.data", "a data-parallel mode other than ddp");
    if (sc.parallel.tp != 1) unsupported("parallel.tp", "tensor parallelism");
    if (sc.parallel.pp != 1) unsupported("parallel.pp", "pipeline parallelism");
    if (sc.compile.enabled) unsupported("compile.enabled", "torch.compile");
    if (sc.fp8.enabled) unsupported("fp8.enabled", "FP8 training");
    if (sc.training.compute_dtype == DType::fp8) unsupported("training.compute_dtype", "FP8 compute (FP8 training)");
    if (sc.checkpoint.interval_steps > 0) unsupported("checkpoint.interval_steps", "checkpoint I/O");
    if (sc.ddp.comm_hook == CommHook::powersgd) unsupported("ddp.comm_hook", "PowerSGD");
    if (sc.training.optimizer != Optimizer::adamw) unsupported("training.optimizer", "an optimizer other than adamw");
}

struct Ctx {
    const Scenario& sc;
    const CostModel& cost;
    TransformerShape t;
    std::vector<ParamInfo> params;
    DType cdt;           // compute dtype
    double pe;           // parameter element bytes
    double ce;           // compute element bytes
    bool autocast;       // params kept in a wider dtype than the compute dtype
    // fp16 autocast over wider parameters trains with torch.amp.GradScaler, as PyTorch's AMP recipe does (fp16
    // parameters cannot: GradScaler refuses to unscale fp16 gradients).
    bool grad_scaler;
    double forward_s;    // host cost per kernel launched by the forward pass
    double backward_s;   // host cost per kernel launched by the autograd engine
    double accumulate_s; // host cost of AccumulateGrad's in-place add into an existing .grad, per parameter tensor
    int world;
    int out_of_domain = 0;
    // Element bytes of the residual stream and its gradient: the parameters' dtype (the embeddings' output; under
    // autocast an fp32 stream plus a bf16 sublayer output stays fp32).
    double re() const { return pe; }
};

class Builder {
public:
    Builder(Ctx& c, Program& p) : c_(c), p_(p) {}

    int step = 0;
    Phase phase = Phase::forward;
    bool count_flops = true;
    double model_flops = 0.0;

    void gemm(const std::string& name, long m, long n, long k) {
        Op op = base(name, KernelClass::gemm);
        op.gemm = {m, n, k};
        op.flops = 2.0 * double(m) * double(n) * double(k);
        op.bytes = (double(m) * k + double(k) * n + double(m) * n) * c_.ce;
        push(op);
    }
    // `shape`: {batch·heads, seq, head_dim}, for the calibrated attention rates.
    void attention(const std::string& name, double flops, double bytes, GemmShape shape) {
        Op op = base(name, KernelClass::attention);
        op.gemm = shape;
        op.flops = flops;
        op.bytes = bytes;
        push(op);
    }
    void mem(const std::string& name, double bytes, MemKind kind = MemKind::elementwise,
             KernelClass cls = KernelClass::memory, GemmShape shape = {}) {
        Op op = base(name, cls);
        op.mem = kind;
        op.bytes = bytes;
        op.gemm = shape;
        push(op);
    }
    void host(const std::string& name, double seconds) {
        Op op = base(name, KernelClass::other);
        op.kind = OpKind::host_work;
        op.host_s = seconds;
        p_.ops.push_back(op);
    }
    std::uint32_t record(std::uint8_t stream) {
        Op op = base("record", KernelClass::other);
        op.kind = OpKind::record_event;
        op.stream = stream;
        op.host_s = 0;
        op.event = p_.events++;
        p_.ops.push_back(op);
        return op.event;
    }
    // The host blocks until `event` has completed (a .item() on a tensor the stream has just written).
    void hostSync(std::uint32_t event) {
        Op op = base("host sync", KernelClass::other);
        op.kind = OpKind::host_sync;
        op.host_s = 0;
        op.event = event;
        p_.ops.push_back(op);
    }
    void wait(std::uint8_t stream, std::uint32_t event) {
        Op op = base("wait", KernelClass::other);
        op.kind = OpKind::wait_event;
        op.stream = stream;
        op.host_s = 0;
        op.event = event;
        p_.ops.push_back(op);
    }
    void collective(const std::string& name, CollectiveKind kind, double bytes, const std::string& dtype) {
        Op op = base(name, KernelClass::comm);
        op.kind = OpKind::collective;
        op.stream = kComm;
        op.bytes = bytes;
        op.collective = static_cast<std::uint32_t>(p_.collectives.size());
        p_.collectives.push_back(CollectiveCall{kind, 0, bytes, dtype});
        p_.ops.push_back(op);
    }
    Op& last() { return p_.ops.back(); }
    void stepEnd() {
        Op op = base("step end", KernelClass::other);
        op.kind = OpKind::step_end;
        op.host_s = 0;
        p_.ops.push_back(op);
    }

private:
    Op base(const std::string& name, KernelClass cls) {
        Op op;
        op.kind = OpKind::kernel;
        op.cls = cls;
        op.phase = phase;
        op.stream = kCompute;
        op.name = p_.intern(name);
        op.step = step;
        op.host_s = phase == Phase::backward ? c_.backward_s : c_.forward_s;
        return op;
    }
    void push(Op& op) {
        if (!c_.cost.price(op, c_.cdt)) ++c_.out_of_domain;
        if (count_flops && (op.cls == KernelClass::gemm || op.cls == KernelClass::attention)) model_flops += op.flops;
        p_.ops.push_back(op);
    }
    Ctx& c_;
    Program& p_;
};

// The kernels of one micro-step. `ready(i)` is called when parameter i's gradient is final for this
// micro-step (after its dtype cast), in the order autograd produces them.
class MicroStep {
public:
    MicroStep(Ctx& c, Builder& b) : c_(c), b_(b), t_(c.t) {}

    void forward() {
        b_.phase = Phase::forward;
        const double T = double(t_.T), h = double(t_.h);
        b_.mem("embedding", 2 * c_.re() * T * h);
        if (t_.pos_embedding) b_.mem("pos_embedding add", c_.re() * double(t_.s) * h + 2 * c_.re() * T * h);
        for (int l = 0; l < t_.L; ++l) {
            if (const double s = checkpointHost(/*backward=*/false); s > 0) b_.host(L(l, "checkpoint"), s);
            layerForward(l);
        }
        norm("norm_f");
        if (c_.autocast) b_.mem("norm_f cast", (4 + c_.ce) * T * h, MemKind::cast_down);
        linearForward("lm_head", t_.V, t_.h);
        const double TV = T * double(t_.V);
        if (c_.autocast) {
            // cross_entropy under autocast: log_softmax on the bf16 logits, its output cast to fp32 for nll_loss
            // (H200 traces, PyTorch 2.11).
            b_.mem("log_softmax", 2 * c_.ce * TV, MemKind::log_softmax_forward);
            b_.mem("log_softmax to fp32", (c_.ce + 4) * TV, MemKind::cast_up);
        } else {
            // Without autocast the loss takes logits.float() (as the validation harness and Hugging Face models do).
            b_.mem("logits to fp32", (c_.ce + 4) * TV, MemKind::cast_up);
            b_.mem("log_softmax", 8 * TV, MemKind::log_softmax_forward_fp32);
        }
        b_.mem("nll_loss", 8 * T);  // gathers one logit per token
        if (c_.grad_scaler) b_.mem("loss scale", 8);  // scaler.scale(loss)
    }

    void backward(const std::function<void(std::size_t)>& ready) {
        b_.phase = Phase::backward;
        ready_ = &ready;
        const double T = double(t_.T), h = double(t_.h), TV = T * double(t_.V);
        // loss.backward() seeds the gradient with ones; (loss / grad_accum) adds a scale and its backward.
        if (c_.sc.training.grad_accum > 1) b_.mem("loss / grad_accum", 8);
        b_.mem("loss grad seed", 4);
        if (c_.grad_scaler) b_.mem("loss scale backward", 8);
        if (c_.sc.training.grad_accum > 1) b_.mem("loss / grad_accum backward", 8);
        b_.mem("nll_loss backward", 4 * TV);
        if (c_.autocast) {
            b_.mem("log_softmax grad cast", (4 + c_.ce) * TV, MemKind::cast_down);
            b_.mem("log_softmax backward", 3 * c_.ce * TV, MemKind::log_softmax_backward);
        } else {
            b_.mem("log_softmax backward", 12 * TV, MemKind::log_softmax_backward_fp32);
            b_.mem("logits grad cast", (4 + c_.ce) * TV, MemKind::cast_down);
        }
        linearBackward("lm_head", t_.V, t_.h, t_.tied ? npos : paramIndex("lm_head.weight"));
        if (c_.autocast) b_.mem("norm_f cast backward", (c_.ce + 4) * T * h, MemKind::cast_up);
        normBackward("norm_f", "norm_f");
        for (int l = t_.L - 1; l >= 0; --l) layerBackward(l);
        // DDP's grad-ready order on a real run ends with the token embedding, then the position embedding.
        b_.mem("embedding backward", 4 * double(t_.V) * h + 12 * T * h);
        // A tied head's weight gradient arrives first; autograd adds the embedding's to it (one add over the V×h
        // weight in the parameters' dtype: a tied-head step's profiler trace, H200, PyTorch 2.11) before the
        // weight's AccumulateGrad.
        if (t_.tied) b_.mem("tied weight grad add", 3 * c_.pe * double(t_.V) * h);
        gradReady(paramIndex("wte.weight"));
        if (t_.pos_embedding) {
            b_.mem("pos_embedding backward", 4 * T * h + 4 * double(t_.s) * h);
            gradReady(paramIndex("wpe.weight"));
        }
        ready_ = nullptr;
    }

    // Activation checkpointing recomputes forward kernels inside backward; they don't count as model FLOPs.
    // Full: the layer's forward up to the last tensor its backward saved: torch.utils.checkpoint (non-reentrant,
    // early stop on by default) stops there, so the MLP's output projection and the residual add after it are
    // not rerun (measured on H200: 3 of a block's 4 GEMMs come back in backward).
    // The recompute runs the forward's code: its kernels are priced and launched as forward ones, after the
    // checkpoint's own host work.
    void recompute(int l, bool full) {
        if (const double s = checkpointHost(/*backward=*/true); s > 0) b_.host(L(l, "checkpoint recompute"), s);
        const bool saved = b_.count_flops;
        b_.count_flops = false;
        b_.phase = Phase::forward;
        if (full) layerForward(l, /*recompute=*/true);
        else attentionForward(l);
        b_.phase = Phase::backward;
        b_.count_flops = saved;
    }
    // Host cost of one checkpointed layer beyond its kernels' launches (0 without checkpointing).
    double checkpointHost(bool backward) const {
        const CheckpointHost& h = c_.cost.profile().launch.checkpoint_host_us;
        switch (c_.sc.training.activation_checkpointing) {
            case Checkpointing::none: return 0.0;
            case Checkpointing::selective: return 1e-6 * (backward ? h.selective_backward_us : h.selective_forward_us);
            case Checkpointing::full: return 1e-6 * (backward ? h.full_backward_us : h.full_forward_us);
        }
        return 0.0;
    }

    static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

private:
    std::size_t paramIndex(const std::string& name) const {
        for (std::size_t i = 0; i < c_.params.size(); ++i)
            if (c_.params[i].name == name) return i;
        return npos;
    }
    std::string L(int l, const char* what) const { return fmt::format("h.{}.{}", l, what); }

    // A norm kernel of the model's norm, on the residual stream's dtype (under autocast norms run in fp32 on the
    // fp32 stream), priced by its rows and width from the profile's measured grid.
    void normKernel(const std::string& name, double passes, MemKind layer, MemKind rms) {
        const double T = double(t_.T), h = double(t_.h);
        b_.mem(name, passes * c_.re() * T * h, t_.norm == NormKind::layernorm ? layer : rms, KernelClass::memory,
               GemmShape{t_.T, t_.h, long(c_.re())});
    }
    void norm(const std::string& name) { normKernel(name, 2, MemKind::norm_forward, MemKind::rms_forward); }
    void normBackward(const std::string& name, const std::string& param) {
        // Two launches, as PyTorch's CUDA norm backward: the input gradient (reads x, dy, writes dx) and the
        // weight (and bias) gradient, a column reduction over x and dy read again.
        normKernel(name + " backward", 3, MemKind::norm_backward, MemKind::rms_backward);
        normKernel(name + " weight grad", 2, MemKind::norm_weight_grad, MemKind::rms_weight_grad);
        gradReady(paramIndex(param + ".weight"));
        if (t_.norm == NormKind::layernorm) gradReady(paramIndex(param + ".bias"));
    }
    void weightCast(const std::string& name, double numel) {
        if (c_.autocast) b_.mem(name + " weight cast", (c_.pe + c_.ce) * numel, MemKind::cast_down);
    }
    void linearForward(const std::string& name, long out, long in) {
        weightCast(name, double(out) * in);
        b_.gemm(name, t_.T, out, in);
    }
    // `input_grad`: the kernels the input's gradient goes through next (its cast back to fp32 when the input was
    // cast by autocast). Autograd runs them before the weight's AccumulateGrad and DDP's hook (H200 traces, PyTorch
    // 2.11: the norm's cast backward, then the weight's cast and the copy into the bucket, then the all-reduce).
    void linearBackward(const std::string& name, long out, long in, std::size_t param,
                        const std::function<void()>& input_grad = {}) {
        b_.gemm(name + " dgrad", t_.T, in, out);
        b_.gemm(name + " wgrad", out, in, t_.T);
        if (input_grad) input_grad();
        if (c_.autocast) b_.mem(name + " grad cast", (c_.ce + c_.pe) * double(out) * in, MemKind::cast_up);
        if (param != npos) gradReady(param);
    }
    // Under autocast a residual add joins the fp32 stream and a bf16 sublayer output; its backward casts the fp32
    // gradient down for the sublayer (one per residual add: H200 traces, PyTorch 2.11).
    void residualGradCast(const std::string& name) {
        if (c_.autocast) b_.mem(name, (c_.re() + c_.ce) * double(t_.T) * double(t_.h), MemKind::cast_down);
    }
    // The cast of a norm's output to the compute dtype, backward.
    void normCastBackward(const std::string& name) {
        if (c_.autocast) b_.mem(name, (c_.ce + 4) * double(t_.T) * double(t_.h), MemKind::cast_up);
    }
    void gradReady(std::size_t i) {
        if (i == npos) return;
        if (accumulate_) {
            // AccumulateGrad adds the micro-step's gradient into .grad in place: a kernel of its own, issued by the
            // autograd engine at its own host cost, launch.grad_accumulate_host_us (host_overhead.py --only
            // accumulate, raw/accumulate_host_run97.jsonl and raw/accumulate_host_run100.jsonl: 0.31 of a backward
            // kernel's).
            b_.mem(c_.params[i].name + " grad accumulate", 3 * c_.pe * c_.params[i].numel);
            b_.last().host_s = c_.accumulate_s;
        }
        (*ready_)(i);
    }

    GemmShape attnShape() const { return {t_.b * t_.heads, t_.s, t_.d}; }

    void attentionForward(int l) {
        const double T = double(t_.T), h = double(t_.h);
        const double qkv = double(t_.qkvOut());
        // SDPA on Hopper (cuDNN's flash kernels): a small memset of its statistics, then the forward kernel.
        b_.mem(L(l, "attn stats memset"), 4 * double(t_.b * t_.heads * t_.s));
        b_.attention(L(l, "attn.flash"), attentionForwardFlops(t_), (T * qkv + T * h) * c_.ce, attnShape());
    }
    void layerForward(int l, bool recompute = false) {
        const double T = double(t_.T), h = double(t_.h), f = double(t_.f);
        norm(L(l, "norm1"));
        if (c_.autocast) b_.mem(L(l, "norm1 cast"), (4 + c_.ce) * T * h, MemKind::cast_down);
        linearForward(L(l, "attn.qkv"), t_.qkvOut(), t_.h);
        attentionForward(l);
        // y.transpose(1, 2).reshape(B, T, h) is a view: cuDNN's SDPA allocates its output token-major.
        linearForward(L(l, "attn.proj"), t_.h, t_.h);
        b_.mem(L(l, "residual add"), (2 * c_.re() + c_.ce) * T * h, c_.autocast ? MemKind::residual_add : MemKind::elementwise);
        norm(L(l, "norm2"));
        if (c_.autocast) b_.mem(L(l, "norm2 cast"), (4 + c_.ce) * T * h, MemKind::cast_down);
        if (t_.mlp == MlpKind::gelu) {
            linearForward(L(l, "mlp.fc"), t_.f, t_.h);
            // tanh-approximate GELU at its own rate, memory.kernels.gelu_forward: its math makes it slower per byte
            // than an add (stepsim_torch_bench.py, raw/torch.jsonl: 33.0 µs at 8192 × 3072, where the pointwise rate
            // gives 26.7; a profiled training step's GELU took 33.1)
            b_.mem(L(l, "gelu"), 2 * c_.ce * T * f, MemKind::gelu_forward);
            if (recompute) return;  // the projection's input is the last saved tensor
            linearForward(L(l, "mlp.proj"), t_.h, t_.f);
        } else {
            // silu(gate(z)) * up(z), evaluated in that order. Autocast casts an activation at each op that takes it
            // (only weights' casts are cached): z is cast again for the second linear (a SwiGLU/GQA step's profiler
            // trace, H200, PyTorch 2.11: two fp32 → bf16 casts of the norm's output a layer).
            linearForward(L(l, "mlp.gate"), t_.f, t_.h);
            b_.mem(L(l, "silu"), 2 * c_.ce * T * f);
            if (c_.autocast) b_.mem(L(l, "norm2 cast 2"), (4 + c_.ce) * T * h, MemKind::cast_down);
            linearForward(L(l, "mlp.up"), t_.f, t_.h);
            b_.mem(L(l, "silu mul"), 3 * c_.ce * T * f);
            if (recompute) return;
            linearForward(L(l, "mlp.down"), t_.h, t_.f);
        }
        b_.mem(L(l, "residual add 2"), (2 * c_.re() + c_.ce) * T * h, c_.autocast ? MemKind::residual_add : MemKind::elementwise);
    }
    void layerBackward(int l) {
        const double T = double(t_.T), h = double(t_.h), f = double(t_.f);
        const Checkpointing ac = c_.sc.training.activation_checkpointing;
        if (ac != Checkpointing::none) recompute(l, ac == Checkpointing::full);
        // The residual branch point sums the two incoming gradients.
        b_.mem(L(l, "residual grad add 2"), 3 * c_.re() * T * h);
        residualGradCast(L(l, "residual grad cast 2"));
        if (t_.mlp == MlpKind::gelu) {
            linearBackward(L(l, "mlp.proj"), t_.h, t_.f, paramIndex(L(l, "mlp.proj.weight")));
            b_.mem(L(l, "gelu backward"), 3 * c_.ce * T * f);
            linearBackward(L(l, "mlp.fc"), t_.f, t_.h, paramIndex(L(l, "mlp.fc.weight")),
                           [&] { normCastBackward(L(l, "norm2 cast backward")); });
        } else {
            // Each linear's input gradient goes back through its own cast; the two meet in the norm output's dtype
            // (fp32 under autocast: in the SwiGLU/GQA step's trace, a 49 µs add over 8192 × 2048).
            linearBackward(L(l, "mlp.down"), t_.h, t_.f, paramIndex(L(l, "mlp.down.weight")));
            b_.mem(L(l, "silu mul backward"), 5 * c_.ce * T * f);
            linearBackward(L(l, "mlp.up"), t_.f, t_.h, paramIndex(L(l, "mlp.up.weight")),
                           [&] { normCastBackward(L(l, "norm2 cast 2 backward")); });
            b_.mem(L(l, "silu backward"), 3 * c_.ce * T * f);
            linearBackward(L(l, "mlp.gate"), t_.f, t_.h, paramIndex(L(l, "mlp.gate.weight")), [&] {
                normCastBackward(L(l, "norm2 cast backward"));
                b_.mem(L(l, "mlp input grad add"), 3 * c_.re() * T * h);
            });
        }
        normBackward(L(l, "norm2"), L(l, "norm2"));
        b_.mem(L(l, "residual grad add"), 3 * c_.re() * T * h);
        residualGradCast(L(l, "residual grad cast"));
        linearBackward(L(l, "attn.proj"), t_.h, t_.h, paramIndex(L(l, "attn.proj.weight")));
        const double qkv = double(t_.qkvOut());
        // cuDNN's SDPA backward reads the output gradient in the token-major layout its forward wrote: no copy
        // (H200 traces, PyTorch 2.11).
        // SDPA backward on Hopper (cuDNN): a memset, then one kernel for dQ, dK, dV.
        b_.mem(L(l, "attn backward memset"), 4 * double(t_.b * t_.heads * t_.s));
        b_.attention(L(l, "attn.flash backward"), 2.5 * attentionForwardFlops(t_), (2 * T * qkv + 2 * T * h) * c_.ce,
                     attnShape());
        // With GQA cuDNN writes dK and dV per query head, then sums each group of heads into its KV head: one
        // reduction each, reading heads·d and writing kv·d per token (12.7 µs each at 8192 tokens, 16 heads onto 4,
        // head_dim 128, in the SwiGLU/GQA step's trace).
        if (t_.kv < t_.heads)
            for (const char* g : {"attn k grad head reduce", "attn v grad head reduce"})
                b_.mem(L(l, g), c_.ce * double(T) * double((t_.heads + t_.kv) * t_.d));
        // split() backward: dq, dk, dv concatenated into the fused QKV output gradient.
        b_.mem(L(l, "qkv grad cat"), 2 * c_.ce * T * qkv);
        linearBackward(L(l, "attn.qkv"), t_.qkvOut(), t_.h, paramIndex(L(l, "attn.qkv.weight")),
                       [&] { normCastBackward(L(l, "norm1 cast backward")); });
        normBackward(L(l, "norm1"), L(l, "norm1"));
    }

public:
    bool accumulate_ = false;  // gradients already exist (micro-step > 0): autograd adds into them

private:
    Ctx& c_;
    Builder& b_;
    const TransformerShape& t_;
    const std::function<void(std::size_t)>* ready_ = nullptr;
};

MemoryEstimate estimateMemory(const Ctx& c, bool ddp) {
    MemoryEstimate m;
    double n = 0, n_mm = 0;
    for (const ParamInfo& p : c.params) {
        n += p.numel;
        if (p.matmul) n_mm += p.numel;
    }
    const TransformerShape& t = c.t;
    const double T = double(t.T), h = double(t.h), f = double(t.f), V = double(t.V), ce = c.ce;
    m.params = c.pe * n;
    m.grads = c.pe * n;
    m.buckets = ddp && !c.sc.ddp.gradient_as_bucket_view ? c.pe * n : 0.0;
    m.optimizer = 2 * c.pe * n;  // AdamW exp_avg, exp_avg_sq in the parameter dtype
    m.weight_cache = c.autocast ? ce * n_mm : 0.0;
    // Saved for backward per layer: fp32 norm inputs (2), cast norm outputs (2; under autocast SwiGLU's second
    // norm output is cast for each of its two linears: 3), q/k/v, attention output, MLP intermediates (gelu: fc
    // output and gelu output; swiglu: gate, up, silu, product).
    const double mlp = t.mlp == MlpKind::gelu ? 2 * ce * T * f : 4 * ce * T * f;
    const double norm_outs = (t.mlp == MlpKind::swiglu && c.autocast ? 3 : 2) * ce * T * h;
    const double per_layer = 2 * c.re() * T * h + norm_outs + ce * T * double(t.qkvOut()) + ce * T * h + mlp;
    switch (c.sc.training.activation_checkpointing) {
        case Checkpointing::none: m.activations = per_layer * t.L; break;
        case Checkpointing::selective:
            m.activations = (per_layer - ce * T * double(t.qkvOut())) * t.L + ce * T * double(t.qkvOut());
            break;
        case Checkpointing::full: m.activations = c.re() * T * h * t.L + per_layer; break;
    }
    // Loss: bf16 logits, fp32 logits and log-softmax output alive together at the end of forward.
    m.loss = (ce + 4 + 4) * T * V;
    return m;
}

// One element-wise pass over every parameter-sized tensor of the optimizer (a multi-tensor kernel, launched in chunks
// like the fused step), `accesses` tensors read or written, at the rate of `kind`.
void multiTensor(Builder& b, const Ctx& c, const std::string& name, double params, int accesses,
                 MemKind kind = MemKind::optimizer) {
    b.mem(name, accesses * c.pe * params, kind, KernelClass::optimizer);
}

// The rate of a foreach pass over the parameters' (or gradients') dtype.
MemKind foreachKind(const Ctx& c) { return c.pe == 2 ? MemKind::optimizer_foreach_bf16 : MemKind::optimizer_foreach; }

// The optimizer step (`host_s`: optimizer.step()'s host cost), with GradScaler's work around it for fp16 autocast
// and gradient clipping before it: scaler.step launches its own kernels, then calls optimizer.step().
void optimizerStep(Builder& b, const Ctx& c, double params, double host_s) {
    const bool fused = c.sc.training.optimizer_impl == OptimizerImpl::fused;
    const bool clip = c.sc.training.grad_clip_norm > 0.0;
    const auto tiny = [&](const std::string& name) { b.mem(name, 8, MemKind::elementwise, KernelClass::optimizer); };
    // scaler.unscale_: the inverse scale and found_inf made, every gradient divided by the scale and checked for
    // inf/NaN in place (_amp_foreach_non_finite_check_and_unscale_).
    const auto unscale = [&] {
        for (const char* k : {"inv_scale", "found_inf fill"}) tiny(std::string("grad scaler ") + k);
        multiTensor(b, c, "grad scaler check and unscale", params, 2);
    };
    // PyTorch's AMP recipe unscales before clipping; scaler.step then finds the gradients unscaled and hands no scale
    // to a fused step.
    if (c.grad_scaler && clip) unscale();
    if (clip) {
        // torch.nn.utils.clip_grad_norm_ (foreach): every gradient's norm (_foreach_norm, one read of each), their
        // total, the clip coefficient max_norm / (total + 1e-6) clamped at 1, every gradient scaled by it in place.
        multiTensor(b, c, "clip grad norm: per-tensor norms", params, 1, foreachKind(c));
        for (const char* k : {"stack", "total norm", "+ 1e-6", "max_norm / total", "clamp"})
            tiny(std::string("clip grad norm: ") + k);
        multiTensor(b, c, "clip grad norm: grads *= coef", params, 2, foreachKind(c));
    }
    const bool scale_to_step = c.grad_scaler && !clip;  // scaler.step still holds scaled gradients
    if (scale_to_step && fused) {
        // scaler.step hands the scale to a fused optimizer: found_inf and a dummy inverse scale (1.0) made and copied
        // per device, every gradient checked for inf/NaN in place (_amp_foreach_non_finite_check_and_unscale_),
        // found_inf summed over devices, the scale passed on (an fp16 step's profiler trace, H200, PyTorch 2.11).
        for (const char* k : {"found_inf fill", "inv_scale fill", "found_inf copy", "inv_scale copy"})
            tiny(std::string("grad scaler ") + k);
        multiTensor(b, c, "grad scaler check and unscale", params, 2);
        tiny("grad scaler found_inf sum");
        tiny("grad scaler grad_scale");
    } else if (scale_to_step) {
        unscale();  // any other optimizer: scaler.step unscales first
    }
    if (c.grad_scaler && !fused) {
        // scaler.step reads found_inf back on the host (.item()) to decide whether to step; the GPU then idles while
        // the host runs optimizer.step()'s Python (1.5-1.7 ms at 1.4B in an fp16 foreach step's profiler trace).
        b.hostSync(b.record(kCompute));
    }
    b.host("optimizer.step", host_s);
    if (fused) {
        b.mem("adamw step count", 8 * double(c.params.size()), MemKind::elementwise, KernelClass::optimizer);
        // Reads param, grad, exp_avg, exp_avg_sq, writes param, exp_avg, exp_avg_sq; with GradScaler's scale it
        // writes the unscaled gradient back too. 16-bit parameters keep 16-bit states and run at their own rate.
        b.mem("fused adamw", (scale_to_step ? 8 : 7) * c.pe * params,
              c.pe == 2 ? MemKind::optimizer_bf16 : MemKind::optimizer, KernelClass::optimizer);
        if (c.grad_scaler) {
            // The fused step takes found_inf back off each step count (_foreach_sub_).
            b.mem("grad scaler step count fixup", 8 * double(c.params.size()), MemKind::elementwise,
                  KernelClass::optimizer);
        }
    } else {
        // torch.optim.AdamW's foreach path (_multi_tensor_adam, decoupled weight decay): the step counts live on the
        // host; on the GPU one multi-tensor pass per arithmetic step, the bias corrections as host-side scalars. The
        // passes run at the rate the whole foreach step was calibrated at, memory.kernels.optimizer_foreach, over bf16
        // states at their own, optimizer_foreach_bf16 (stepsim_torch_bench.py --groups adamw_foreach,
        // adamw_foreach_bf16 over GPT models' own tensors, raw/torch_adamw_gpt_run92.jsonl: 3.65 and 3.04 TB/s).
        const MemKind k = foreachKind(c);
        multiTensor(b, c, "adamw weight decay (params *= 1 - lr*wd)", params, 2, k);
        multiTensor(b, c, "adamw exp_avg lerp", params, 3, k);
        multiTensor(b, c, "adamw exp_avg_sq *= beta2", params, 2, k);
        multiTensor(b, c, "adamw exp_avg_sq addcmul", params, 3, k);
        multiTensor(b, c, "adamw denom = sqrt(exp_avg_sq)", params, 2, k);
        multiTensor(b, c, "adamw denom /= sqrt(bias correction)", params, 2, k);
        multiTensor(b, c, "adamw denom += eps", params, 2, k);
        multiTensor(b, c, "adamw params addcdiv", params, 4, k);
    }
    if (c.grad_scaler) tiny("grad scaler update");
}

}  // namespace

Expansion expand(const Scenario& sc, const CostModel& cost) {
    checkSupported(sc);
    Expansion out;
    Ctx c{sc, cost, transformerShape(sc.model, sc.training.micro_batch), {}, sc.training.compute_dtype,
          elementBytes(sc.training.param_dtype), elementBytes(sc.training.compute_dtype),
          sc.training.param_dtype != sc.training.compute_dtype,
          sc.training.compute_dtype == DType::fp16 && sc.training.param_dtype != DType::fp16,
          (sc.cluster.worldSize() > 1 ? cost.profile().launch.forward_host_ddp : cost.profile().launch.forward_host)
                  .median_us * 1e-6,
          cost.profile().launch.backward_host.median_us * 1e-6, cost.profile().launch.grad_accumulate_host_us * 1e-6,
          sc.cluster.worldSize()};
    c.params = transformerParams(c.t);
    const bool ddp = c.world > 1;
    for (const ParamInfo& p : c.params) out.params += p.numel;

    // Gradient-ready order, from a dry run of one backward.
    std::vector<std::size_t> order;
    {
        Program scratch;
        Builder b(c, scratch);
        MicroStep ms(c, b);
        ms.backward([&](std::size_t i) { order.push_back(i); });
    }
    std::vector<GradParam> ready;
    const std::string grad_dtype = sc.training.param_dtype == DType::fp32 ? "fp32" : "bf16";
    for (std::size_t i : order) ready.push_back({c.params[i].name, c.params[i].numel * c.pe, grad_dtype});
    out.buckets = assignBuckets(ready, sc.ddp.first_bucket_mb * kMiB, sc.ddp.bucket_cap_mb * kMiB);
    // Before the rebuild (first step) DDP reduces everything in one bucket.
    const std::vector<Bucket> initial = assignBuckets(ready, std::numeric_limits<double>::infinity(),
                                                      std::numeric_limits<double>::infinity());

    const bool compress = sc.ddp.comm_hook == CommHook::fp16_compress || sc.ddp.comm_hook == CommHook::bf16_compress;
    const LaunchRates& launch = cost.profile().launch;
    // One eager op: zero_grad and the reducer's per-parameter copy back; a bucket's all-reduce costs what
    // issuing one through torch.distributed's NCCL process group does (events, work object, NCCL group).
    const double eager = launch.eager_host.median_us * 1e-6;
    const double nccl_host = launch.nccl_host.median_us * 1e-6;
    const double hook_host = launch.ddp_hook_host_us * 1e-6;
    const double optimizer_host = launch.optimizer_host_per_tensor_us * 1e-6 * double(c.params.size());

    Program prog;
    prog.streams = {{StreamKind::compute, "compute"}, {StreamKind::comm, "nccl:dp"}};
    Builder b(c, prog);
    double flops_per_step = 0.0;
    for (int step = 0; step < sc.sim.steps; ++step) {
        b.step = step;
        const std::vector<Bucket>& buckets = step == 0 ? initial : out.buckets;
        std::vector<std::size_t> bucket_of(c.params.size());
        for (std::size_t k = 0; k < buckets.size(); ++k)
            for (std::size_t pi : buckets[k].params) bucket_of[order[pi]] = k;
        b.phase = Phase::other;
        b.host("zero_grad", eager);
        const double flops_before = b.model_flops;
        for (int micro = 0; micro < sc.training.grad_accum; ++micro) {
            const bool sync = ddp && micro == sc.training.grad_accum - 1;
            MicroStep ms(c, b);
            ms.accumulate_ = micro > 0;
            ms.forward();
            std::vector<int> pending(buckets.size());
            for (std::size_t k = 0; k < buckets.size(); ++k) pending[k] = int(buckets[k].params.size());
            std::size_t next_bucket = 0;
            std::vector<std::uint32_t> done_events(buckets.size());
            ms.backward([&](std::size_t i) {
                if (!sync) return;
                // DDP's autograd hook: copy (and divide) the gradient into its bucket, one mul_out per parameter;
                // with gradient_as_bucket_view the gradient is the bucket's view and it is an in-place div_ of the
                // same bytes (H200 traces, PyTorch 2.11: one such kernel per parameter in both, 3.0 ms a step of
                // the 1.4B model). The hook's host cost (calibrated per parameter tensor) includes launching it.
                if (hook_host > 0) b.host("ddp hook", hook_host);
                b.mem(c.params[i].name + " copy to bucket", 2 * c.pe * c.params[i].numel, MemKind::elementwise, KernelClass::copy);
                prog.ops.back().host_s = 0.0;
                const std::size_t k = bucket_of[i];
                if (--pending[k] > 0) return;
                for (; next_bucket < buckets.size() && pending[next_bucket] == 0; ++next_bucket) {
                    const Bucket& bk = buckets[next_bucket];
                    const std::string name = fmt::format("bucket {}", next_bucket);
                    double bytes = bk.bytes;
                    const std::uint32_t ev = b.record(kCompute);
                    b.wait(kComm, ev);
                    if (compress) {
                        b.mem(name + " compress", 1.5 * bytes, MemKind::elementwise, KernelClass::copy);
                        bytes /= 2;
                    }
                    b.collective(name + " all_reduce", CollectiveKind::all_reduce, bytes,
                                 compress ? "bf16" : grad_dtype);
                    prog.ops.back().host_s = nccl_host;
                    done_events[next_bucket] = b.record(kComm);
                }
            });
            if (sync) {
                // finalize_backward: wait for each bucket, then copy it back into the gradients, one
                // copy_ per parameter (reducer.cpp's copy_bucket_to_grad, issued from C++: one eager op each).
                b.phase = Phase::backward;
                for (std::size_t k = 0; k < buckets.size(); ++k) {
                    b.wait(kCompute, done_events[k]);
                    if (compress) b.mem(fmt::format("bucket {} decompress", k), 3 * buckets[k].bytes, MemKind::elementwise, KernelClass::copy);
                    if (sc.ddp.gradient_as_bucket_view) continue;
                    for (std::size_t j : buckets[k].params) {
                        const ParamInfo& pi = c.params[order[j]];
                        b.mem(pi.name + " copy to grad", 2 * c.pe * pi.numel, MemKind::elementwise, KernelClass::copy);
                        prog.ops.back().host_s = eager;
                    }
                }
            }
        }
        flops_per_step = b.model_flops - flops_before;
        b.phase = Phase::optimizer;
        optimizerStep(b, c, out.params, optimizer_host > 0 ? optimizer_host : eager);
        b.stepEnd();
    }

    Workload& w = out.workload;
    w.steps = sc.sim.steps;
    w.groups.push_back({"dp", {}});
    for (int r = 0; r < c.world; ++r) w.groups[0].ranks.push_back(r);
    w.model_flops_per_step = flops_per_step;
    w.tokens_per_step = double(c.t.T) * sc.training.grad_accum;
    w.samples_per_step = double(c.t.b) * sc.training.grad_accum;
    w.programs.assign(c.world, prog);
    out.memory = estimateMemory(c, ddp);
    if (c.out_of_domain > 0)
        out.warnings.push_back(fmt::format("{} GEMM or attention kernels per step have shapes outside the profile's "
                                           "measured grid (priced by the model alone)",
                                           c.out_of_domain / std::max(1, sc.sim.steps)));
    if (!ddp)
        out.warnings.push_back("one GPU: no data-parallel communication is simulated");
    return out;
}

}  // namespace stepsim
