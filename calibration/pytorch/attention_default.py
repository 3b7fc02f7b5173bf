#!/usr/bin/env python3
"""Attention as a training step runs it: what stepsim_torch_bench.py (flash backend, contiguous q/k/v) leaves out.

- SDPA with PyTorch's default backend choice (cuDNN on Hopper with recent PyTorch; the kernel names that ran are
  recorded), on q, k, v made as a GPT block makes them: views of one fused QKV projection, transposed to
  (batch, heads, seq, head_dim). Causal, head_dim 64, 96 and 128, sequence 512 to 8192, 4096 to 16384 tokens.
  Forward, then backward from forward + backward minus forward, each timed over back-to-back calls between CUDA
  events, random data.

--step (source "pytorch-step"): the same grid inside a GPT block, as a training step runs it: x (batch, seq,
  hidden) → LayerNorm → fused QKV Linear → split, view, transpose → SDPA → transpose, reshape → output projection →
  residual → LayerNorm → MLP (tanh GELU) → residual, under bf16 autocast with fp32 parameters (--block attention:
  only the QKV projection, SDPA and the output projection, in bf16), forward and backward (autograd.grad for x and
  every weight), --warm-s seconds back to back, then 10 iterations under the PyTorch profiler (CUDA activity). Per
  iteration, the attention kernels' own device time: forward the fprop kernel, backward the bprop kernel and
  cuDNN's helpers beside it (dO·O and the dQ conversion). Here q, k, v and dO have the strides of a step's (row
  stride 3·hidden, dO a view of the projection's input gradient), the kernels run between a step's kernels (L2 and,
  warmed, the power state of a step), and no host time or launch gap counts.

--sustain-s S (not with --step): time each shape at the power limit it holds the board at, as the GEMM grid
  (gemm_training_shapes.py, back to back for minutes) is timed: S seconds of that shape's own calls first, then before
  every timed loop 30 ms more of them ahead of the spin that lets the host queue the loop (instead of the spin alone,
  which draws next to nothing). The records carry "sustain_s".

Writes JSON Lines in stepsim_torch_bench.py's record format ("kind": "kernel", "source": "pytorch" or
"pytorch-step").
Usage: python3 attention_default.py --out FILE [--tokens 4096,8192,...] [--sustain-s S]
                                    [--step [--warm-s S] [--block full|attention]]
"""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F

from timing import hold_gpu, looped, summarize


def kernel_names(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA})


TOKENS = (4096, 8192, 16384)


def grid(token_counts=TOKENS):
    """(head_dim, seq, tokens, heads, batch, hidden, shape record) of the measured grid: causal, head_dim 64, 96 and
    128 with 16 heads, sequence 512 to 8192, 4096 to 16384 tokens (a batch of at least one sequence; --tokens picks
    others). Until run 56 it was head_dim 64 (12 heads) and 128 (16 heads), sequence 1024 and 2048, 8192 and 16384
    tokens, and a step at 4096 tokens took the rate of 2048 (run 55: 21% slow). Run 75 measured 1024 and 2048 tokens
    (a micro-batch of one sequence: 16 and 20 heads' worth of batch × heads in the held-out steps of runs 71-72), and
    priced from them the attention of those steps read 9% and 22% over the measured, where the rate of the grid's
    smallest batch at that length (32) read 13% and 3% under: the default grid and the fit leave them out
    (calibration/profiles/h200x2/NOTES.md, attention)."""
    # the lengths and head_dims a step uses most first (2048, 8192, 128, 64), so that a budget cuts the rest
    for s in (2048, 8192, 1024, 4096, 512):
        for d in (128, 64, 96):
            for tokens in token_counts:
                heads = 16
                b = tokens // s
                if b < 1:
                    continue
                yield d, s, tokens, heads, b, heads * d, {"batch": b, "heads": heads, "seq": s, "head_dim": d,
                                                          "causal": True, "layout": "qkv_view"}


def sustained(fn, first_s, each_s=0.03):
    """timing.looped's holder for --sustain-s: `first_s` seconds of fn's own calls on its first use, `each_s` on
    every later one, then the spin that parks the stream while the host queues the timed loop."""
    per_s = max(1e-6, looped(fn, reps=1)[0] * 1e-6)
    todo = [first_s]

    def hold(seconds):
        for _ in range(math.ceil(max(todo[0], each_s) / per_s)):
            fn()
        todo[0] = each_s
        hold_gpu(seconds)
    return hold


def attention(out, dev, token_counts=TOKENS, sustain_s=0.0, budget_s=0.0):
    start = time.perf_counter()
    for d, s, tokens, heads, b, h, shape in grid(token_counts):
        if budget_s and time.perf_counter() - start > budget_s:
            print(f"budget spent: skipping the shapes from {shape}", flush=True)
            break
        # q, k, v laid out as views of a fused QKV projection: (batch, seq, heads, head_dim) transposed.
        leaves = [torch.randn(b, s, heads, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                  for _ in range(3)]

        def make():
            return [t.transpose(1, 2) for t in leaves]

        g = torch.randn(b, heads, s, d, device=dev, dtype=torch.bfloat16)
        fwd = lambda: F.scaled_dot_product_attention(*make(), is_causal=True)
        # Back-to-back launches between two events, as in a training step: SDPA's host-side setup
        # overlaps the previous launch instead of being counted as device time.
        tf = looped(fwd, holder=sustained(fwd, sustain_s)) if sustain_s else looped(fwd)
        names_f = kernel_names(fwd)
        flops = 2.0 * b * s * s * h  # causal: half of 4·b·s²·h
        extra = {"sustain_s": sustain_s} if sustain_s else {}
        out.write(json.dumps({"kind": "kernel", "op": "sdpa_default_fwd", "source": "pytorch", "dtype": "bf16",
                              "shape": shape, "time_us": summarize(tf), "flops": flops,
                              "tflops": flops / summarize(tf)["median"] / 1e6, "kernels": names_f, **extra}) + "\n")
        def fwd_bwd():
            torch.autograd.grad(fwd(), leaves, g)
        # Backward = (forward + backward) − forward, both looped; autograd.grad accumulates nothing.
        tfb = looped(fwd_bwd, holder=sustained(fwd_bwd, sustain_s)) if sustain_s else looped(fwd_bwd)
        tb = [max(1e-3, x - summarize(tf)["median"]) for x in tfb]
        o = fwd()
        names_b = kernel_names(lambda: torch.autograd.grad(o, leaves, g))
        out.write(json.dumps({"kind": "kernel", "op": "sdpa_default_bwd", "source": "pytorch", "dtype": "bf16",
                              "shape": shape, "time_us": summarize(tb), "flops": 2.5 * flops,
                              "tflops": 2.5 * flops / summarize(tb)["median"] / 1e6,
                              "kernels": names_b, **extra}) + "\n")
        del leaves, g
        torch.cuda.empty_cache()


def is_attention_kernel(name):
    n = name.lower()
    return "memset" not in n and any(x in n for x in ("sdpa", "cudnn", "flash", "fmha"))


def attention_in_block(out, dev, warm_s, full, iters=10, token_counts=TOKENS):
    for d, s, tokens, heads, b, h, shape in grid(token_counts):
        f32 = lambda *size, scale=1.0: (torch.randn(*size, device=dev) * scale).requires_grad_()
        if full:  # a whole pre-norm GPT block under bf16 autocast, fp32 parameters, as train_gpt.py builds it
            x = f32(b, s, h)
            ws = [f32(3 * h, h, scale=h ** -0.5), f32(h, h, scale=h ** -0.5), f32(4 * h, h, scale=h ** -0.5),
                  f32(h, 4 * h, scale=(4 * h) ** -0.5), f32(h), f32(h), f32(h), f32(h)]
            g = torch.randn(b, s, h, device=dev)
        else:  # the attention's part only, in bf16
            x = torch.randn(b, s, h, device=dev, dtype=torch.bfloat16, requires_grad=True)
            ws = [(torch.randn(3 * h, h, device=dev, dtype=torch.bfloat16) * h ** -0.5).requires_grad_(),
                  (torch.randn(h, h, device=dev, dtype=torch.bfloat16) * h ** -0.5).requires_grad_()]
            g = torch.randn(b, s, h, device=dev, dtype=torch.bfloat16)

        def attend(z, w_qkv, w_proj):
            q, k, v = F.linear(z, w_qkv).split(h, dim=-1)
            q, k, v = (t.view(b, s, heads, d).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return F.linear(y.transpose(1, 2).reshape(b, s, h), w_proj)

        def block():
            if full:
                w_qkv, w_proj, w_fc, w_out, n1w, n1b, n2w, n2b = ws
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    x1 = x + attend(F.layer_norm(x, (h,), n1w, n1b), w_qkv, w_proj)
                    y = x1 + F.linear(F.gelu(F.linear(F.layer_norm(x1, (h,), n2w, n2b), w_fc), approximate="tanh"),
                                      w_out)
            else:
                y = attend(x, *ws)
            torch.autograd.grad(y, [x] + ws, g)

        from torch.profiler import ProfilerActivity, profile
        # warm_s of the block back to back first: a step runs seconds of such work, the board at its power limit
        t0 = time.perf_counter()
        while True:
            for _ in range(5):
                block()
            torch.cuda.synchronize()
            if time.perf_counter() - t0 >= warm_s:
                break
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            for _ in range(iters):
                block()
            torch.cuda.synchronize()
        kernels = sorted((e.time_range.start, e.time_range.elapsed_us(), e.name) for e in p.events()
                         if e.device_type == torch.autograd.DeviceType.CUDA and is_attention_kernel(e.name))
        per_iter = []  # [forward µs, backward µs, kernel names] per iteration, a new one at each fprop kernel
        for _, us, name in kernels:
            fwd = "fprop" in name or "fwd" in name
            if fwd:
                per_iter.append([0.0, 0.0, set()])
            if per_iter:
                per_iter[-1][0 if fwd else 1] += us
                per_iter[-1][2].add(name)
        if len(per_iter) != iters:
            raise RuntimeError(f"{shape}: {len(per_iter)} attention forwards profiled in {iters} iterations")
        flops = 2.0 * b * s * s * h
        for op, i, f in (("sdpa_default_fwd", 0, flops), ("sdpa_default_bwd", 1, 2.5 * flops)):
            t = summarize([it[i] for it in per_iter])
            names = sorted(set().union(*(it[2] for it in per_iter)))
            out.write(json.dumps({"kind": "kernel", "op": op, "source": "pytorch-step", "dtype": "bf16",
                                  "shape": dict(shape, layout="gpt_block" if full else "attention_block"),
                                  "warm_s": warm_s, "time_us": t,
                                  "flops": f,
                                  "tflops": f / t["median"] / 1e6,
                                  "kernels": [n for n in names if ("fprop" in n or "fwd" in n) == (i == 0)]}) + "\n")
        del x, ws, g
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--step", action="store_true", help="inside a GPT block's forward and backward, profiled")
    ap.add_argument("--warm-s", type=float, default=0.0, help="--step: run each shape's block this long first")
    ap.add_argument("--block", choices=("full", "attention"), default="full",
                    help="--step: a whole GPT block (norms, MLP, autocast, fp32 parameters) or the attention's part")
    ap.add_argument("--sustain-s", type=float, default=0.0,
                    help="time each shape at the power limit after this many seconds of its own calls (not --step)")
    ap.add_argument("--budget-s", type=float, default=0.0, help="stop starting shapes after this many seconds (0: none)")
    ap.add_argument("--tokens", default=",".join(map(str, TOKENS)),
                    help="comma-separated token counts of the grid (batch = tokens / sequence, at least one)")
    a = ap.parse_args()
    words = a.tokens.split(",")
    if not all(w.isdigit() and int(w) > 0 for w in words):
        ap.error(f"--tokens: expected comma-separated positive integers, got {a.tokens!r}")
    tokens = tuple(int(w) for w in words)
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    with open(a.out, "w") as out:
        out.write(json.dumps({"kind": "metadata", "tool": "attention_default.py", "torch": torch.__version__,
                              "gpu": torch.cuda.get_device_name(), "cudnn": torch.backends.cudnn.version()}) + "\n")
        if a.step:
            attention_in_block(out, dev, a.warm_s, a.block == "full", token_counts=tokens)
        else:
            attention(out, dev, tokens, a.sustain_s, a.budget_s)


if __name__ == "__main__":
    main()
