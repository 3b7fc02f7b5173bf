#!/usr/bin/env python3
"""The census of one transformer layer in a captured op graph (docs/ops-format.md): its kernels by family, their bytes
and measured device time (the capture's op_times), forward and backward.

An op belongs to the layer when it ran under the layer's module (a backward op: under its forward op's module, or
under the layer itself when it has none). Kernels per op: the op_times row's (the GPU activities one call launched);
bytes: the sum of its tensor inputs' and outputs' sizes (shape × dtype), the memory-bound ops' traffic as written.

Usage: python3 ops_census.py CAPTURE.ops.json.gz [--layer model.layers.1] [--json]
"""
import argparse
import gzip
import json
import math
import os

SIZES = {"float32": 4, "bfloat16": 2, "float16": 2, "int64": 8, "int32": 4, "bool": 1, "float8_e4m3fn": 1,
         "float8_e5m2": 1, "uint8": 1, "int8": 1, "float64": 8}
GEMM = {"aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "aten::_scaled_mm"}


def dim(v, symbols):
    """A dimension: an integer, or a polynomial in the capture's symbols ("2*B*S", "S+1", "B*S^2")."""
    if isinstance(v, int):
        return v
    return int(eval(v.replace("^", "**"), {"__builtins__": {}}, dict(symbols)))


def tensor_bytes(t, symbols):
    if isinstance(t, list):
        return sum(tensor_bytes(x, symbols) for x in t)
    if not isinstance(t, dict):
        return 0
    return math.prod(dim(s, symbols) for s in t["shape"]) * SIZES.get(t["dtype"], 4)


def family(op, path):
    name = op["op"]
    if name in GEMM:
        return "gemm"
    if "scaled_dot_product" in name:
        return "attention"
    if name == "aten::_to_copy":
        return "cast"
    if "norm" in path or "ln_" in path:
        return "norm"
    if "self_attn" in path or path.endswith(".attn"):
        return "attention elementwise"
    if "mlp" in path:
        return "mlp elementwise"
    return "residual and other"


def census(capture, layer):
    d = json.load(gzip.open(capture))
    times_file = capture.replace(".ops.json.gz", ".op_times.json")
    rows = {}
    if os.path.exists(times_file):
        for r in json.load(open(times_file))["ops"]:
            rows[r[0]] = r
    mods = d["modules"]

    def module_of(op):
        m = op.get("module")
        if m is None and op.get("fwd_op") is not None:
            m = d["ops"][op["fwd_op"]].get("module")
        return mods[m]["path"] if m is not None else ""

    out = {}
    for i, op in enumerate(d["ops"]):
        path = module_of(op)
        if op["view"] or not (path == layer or path.startswith(layer + ".")) or op["phase"] not in ("forward", "backward"):
            continue
        fam = family(op, path)
        key = (op["phase"], fam)
        e = out.setdefault(key, {"ops": 0, "kernels": 0, "bytes": 0, "device_us": 0.0})
        r = rows.get(i)
        e["ops"] += 1
        e["kernels"] += r[1] if r and r[1] is not None else 1
        e["device_us"] += r[2] if r and r[2] is not None else 0.0
        if fam not in ("gemm", "attention"):
            e["bytes"] += tensor_bytes(op["in"], d["symbols"]) + tensor_bytes(op["out"], d["symbols"])
    return d, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("--layer", default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    layer = a.layer
    d = json.load(gzip.open(a.capture))
    if layer is None:
        layer = "transformer.h.1" if any(m["path"] == "transformer.h.1" for m in d["modules"]) else "model.layers.1"
    _, out = census(a.capture, layer)
    if a.json:
        print(json.dumps({f"{k[0]}/{k[1]}": v for k, v in sorted(out.items())}, indent=1))
        return
    print(f"{a.capture} {layer} step {d['step']} symbols {d['symbols']}")
    tot = {}
    for (ph, fam), v in sorted(out.items()):
        print(f"{ph:9s} {fam:22s} ops {v['ops']:3d} kernels {v['kernels']:3d} bytes {v['bytes'] / 1e6:9.2f} MB "
              f"device {v['device_us']:8.1f} us")
        t = tot.setdefault(ph, [0, 0, 0.0])
        t[0] += v["kernels"]
        t[1] += v["bytes"]
        t[2] += v["device_us"]
    for ph, t in tot.items():
        print(f"{ph:9s} total kernels {t[0]} memory-bound bytes {t[1] / 1e6:.2f} MB device {t[2]:.1f} us")


if __name__ == "__main__":
    main()
