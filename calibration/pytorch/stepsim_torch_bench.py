#!/usr/bin/env python3
"""PyTorch-side microbenchmarks for stepsim's calibration: the kernels of a training step that are not GEMMs.

Writes JSON Lines in stepsim-bench's format (one metadata record, then one record per measurement):
  kind "kernel":   flash attention forward/backward (SDPA, flash backend), layer_norm / rms_norm (fwd, bwd),
                   gelu / silu, residual add, casts (bf16<->fp32, bf16->fp8 e4m3, amax), fused AdamW step (fp32
                   parameters, and bf16 ones: group adamw_bf16; AdamW's default foreach step: groups
                   adamw_foreach and adamw_foreach_bf16); the loss's log-softmax over the vocabulary
                   (bf16 and fp32, forward and backward: group log_softmax); LayerNorm's and RMSNorm's forward,
                   input-gradient and weight-gradient kernels apart, fp32 and bf16 (group norms);
                   with FLOPs and bytes moved (each input read once, each output written once) so the fit can
                   turn times into efficiencies.
  kind "gemm":     BF16 torch.mm and FP8 torch._scaled_mm (per-tensor scales, fast accumulation on/off) over
                   stepsim-bench's shape grid, the same shapes seen through PyTorch (a cross-check of the harness);
  kind "dispatch": host cost of one eager op (PyTorch dispatch + cudaLaunchKernel) and the device time per
                   tiny op when ops are queued back to back.
Timing: warm-up, then a CUDA event between consecutive iterations, the stream held behind a spin kernel until the
host has queued them all (timing.py), so small kernels are timed as they run back to back in a step and not at
the host's launch rate; percentiles per record (as stepsim-bench). The pointwise kernels run at 16384 tokens
(hidden 1024–8192, beyond the L2) and at 8192 tokens of hidden 768 and 1024, where a narrow model's activations
stay in the L2 from one kernel to the next as they do in its step.
FLOPs for attention (FlashAttention-2 paper, Dao 2023, sec. 4): forward 4·b·h·s²·d, halved when causal;
backward 2.5× the forward.

usage: stepsim_torch_bench.py --out FILE [--quick] [--device N] [--time-limit SECONDS] [--groups LIST]
                              [--gemm-shapes FILE]
Exit status: 0 done; 2 no GPU or no PyTorch with CUDA; 1 failure.
"""
import argparse
import json
import math
import sys
import time


def summarize(v):
    v = sorted(v)
    n = len(v)

    def q(p):
        pos = p * (n - 1)
        i = int(math.floor(pos))
        f = pos - i
        return v[i] * (1 - f) + v[i + 1] * f if i + 1 < n else v[i]

    return {"n": n, "median": q(0.5), "mean": sum(v) / n, "p10": q(0.1), "p90": q(0.9), "p99": q(0.99),
            "min": v[0], "max": v[-1]}


class Bench:
    def __init__(self, args, torch):
        self.args = args
        self.torch = torch
        self.out = open(args.out, "w") if args.out else sys.stdout
        self.t0 = time.monotonic()
        self.dev = torch.device("cuda", args.device)

    def write(self, rec):
        self.out.write(json.dumps(rec, sort_keys=False) + "\n")
        self.out.flush()

    def late(self, what):
        if self.args.time_limit and time.monotonic() - self.t0 > self.args.time_limit:
            self.write({"kind": "skipped", "group": "pytorch", "what": what, "reason": "time limit"})
            return True
        return False

    def time_iters(self, fn, iters=20, warmup=3, target_us=20000.0):
        """Per-iteration device times (µs) of fn(), events between consecutive calls, the stream held until the
        host has queued them all (timing.py: back-to-back device periods, never the host's launch rate)."""
        torch = self.torch
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        est = a.elapsed_time(b) * 1e3
        iters = int(min(200, max(iters, target_us / max(est, 1.0))))
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
        from timing import hold_gpu, host_seconds  # beside this script; imports torch
        hold_gpu(2.0 * host_seconds(fn, iters) + 1e-3)
        for i in range(iters):
            ev[i].record()
            fn()
        ev[iters].record()
        torch.cuda.synchronize()
        return [ev[i].elapsed_time(ev[i + 1]) * 1e3 for i in range(iters)]

    def kernel(self, op, shape, dtype, times, flops=None, nbytes=None, **extra):
        s = summarize(times)
        rec = {"kind": "kernel", "op": op, "source": "pytorch", "dtype": dtype, "shape": shape, "time_us": s}
        if flops is not None:
            rec["flops"] = flops
            rec["tflops"] = flops / (s["median"] * 1e6)
        if nbytes is not None:
            rec["bytes"] = nbytes
            rec["GBps"] = nbytes / (s["median"] * 1e3)
        rec.update(extra)
        self.write(rec)


def attention(b, torch, F):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    d = 128
    seqs = [2048] if b.args.quick else [1024, 2048, 4096, 8192]
    hiddens = [2048] if b.args.quick else [2048, 4096, 8192]
    tokens = 16384
    for hidden in hiddens:
        for s in seqs:
            for causal in ([True] if hidden != 4096 else [True, False]):
                if b.late(f"flash_attn h={hidden} s={s}"):
                    return
                h = hidden // d
                batch = max(1, tokens // s)
                q, k, v = (torch.randn(batch, h, s, d, device=b.dev, dtype=torch.bfloat16, requires_grad=True)
                           for _ in range(3))
                g = torch.randn(batch, h, s, d, device=b.dev, dtype=torch.bfloat16)
                fwd_flops = 4.0 * batch * h * s * s * d * (0.5 if causal else 1.0)
                shape = {"batch": batch, "heads": h, "seq": s, "head_dim": d, "causal": causal}
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    def fwd():
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    tf = b.time_iters(fwd)
                    b.kernel("flash_attn_fwd", shape, "bf16", tf, flops=fwd_flops,
                             nbytes=4 * batch * h * s * d * 2)
                    # Backward alone: forward untimed, backward between events.
                    for _ in range(3):
                        fwd().backward(g)
                    torch.cuda.synchronize()
                    times = []
                    iters = int(min(100, max(10, 20000.0 / max(summarize(tf)["median"] * 2.5, 1.0))))
                    for _ in range(iters):
                        o = fwd()
                        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        e0.record()
                        o.backward(g)
                        e1.record()
                        torch.cuda.synchronize()
                        times.append(e0.elapsed_time(e1) * 1e3)
                        q.grad = k.grad = v.grad = None
                    b.kernel("flash_attn_bwd", shape, "bf16", times, flops=2.5 * fwd_flops,
                             nbytes=(4 + 4) * batch * h * s * d * 2)
                del q, k, v, g
                torch.cuda.empty_cache()


def gemm_shapes(quick, extra_file):
    """The transformer grid of stepsim-bench (calibration/bench/src/GemmBench.cu), plus extra "m n k" lines."""
    tokens = [4096] if quick else [2048, 4096, 8192, 16384]
    hidden = [2048] if quick else [1024, 2048, 4096, 8192]
    out = []

    def add(m, n, k):
        if (m, n, k) not in out:
            out.append((m, n, k))
    for t in tokens:
        for h in hidden:
            add(t, h, h)
            add(t, 3 * h, h)
            add(t, 4 * h, h)
            add(t, h, 4 * h)
    for t in tokens:
        for h in hidden:
            add(h, 4 * h, t)
            add(h, h, t)
    if extra_file:
        for line in open(extra_file):
            line = line.strip()
            if line and not line.startswith("#"):
                m, n, k = (int(x) for x in line.split())
                add(m, n, k)
    return out


def gemms(b, torch):
    """BF16 (torch.mm) and FP8 E4M3 (torch._scaled_mm, per-tensor scales, fast accumulation on and off), TN:
    a (m×k) row-major times w (n×k) row-major transposed, BF16 out; rotating input sets for a cold L2."""
    l2 = torch.cuda.get_device_properties(b.args.device).L2_cache_size
    fp8 = getattr(torch, "float8_e4m3fn", None)
    one = torch.ones((), device=b.dev, dtype=torch.float32)
    for (m, n, k) in gemm_shapes(b.args.quick, b.args.gemm_shapes):
        if b.late(f"gemm {m}x{n}x{k}"):
            return
        per_set = (m * k + n * k) * 2 + m * n * 2
        sets = max(2, min(32, -(-4 * l2 // per_set)))
        a = [torch.rand(m, k, device=b.dev, dtype=torch.bfloat16) * 2 - 1 for _ in range(sets)]
        w = [torch.rand(n, k, device=b.dev, dtype=torch.bfloat16) * 2 - 1 for _ in range(sets)]
        flops = 2.0 * m * n * k
        shape = {"m": m, "n": n, "k": k}
        i = [0]

        def mm():
            j = i[0] = (i[0] + 1) % sets
            return torch.mm(a[j], w[j].t())
        t = b.time_iters(mm, target_us=15000.0)
        s = summarize(t)
        b.write({"kind": "gemm", "source": "pytorch", "dtype": "bf16", "layout": "TN", "out_dtype": "bf16", "m": m, "n": n,
                 "k": k, "rotating_sets": sets, "time_us": s, "tflops": flops / (s["median"] * 1e6)})
        if fp8 is not None and hasattr(torch, "_scaled_mm"):
            a8 = [x.to(fp8) for x in a]
            w8 = [x.to(fp8) for x in w]
            for fast in (True, False):
                def smm():
                    j = i[0] = (i[0] + 1) % sets
                    return torch._scaled_mm(a8[j], w8[j].t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=fast)
                try:
                    t = b.time_iters(smm, target_us=15000.0)
                except RuntimeError as e:
                    b.write({"kind": "error", "group": "pytorch-gemm", "what": f"fp8 {m}x{n}x{k} fast={fast}",
                             "message": str(e)[:300]})
                    continue
                s = summarize(t)
                b.write({"kind": "gemm", "source": "pytorch", "dtype": "fp8_e4m3", "fast_accum": fast,
                         "scaling": "per_tensor", "layout": "TN", "out_dtype": "bf16", "m": m, "n": n, "k": k,
                         "rotating_sets": sets, "time_us": s, "tflops": flops / (s["median"] * 1e6)})
            del a8, w8
        del a, w
        torch.cuda.empty_cache()


def pointwise(b, torch, F):
    sizes = [(16384, 4096)] if b.args.quick else \
        [(16384, 1024), (16384, 2048), (16384, 4096), (16384, 8192), (8192, 768), (8192, 1024)]
    bf = torch.bfloat16
    for tokens, hidden in sizes:
        if b.late(f"pointwise tokens={tokens} h={hidden}"):
            return
        n = tokens * hidden
        shape = {"tokens": tokens, "hidden": hidden}
        x = torch.randn(tokens, hidden, device=b.dev, dtype=bf)
        y = torch.randn(tokens, hidden, device=b.dev, dtype=bf)
        w = torch.randn(hidden, device=b.dev, dtype=bf)
        bias = torch.randn(hidden, device=b.dev, dtype=bf)
        b.kernel("layer_norm_fwd", shape, "bf16", b.time_iters(lambda: F.layer_norm(x, (hidden,), w, bias)),
                 nbytes=2 * n * 2)
        b.kernel("rms_norm_fwd", shape, "bf16", b.time_iters(lambda: F.rms_norm(x, (hidden,), w)), nbytes=2 * n * 2)
        # The input-gradient kernel alone (the weights need no gradient here): the simulator prices a training
        # step's second norm-backward kernel, the weight gradient, apart at this kernel's rate.
        for name, fn in (("layer_norm_bwd", lambda t: F.layer_norm(t, (hidden,), w, bias)),
                         ("rms_norm_bwd", lambda t: F.rms_norm(t, (hidden,), w))):
            xr = x.detach().clone().requires_grad_(True)
            out = fn(xr)
            g = torch.randn_like(out)
            b.kernel(name, shape, "bf16",
                     b.time_iters(lambda: torch.autograd.grad(out, xr, g, retain_graph=True)), nbytes=3 * n * 2)
        b.kernel("residual_add", shape, "bf16", b.time_iters(lambda: torch.add(x, y)), nbytes=3 * n * 2)
        # Under autocast the residual stream stays fp32 and the sublayer's output is bf16: the add that joins them.
        xf = x.float()
        b.kernel("residual_add_fp32_bf16", shape, "fp32", b.time_iters(lambda: torch.add(xf, y)), nbytes=n * (4 + 2 + 4))
        big = torch.randn(tokens, 4 * hidden, device=b.dev, dtype=bf)
        shape4 = {"tokens": tokens, "hidden": 4 * hidden}
        b.kernel("gelu_tanh", shape4, "bf16", b.time_iters(lambda: F.gelu(big, approximate="tanh")),
                 nbytes=2 * 4 * n * 2)
        b.kernel("silu", shape4, "bf16", b.time_iters(lambda: F.silu(big)), nbytes=2 * 4 * n * 2)
        b.kernel("cast_bf16_to_fp32", shape, "bf16", b.time_iters(lambda: x.float()), nbytes=n * (2 + 4))
        b.kernel("cast_fp32_to_bf16", shape, "fp32", b.time_iters(lambda: xf.to(bf)), nbytes=n * (4 + 2))
        if hasattr(torch, "float8_e4m3fn"):
            b.kernel("cast_bf16_to_fp8_e4m3", shape, "bf16", b.time_iters(lambda: x.to(torch.float8_e4m3fn)),
                     nbytes=n * (2 + 1))
        b.kernel("amax_bf16", shape, "bf16", b.time_iters(lambda: x.abs().amax()), nbytes=n * 2,
                 note="eager: abs then amax, two kernels")
        del x, y, big, xf
        torch.cuda.empty_cache()


def norms(b, torch):
    """LayerNorm's and RMSNorm's three kernels apart, in the dtype they run in: fp32 under autocast (autocast runs
    norms in fp32 on the fp32 residual stream), bf16 for a model trained in bf16 (ops {layer,rms}_norm_{fwd,bwd,
    bwd_weight}_{fp32,bf16}). bwd: the input-gradient kernel alone (weights need no gradient); bwd_weight: the weight
    (and bias) gradient kernel alone (the input needs none): a column reduction over every row, whose time follows
    the rows more than the bytes (H200 traces: 42.5 µs at 8192×768 fp32, 49.6 at 8192×2048, 33.5 at 4096×3072).
    The kernels each call launches are listed once per op (`kernels`, from the profiler)."""
    sizes = [(8192, 2048)] if b.args.quick else \
        [(t, h) for t in (2048, 4096, 8192, 16384) for h in (768, 1024, 2048, 3072, 4096, 5120, 8192)]
    F = torch.nn.functional
    named = set()
    for norm in ("layer", "rms"):
        for dname, dt, e in (("fp32", torch.float32, 4), ("bf16", torch.bfloat16, 2)):
            for tokens, hidden in sizes:
                if b.late(f"{norm}_norm {dname} tokens={tokens} h={hidden}"):
                    return
                n = tokens * hidden
                shape = {"tokens": tokens, "hidden": hidden}
                x = torch.randn(tokens, hidden, device=b.dev, dtype=dt)
                w = torch.randn(hidden, device=b.dev, dtype=dt)
                bias = torch.randn(hidden, device=b.dev, dtype=dt)
                fn = (lambda t, wt, bt: F.layer_norm(t, (hidden,), wt, bt)) if norm == "layer" else \
                    (lambda t, wt, bt: F.rms_norm(t, (hidden,), wt))
                xr = x.detach().clone().requires_grad_(True)
                wr = w.detach().clone().requires_grad_(True)
                br = bias.detach().clone().requires_grad_(True)
                out_x = fn(xr, w, bias)
                out_w = fn(x, wr, br)
                g = torch.randn_like(out_x)
                wgrads = (wr, br) if norm == "layer" else (wr,)
                cases = (("fwd", lambda: fn(x, w, bias), 2 * n * e),
                         ("bwd", lambda: torch.autograd.grad(out_x, xr, g, retain_graph=True), 3 * n * e),
                         ("bwd_weight", lambda: torch.autograd.grad(out_w, wgrads, g, retain_graph=True), 2 * n * e))
                for what, call, nbytes in cases:
                    op = f"{norm}_norm_{what}_{dname}"
                    extra = {}
                    if op not in named:
                        named.add(op)
                        try:
                            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                                call()
                                torch.cuda.synchronize()
                            extra["kernels"] = sorted({ev.name[:120] for ev in prof.events()
                                                       if ev.device_type == torch.autograd.DeviceType.CUDA})
                        except Exception as ex:  # the listing is a check, not the measurement
                            extra["kernels_error"] = repr(ex)[:200]
                    b.kernel(op, shape, dname, b.time_iters(call), nbytes=nbytes, **extra)
                del x, w, bias, xr, wr, br, out_x, out_w, g
                torch.cuda.empty_cache()


def log_softmax(b, torch):
    """The loss's log-softmax over the vocabulary, forward and the input-gradient kernel of its backward (as the norms'
    backward is timed), in bf16 (autocast runs it on the bf16 logits and casts its output to fp32 for nll_loss) and in
    fp32 (a model whose loss takes logits.float()): ops log_softmax_{fwd,bwd}_{bf16,fp32}."""
    sizes = [(4096, 50304)] if b.args.quick else [(4096, 50304), (16384, 50304), (4096, 128256), (8192, 32000)]
    for tokens, vocab in sizes:
        if b.late(f"log_softmax tokens={tokens} vocab={vocab}"):
            return
        for name, dt, e in (("bf16", torch.bfloat16, 2), ("fp32", torch.float32, 4)):
            n = tokens * vocab
            shape = {"tokens": tokens, "vocab": vocab}
            x = torch.randn(tokens, vocab, device=b.dev, dtype=dt)
            b.kernel("log_softmax_fwd_" + name, shape, name, b.time_iters(lambda: torch.log_softmax(x, -1)),
                     nbytes=2 * n * e)
            xr = x.detach().requires_grad_(True)
            out = torch.log_softmax(xr, -1)
            g = torch.randn_like(out)
            b.kernel("log_softmax_bwd_" + name, shape, name,
                     b.time_iters(lambda: torch.autograd.grad(out, xr, g, retain_graph=True)), nbytes=3 * n * e)
            del x, xr, out, g
            torch.cuda.empty_cache()


def adamw(b, torch, dtype="fp32", impl="fused"):
    """AdamW's step over a GPT model's own parameter tensors (optimizer_state.gpt_shapes: embeddings, untied head,
    every layer's weights, biases and norm parameters; five models, 0.16 to 2.0 billion parameters), in the state a
    training step runs it. Fused AdamW (ops adamw_fused_step_gpt_heated, over fp32 parameters, and
    adamw_fused_step_bf16_gpt_heated, bf16 parameters and states: a model trained in bf16 without autocast) runs
    right after the backward's GEMMs, at the clock they leave behind: timed after 1 s of 8192³ GEMMs (timing.Heater).
    Its math per byte makes it follow the clock; run 91: over the 1.4B model's tensors 10.61 ms at rest, 10.96 heated,
    11.75 in the step's traces with the head's 103M parameters (10.96 × 1.073 = 11.76). AdamW's default foreach
    step (adamw_foreach_step_gpt, adamw_foreach_step_bf16_gpt: eight multi-tensor passes, 80 bytes a fp32 parameter,
    40 a bf16 one, weight decay on as AdamW's default) is memory-bound passes: timed at rest (run 91: heated
    0.7-3.5% slower; at rest 2% over the step's traces)."""
    from optimizer_state import gpt_shapes, make_params, numel  # beside this script
    from timing import Heater, looped
    models = [(12, 2048)] if b.args.quick else [(12, 768), (24, 1024), (12, 2048), (24, 2048), (8, 4096)]
    if b.args.adamw_models:  # LAYERSxHIDDEN,...
        models = [tuple(int(x) for x in w.split("x")) for w in b.args.adamw_models.split(",")]
    elem = 4 if dtype == "fp32" else 2
    tdtype = torch.float32 if dtype == "fp32" else torch.bfloat16
    op = f"adamw_{impl}_step" + ("" if dtype == "fp32" else "_" + dtype) + "_gpt"
    op += "_heated" if impl == "fused" else ""
    if impl == "fused":
        accesses, note = 7, "reads param, grad, exp_avg, exp_avg_sq; writes param, exp_avg, exp_avg_sq"
    else:  # tensors read or written per pass
        accesses = 2 + 3 + 2 + 3 + 2 + 2 + 2 + 4
        note = ("eight passes: params *= 1-lr*wd, exp_avg lerp, exp_avg_sq *= beta2, addcmul, denom = sqrt, "
                "/= bias correction, += eps, params addcdiv")
    heater = Heater(b.dev) if impl == "fused" else None
    for layers, hidden in models:
        if b.late(f"{op} layers={layers} hidden={hidden}"):
            return
        shapes = gpt_shapes(layers, hidden, 50304, 2048)
        total = sum(numel(sh) for sh in shapes)
        params = make_params(shapes, tdtype)
        opt = torch.optim.AdamW(params, lr=1e-4, fused=impl == "fused", foreach=True if impl == "foreach" else None)
        if heater:
            times = looped(opt.step, reps=b.args.adamw_reps, inner=3, holder=heater, hold_s=1.0)
        else:
            times = b.time_iters(opt.step, iters=10, warmup=2, target_us=5e4)
        b.kernel(op, {"params": total, "tensors": len(shapes), "layers": layers, "hidden": hidden}, dtype, times,
                 nbytes=total * elem * accesses, note=note, heat_s=1.0 if heater else 0.0)
        del params, opt
        torch.cuda.empty_cache()


def dispatch(b, torch):
    a = torch.randn(16, device=b.dev)
    c = torch.randn(16, device=b.dev)
    out = torch.empty_like(a)
    for _ in range(200):
        torch.add(a, c, out=out)
    torch.cuda.synchronize()
    host = []
    for _ in range(20):
        for _ in range(100):
            t = time.perf_counter()
            torch.add(a, c, out=out)
            host.append((time.perf_counter() - t) * 1e6)
        torch.cuda.synchronize()
    b.write({"kind": "dispatch", "op": "eager_host", "source": "pytorch", "what": "torch.add(a, b, out=c), 16 floats",
             "time_us": summarize(host)})
    # Device time per tiny op when the host only queues them (back to back).
    per = []
    for _ in range(10):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(500):
            torch.add(a, c, out=out)
        e1.record()
        torch.cuda.synchronize()
        per.append(e0.elapsed_time(e1) * 1e3 / 500)
    b.write({"kind": "dispatch", "op": "eager_per_op_device", "source": "pytorch",
             "what": "events around 500 eager torch.add / 500 (host-bound when dispatch > kernel)",
             "time_us": summarize(per)})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=0.0)
    ap.add_argument("--groups", default="dispatch,pointwise,norms,log_softmax,attention,adamw,adamw_bf16,adamw_foreach,"
                                        "adamw_foreach_bf16,gemm")
    ap.add_argument("--gemm-shapes", default="", help="extra GEMM shapes, one 'm n k' per line")
    ap.add_argument("--adamw-models", default="", help="AdamW groups: the GPT models, LAYERSxHIDDEN comma-separated "
                                                      "(default: 12x768,24x1024,12x2048,24x2048,8x4096)")
    ap.add_argument("--adamw-reps", type=int, default=7, help="fused AdamW: heated repetitions per model")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"stepsim_torch_bench: PyTorch is not installed ({e}); nothing was measured.", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("stepsim_torch_bench: no CUDA GPU is visible to PyTorch; nothing was measured.", file=sys.stderr)
        return 2
    b = Bench(args, torch)
    torch.cuda.set_device(args.device)
    p = torch.cuda.get_device_properties(args.device)
    b.write({"kind": "metadata", "schema": "stepsim-bench/1", "tool": "stepsim_torch_bench.py",
             "torch_version": torch.__version__, "cuda_version": torch.version.cuda,
             "gpus": [{"index": args.device, "name": p.name, "sms": p.multi_processor_count,
                       "memory_gib": p.total_memory / 2**30}],
             "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    groups = args.groups.split(",")
    for g in groups:
        t = time.monotonic()
        print(f"stepsim_torch_bench: {g} ...", file=sys.stderr, flush=True)
        if g == "dispatch":
            dispatch(b, torch)
        elif g == "pointwise":
            pointwise(b, torch, F)
        elif g == "log_softmax":
            log_softmax(b, torch)
        elif g == "attention":
            attention(b, torch, F)
        elif g == "adamw":
            adamw(b, torch)
        elif g == "adamw_bf16":
            adamw(b, torch, "bf16")
        elif g == "adamw_foreach":
            adamw(b, torch, "fp32", "foreach")
        elif g == "adamw_foreach_bf16":
            adamw(b, torch, "bf16", "foreach")
        elif g == "norms":
            norms(b, torch)
        elif g == "gemm":
            gemms(b, torch)
        else:
            print(f"stepsim_torch_bench: unknown group {g}", file=sys.stderr)
            return 64
        b.write({"kind": "group_done", "group": "pytorch-" + g, "wall_s": time.monotonic() - t})
    b.write({"kind": "run_done", "tool": "stepsim_torch_bench.py", "wall_s": time.monotonic() - b.t0})
    return 0


if __name__ == "__main__":
    sys.exit(main())
