#!/usr/bin/env python3
"""Time a capture's own ops on the local GPU: each distinct signature of its non-view ops (signature.py) is run
with real tensors of the captured shapes, strides and dtypes, and measured three ways.

- device_us: CUDA events around one call, the GPU held busy by a sleep kernel queued first so the events time the
  op's kernels and the gaps between them, not the host's launch; the median of --reps calls after --warmup.
- host_us: the host's time to issue that call (time.perf_counter around it), the median of the same calls. It is
  the Python-to-aten path (torch.ops.aten.X.Y); ops a real step issues from C++ (the backward's) cost less.
- kernels: the GPU activities (kernels, memsets, copies) one call launches, counted by torch.profiler (Kineto)
  over one more call of each signature, synchronized between signatures.
Inputs: floating tensors random normal, bool random, integer tensors random below the bound the op reads them
against (an embedding's rows, a loss's classes, a gather's dimension), else zeros. Ops on CPU tensors only
(the optimizer's step counters) have kernels 0 and device_us 0.

usage: python3 calibration/capture/time_ops.py FILE.ops.json.gz -o FILE.op_times.json [--reps 10] [--warmup 3]
Output: {"format": "stepsim.op_times", "version": 1, "torch", "device", "capture_sha256", "symbols",
         "ops": [[op_index, kernels, device_us, host_us], ...] for every non-view op, "failures": [...]}
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import opsfile  # noqa: E402
import signature  # noqa: E402
from scaling import evaluate  # noqa: E402

FORMAT = "stepsim.op_times"
VERSION = 1
SLEEP_FLOOR_US = 50.0


def _dtype(name):
    import torch
    return getattr(torch, name)


def _int_bound(op, pos_in, ref_shape, ins_shapes, args):
    """The exclusive upper bound for an integer input's values, where the op reads them as indices."""
    name = op["op"]
    if name == "aten::embedding" and pos_in == 1:
        return ins_shapes[0][0]
    if name == "aten::embedding_dense_backward" and pos_in == 1:
        return args.get("2")
    if name.startswith("aten::nll_loss") or name.startswith("aten::cross_entropy"):
        return max((s[-1] for s in ins_shapes if s and len(s) >= 2), default=None)
    if name in ("aten::gather", "aten::scatter", "aten::scatter_add", "aten::scatter_add_", "aten::index_select",
                "aten::scatter_", "aten::gather_backward"):
        dim = args.get("1", 0)
        return ins_shapes[0][dim] if ins_shapes[0] else None
    if name in ("aten::index", "aten::index_put_", "aten::index_put", "aten::_index_put_impl_"):
        return min(ins_shapes[0]) if ins_shapes[0] else None
    return None


def make_tensor(ref, device, symbols, bound):
    import torch
    shape = [evaluate(d, symbols) for d in ref["shape"]]
    stride = [evaluate(d, symbols) for d in ref["stride"]]
    dtype = _dtype(ref["dtype"])
    numel = 0 if any(s == 0 for s in shape) else 1 + sum((s - 1) * st for s, st in zip(shape, stride))
    if dtype.is_floating_point or dtype.is_complex:
        if dtype.itemsize == 1:  # float8: made in bf16 and cast
            base = torch.randn(numel, device=device, dtype=torch.bfloat16).to(dtype)
        else:
            base = torch.randn(numel, device=device, dtype=dtype)
    elif dtype == torch.bool:
        base = torch.rand(numel, device=device) < 0.5
    elif bound:
        base = torch.randint(0, int(bound), (numel,), device=device, dtype=dtype)
    else:
        base = torch.zeros(numel, device=device, dtype=dtype)
    return base.as_strided(shape, stride)


def _convert_arg(value, arg):
    t = str(arg.type)
    if isinstance(value, list):
        return [_scalar(v, t) for v in value]
    return _scalar(value, t)


def _scalar(value, t):
    """A recorded argument back to what the schema takes: dtype, layout and memory-format names (the schema's
    Python form types them as int) and devices to torch objects, 'inf'/'-inf'/'nan' to floats."""
    import torch
    if not isinstance(value, str):
        return value
    if "Device" in t:
        return torch.device(value)
    named = getattr(torch, value, None)
    if isinstance(named, (torch.dtype, torch.layout, torch.memory_format)):
        return named
    if value in ("inf", "-inf", "nan"):
        return float(value)
    return value


def build_call(op, tensors, symbols):
    """The aten overload and its arguments (real tensors), from the captured op."""
    import torch
    packet = getattr(torch.ops.aten, op["op"].split("::", 1)[1])
    func = getattr(packet, op["overload"])
    ins = list(op["in"])
    in_shapes = [[evaluate(d, symbols) for d in r["shape"]] if isinstance(r, dict) else None for r in ins]
    args_ev = {k: (evaluate(v, symbols) if isinstance(v, str) and _is_monomial(v) else v)
               for k, v in op["args"].items()}
    args_ev = {k: ([evaluate(x, symbols) if isinstance(x, str) and _is_monomial(x) else x for x in v]
                   if isinstance(v, list) else v) for k, v in args_ev.items()}
    pos_args, kw_args, k_in = [], {}, 0
    MISSING = object()
    for i, a in enumerate(func._schema.arguments):
        key = str(i)
        if key in args_ev:
            value = _convert_arg(args_ev[key], a)
        elif "Tensor" in str(a.type) and k_in < len(ins):
            ref = ins[k_in]

            def one(r):
                if r is None:
                    return None
                dev = tensors[r["t"]].get("device", "cuda")
                return make_tensor(r, dev, symbols, _int_bound(op, k_in, None, in_shapes, args_ev))
            value = [one(r) for r in ref] if isinstance(ref, list) else one(ref)
            k_in += 1
        elif a.kwarg_only:
            continue  # not passed: its default
        else:
            value = MISSING
        if a.kwarg_only:
            kw_args[a.name] = value
        else:
            pos_args.append((a, value))
    while pos_args and pos_args[-1][1] is MISSING:
        pos_args.pop()
    pos_args = [a.default_value if v is MISSING else v for a, v in pos_args]
    return func, pos_args, kw_args


def _is_monomial(v):
    try:
        evaluate(v, {"B": 1, "S": 1})
        return True
    except ValueError:
        return False


def on_cpu_only(op, tensors):
    refs = list(signature_refs(op))
    return bool(refs) and all(tensors[r["t"]].get("device") == "cpu" for r in refs)


def signature_refs(op):
    for group in (op["in"], op["out"]):
        for r in group:
            if isinstance(r, list):
                yield from (x for x in r if x is not None)
            elif r is not None:
                yield r


def time_signature(func, a, kw, reps, warmup, cpu_only):
    import torch
    for _ in range(warmup):
        func(*a, **kw)
    if cpu_only:
        host = []
        for _ in range(reps):
            t0 = time.perf_counter()
            func(*a, **kw)
            host.append((time.perf_counter() - t0) * 1e6)
        return 0.0, statistics.median(host)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    func(*a, **kw)
    est_host = (time.perf_counter() - t0) * 1e6
    cycles = int(max(SLEEP_FLOOR_US, 3 * est_host) * 2000)  # ~2 GHz SM clock: 2000 cycles a microsecond
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    host = []
    for i in range(reps):
        torch.cuda._sleep(cycles)
        starts[i].record()
        t0 = time.perf_counter()
        func(*a, **kw)
        host.append((time.perf_counter() - t0) * 1e6)
        ends[i].record()
    torch.cuda.synchronize()
    dev = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]
    return statistics.median(dev), statistics.median(host)


def count_kernels(calls):
    """GPU activities per call: one profiled call of each, with a synchronize inside each labelled range."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i, (func, a, kw) in enumerate(calls):
            with record_function(f"stepsim_sig_{i}"):
                func(*a, **kw)
                torch.cuda.synchronize()
    ranges, gpu = [], []
    try:
        for e in prof.profiler.kineto_results.events():
            name = e.name()
            on_gpu = e.device_type() == torch.autograd.DeviceType.CUDA
            if name.startswith("stepsim_sig_"):
                if not on_gpu:
                    ranges.append((e.start_ns(), e.start_ns() + e.duration_ns(), int(name.rsplit("_", 1)[1])))
            elif on_gpu:
                gpu.append(e.start_ns())
    except AttributeError:  # another profiler layout: its FunctionEvents, in microseconds
        for e in prof.events():
            on_gpu = e.device_type == torch.autograd.DeviceType.CUDA
            if e.name.startswith("stepsim_sig_"):
                if not on_gpu:
                    ranges.append((e.time_range.start, e.time_range.end, int(e.name.rsplit("_", 1)[1])))
            elif on_gpu:
                gpu.append(e.time_range.start)
    ranges.sort()
    counts = [0] * len(calls)
    starts = [r[0] for r in ranges]
    for t in gpu:
        j = bisect.bisect_right(starts, t) - 1
        if j >= 0 and t <= ranges[j][1]:
            counts[ranges[j][2]] += 1
    return counts


def time_capture(graph, reps, warmup, log=None):
    import torch
    symbols = graph["symbols"]
    tensors = graph["tensors"]
    groups = signature.distinct_signatures(graph)
    results, failures, calls, call_sig = {}, [], [], []
    for si, (_key, idxs) in enumerate(groups):
        op = graph["ops"][idxs[0]]
        try:
            func, a, kw = build_call(op, tensors, symbols)
            cpu_only = on_cpu_only(op, tensors)
            dev_us, host_us = time_signature(func, a, kw, reps, warmup, cpu_only)
            results[si] = [None if not cpu_only else 0, dev_us, host_us]
            if not cpu_only:
                calls.append((func, a, kw))
                call_sig.append(si)
            else:
                del a, kw
        except Exception as e:  # noqa: BLE001 -- recorded per signature; the others still run
            first_line = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
            failures.append({"op_index": idxs[0], "op": f"{op['op']}.{op['overload']}",
                             "error": f"{type(e).__name__}: {first_line}"})
            torch.cuda.synchronize()
        if len(calls) >= 64 or si == len(groups) - 1:
            for s, k in zip(call_sig, count_kernels(calls)):
                results[s][0] = k
            calls.clear()
            call_sig.clear()
            torch.cuda.empty_cache()
        if log and si % 100 == 0:
            log(f"time_ops: {si + 1}/{len(groups)} signatures")
    rows = []
    for si, (_key, idxs) in enumerate(groups):
        r = results.get(si, [None, None, None])
        for i in idxs:
            rows.append([i, r[0], None if r[1] is None else round(r[1], 3), None if r[2] is None else round(r[2], 3)])
    rows.sort()
    return rows, failures, len(groups)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args(argv)
    try:
        graph = opsfile.read(args.capture)
    except opsfile.OpsFileError as e:
        print(f"time_ops: {e}", file=sys.stderr)
        return 2
    import torch
    if not torch.cuda.is_available():
        print("time_ops: no CUDA GPU visible", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    with torch.no_grad():
        rows, failures, n = time_capture(graph, args.reps, args.warmup,
                                         log=lambda s: print(s, file=sys.stderr, flush=True))
    out = {"format": FORMAT, "version": VERSION, "torch": torch.__version__,
           "device": {"type": "cuda", "name": torch.cuda.get_device_name(0),
                      "capability": list(torch.cuda.get_device_capability(0))},
           "capture_sha256": opsfile.sha256(args.capture), "symbols": graph["symbols"],
           "signatures": n, "reps": args.reps, "warmup": args.warmup, "ops": rows, "failures": failures}
    with open(args.output, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    total = sum(r[2] for r in rows if r[2] is not None)
    print(f"time_ops: {len(rows)} ops, {n} signatures, {len(failures)} failed; sum of device time "
          f"{total / 1e3:.2f} ms; {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
