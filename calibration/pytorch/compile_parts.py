#!/usr/bin/env python3
"""What torch.compile does to the parts of a step outside the model's blocks, and to dynamic shapes and FP8 linears.

One JSON line per measurement (sim/fit/CompileFit.cpp reads the first three kinds):

kind "compile_optimizer": one torch.optim.AdamW step (lr 1e-4, weight decay 0.1, fp32 parameters, gradients set)
  over the parameter tensors of a GPT (token and position embeddings, per layer: two norms' weight and bias, fused QKV,
  projection, MLP up and down with biases; the final norm), `impl` foreach (eager), fused (eager), or compiled
  (`torch.compile(fullgraph=False)` of a function calling the foreach optimizer's step(), PyTorch's compiled-optimizer
  recipe). Per impl: `kernels` (device kernels of one step, profiler), `kernel_ms` (their summed durations),
  `step_ms` (median of 20 CUDA-event-timed steps), `host_us` (the host time to issue one step with the GPU held
  busy, median of 7 rounds of 3 steps), `compile_s` (compiled: the first call's wall time), `tensors`, `params`.

kind "compile_loss": the loss of a step under bf16 autocast, F.cross_entropy on the LM head's bf16 logits (tokens ×
  50304, a leaf with requires_grad) and its backward to the logits, eager and `torch.compile(loss_fn, fullgraph=True,
  dynamic=False)`: per phase (forward, backward) the kernel count and summed time (profiler; the phases split at a
  host sleep), `compile_s`.

kind "compile_block" with "dynamic": true: compile_kernels.measure_block with torch.compile(..., dynamic=True), beside
  a dynamic=False twin (the same record, dynamic false; kept out of the default-mode fit by CompileFit, which takes
  only the records of compile_kernels.py's own run).

kind "compile_recompile": a block compiled at seq 2048 (dynamic true or false), then called at seq 1024: the first
  call's wall time at the new shape (`new_shape_s`: a recompile under dynamic=False, a guard check under True) and the
  compiled step at the new shape (`step_ms`).

kind "fp8_compiled": whether torchao imports on the machine (`torchao`); FP8 linears compiled: torchao's
  convert_to_float8_training when it imports, otherwise calibration/pytorch/fp8_linear.py (its eager Float8Linear
  written with torch._scaled_mm), one Linear (in → out) under bf16 autocast on `tokens` rows, forward and backward,
  eager and torch.compile'd: kernel counts and summed kernel time per phase, step_ms (median of 20), against the BF16
  nn.Linear's.

kind "pinned_alloc": `bytes` of pinned host memory allocated (torch.empty(pin_memory=True): `alloc_s`), a device-to-host
  copy into it (first and second: `first_copy_s`, `copy_s`), and into freshly allocated pageable memory
  (`pageable_new_copy_s`): what a pinned DCP stager pays when it allocates its buffers on a save.

Usage (one GPU):  python3 compile_parts.py --out compile_parts.jsonl [--budget-s 170]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compile_kernels as ck  # noqa: E402  (puts calibration/validation on the path)
from timing import hold_gpu  # noqa: E402

VOCAB = 50304


def device_kernels(fn):
    """(count, summed ms, names) of the device kernels that fn() launches."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    ms = sum(e.time_range.elapsed_us() for e in evs) / 1e3
    names = {}
    for e in evs:
        names[e.name[:60]] = names.get(e.name[:60], 0) + 1
    return len(evs), ms, names


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


def host_us(fn, calls=3, rounds=7):
    out = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        hold_gpu(0.05)
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t) * 1e6 / calls)
        torch.cuda.synchronize()
    return statistics.median(out)


def gpt_shapes(layers, h, seq=1024):
    s = [(VOCAB, h), (seq, h)]
    for _ in range(layers):
        s += [(h,), (h,), (3 * h, h), (3 * h,), (h, h), (h,), (h,), (h,), (4 * h, h), (4 * h,), (h, 4 * h), (h,)]
    return s + [(h,), (h,)]


def measure_optimizer(layers, h, impl):
    dev = torch.device("cuda")
    torch.manual_seed(0)
    params = [torch.randn(s, device=dev, requires_grad=True) for s in gpt_shapes(layers, h)]
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    kw = {"fused": True} if impl == "fused" else {"foreach": True}
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.1, **kw)
    torch._dynamo.reset()
    compile_s = None
    if impl == "compiled":
        @torch.compile(fullgraph=False)
        def step():
            opt.step()
        torch.cuda.synchronize()
        t = time.perf_counter()
        step()
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t
    else:
        step = opt.step
    for _ in range(3):
        step()
    n, kms, names = device_kernels(step)
    rec = {"kind": "compile_optimizer", "impl": impl, "layers": layers, "hidden": h, "tensors": len(params),
           "params": sum(p.numel() for p in params), "kernels": n, "kernel_ms": kms, "step_ms": events_ms(step),
           "host_us": host_us(step), "compile_s": compile_s, "names": dict(sorted(names.items())[:40])}
    del opt, params
    torch.cuda.empty_cache()
    return rec


def measure_loss(tokens, compiled):
    dev = torch.device("cuda")
    torch.manual_seed(0)
    logits = torch.randn(tokens, VOCAB, device=dev, dtype=torch.bfloat16, requires_grad=True)
    y = torch.randint(0, VOCAB, (tokens,), device=dev)

    def loss_fn(z, t):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return F.cross_entropy(z, t)

    torch._dynamo.reset()
    fn = torch.compile(loss_fn, fullgraph=True, dynamic=False) if compiled else loss_fn
    t0 = time.perf_counter()
    fn(logits, y).backward()
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - t0 if compiled else None

    def fwd_bwd():
        logits.grad = None
        fn(logits, y).backward()

    for _ in range(3):
        fwd_bwd()
    logits.grad = None
    holder = {}
    nf, fms, fnames = device_kernels(lambda: holder.__setitem__("l", fn(logits, y)))
    nb, bms, bnames = device_kernels(lambda: holder["l"].backward())
    return {"kind": "compile_loss", "compiled": compiled, "tokens": tokens, "vocab": VOCAB,
            "forward": {"kernels": nf, "ms": fms, "names": fnames}, "backward": {"kernels": nb, "ms": bms,
                                                                               "names": bnames},
            "step_ms": events_ms(fwd_bwd), "compile_s": compile_s}


def measure_recompile(dynamic):
    dev = torch.device("cuda")
    torch.manual_seed(0)
    h = 1024
    blk = ck.Block(ck.block_config(h, 16, 4 * h, "gelu", "layernorm")).to(dev)
    torch._dynamo.reset()
    cblk = torch.compile(blk, fullgraph=True, dynamic=dynamic)

    def run(T):
        x = torch.randn(4, T, h, device=dev, requires_grad=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = cblk(x)
        y.backward(torch.ones_like(y))

    t = time.perf_counter()
    run(2048)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t
    t = time.perf_counter()
    run(1024)
    torch.cuda.synchronize()
    new_s = time.perf_counter() - t
    return {"kind": "compile_recompile", "dynamic": dynamic, "first_s": first_s, "new_shape_s": new_s,
            "step_ms_2048": events_ms(lambda: run(2048)), "step_ms_1024": events_ms(lambda: run(1024))}


def measure_fp8(h_in, h_out, tokens, recipe, has_torchao):
    dev = torch.device("cuda")
    torch.manual_seed(0)
    lin = torch.nn.Sequential(torch.nn.Linear(h_in, h_out, bias=False)).to(dev)
    if recipe != "bf16":
        if has_torchao:
            from torchao.float8 import Float8LinearConfig, convert_to_float8_training
            convert_to_float8_training(lin, config=Float8LinearConfig.from_recipe_name(recipe))
        else:
            import fp8_linear as f8
            f8.convert(lin, recipe)
    x = torch.randn(tokens, h_in, device=dev, requires_grad=True)
    out = {"kind": "fp8_compiled", "recipe": recipe, "in": h_in, "out": h_out, "tokens": tokens,
           "torchao": has_torchao}
    for version in ("eager", "compiled"):
        torch._dynamo.reset()
        m = torch.compile(lin, fullgraph=True, dynamic=False) if version == "compiled" else lin

        def fwd():
            x.grad = None
            for p in lin.parameters():
                p.grad = None
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return m(x)

        t = time.perf_counter()
        fwd().sum().backward()
        torch.cuda.synchronize()
        first_s = time.perf_counter() - t
        holder = {}
        nf, fms, fnames = device_kernels(lambda: holder.__setitem__("y", fwd()))
        gy = torch.ones_like(holder["y"])
        nb, bms, _ = device_kernels(lambda: holder["y"].backward(gy))
        out[version] = {"forward_kernels": nf, "forward_ms": fms, "backward_kernels": nb, "backward_ms": bms,
                        "step_ms": events_ms(lambda: fwd().backward(gy)), "first_s": first_s,
                        "forward_names": fnames}
    return out


def measure_pinned_alloc(nbytes):
    """Allocating `nbytes` of pinned host memory (as a pinned DCP stager does for its staging buffers) against a
    device-to-host copy into it once allocated, and into fresh pageable memory."""
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").fill_(1)
    torch.cuda.synchronize()
    t = time.perf_counter()
    buf = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    alloc_s = time.perf_counter() - t
    t = time.perf_counter()
    buf.copy_(src)
    torch.cuda.synchronize()
    first_copy_s = time.perf_counter() - t
    t = time.perf_counter()
    buf.copy_(src)
    torch.cuda.synchronize()
    copy_s = time.perf_counter() - t
    t = time.perf_counter()
    page = torch.empty(nbytes, dtype=torch.uint8)
    page.copy_(src)
    torch.cuda.synchronize()
    pageable_s = time.perf_counter() - t
    del buf, page, src
    torch.cuda.empty_cache()
    return {"kind": "pinned_alloc", "bytes": nbytes, "alloc_s": alloc_s, "first_copy_s": first_copy_s,
            "copy_s": copy_s, "pageable_new_copy_s": pageable_s}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=170.0)
    args = ap.parse_args(argv)
    torch._inductor.config.fx_graph_cache = False
    try:
        import torchao  # noqa: F401
        has_torchao = True
    except Exception:  # noqa: BLE001
        has_torchao = False
    env = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
           "triton": getattr(__import__("triton"), "__version__", None), "torchao": has_torchao}
    v0 = {"mlp": "gelu", "norm": "layernorm", "dtype": "bf16", "hidden": 1024, "heads": 16, "seq_len": 2048,
          "micro_batch": 4}
    plan = [("pinned", lambda n=n: measure_pinned_alloc(n)) for n in (256 << 20, 1 << 30, 2 << 30, 256 << 20)]
    plan += [("loss", lambda: measure_loss(8192, False)), ("loss", lambda: measure_loss(8192, True)),
            ("loss", lambda: measure_loss(4096, False)), ("loss", lambda: measure_loss(4096, True))]
    def optimizer_points(layers, h):
        return [("optimizer", lambda i=impl: measure_optimizer(layers, h, i)) for impl in ("foreach", "fused", "compiled")]

    plan += optimizer_points(4, 1024) + optimizer_points(12, 768)
    plan += [("block", lambda: ck.measure_block(dict(v0), "default", dynamic=True)),
             ("block", lambda: ck.measure_block(dict(v0), "default", dynamic=False)),
             ("recompile", lambda: measure_recompile(False)), ("recompile", lambda: measure_recompile(True))]
    plan += optimizer_points(12, 2048)
    for recipe in ("bf16", "tensorwise", "rowwise"):
        for (i, o, T) in ((4096, 4096, 8192), (768, 768, 8192)):
            plan.append(("fp8", lambda i=i, o=o, T=T, r=recipe: measure_fp8(i, o, T, r, has_torchao)))
    start = time.perf_counter()
    with open(args.out, "a") as out:
        out.write(json.dumps({"kind": "metadata", "tool": "compile_parts.py", **env}) + "\n")
        for what, fn in plan:
            if time.perf_counter() - start > args.budget_s:
                print(f"budget spent: skipping {what}", flush=True)
                continue
            t = time.perf_counter()
            try:
                rec = fn()
            except Exception as e:  # noqa: BLE001  one failing point must not lose the others
                traceback.print_exc()
                rec = {"kind": "error", "group": f"compile_parts {what}", "message": repr(e)[:500]}
            rec["env"] = env
            rec["wall_s"] = time.perf_counter() - t
            out.write(json.dumps(rec) + "\n")
            out.flush()
            brief = {k: rec.get(k) for k in ("kind", "impl", "compiled", "tensors", "kernels", "step_ms", "host_us",
                                             "compile_s", "dynamic", "new_shape_s", "recipe", "wall_s")}
            print(json.dumps(brief), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
