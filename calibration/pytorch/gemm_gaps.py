#!/usr/bin/env python3
"""The hole before each GEMM in a training step's stream, GEMM by GEMM.

`kernel_gaps.py` gives one gap per kernel class, the mean over small models' steps (GEMMs 2.28 µs on H200). The
1.4B model's steps have holes of 3.2-3.5 µs before its GEMMs (memsets counted busy), the narrow models' 2.0-2.3: how
long the GPU idles before a GEMM depends on the GEMM (cuBLAS launches some after a 4-byte semaphore memset). Those
holes are where an NCCL kernel beside the compute stream is exposed.

For each GEMM of a --gemm-shapes file (lines "forward|dgrad|wgrad M N K", as stepsim names a training step's GEMMs;
calibration/validation/gemm_shapes.py lists a scenario's), in the form a step runs it (interference_training.gemm):
a spin kernel holds the stream while the host queues `--pairs` pairs of a memory-bound add (8192x2048 BF16, a
residual add) and the GEMM, profiled with CUDA activity only; the hole before each GEMM is the idle time since the
add ended, memsets counted busy, as kernel_gaps.py counts them (the first pair, after the spin, left out).

Writes JSON Lines {"kind": "launch", "op": "step_gap_gemm_shape", "form", "m", "n", "k", "time_us": {"mean",
"median", "p10", "p90", "p99", "n"}, "memsets"}; `stepsim calibrate fit` takes the mean per shape into
launch.gemm_gap_by_shape.
Usage: python3 gemm_gaps.py --gemm-shapes FILE --out FILE [--pairs 12]
"""
import argparse
import json

import torch

from interference_training import gemm, read_shapes
from kernel_gaps import MAX_GAP_US, profiled, stats
from timing import host_seconds


def is_gemm(name):
    n = name.lower()
    return any(k in n for k in ("nvjet", "gemm", "cutlass", "xmma"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gemm-shapes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--pairs", type=int, default=12)
    a = ap.parse_args()
    shapes = read_shapes(a.gemm_shapes)
    dev = torch.device("cuda", 0)
    r = lambda *s: torch.randn(*s, device=dev, dtype=torch.bfloat16)
    x, y, z = r(8192, 2048), r(8192, 2048), r(8192, 2048)
    add = lambda: torch.add(x, y, out=z)
    recs = []
    for role, m, n, k in shapes:
        _, name, fn, _ = gemm(r, role, m, n, k)
        for _ in range(3):
            fn()
            add()

        def pairs():
            for _ in range(a.pairs):
                add()
                fn()

        events = profiled(pairs, None, 2.0 * host_seconds(pairs, 1) + 2e-3, 1)
        holes, memsets, prev_end, busy, seen = [], 0, None, 0.0, 0
        for start, end, kname, cat, *_ in events:
            if "sleep" in kname or "spin" in kname:
                prev_end, busy = None, 0.0
                continue
            if cat == "gpu_memset":
                busy += end - start
                memsets += 1
                continue
            if is_gemm(kname):
                seen += 1
                hole = None if prev_end is None else max(0.0, start - prev_end - busy)
                if seen > 1 and hole is not None and hole <= MAX_GAP_US:
                    holes.append(hole)
            prev_end, busy = end, 0.0
        if not holes:
            print(f"{name}: no hole measured", flush=True)
            continue
        rec = {"kind": "launch", "op": "step_gap_gemm_shape", "source": "pytorch", "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name(), "form": role, "m": m, "n": n, "k": k, "time_us": stats(holes),
               "memsets": memsets}
        recs.append(rec)
        print(f"{name:30s} hole before it: mean {rec['time_us']['mean']:.2f} us, median {rec['time_us']['median']:.2f} "
              f"({len(holes)} pairs, {memsets} memsets)", flush=True)
    with open(a.out, "w") as f:
        for rec in recs:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
