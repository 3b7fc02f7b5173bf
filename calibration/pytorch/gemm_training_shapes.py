#!/usr/bin/env python3
"""BF16 (or, with --dtype fp16, FP16) GEMMs of transformer linears, as a training step launches them.

Two modes, both through PyTorch's own GEMM calls in the three forms a training step runs: forward
F.linear(x, W), input gradient dy @ W, weight gradient dy^T @ x (plus the LM head, vocab 50304).

Default (source "pytorch-loop"): narrow models (hidden 768 and 1024; the harness's grid starts at 1024), tokens
4096, 8192 and 16384. Each shape is timed over 20 back-to-back calls between CUDA events, the stream held behind
a spin kernel until the host has queued them (timing.looped), 7 repetitions, median kept; by default rotating 4
input sets (operands cold in L2), with --hot on one input set (operands L2-resident, as a narrow model's
activations and weights are when the previous kernel has just written them).

--step (source "pytorch-step"): the transformer grid, hidden 768 to 8192, tokens 2048 to 16384, each shape timed
twice. `back_to_back_us`: as above (3 repetitions). `time_us`: each GEMM alone between two events, followed by a
memory-bound add of about its own duration, after about 0.1 s of the same alternation, to see whether a step's
mix of kernels (a power state other than a long GEMM stretch's) changes GEMM speed; when the host cannot queue a
GEMM and its add faster than the GPU runs them (small shapes), the timed pairs are queued behind a spin kernel
first (`held`: true), so the events never time the host. Against real training steps the back-to-back time is
the closer (calibration/profiles/h200x2/NOTES.md, GEMMs), and `stepsim calibrate fit` takes it.

--dtype fp16: the operands in fp16, as fp16 autocast runs them (cuBLAS picks its own kernels for them: on H200 the
weight gradients of a 1.4B model's step ran another tile shape in fp16, 11% slower; results/validation/measured, run 82).

Writes JSON Lines {"kind": "gemm", "source", "dtype": "bf16"|"fp16", "m", "n", "k", "time_us", "tflops", ...}.
Usage: python3 gemm_training_shapes.py --out FILE [--hot | --step] [--deadline-s S] [--dtype bf16|fp16]
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

from timing import hold_gpu, looped, summarize

VOCAB = 50304


def linears(h):
    """(out, in) of a GPT block's linears and the LM head."""
    return [(3 * h, h), (h, h), (4 * h, h), (h, 4 * h), (VOCAB, h)]


def forms(T, o, i, pick):
    """The three GEMMs of one linear, keyed by (m, n, k) as the profile stores them."""
    return {
        (T, o, i): ("forward", lambda: F.linear(pick()[0], pick()[1])),
        (T, i, o): ("dgrad", lambda: torch.mm(pick()[2], pick()[1])),
        (o, i, T): ("wgrad", lambda: torch.mm(pick()[2].t(), pick()[0])),
    }


def input_sets(T, o, i, nsets, dev, dtype):
    return [(torch.randn(T, i, device=dev, dtype=dtype),
             torch.randn(o, i, device=dev, dtype=dtype),
             torch.randn(T, o, device=dev, dtype=dtype)) for _ in range(nsets)]


def interleaved(fn, gemm_us, dev, reps=5, warm_s=0.1):
    """Per-call device time (µs) of fn, each call between two events and followed by a memory-bound add of about
    the same duration, after warm_s of the same alternation (a tenth of it before later
    repetitions). Returns (times, add_us, held)."""
    # an add reads two bf16 vectors and writes one: 6 bytes per element at ~3 TB/s
    n = int(min(max(gemm_us * 1e-6 * 3.0e12 / 6, 1 << 16), 1 << 28))
    a, b, c = (torch.empty(n, device=dev, dtype=torch.bfloat16).uniform_() for _ in range(3))
    add = lambda: torch.add(a, b, out=c)
    add_us = statistics.median(looped(add, reps=3, inner=10))
    pair_us = gemm_us + add_us
    inner = int(min(20, max(4, 10e3 / pair_us)))
    warm = int(min(2000, max(10, warm_s * 1e6 / pair_us)))
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(inner):
        fn()
        add()
    host_us = (time.perf_counter() - t) * 1e6 / inner
    torch.cuda.synchronize()
    held = host_us * 1.5 > pair_us  # the host would fall behind the GPU: queue the timed pairs first
    out = []
    for r in range(reps):
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(inner)]
        for _ in range(warm if r == 0 else max(2, warm // 10)):  # settle the power state; later reps keep it
            fn()
            add()
        if held:
            hold_gpu(2.0 * host_us * inner * 1e-6 + 1e-3)
        for e0, e1 in ev:
            e0.record()
            fn()
            e1.record()
            add()
        torch.cuda.synchronize()
        out.append(statistics.fmean(e0.elapsed_time(e1) * 1e3 for e0, e1 in ev))
    del a, b, c
    return out, add_us, held


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--hot", action="store_true", help="one input set: operands stay in L2")
    mode.add_argument("--step", action="store_true", help="GEMMs alternated with memory-bound kernels, as in a step")
    ap.add_argument("--deadline-s", type=float, default=0, help="stop starting shapes after this many seconds")
    ap.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16")
    ap.add_argument("--hidden", default="", help="comma-separated hidden sizes (default: the mode's grid)")
    ap.add_argument("--tokens", default="", help="comma-separated token counts (default: the mode's grid)")
    args = ap.parse_args()
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    nsets = 1 if args.hot else 4
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    t0 = time.perf_counter()
    if args.step:
        hidden, tokens = (768, 1024, 1536, 2048, 2560, 4096, 8192), (2048, 4096, 8192, 16384)
    else:
        hidden, tokens = (768, 1024), (4096, 8192, 16384)
    if args.hidden:
        hidden = tuple(int(w) for w in args.hidden.split(","))
    if args.tokens:
        tokens = tuple(int(w) for w in args.tokens.split(","))
    # every third (hidden, tokens) pair first, then the ones between: a deadline keeps a grid spread over the sizes
    pairs = [(h, T) for h in hidden for T in tokens]
    pairs = pairs[0::3] + pairs[1::3] + pairs[2::3]
    seen = set()
    with open(args.out, "w") as out:
        out.write(json.dumps({"kind": "metadata", "tool": "gemm_training_shapes.py", "torch": torch.__version__,
                              "gpu": torch.cuda.get_device_name(), "mode": "step" if args.step else "loop"}) + "\n")
        for h, T in pairs:
            for (o, i) in linears(h):
                if args.deadline_s and time.perf_counter() - t0 > args.deadline_s:
                    out.write(json.dumps({"kind": "skipped", "group": "gemm", "what": f"hidden {h} tokens {T}"}) + "\n")
                    continue
                # operands above the L2 many times over need no rotation (and would need gigabytes)
                big = 2 * (T * i + o * i + T * o) > (256 << 20)
                sets = input_sets(T, o, i, 1 if big else nsets, dev, dtype)
                k = [0]

                def pick():
                    k[0] += 1
                    return sets[k[0] % len(sets)]
                for (m, n, kk), (form, fn) in forms(T, o, i, pick).items():
                    if (m, n, kk) in seen:
                        continue
                    seen.add((m, n, kk))
                    b2b = summarize(looped(fn, reps=3 if args.step else 7))
                    rec = {"kind": "gemm", "source": "pytorch-step" if args.step else "pytorch-loop", "dtype": args.dtype,
                           "l2": "hot" if args.hot else "cold", "form": form, "m": m, "n": n, "k": kk}
                    if args.step:
                        times, add_us, held = interleaved(fn, b2b["median"], dev)
                        t = summarize(times)
                        rec.update({"time_us": t, "back_to_back_us": b2b["median"], "add_us": add_us, "held": held})
                    else:
                        t = b2b
                        rec["time_us"] = t
                    rec["tflops"] = 2.0 * m * n * kk / t["median"] / 1e6
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                del sets
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
