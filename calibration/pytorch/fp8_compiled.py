#!/usr/bin/env python3
"""FP8 linears eager and under torch.compile, their kernels split by class (stepsim's compile.fp8 rates).

torchao is not installed on the measuring machines: fp8_linear.py writes its Float8Linear with torch._scaled_mm
(the casts, scales and layouts as torchao/float8 does them), a bias added after the scaled GEMM as torchao adds it.
Per shape (tokens × in → out), recipe (bf16: a plain nn.Linear under autocast; tensorwise; rowwise) and bias (with,
without): the Linear under bf16 autocast on fp32 parameters, eager and `torch.compile(fullgraph=True,
dynamic=False)`, forward and backward profiled apart (torch.profiler, CUDA kernels): per phase the kernels of each
class — `gemm` (cuBLAS/cuBLASLt and CUTLASS GEMMs, _scaled_mm's included), `memset`, `other` (every cast, amax,
scale, bias and layout kernel) — their count and summed device time (µs); `step_ms` (median of 20 CUDA-event-timed
forward + backward calls, back to back); `first_s` (the first call's wall time: the compile).

One JSON line per (shape, recipe, bias, version). Usage: python3 fp8_compiled.py --out FILE [--budget-s 150]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fp8_linear as f8  # noqa: E402

SHAPES = ((8192, 768, 2304), (8192, 2048, 2048), (8192, 4096, 4096), (8192, 2048, 8192))


def kernel_class(name):
    n = name.lower()
    if "memset" in n:
        return "memset"
    if any(k in n for k in ("nvjet", "gemm", "cutlass", "xmma", "sm90_", "cublas")) and "triton" not in n:
        return "gemm"
    return "other"


def profile_kernels(fn):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    out = {c: {"kernels": 0, "us": 0.0} for c in ("gemm", "memset", "other")}
    names = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        c = kernel_class(e.name)
        out[c]["kernels"] += 1
        out[c]["us"] += e.time_range.elapsed_us()
        names[e.name[:70]] = names.get(e.name[:70], 0) + 1
    return out, names


def events_ms(fn, iters=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    for i in range(iters):
        ev[i].record()
        fn()
        ev[i + 1].record()
    torch.cuda.synchronize()
    return statistics.median(ev[i].elapsed_time(ev[i + 1]) for i in range(iters))


def measure(tokens, h_in, h_out, recipe, bias, version):
    dev = torch.device("cuda")
    torch.manual_seed(0)
    lin = torch.nn.Sequential(torch.nn.Linear(h_in, h_out, bias=bias)).to(dev)
    if recipe != "bf16":
        assert f8.convert(lin, recipe, with_bias=True) == 1
    torch._dynamo.reset()
    m = torch.compile(lin, fullgraph=True, dynamic=False) if version == "compiled" else lin
    x = torch.randn(tokens, h_in, device=dev, requires_grad=True)

    def fwd():
        x.grad = None
        for p in lin.parameters():
            p.grad = None
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return m(x)

    t = time.perf_counter()
    y = fwd()
    gy = torch.ones_like(y)
    y.backward(gy)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t
    for _ in range(3):
        fwd().backward(gy)
    held = {}
    fk, fnames = profile_kernels(lambda: held.__setitem__("y", fwd()))
    bk, bnames = profile_kernels(lambda: held["y"].backward(gy))
    return {"kind": "fp8_compiled_linear", "tokens": tokens, "in": h_in, "out": h_out, "recipe": recipe,
            "bias": bias, "version": version, "forward": fk, "backward": bk,
            "step_ms": events_ms(lambda: fwd().backward(gy)), "first_s": first_s,
            "forward_names": fnames, "backward_names": bnames}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=150)
    args = ap.parse_args()
    t0 = time.perf_counter()
    with open(args.out, "w") as out:
        out.write(json.dumps({"kind": "metadata", "tool": "fp8_compiled.py", "torch": torch.__version__,
                              "gpu": torch.cuda.get_device_name(), "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                          time.gmtime())}) + "\n")
        for (T, i, o) in SHAPES:
            for recipe in ("bf16", "tensorwise", "rowwise"):
                for bias in (False, True):
                    for version in ("eager", "compiled"):
                        if time.perf_counter() - t0 > args.budget_s:
                            print("budget reached", flush=True)
                            return
                        try:
                            r = measure(T, i, o, recipe, bias, version)
                        except Exception as e:  # keep the rest
                            r = {"kind": "error", "group": f"fp8_compiled {T}x{i}->{o} {recipe} bias={bias} {version}",
                                 "message": repr(e)[:500], "tokens": T, "in": i, "out": o, "recipe": recipe,
                                 "bias": bias, "version": version}
                        out.write(json.dumps(r) + "\n")
                        out.flush()
                        if r["kind"] != "error":
                            print(f"{T}x{i}->{o} {recipe} bias={bias} {version}: fwd "
                                  f"{r['forward']['other']['kernels']}+{r['forward']['gemm']['kernels']} k "
                                  f"{r['forward']['other']['us']:.0f}/{r['forward']['gemm']['us']:.0f} us, bwd "
                                  f"{r['backward']['other']['kernels']}+{r['backward']['gemm']['kernels']} k "
                                  f"{r['backward']['other']['us']:.0f}/{r['backward']['gemm']['us']:.0f} us, "
                                  f"step {r['step_ms']:.3f} ms", flush=True)
                        else:
                            print(r, flush=True)
    print(f"done in {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
