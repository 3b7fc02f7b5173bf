#!/usr/bin/env python3
"""What torch.compile (Inductor) does to a transformer block's kernels, and what a compiled graph costs the host.

One JSON line per measurement (sim/fit/CompileFit.cpp reads them):

kind "compile_block": one pre-norm transformer block of the validation model (calibration/validation/train_gpt.py's
  Block: norm, fused QKV, causal SDPA, projection, residual, norm, GELU-tanh or SwiGLU MLP, residual) under autocast,
  forward then backward, eager and `torch.compile(block, fullgraph=True, dynamic=False, mode=MODE)`. Per phase
  (forward, backward) and per version (eager, compiled), from one profiled call (CUDA activity; the phases split at a
  host sleep between them): kernel count by class (gemm, attention, other = every other kernel, memcpy/memset
  included), their summed durations (ms) and, for eager, `regions`: the maximal runs of `other` kernels between
  GEMM/attention kernels (what Inductor can fuse). `compiled_bytes`: the bytes Inductor's generated kernels read
  and write (torch._inductor.metrics.num_bytes_accessed at code generation, forward and backward graphs).
  `compile_s`: the first compiled forward + backward's wall time (tracing, Inductor, Triton builds). `step_ms`: the
  median of 20 CUDA-event-timed forward + backward calls, eager and compiled.

kind "compile_host": host cost of a compiled stack of N tiny blocks (hidden 128, seq 64, batch 1: the GPU finishes
  long before the host issues the next call), forward + backward issued 200 times without synchronizing; `host_us`
  is the CPU wall time per call (median of 3 repeats), `kernels` the device kernels per call, `graphs` the compiled
  graphs per call (forward and backward). Modes: eager, default (one launch per Triton/library kernel plus the
  graph's Python wrapper and guards) and reduce-overhead (CUDA graphs: one replay per graph).

Usage (one GPU):  python3 compile_kernels.py --out compile_kernels.jsonl [--budget-s 200] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import traceback

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
for d in (os.path.join(HERE, "..", "validation"), os.path.join(HERE, "validation")):
    if os.path.isdir(d):
        sys.path.insert(0, d)
from train_gpt import Block  # noqa: E402  the validation model's block, so the kernels are the same
import trace_metrics  # noqa: E402

PHASE_GAP_S = 0.02


def block_config(hidden, heads, ffn, mlp, norm):
    return {"hidden": hidden, "heads": heads, "kv_heads": heads, "mlp": mlp, "norm": norm, "ffn_hidden": ffn,
            "activation_checkpointing": "none"}


def swiglu_ffn(h):
    return 256 * ((8 * h + 3 * 256 - 1) // (3 * 256))


def classify(name, cat):
    c = trace_metrics.category(name, cat)
    n = name.lower()
    # Inductor's autotuned GEMM templates (max-autotune) are Triton kernels named triton_tem_* / *_mm_*
    if c == "elementwise_other" and ("triton_tem" in n or "_mm_" in n or n.startswith("triton_mm")):
        return "gemm"
    if c in ("gemm", "attention"):
        return c
    return "other"


def phase_stats(events):
    out = {"kernels": 0, "gemm": 0, "attention": 0, "other": 0, "gemm_ms": 0.0, "attention_ms": 0.0,
           "other_ms": 0.0, "regions": 0, "names": {}}
    prev = None
    for s, e, name, cat, _, _ in events:
        k = classify(name, cat)
        out["kernels"] += 1
        out[k] += 1
        out[k + "_ms"] += (e - s) / 1e3
        if k == "other":
            if prev != "other":
                out["regions"] += 1
            short = name[:60]
            out["names"][short] = out["names"].get(short, 0) + 1
        prev = k
    return out


def profile_fwd_bwd(fn_fwd, x, gy):
    """Device events of one forward and one backward, split at the host sleep between them."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        y = fn_fwd(x)
        torch.cuda.synchronize()
        time.sleep(PHASE_GAP_S)
        y.backward(gy)
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    os.unlink(path)
    groups, _ = trace_metrics.split_by_gaps(trace, PHASE_GAP_S * 1e6 / 2)
    if len(groups) != 2:
        raise RuntimeError(f"expected forward and backward device groups, got {len(groups)}")
    return phase_stats(groups[0]), phase_stats(groups[1])


def timed_ms(fn_fwd, x, gy, iters=20):
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    for _ in range(3):
        fn_fwd(x).backward(gy)
    torch.cuda.synchronize()
    times = []
    for i in range(iters):
        ev[i].record()
        fn_fwd(x).backward(gy)
        ev[i + 1].record()
    torch.cuda.synchronize()
    times = [ev[i].elapsed_time(ev[i + 1]) for i in range(iters)]
    return statistics.median(times)


def measure_block(v, mode, dynamic=None):
    """One block eager and compiled. `dynamic` True or False (compile_parts.py's pairs) is written into the record;
    None (this script) compiles static shapes and leaves it out, so the fit counts the block as a static one."""
    from torch._inductor import metrics
    h, heads, T, mb = v["hidden"], v["heads"], v["seq_len"], v["micro_batch"]
    ffn = 4 * h if v["mlp"] == "gelu" else swiglu_ffn(h)
    amp = torch.bfloat16 if v["dtype"] == "bf16" else torch.float16
    torch.manual_seed(0)
    dev = torch.device("cuda")
    blk = Block(block_config(h, heads, ffn, v["mlp"], v["norm"])).to(dev)
    x = torch.randn(mb, T, h, device=dev, requires_grad=True)
    gy = torch.randn(mb, T, h, device=dev)

    params = list(blk.parameters())

    def fwd_with(m):
        def f(inp):
            for q in params:  # fresh gradients each call, as after zero_grad(set_to_none=True)
                q.grad = None
            inp.grad = None
            with torch.autocast("cuda", dtype=amp):
                return m(inp)
        return f

    eager = fwd_with(blk)
    for _ in range(3):
        eager(x).backward(gy)
    e_f, e_b = profile_fwd_bwd(eager, x, gy)
    e_ms = timed_ms(eager, x, gy)

    torch._dynamo.reset()
    metrics.reset()
    cblk = torch.compile(blk, fullgraph=True, dynamic=bool(dynamic), mode=mode)
    comp = fwd_with(cblk)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    comp(x).backward(gy)
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - t0
    nbytes = float(getattr(metrics, "num_bytes_accessed", float("nan")))
    nkern = int(getattr(metrics, "generated_kernel_count", -1))
    for _ in range(3):
        comp(x).backward(gy)
    c_f, c_b = profile_fwd_bwd(comp, x, gy)
    c_ms = timed_ms(comp, x, gy)
    rec = {"kind": "compile_block", **v, "ffn_hidden": ffn, "mode": mode,
           "eager": {"forward": e_f, "backward": e_b, "step_ms": e_ms},
           "compiled": {"forward": c_f, "backward": c_b, "step_ms": c_ms},
           "compiled_bytes": nbytes, "generated_kernels": nkern, "compile_s": compile_s}
    if dynamic is not None:
        rec["dynamic"] = bool(dynamic)
    return rec


def measure_host(mode, blocks, iters=200):
    dev = torch.device("cuda")
    torch.manual_seed(0)
    stack = nn.Sequential(*[Block(block_config(128, 2, 512, "gelu", "layernorm")) for _ in range(blocks)]).to(dev)
    x = torch.randn(1, 64, 128, device=dev, requires_grad=True)
    gy = torch.randn(1, 64, 128, device=dev)
    torch._dynamo.reset()
    m = stack if mode == "eager" else torch.compile(stack, fullgraph=True, dynamic=False, mode=mode)
    mark = mode == "reduce-overhead"
    params = list(stack.parameters())

    def call(inp):
        for q in params:
            q.grad = None
        inp.grad = None
        if mark:
            torch.compiler.cudagraph_mark_step_begin()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return m(inp)

    t0 = time.perf_counter()
    for _ in range(4):
        call(x).backward(gy)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    f, b = profile_fwd_bwd(call, x, gy)
    reps = []
    for _ in range(3):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(iters):
            call(x).backward(gy)
        host = time.perf_counter() - t
        torch.cuda.synchronize()
        reps.append(host / iters * 1e6)
    gpu_us = timed_ms(call, x, gy) * 1e3
    return {"kind": "compile_host", "mode": mode, "blocks": blocks, "kernels": f["kernels"] + b["kernels"],
            "kernels_forward": f["kernels"], "kernels_backward": b["kernels"],
            "graphs": 0 if mode == "eager" else 2, "host_us": statistics.median(reps), "host_us_all": reps,
            "gpu_us": gpu_us, "warm_s": first_s}


BLOCK_VARIANTS = [
    # (mlp, norm, dtype, hidden, heads, seq, micro_batch): each factor varied against the first
    ("gelu", "layernorm", "bf16", 1024, 16, 2048, 4),
    ("swiglu", "rmsnorm", "bf16", 1024, 16, 2048, 4),
    ("gelu", "rmsnorm", "fp16", 1024, 16, 2048, 4),
    ("swiglu", "layernorm", "fp16", 1024, 16, 2048, 4),
    ("gelu", "layernorm", "bf16", 2048, 16, 2048, 4),
    ("swiglu", "rmsnorm", "bf16", 2048, 16, 2048, 4),
]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=200.0, help="skip what is left after this many seconds")
    ap.add_argument("--quick", action="store_true",
                    help="one default-mode block first, then one host point per mode (no max-autotune block)")
    ap.add_argument("--variants", default=None,
                    help="only these BLOCK_VARIANTS (comma-separated indices), default mode, no host points")
    args = ap.parse_args(argv)
    torch._inductor.config.fx_graph_cache = False  # every graph generated, so its metrics are counted
    start = time.perf_counter()
    env = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
           "triton": getattr(__import__("triton"), "__version__", None)}
    plan = []
    if args.variants is not None:  # a later run: the block variants a budget left out
        for i in args.variants.split(","):
            plan.append(("block", "default", BLOCK_VARIANTS[int(i)]))
    else:
        hosts = [("host", mode, n) for mode in ("eager", "default", "reduce-overhead")
                 for n in ((1, 3) if not args.quick else (1,))]
        if args.quick:  # the default-mode block the fit needs first; host points only while the budget lasts
            plan.append(("block", "default", BLOCK_VARIANTS[0]))
            plan += hosts
        else:
            plan += hosts
            # the first variant in both modes first, so a spent budget drops only the extra variants
            plan.append(("block", "default", BLOCK_VARIANTS[0]))
            plan.append(("block", "max-autotune-no-cudagraphs", BLOCK_VARIANTS[0]))
            for v in BLOCK_VARIANTS[1:]:
                plan.append(("block", "default", v))
    with open(args.out, "a") as out:
        for what, mode, p in plan:
            elapsed = time.perf_counter() - start
            if elapsed > args.budget_s:
                print(f"budget spent ({elapsed:.0f} s): skipping {what} {mode} {p}", flush=True)
                continue
            t = time.perf_counter()
            try:
                if what == "host":
                    rec = measure_host(mode, p)
                else:
                    mlp, norm, dtype, h, heads, T, mb = p
                    rec = measure_block({"mlp": mlp, "norm": norm, "dtype": dtype, "hidden": h, "heads": heads,
                                         "seq_len": T, "micro_batch": mb}, mode)
            except Exception as e:  # noqa: BLE001  one failing point must not lose the others
                traceback.print_exc()
                rec = {"kind": "error", "group": f"compile_kernels {what} {mode} {p}", "message": repr(e)[:500]}
            rec["env"] = env
            rec["wall_s"] = time.perf_counter() - t
            out.write(json.dumps(rec) + "\n")
            out.flush()
            brief = {k: rec.get(k) for k in ("kind", "mode", "blocks", "kernels", "host_us", "compile_s", "mlp",
                                             "norm", "dtype", "hidden", "wall_s")}
            print(json.dumps(brief), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
