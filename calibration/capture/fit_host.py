#!/usr/bin/env python3
"""Fit the profile's ops_host section (sim/cost/HardwareProfile.hpp, OpsHostRates) from host-split measurements:
the host time an eager step spends that its op-times table (time_ops.py: each aten op timed alone) does not hold.

Model (sim/workload/OpsHost.hpp applies it; the counts here are the same as its):
    forward host  = sum of the forward ops' host_us + module_call_us * M + autograd_node_forward_us * Nf
    backward host = sum of the backward ops' host_us + autograd_node_backward_us * Nb
  M  = the modules' forward calls in the step (the capture's modules[].calls),
  Nf = forward ops that record an autograd node (a seq_nr),
  Nb = the nodes the engine runs: the forward ops the backward's ops link to (distinct fwd_op) and one
       AccumulateGrad per parameter with a gradient.
The measured forward and backward host times are measure_step.py --host-split's (each step begun with the GPU
drained, so the host never waits on it): least squares over the models, module_call_us and
autograd_node_forward_us from the forward rows (a non-negative pair), autograd_node_backward_us from the backward
rows through the origin. Captures with activation checkpointing are left out (their backward holds a forward).

usage: python3 calibration/capture/fit_host.py --measured M.jsonl [M2.jsonl ...] --pair CAPTURE OP_TIMES [--pair ...]
Prints each model's counts, host times and residuals, the fit, and the profile section to paste.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys


def load_graph(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def counts(g):
    ops = g["ops"]
    m = sum(mod.get("calls", 0) for mod in g["modules"])
    nf = sum(1 for o in ops if (o["phase"] == "forward" or o.get("recompute")) and o.get("seq_nr") is not None)
    linked = {o["fwd_op"] for o in ops if o["phase"] == "backward" and not o.get("recompute")
              and o.get("fwd_op") is not None}
    nb = len(linked) + sum(1 for p in g["params"] if p.get("grad_ready_op") is not None)
    return m, nf, nb


def host_sums(g, times):
    out = {"forward": 0.0, "backward": 0.0, "optimizer": 0.0}
    for row in times["ops"]:
        i, kernels, _dev, host = row
        if kernels is None or host is None:
            continue
        out[g["ops"][i]["phase"]] += host / 1e3
    return out


def key_of(model, config, step):
    return (model, json.dumps(config or {}, sort_keys=True), step.get("micro_batch"), step.get("seq_len"),
            step.get("dtype_policy"), step.get("activation_checkpointing", "none"))


def solve2(rows):
    """Non-negative least squares of y = a*x1 + b*x2 over rows (x1, x2, y)."""
    s11 = sum(r[0] * r[0] for r in rows); s22 = sum(r[1] * r[1] for r in rows); s12 = sum(r[0] * r[1] for r in rows)
    s1y = sum(r[0] * r[2] for r in rows); s2y = sum(r[1] * r[2] for r in rows)
    det = s11 * s22 - s12 * s12
    if det > 0:
        a, b = (s1y * s22 - s2y * s12) / det, (s2y * s11 - s1y * s12) / det
        if a >= 0 and b >= 0:
            return a, b
    a = max(0.0, s1y / s11) if s11 else 0.0
    b = max(0.0, s2y / s22) if s22 else 0.0
    ea = sum((r[2] - a * r[0]) ** 2 for r in rows); eb = sum((r[2] - b * r[1]) ** 2 for r in rows)
    return (a, 0.0) if ea <= eb else (0.0, b)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--measured", nargs="+", required=True)
    ap.add_argument("--pair", nargs=2, action="append", required=True, metavar=("CAPTURE", "OP_TIMES"))
    ap.add_argument("--other-sizes", action="store_true",
                    help="also fit the same models measured at other micro-batches and sequence lengths")
    args = ap.parse_args(argv)
    measured = {}
    for path in args.measured:
        for line in open(path):
            if not line.strip():
                continue
            r = json.loads(line)
            if "host_split_ms" not in r or r.get("wrap", "none") != "none":
                continue
            measured.setdefault(key_of(r["model"], r.get("config"), r["step"]), []).append(r["host_split_ms"])
    fwd, bwd, opt_rows = [], [], []
    print(f"{'capture':44} {'M':>5} {'Nf':>5} {'Nb':>5} {'fwd ms':>7} {'ops':>6} {'bwd ms':>7} {'ops':>6}")
    for cap, tpath in args.pair:
        g = load_graph(cap)
        times = json.load(open(tpath))
        k = key_of(g["model"]["source"], g["model"].get("config"), g["step"])
        if g["step"].get("activation_checkpointing", "none") != "none":
            continue
        m, nf, nb = counts(g)
        h = host_sums(g, times)
        # The same model measured at another size (--other-sizes): the counts are the capture's, the ops' host
        # times its op times' (an op's host cost barely depends on its size).
        same = [(k, "")] if k in measured else []
        if args.other_sizes:
            same += [(o, f" at B {o[2]}, S {o[3]}") for o in measured if o != k and o[:2] == k[:2] and o[4:] == k[4:]]
        if not same:
            print(f"{cap}: no host-split measurement of this configuration", file=sys.stderr)
        for k, label in same:
            fit_row(cap + label, m, nf, nb, h, measured[k], fwd, bwd, opt_rows, len(g["params"]))
    if not fwd:
        print("nothing to fit", file=sys.stderr)
        return 1
    return report(fwd, bwd, opt_rows)


def fit_row(cap, m, nf, nb, h, runs, fwd, bwd, opt_rows, nparams):
    """One measured configuration: its residuals over the op times' host sums, each phase's mean over its runs."""
    f_ms = sum(r["forward"] for r in runs) / len(runs)
    b_ms = sum(r["backward"] for r in runs) / len(runs)
    o_ms = sum(r["optimizer"] for r in runs) / len(runs)
    name = cap.split("/")[-1][:44]
    print(f"{name:44} {m:5d} {nf:5d} {nb:5d} {f_ms:7.2f} {h['forward']:6.2f} {b_ms:7.2f} {h['backward']:6.2f}")
    opt_rows.append((name, o_ms, h["optimizer"], nparams))
    fwd.append((m, nf, (f_ms - h["forward"]) * 1e3, name))
    bwd.append((nb, (b_ms - h["backward"]) * 1e3, name))


def report(fwd, bwd, opt_rows):
    a, b = solve2([(r[0], r[1], r[2]) for r in fwd])
    sxx = sum(r[0] * r[0] for r in bwd)
    c = max(0.0, sum(r[0] * r[1] for r in bwd) / sxx) if sxx else 0.0
    print("\nresiduals (µs): measured - op times, and what the fit gives")
    for (m, nf, y, cap), (nb, yb, _) in zip(fwd, bwd):
        print(f"  {cap:44} forward {y:8.0f} fit {a * m + b * nf:8.0f}   "
              f"backward {yb:8.0f} fit {c * nb:8.0f}")
    print("\noptimizer (step and zero_grad), not fitted here: measured ms, its ops' host ms, and per parameter "
          "tensor what is left (launch.optimizer_host_per_tensor_us holds it)")
    for cap, o_ms, ops_ms, n in opt_rows:
        print(f"  {cap:44} {o_ms:7.2f} {ops_ms:7.2f} {(o_ms - ops_ms) * 1e3 / n:7.2f} µs x {n}")
    print(f"\nops_host:\n  module_call_us: {a:.3f}\n  autograd_node_forward_us: {b:.3f}\n"
          f"  autograd_node_backward_us: {c:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
