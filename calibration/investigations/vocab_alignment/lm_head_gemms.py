#!/usr/bin/env python3
"""The LM head's three GEMMs (forward, input gradient, weight gradient) in bf16 at vocabulary N, timed with CUDA
events (median of 20 after 5 warm-up): does an N that is not a multiple of 8 (GPT-2's unpadded 50257) leave the fast
tensor-core kernels? usage: lm_head_gemms.py --out FILE"""
import argparse, json, statistics
import torch

def timed(fn, reps=20, warm=5):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--out", required=True); args = ap.parse_args()
    T, h = 16384, 768
    with open(args.out, "w") as f:
        for N in (50257, 50264, 50304):
            x = torch.randn(T, h, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(N, h, device="cuda", dtype=torch.bfloat16)
            gy = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)
            rec = {"N": N, "T": T, "hidden": h,
                   "fwd_ms": timed(lambda: x @ w.t()),
                   "dgrad_ms": timed(lambda: gy @ w),
                   "wgrad_ms": timed(lambda: gy.t() @ x)}
            f.write(json.dumps(rec) + "\n"); print(rec, flush=True)

if __name__ == "__main__":
    main()
