#!/usr/bin/env python3
"""Attention as a training step runs it: what stepsim_torch_bench.py (flash backend, contiguous q/k/v) leaves out.

- SDPA with PyTorch's default backend choice (cuDNN on Hopper with recent PyTorch; the kernel names that ran are
  recorded), on q, k, v made as a GPT block makes them: views of one fused QKV projection, transposed to
  (batch, heads, seq, head_dim). Causal, head_dim 64 and 128, sequence 1024 and 2048. Forward, then backward
  from forward + backward minus forward, each timed over back-to-back calls between CUDA events, random data.

Writes JSON Lines in stepsim_torch_bench.py's record format ("kind": "kernel", "source": "pytorch").
Usage: python3 attention_default.py --out FILE
"""
import argparse
import json

import torch
import torch.nn.functional as F

from timing import looped, summarize


def kernel_names(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def attention(out, dev):
    for d in (64, 128):
        for s in (1024, 2048):
            for tokens in (8192, 16384):
                heads = 2048 // d if d == 128 else 12
                b = tokens // s
                h = heads * d
                # q, k, v laid out as views of a fused QKV projection: (batch, seq, heads, head_dim) transposed.
                leaves = [torch.randn(b, s, heads, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
                          for _ in range(3)]

                def make():
                    return [t.transpose(1, 2) for t in leaves]

                g = torch.randn(b, heads, s, d, device=dev, dtype=torch.bfloat16)
                fwd = lambda: F.scaled_dot_product_attention(*make(), is_causal=True)
                # Back-to-back launches between two events, as in a training step: SDPA's host-side setup
                # overlaps the previous launch instead of being counted as device time.
                tf = looped(fwd)
                names_f = kernel_names(fwd)
                flops = 2.0 * b * s * s * h  # causal: half of 4·b·s²·h
                shape = {"batch": b, "heads": heads, "seq": s, "head_dim": d, "causal": True, "layout": "qkv_view"}
                out.write(json.dumps({"kind": "kernel", "op": "sdpa_default_fwd", "source": "pytorch", "dtype": "bf16",
                                      "shape": shape, "time_us": summarize(tf), "flops": flops,
                                      "tflops": flops / summarize(tf)["median"] / 1e6, "kernels": names_f}) + "\n")
                def fwd_bwd():
                    torch.autograd.grad(fwd(), leaves, g)
                # Backward = (forward + backward) − forward, both looped; autograd.grad accumulates nothing.
                tfb = looped(fwd_bwd)
                tb = [max(1e-3, x - summarize(tf)["median"]) for x in tfb]
                o = fwd()
                names_b = kernel_names(lambda: torch.autograd.grad(o, leaves, g))
                out.write(json.dumps({"kind": "kernel", "op": "sdpa_default_bwd", "source": "pytorch", "dtype": "bf16",
                                      "shape": shape, "time_us": summarize(tb), "flops": 2.5 * flops,
                                      "tflops": 2.5 * flops / summarize(tb)["median"] / 1e6,
                                      "kernels": names_b}) + "\n")
                del leaves, g
                torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    with open(a.out, "w") as out:
        out.write(json.dumps({"kind": "metadata", "tool": "attention_default.py", "torch": torch.__version__,
                              "gpu": torch.cuda.get_device_name(), "cudnn": torch.backends.cudnn.version()}) + "\n")
        attention(out, dev)


if __name__ == "__main__":
    main()
