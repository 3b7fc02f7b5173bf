#!/usr/bin/env python3
"""The holes before each class of operation in a two-GPU training step's traces, by what NCCL was doing.

A hole is the idle time on the compute stream from one operation's end to the next one's start. In a DDP step an
NCCL kernel beside the compute stream is exposed through those holes, and how long they are depends on the NCCL
kernel: while it only waits for its peer (the peer's matching kernel has not started) they are as long as alone,
while it moves data (both have started) longer before GEMMs and DDP's gradient copies (d2-l24-h2048-s2048-mb4-b25,
run 34: x1.36 and x1.2; calibration/profiles/h200x2/NOTES.md, launch and host). This reads both ranks' traces of one
run, matches their NCCL kernels by order (the ranks issue the same collectives in the same order; the profiler's
clocks of one host agree to tens of µs) and puts each hole under a state when it lies wholly inside it: "alone" (no
NCCL kernel resident on this rank), "waiting", "moving"; a hole across states is left out.

Operations as the simulator prices them: cuBLAS's 4-byte memset and the GEMM after it are one operation (the memset
busy, the two holes summed: class gemm+memset, apart from GEMMs without one, whose holes are half as long); classes
gemm, attention, memory-bound, optimizer, and copy (DDP's bucket copies: the copy engine's memcpy and at::mul_out's
scalar kernel). Holes longer than 50 µs (the host behind) are left out.

No torch import. Usage: python3 trace_holes.py RANK0_TRACE RANK1_TRACE  (Chrome traces, .json or .json.gz)
"""
from __future__ import annotations

import gzip
import json
import statistics
import sys

from trace_metrics import category, device_events, is_nccl

MAX_HOLE_US = 50.0
STATES = ("alone", "waiting", "moving")


def op_class(name: str, cat: str) -> str:
    c = category(name, cat)
    if c == "memcpy" or (c == "elementwise_other" and "AUnaryFunctor" in name):
        return "copy"
    return {"elementwise_other": "memory"}.get(c, c)


def holes_by_state(own, peer):
    """{(class, state): [hole µs]} for the compute stream of `own`, its NCCL kernels' states read against `peer`'s
    (both lists of trace_metrics.device_events)."""
    mine = [(s, e) for s, e, n, *_ in own if is_nccl(n)]
    theirs = [(s, e) for s, e, n, *_ in peer if is_nccl(n)]
    k = min(len(mine), len(theirs))
    mine, theirs = mine[len(mine) - k:], theirs[len(theirs) - k:]  # the last k of each: the same collectives
    waiting = [(a[0], max(a[0], b[0])) for a, b in zip(mine, theirs)]
    moving = [(max(a[0], b[0]), a[1]) for a, b in zip(mine, theirs)]
    resident = [(s, e) for s, e, n, *_ in own if is_nccl(n)]
    by_stream = {}
    for ev in own:
        if not is_nccl(ev[2]):
            by_stream.setdefault(ev[5], []).append(ev)
    ops = sorted(max(by_stream.values(), key=len)) if by_stream else []
    out = {}

    def record(c, lo, hi, hole):
        if not 0.0 <= hole <= MAX_HOLE_US:
            return
        if any(a <= lo and hi <= b for a, b in moving):
            state = "moving"
        elif any(a <= lo and hi <= b for a, b in waiting):
            state = "waiting"
        elif not any(a < hi and lo < b for a, b in resident):
            state = "alone"
        else:
            return
        out.setdefault((c, state), []).append(hole)

    prev_end, memset = None, None  # memset: (from, to) of the hole before a memset, until the next operation
    for start, end, name, cat, *_ in ops:
        c = op_class(name, cat)
        if c == "memset":
            memset = (prev_end, start) if prev_end is not None else None
        elif memset and c == "gemm":  # one operation: both holes, from before the memset to the GEMM
            record("gemm+memset", memset[0], start, (memset[1] - memset[0]) + (start - prev_end))
            memset = None
        else:
            if memset:  # a memset of its own (the simulator's memory-bound memset before attention's backward)
                record("memory", memset[0], memset[1], memset[1] - memset[0])
                memset = None
            if prev_end is not None:
                record(c, prev_end, start, start - prev_end)
        prev_end = end
    return out


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return device_events(json.load(f))


def main(argv):
    if len(argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    ranks = [load(argv[1]), load(argv[2])]
    for r in (0, 1):
        holes = holes_by_state(ranks[r], ranks[1 - r])
        print(f"rank {r}: mean hole before each class, µs (count)")
        for c in sorted({c for c, _ in holes}):
            cells = []
            for s in STATES:
                v = holes.get((c, s), [])
                cells.append(f"{s} {statistics.fmean(v):5.2f} ({len(v):4d})" if v else f"{s}     - (   0)")
            alone = holes.get((c, "alone"))
            moving = holes.get((c, "moving"))
            ratio = f"  moving/alone x{statistics.fmean(moving) / statistics.fmean(alone):.2f}" if alone and moving else ""
            print(f"  {c:9s} " + "  ".join(cells) + ratio)


if __name__ == "__main__":
    main(sys.argv)
