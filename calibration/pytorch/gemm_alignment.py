#!/usr/bin/env python3
"""BF16 GEMMs whose dimension is not a multiple of cuBLAS's alignment, against the same GEMM padded to one.

A bf16 operand whose leading dimension is not a multiple of 8 elements (16 bytes) cannot take cuBLAS's aligned
tensor-core kernels: it falls back to `align1` kernels several times slower (GPT-2's unpadded vocabulary 50257,
calibration/investigations/vocab_alignment/). This script times, at training shapes, a Linear's three GEMMs in the
forms a training step launches them (forward F.linear(x, W): m = T, n = out, k = in; input gradient dy @ W:
m = T, n = in, k = out; weight gradient dy^T @ x: m = out, n = in, k = T) with `out` the vocabulary, unpadded and
rounded up to multiples of 2, 4 and 8: which multiple is fast, and how fast the slow ones run, per dimension.
`stepsim calibrate fit` fits the profile's `gemm.bf16.unaligned` from these records (sim/fit/GemmFit.cpp).

Each GEMM: 10 back-to-back calls between CUDA events, the stream held behind a spin kernel (timing.looped), 3
repetitions, median kept. Under 30 s on one H200.

Writes JSON Lines {"kind": "gemm", "source": "pytorch-alignment", "dtype": "bf16", "form", "m", "n", "k",
"time_us", "tflops"}.  Usage: python3 gemm_alignment.py --out FILE
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F

from timing import looped, summarize

# (tokens, hidden, vocabularies): GPT-2 small's head at 16384 tokens, a 2048-wide model's at 8192.
SHAPES = [(16384, 768, (50257, 50258, 50260, 50264)), (8192, 2048, (50257, 50264))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    dev, dt = "cuda", torch.bfloat16
    t0 = time.time()
    with open(a.out, "w") as f:
        f.write(json.dumps({"kind": "metadata", "tool": "gemm_alignment.py", "torch": torch.__version__,
                            "gpu": torch.cuda.get_device_name()}) + "\n")
        for T, h, vocabs in SHAPES:
            x = torch.randn(T, h, device=dev, dtype=dt)
            for V in vocabs:
                w = torch.randn(V, h, device=dev, dtype=dt)
                gy = torch.randn(T, V, device=dev, dtype=dt)
                for form, (m, n, k), fn in (("forward", (T, V, h), lambda: F.linear(x, w)),
                                            ("dgrad", (T, h, V), lambda: torch.mm(gy, w)),
                                            ("wgrad", (V, h, T), lambda: torch.mm(gy.t(), x))):
                    us = summarize(looped(fn, reps=3, inner=10))
                    rec = {"kind": "gemm", "source": "pytorch-alignment", "dtype": "bf16", "form": form,
                           "m": m, "n": n, "k": k, "time_us": us, "tflops": 2.0 * m * n * k / (us["median"] * 1e6)}
                    f.write(json.dumps(rec) + "\n")
                    print(f"{form:8s} m={m:6d} n={n:6d} k={k:6d} {us['median']:9.1f} us {rec['tflops']:6.1f} TFLOP/s",
                          flush=True)
                del w, gy
    print(f"done in {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
