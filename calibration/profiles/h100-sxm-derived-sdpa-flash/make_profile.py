#!/usr/bin/env python3
"""The h100-sxm-derived profile with SDPA on PyTorch's flash backend (FlashAttention-2) instead of cuDNN's.

The attention rates of every built-in profile were measured with PyTorch's default SDPA backend of the measuring
machine's PyTorch (2.11: cuDNN's flash kernels on Hopper). PyTorch 2.5.1 to 2.10 made cuDNN opt-in on Hopper
(pytorch/pytorch#138522; in 2.11 the bundled cuDNN crosses the version that turns it back on), so runs of that era took
the flash backend. The same H200 boards measured both (calibration/profiles/h200x2/raw): the flash backend in
torch.jsonl (stepsim_torch_bench.py, ops flash_attn_fwd and flash_attn_bwd: causal, head_dim 128, contiguous q, k,
v) and the default (cuDNN) in attention_default*.jsonl (attention_default.py, source "pytorch": q, k, v views of one
projection). At each shape both measured (head_dim, seq, batch x heads) the time ratio flash / cuDNN is taken; its
median per direction scales every attention point's TFLOP/s and the fitted efficiencies down (no flash measurement
at head_dim 64 or 96: the head_dim 128 ratio is applied there too). Everything else is h100-sxm-derived's.

Usage: python3 make_profile.py   (writes profile.yaml beside this file; prints the ratios)
"""
import json
import pathlib
import statistics

HERE = pathlib.Path(__file__).resolve().parent
PROFILES = HERE.parent
RAW = PROFILES / "h200x2" / "raw"


def records(path):
    for line in open(path):
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue


def key(r):
    s = r["shape"]
    return s["head_dim"], s["seq"], s["batch"] * s["heads"]


def ratios():
    flash = {}
    for r in records(RAW / "torch.jsonl"):
        op = str(r.get("op", ""))
        if op in ("flash_attn_fwd", "flash_attn_bwd"):
            flash[(op[-3:],) + key(r)] = r["tflops"]
    cudnn = {}
    for f in sorted(RAW.glob("attention_default*.jsonl")):
        for r in records(f):
            op = str(r.get("op", ""))
            if op in ("sdpa_default_fwd", "sdpa_default_bwd") and r.get("source") == "pytorch":
                cudnn.setdefault((op[-3:],) + key(r), []).append(r["tflops"])
    out = {}
    for d in ("fwd", "bwd"):
        pairs = [(k, statistics.median(cudnn[k]) / v) for k, v in flash.items() if k[0] == d and k in cudnn]
        out[d] = (statistics.median(r for _, r in pairs), pairs)
    return out


def main():
    r = ratios()
    fwd, bwd = r["fwd"][0], r["bwd"][0]
    for d in ("fwd", "bwd"):
        for k, x in sorted(r[d][1]):
            print(f"{d} head_dim {k[1]} seq {k[2]} batch x heads {k[3]}: cuDNN / flash {x:.3f}")
        print(f"{d}: median {r[d][0]:.3f} over {len(r[d][1])} shapes")
    src = (PROFILES / "h100-sxm-derived" / "profile.yaml").read_text().splitlines()
    out, in_attention, in_points = [], False, False
    for line in src:
        if not line.startswith(" ") and line.strip():
            in_attention = line.startswith("attention:")
            in_points = False
        if line.startswith("name: "):
            line = "name: h100-sxm-derived-sdpa-flash"
        elif line.startswith("source: "):
            line = (line + "; attention on SDPA's flash backend (calibration/profiles/h100-sxm-derived-sdpa-flash/"
                    "make_profile.py)")
        elif in_attention and line.startswith("  fwd_efficiency:"):
            line = f"  fwd_efficiency: {float(line.split(':')[1]) / fwd!r}"
        elif in_attention and line.startswith("  bwd_efficiency:"):
            line = f"  bwd_efficiency: {float(line.split(':')[1]) / bwd!r}"
        elif in_attention and line.startswith("  points:"):
            in_points = True
        elif in_points and line.startswith("    - ["):
            v = [float(x) for x in line.strip()[3:-1].split(",")]
            line = f"    - [{int(v[0])}, {int(v[1])}, {int(v[2])}, {v[3] / fwd!r}, {v[4] / bwd!r}]"
        elif in_points and not line.startswith("    "):
            in_points = False
        out.append(line)
    header = ["# Written by calibration/profiles/h100-sxm-derived-sdpa-flash/make_profile.py from h100-sxm-derived's "
              "profile.yaml:", f"# attention's forward rates / {fwd:.4f}, backward / {bwd:.4f} (SDPA's flash backend "
              "against cuDNN's, measured on H200: NOTES.md). Do not edit; run the script again."]
    (HERE / "profile.yaml").write_text("\n".join(header + out) + "\n")


if __name__ == "__main__":
    main()
