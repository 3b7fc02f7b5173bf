#!/usr/bin/env python3
"""Why do GEMM rates differ between stepsim-bench and a PyTorch micro-benchmark file of torch.mm timings (h200x2-pytorch-micro.jsonl)? Times BF16 torch.mm
over a few shapes while varying one thing at a time: the data (randn, uniform [-1, 1), zeros), the layout (NN: a @ b
with b (k×n) row-major; NT: a @ w.t() with w (n×k) row-major, what stepsim-bench's TN cuBLASLt call is), and the L2
(warm: the same buffers every call; cold: rotating sets), plus FP8 _scaled_mm for randn vs uniform.
Writes JSON Lines ("kind": "gemm_crosscheck") with the median of per-iteration event times.

usage: gemm_crosscheck.py --out FILE
"""
import argparse
import json
import sys

import torch


def timed(fn, iters=30, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    for i in range(iters):
        ev[i].record()
        fn()
    ev[iters].record()
    torch.cuda.synchronize()
    t = sorted(ev[i].elapsed_time(ev[i + 1]) * 1e3 for i in range(iters))
    return t[len(t) // 2], t[len(t) // 10], t[(9 * len(t)) // 10]


def make(kind, shape, dtype=torch.bfloat16):
    if kind == "randn":
        return torch.randn(*shape, device="cuda", dtype=dtype)
    if kind == "uniform":
        return torch.rand(*shape, device="cuda", dtype=dtype) * 2 - 1
    return torch.zeros(*shape, device="cuda", dtype=dtype)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = open(args.out, "w")
    shapes = [(8192, 8192, 8192), (4096, 4096, 4096), (8192, 8192, 2048)]
    for (m, n, k) in shapes:
        flops = 2.0 * m * n * k
        for data in ("randn", "uniform", "zeros"):
            for layout in ("NN", "NT"):
                for l2 in ("warm", "cold"):
                    if data == "zeros" and l2 == "cold":
                        continue
                    sets = 1 if l2 == "warm" else 3
                    a = [make(data, (m, k)) for _ in range(sets)]
                    b = [make(data, (k, n) if layout == "NN" else (n, k)) for _ in range(sets)]
                    i = [0]

                    def f():
                        j = i[0] = (i[0] + 1) % sets
                        return a[j] @ (b[j] if layout == "NN" else b[j].t())
                    med, p10, p90 = timed(f)
                    out.write(json.dumps({"kind": "gemm_crosscheck", "dtype": "bf16", "m": m, "n": n, "k": k, "data": data,
                                          "layout": layout, "l2": l2, "time_us_median": med, "time_us_p10": p10,
                                          "time_us_p90": p90, "tflops": flops / (med * 1e6)}) + "\n")
                    out.flush()
                    del a, b
        one = torch.ones((), device="cuda")
        for data in ("randn", "uniform"):
            for fast in (False, True):
                a = make(data, (m, k)).to(torch.float8_e4m3fn)
                w = make(data, (n, k)).to(torch.float8_e4m3fn)
                med, p10, p90 = timed(lambda: torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.bfloat16,
                                                               use_fast_accum=fast))
                out.write(json.dumps({"kind": "gemm_crosscheck", "dtype": "fp8_e4m3", "fast_accum": fast, "m": m, "n": n,
                                      "k": k, "data": data, "layout": "NT", "l2": "warm", "time_us_median": med,
                                      "tflops": flops / (med * 1e6)}) + "\n")
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
