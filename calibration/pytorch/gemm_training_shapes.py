#!/usr/bin/env python3
"""BF16 GEMMs of narrow transformers (hidden 768 and 1024), as a training step launches them.

The harness's grid (calibration/bench) starts at hidden 1024 and times one shape at a time; this covers the
linears of hidden 768 and 1024 models in the three forms a training step runs: forward F.linear(x, W),
input gradient dy @ W, weight gradient dy^T @ x, for tokens 4096, 8192 and 16384, plus the LM head (vocab 50304).
Each shape is timed over 20 back-to-back calls between CUDA events (as kernels run inside a step, launch
overhead hidden), random data, 7 repetitions, median kept; by default rotating 4 input sets (operands cold in
L2), with --hot on one input set (operands L2-resident, as a narrow model's activations and weights are when
the previous kernel has just written them).

Writes JSON Lines {"kind": "gemm", "source": "pytorch-loop", "dtype": "bf16", "m", "n", "k", "time_us"}.
Usage: python3 gemm_training_shapes.py --out FILE
"""
import argparse
import json

import torch
import torch.nn.functional as F

from timing import looped, summarize


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--hot", action="store_true", help="one input set: operands stay in L2")
    args = ap.parse_args()
    nsets = 1 if args.hot else 4
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    seen = set()
    with open(args.out, "w") as out:
        out.write(json.dumps({"kind": "metadata", "tool": "gemm_training_shapes.py", "torch": torch.__version__,
                              "gpu": torch.cuda.get_device_name()}) + "\n")
        for h in (768, 1024):
            linears = [(3 * h, h), (h, h), (4 * h, h), (h, 4 * h), (50304, h)]  # (out, in)
            for T in (4096, 8192, 16384):
                for (o, i) in linears:
                    sets = [(torch.randn(T, i, device=dev, dtype=torch.bfloat16),
                             torch.randn(o, i, device=dev, dtype=torch.bfloat16),
                             torch.randn(T, o, device=dev, dtype=torch.bfloat16)) for _ in range(nsets)]
                    k = [0]

                    def pick():
                        k[0] += 1
                        return sets[k[0] % nsets]
                    forms = {
                        (T, o, i): lambda: F.linear(pick()[0], pick()[1]),          # forward
                        (T, i, o): lambda: torch.mm(pick()[2], pick()[1]),          # input gradient
                        (o, i, T): lambda: torch.mm(pick()[2].t(), pick()[0]),      # weight gradient
                    }
                    for (m, n, kk), fn in forms.items():
                        if (m, n, kk) in seen:
                            continue
                        seen.add((m, n, kk))
                        t = summarize(looped(fn))
                        med = t["median"]
                        out.write(json.dumps({"kind": "gemm", "source": "pytorch-loop", "dtype": "bf16",
                                              "l2": "hot" if args.hot else "cold",
                                              "m": m, "n": n, "k": kk,
                                              "time_us": t,
                                              "tflops": 2.0 * m * n * kk / med / 1e6}) + "\n")
                    del sets
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
