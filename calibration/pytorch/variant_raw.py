#!/usr/bin/env python3
"""Raw calibration records from model_variants.py's profiled steps (no torch): the kernels a variant adds to the
base step, found by name as the per-step count and device time each kernel name gains over the base's.

  variant_raw.py VARIANTS.jsonl --out RAW.jsonl        # kernel records for `stepsim calibrate fit`
  variant_raw.py VARIANTS.jsonl --report               # per shape: step deltas and the kernels each variant adds

Record written (stepsim-bench's "kernel" format): op "bias_grad_reduce", a Linear bias's gradient (the output
gradient summed over the tokens: PyTorch's reduce_kernel), per shape the mean launch: bytes = Σ over the block
Linears of 2·(T+1)·out (bf16 read T × out, write out) over their count, time = the reduce kernels' added device
time over their added count (the profiled step's); op "rope_kernel" (rope_record); ops "qkv_permute_cat" and
"qkv_permute_copy" (permute_records), "dropout_fwd" and "dropout_bwd" (dropout_records), and the SDPA kernels with
and without dropout, "sdpa_dropout_fwd/bwd" against "sdpa_plain_fwd/bwd" (sdpa_dropout_records).
"""
import argparse
import json
import sys


def load(path):
    recs = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("kind") == "variant_step" and r.get("status") == "ok":
            recs[r["id"]] = r
    return recs


def added(base, var):
    """{kernel name: (added count, added device µs)} of var over base."""
    b = {k["name"]: k for k in base["kernels"]}
    v = {k["name"]: k for k in var["kernels"]}
    out = {}
    for name in set(b) | set(v):
        dc = v.get(name, {}).get("count", 0) - b.get(name, {}).get("count", 0)
        dt = v.get(name, {}).get("total_us", 0.0) - b.get(name, {}).get("total_us", 0.0)
        if dc or abs(dt) > 0.5:
            out[name] = (dc, dt)
    return out


def bias_record(base, var):
    c = var["config"]
    T, h, L = c["micro_batch"] * c["seq_len"], c["hidden"], c["layers"]
    outs = [(c["heads"] + 2 * c["kv_heads"]) * (h // c["heads"]), h] + \
        ([c["ffn_hidden"], h] if c["mlp"] == "gelu" else [c["ffn_hidden"], c["ffn_hidden"], h])
    n_lin = L * len(outs)
    add = added(base, var)
    red = [(dc, dt) for name, (dc, dt) in add.items() if "reduce_kernel" in name and dc > 0]
    n = sum(dc for dc, _ in red)
    if n != n_lin:
        print(f"{var['id']}: {n} reduce launches added, {n_lin} Linears: no record", file=sys.stderr)
        return None
    nbytes = sum(2.0 * (T + 1) * o for o in outs) * L
    us = sum(dt for _, dt in red) / n
    return {"kind": "kernel", "op": "bias_grad_reduce", "source": "pytorch", "dtype": "bf16",
            "shape": {"tokens": T, "hidden": h, "layers": L, "launches": n},
            "time_us": {"median": us, "n": 1}, "bytes": nbytes / n, "GBps": nbytes / n / (us * 1e3),
            "from": f"model_variants.py {var['id']} over {base['id']}: added reduce_kernel device time / launches"}


def rope_record(none, rope):
    """Rotary kernels at TransformerStep's bytes: per layer two table casts (6·s·d bytes each) and, for q (E = T·heads·d)
    and k (T·kv·d) forward and backward, five kernels of 20·E + 4·s·d bytes together: 22 kernels and
    40·(Eq + Ek) + 28·s·d bytes a layer. Time per kernel: the timed step's median over the same step without
    positions, over those 22·L kernels."""
    c = rope["config"]
    T, h, L, s = c["micro_batch"] * c["seq_len"], c["hidden"], c["layers"], c["seq_len"]
    d = h // c["heads"]
    eq, ek = T * c["heads"] * d, T * c["kv_heads"] * d
    n = 22 * L
    nbytes = (40.0 * (eq + ek) + 28.0 * s * d) * L
    us = (rope["step_ms"]["median"] - none["step_ms"]["median"]) * 1e3 / n
    return {"kind": "kernel", "op": "rope_kernel", "source": "pytorch", "dtype": "bf16",
            "shape": {"tokens": T, "hidden": h, "layers": L, "kernels": n},
            "time_us": {"median": us, "n": 1}, "bytes": nbytes / n, "GBps": nbytes / n / (us * 1e3),
            "from": f"model_variants.py {rope['id']} over {none['id']}: timed step medians' difference / kernels"}


def kernels_added(base, var, match, dtype=None):
    """(added count, added device µs) of the kernels whose name contains every string of `match`."""
    n, us = 0, 0.0
    for name, (dc, dt) in added(base, var).items():
        if all(m in name for m in match):
            n, us = n + dc, us + dt
    return n, us


def kernel_record(op, var, base, n, us, nbytes, what):
    c = var["config"]
    return {"kind": "kernel", "op": op, "source": "pytorch", "dtype": "bf16",
            "shape": {"tokens": c["micro_batch"] * c["seq_len"], "hidden": c["hidden"], "layers": c["layers"],
                      "launches": n},
            "time_us": {"median": us / n, "n": 1}, "bytes": nbytes, "GBps": nbytes / (us / n * 1e3),
            "from": f"model_variants.py {var['id']} over {base['id']}: {what}"}


def permute_records(base, var):
    """q/k/v as a view (B, T, 3, H, D) and permute of one projection: in backward the three gradients are stacked
    by a non-vectorized CatArrayBatchedCopy (replacing split()'s vectorized one) and copied to the projection's layout
    by a non-vectorized direct copy, one each per layer. Bytes per launch: the qkv output gradient read and written,
    2 · 2 · T · qkv (bf16)."""
    c = var["config"]
    T, L = c["micro_batch"] * c["seq_len"], c["layers"]
    qkv = (c["heads"] + 2 * c["kv_heads"]) * (c["hidden"] // c["heads"])
    nbytes = 4.0 * T * qkv
    out = []
    for op, match in (("qkv_permute_cat", ("CatArrayBatchedCopy<",)),
                      ("qkv_permute_copy", ("elementwise_kernel<128, 4", "direct_copy_kernel"))):
        n, us = kernels_added(base, var, match)
        if n != L:
            print(f"{var['id']}: {n} {op} launches added, {L} layers: no record", file=sys.stderr)
            continue
        out.append(kernel_record(op, var, base, n, us, nbytes, f"added {match[0]} device time / launches"))
    return out


def dropout_records(base, var):
    """nn.Dropout on the residual branches (bf16 under autocast, two a layer) and on the embeddings (fp32, one):
    forward fused_dropout_kernel_vec (reads x, writes y and a bool mask), backward masked_scale_kernel (reads the
    gradient and the mask, writes the gradient). Bytes per launch: (2·e + 1) · T · h, e the element size."""
    c = var["config"]
    T, h = c["micro_batch"] * c["seq_len"], c["hidden"]
    out = []
    for op, name in (("dropout_fwd", "fused_dropout_kernel_vec<"), ("dropout_bwd", "masked_scale_kernel<bool, ")):
        for dtype, e in (("c10::BFloat16", 2), ("float", 4)):
            n, us = kernels_added(base, var, (name + dtype,))
            if n <= 0:
                continue
            rec = kernel_record(op, var, base, n, us, (2.0 * e + 1) * T * h, f"added {name}{dtype} device time / launches")
            rec["dtype"] = "bf16" if e == 2 else "fp32"
            out.append(rec)
    return out


def sdpa_dropout_records(bases, var):
    """SDPA with dropout_p against without: cuDNN's flash forward and backward kernels' device time per launch in the
    dropout step and in the base steps (their mean: the base and the base re-run last)."""
    c = var["config"]
    shape = {"seq": c["seq_len"], "head_dim": c["hidden"] // c["heads"], "batch": c["micro_batch"],
             "heads": c["heads"], "causal": True}
    out = []
    for p, name in (("fwd", "flash_fprop"), ("bwd", "flash_bprop")):
        def per_launch(r):
            ks = [k for k in r["kernels"] if name in k["name"]]
            return sum(k["total_us"] for k in ks) / sum(k["count"] for k in ks)
        plain = sum(per_launch(b) for b in bases) / len(bases)
        for op, us, src in ((f"sdpa_dropout_{p}", per_launch(var), var["id"]),
                            (f"sdpa_plain_{p}", plain, " and ".join(b["id"] for b in bases))):
            out.append({"kind": "kernel", "op": op, "source": "pytorch", "dtype": "bf16", "shape": shape,
                        "time_us": {"median": us, "n": 1},
                        "from": f"model_variants.py {src}: {name} device time per launch"})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants")
    ap.add_argument("--out")
    ap.add_argument("--report", action="store_true")
    a = ap.parse_args()
    recs = load(a.variants)
    shapes = sorted({i.split("-")[0] for i in recs})
    out = open(a.out, "w") if a.out else None
    for s in shapes:
        base = recs.get(f"{s}-base")
        if not base:
            continue
        if a.report:
            print(f"== {s}: base {base['step_ms']['median']:.3f} ms, {base['kernels_per_step']} kernels, "
                  f"sdpa {base['sdpa_backend']}, host {base['host_issue_ms']:.1f} ms")
            for i, r in recs.items():
                if not i.startswith(s + "-") or i == base["id"]:
                    continue
                d = r["step_ms"]["median"] / base["step_ms"]["median"] - 1
                print(f"  {i[len(s) + 1:]:14s} {r['step_ms']['median']:9.3f} ms {100 * d:+6.2f}%  kernels "
                      f"{r['kernels_per_step'] - base['kernels_per_step']:+5d} busy "
                      f"{r['kernel_busy_ms'] - base['kernel_busy_ms']:+7.3f} ms sdpa {r['sdpa_backend']}")
                for name, (dc, dt) in sorted(added(base, r).items(), key=lambda x: -abs(x[1][1]))[:6]:
                    print(f"      {dc:+5d} {dt / 1e3:+8.3f} ms  {name[:110]}")
        if out and f"{s}-bias" in recs:
            rec = bias_record(base, recs[f"{s}-bias"])
            if rec:
                out.write(json.dumps(rec) + "\n")
        if out and f"{s}-pos_rope" in recs and f"{s}-pos_none" in recs:
            out.write(json.dumps(rope_record(recs[f"{s}-pos_none"], recs[f"{s}-pos_rope"])) + "\n")
        if out and f"{s}-qkv_permute" in recs:
            for rec in permute_records(base, recs[f"{s}-qkv_permute"]):
                out.write(json.dumps(rec) + "\n")
        if out and f"{s}-dropout" in recs:
            for rec in dropout_records(base, recs[f"{s}-dropout"]):
                out.write(json.dumps(rec) + "\n")
            bases = [base] + ([recs[f"{s}-base_again"]] if f"{s}-base_again" in recs else [])
            for rec in sdpa_dropout_records(bases, recs[f"{s}-dropout"]):
                out.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
