#!/usr/bin/env python3
"""A GPU's speed over seconds of sustained load, window by window: does it hold still?

A training step's timed steps do not run at one speed: in every run of the 1.4B model on H200 (one GPU and two) the
steps slowed by 4-17% for two or three steps about once a second, in the same pattern from run to run
(results/validation/measured, `step_time_ms.all`). This script separates the GPU from the model: under torchrun,
every rank at once, `--seconds` of back-to-back 8192x8192x8192 BF16 GEMMs (then the same of causal SDPA forward and
backward at the 1.4B model's shape, then of a memory-bound add over 1 GiB operands), with a CUDA event after every
`--per-window` calls, so each window's rate is known; the windows'
start times are kept so the series can be laid beside nvidia-smi's clock and power samples.

--dtypes bf16,fp16,... runs the GEMM and SDPA loads once per dtype listed, in that order (the memory-bound add once,
at the end), each after `--rest` idle seconds: fp16 and bf16 tensor cores have the same peak, but at the power limit
what a kernel draws decides its clock.

Writes JSON Lines {"kind": "sustained_speed", "rank", "gpu", "load": "gemm"|"attention"|"memory", "dtype",
"window_s", "t_s": [...], "rate": [...], "unit": "TFLOP/s"|"GB/s", "first_100ms": the rate over the windows that
start in the first 0.1 s, "median", "p10", "p90", "below_97pct_of_p90": fraction of windows}, one per rank, load and
dtype.
Usage: torchrun --standalone --nproc-per-node N sustained_speed.py --out FILE [--seconds 8] [--per-window 5]
       [--dtypes bf16] [--rest 0]
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pytorch"))
from gathered import join_ranks, write_gathered  # noqa: E402


def series(fn, work, seconds, per_window):
    """Start offsets (s) and rates (work per second) of consecutive windows of `per_window` calls over `seconds`."""
    e = torch.cuda.Event(enable_timing=True)
    e.record()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    # queue ahead in chunks so the host never starves the stream, keeping at most ~1 s of work in flight
    marks = [e]
    while time.perf_counter() - t0 < seconds:
        for _ in range(per_window):
            fn()
        m = torch.cuda.Event(enable_timing=True)
        m.record()
        marks.append(m)
        if len(marks) % 50 == 0:
            marks[-40].synchronize()
    torch.cuda.synchronize()
    ends = [marks[0].elapsed_time(m) * 1e-3 for m in marks]
    t = ends[:-1]
    rate = [work * per_window / (b - a) for a, b in zip(ends, ends[1:])]
    return t, rate, (ends[-1] / (len(ends) - 1))


def summary(rate):
    s = sorted(rate)
    p90 = s[int(0.9 * (len(s) - 1))]
    return {"median": statistics.median(s), "p10": s[int(0.1 * (len(s) - 1))], "p90": p90,
            "below_97pct_of_p90": sum(1 for x in s if x < 0.97 * p90) / len(s)}


def first(t, rate, seconds=0.1):
    """The rate over the windows that start in the first `seconds` (the board not yet at its power limit)."""
    early = [r for s, r in zip(t, rate) if s < seconds] or rate[:1]
    return len(early) / sum(1 / r for r in early)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--per-window", type=int, default=5, help="calls between two events")
    ap.add_argument("--dtypes", default="bf16", help="the GEMM and SDPA loads' dtypes, in order: bf16, fp16")
    ap.add_argument("--rest", type=float, default=0.0, help="idle seconds before each load")
    a = ap.parse_args()
    rank, dev = join_ranks()
    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16}
    sdpa_flop = 4 * 4 * 16 * 2048 * 2048 * 128 / 2 * 3.5 / 1e12  # causal: forward 2 GEMMs, backward 5, halved

    def loads(name):
        dt = dtypes[name]
        x, w, y = (torch.randn(8192, 8192, device=dev, dtype=dt) for _ in range(3))
        # causal SDPA forward and backward at the 1.4B model's shape (batch 4, 16 heads, 2048 tokens, head_dim 128)
        qkv = [torch.randn(4, 16, 2048, 128, device=dev, dtype=dt, requires_grad=True) for _ in range(3)]
        dout = torch.randn(4, 16, 2048, 128, device=dev, dtype=dt)

        def sdpa():
            torch.autograd.grad(F.scaled_dot_product_attention(*qkv, is_causal=True), qkv, dout)

        return [("gemm", name, lambda: torch.mm(x, w, out=y), 2 * 8192**3 / 1e12, "TFLOP/s"),
                ("attention", name, sdpa, sdpa_flop, "TFLOP/s")]

    p, q, r = (torch.empty(2**29, device=dev, dtype=torch.bfloat16) for _ in range(3))
    plan = [ld for name in a.dtypes.split(",") for ld in loads(name)]
    plan.append(("memory", "bf16", lambda: torch.add(p, q, out=r), 3 * 2**30 / 1e9, "GB/s"))
    recs = []
    for load, dtype, fn, work, unit in plan:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        time.sleep(a.rest)
        dist.barrier()
        torch.cuda.synchronize()
        wall = time.time()
        t, rate, window_s = series(fn, work, a.seconds, a.per_window)
        recs.append({"kind": "sustained_speed", "rank": rank, "gpu": torch.cuda.get_device_name(dev), "load": load,
                     "dtype": dtype, "start_unix_s": wall, "window_s": window_s, "unit": unit,
                     "t_s": [round(v, 5) for v in t], "rate": [round(v, 2) for v in rate],
                     "first_100ms": first(t, rate), **summary(rate)})
        s = recs[-1]
        print(f"rank {rank} {load} {dtype}: {len(rate)} windows of {1e3 * window_s:.1f} ms, first 0.1 s "
              f"{s['first_100ms']:.1f}, median {s['median']:.1f} {unit}, p10 {s['p10']:.1f}, p90 {s['p90']:.1f}, "
              f"{100 * s['below_97pct_of_p90']:.0f}% of windows under 97% of p90", flush=True)
    write_gathered(a.out, recs)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
