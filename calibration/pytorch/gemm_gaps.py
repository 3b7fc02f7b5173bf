#!/usr/bin/env python3
"""The hole before each GEMM in a training step's stream, GEMM by GEMM, alone and beside a resident NCCL kernel.

`kernel_gaps.py` gives one gap per kernel class, the mean over small models' steps (GEMMs 2.28 µs on H200). The
1.4B model's steps have holes of 3.2-3.5 µs before its GEMMs (memsets counted busy), the narrow models' 2.0-2.3: how
long the GPU idles before a GEMM depends on the GEMM (cuBLAS launches some after a 4-byte semaphore memset). Those
holes are where an NCCL kernel beside the compute stream is exposed.

For each GEMM of a --gemm-shapes file (lines "forward|dgrad|wgrad M N K", as stepsim names a training step's GEMMs;
calibration/validation/gemm_shapes.py lists a scenario's), in the form a step runs it (interference_training.gemm):
a spin kernel holds the stream while the host queues `--pairs` units of a memory-bound add (8192x2048 BF16, a
residual add), the GEMM, and DDP's two gradient copies (the scaled copy into a bucket, at::mul_out, and the copy back,
copy_; 4 Mi fp32 elements), profiled with CUDA activity only; the hole before each operation is the idle time since
the previous one ended, memsets counted busy, as kernel_gaps.py counts them (the first unit, after the spin, left out).

Under torchrun with two processes (--beside transfer,waiting), each GEMM is profiled again beside an all-reduce of
--bucket-mib (DDP's bucket) on a second stream, and only the holes wholly inside an NCCL kernel are kept:
"transfer", both ranks in a chain of all-reduces that covers the units (NCCL moving data all along); "waiting",
rank 1 joining one all-reduce only after its units, so rank 0's NCCL kernel sits resident, polling for its peer
(rank 0's holes only). In the validation's two-GPU traces the holes under an NCCL kernel that moves data are longer
than alone before GEMMs (x1.36 with a memset, x1.25 without) and copies (x1.2), not before memory-bound kernels
(x1.0), and no longer under one that waits (calibration/profiles/h200x2/NOTES.md, launch and host).

Writes JSON Lines {"kind": "launch", "op": "step_gap_gemm_shape", "form", "m", "n", "k", "time_us": {"mean",
"median", "p10", "p90", "p99", "n"}, "memsets", "rank"} (alone), the same with op "step_gap_gemm_shape_beside_nccl",
"mode" and "comm_bytes" (beside), and per class (gemm, memory, copy) and condition, over every GEMM's units, op
"step_gap_unit_<class>" with "mode" (alone, transfer, waiting); `stepsim calibrate fit` takes the mean per shape
into launch.gemm_gap_by_shape and, beside an all-reduce moving data, launch.gemm_gap_beside_transfer_by_shape, and
each class's ratio beside to alone into launch.step_gap_beside_{transfer,waiting}_us.
Usage: python3 gemm_gaps.py [--gemm-shapes FILE] --out FILE [--pairs 12]
       torchrun --standalone --nproc-per-node 2 gemm_gaps.py [--gemm-shapes FILE] --out FILE --beside transfer,waiting
"""
import argparse
import json
import math
import os

import torch

from interference_training import gemm, linear_shapes, read_shapes
from kernel_gaps import MAX_GAP_US, inside, profiled, stats
from timing import hold_gpu, host_seconds

CLASSES = ("gemm", "memory", "copy")


def is_gemm(name):
    n = name.lower()
    return any(k in n for k in ("nvjet", "gemm", "cutlass", "xmma"))


def kind(name, cat):
    """The simulator's class of an operation of the units: the GEMM, DDP's copies (at::mul_out's scalar kernel, the
    copy engine's memcpy), the memory-bound add."""
    if is_gemm(name):
        return "gemm"
    if cat == "gpu_memcpy" or "AUnaryFunctor" in name:
        return "copy"
    return "memory"


def unit_holes(events, nccl=None):
    """Per class, the holes before the compute stream's operations (the stream with the most non-NCCL events), from
    the second unit on (a unit starts at its add); memsets count busy. With `nccl` (its kernels' intervals), only the holes
    wholly inside one NCCL kernel. Also the count of memsets."""
    by_stream = {}
    for ev in events:  # (start, end, name, category, device, stream)
        if "nccl" not in ev[2].lower():
            by_stream.setdefault(ev[5], []).append(ev)
    out, memsets, prev_end, busy, unit = {c: [] for c in CLASSES}, 0, None, 0.0, -1
    for start, end, name, cat, *_ in sorted(max(by_stream.values(), key=len)):
        if "sleep" in name or "spin" in name:
            prev_end, busy, unit = None, 0.0, -1
            continue
        if cat == "gpu_memset":
            busy += end - start
            memsets += 1
            continue
        c = kind(name, cat)
        unit += c == "memory"
        if prev_end is not None and unit >= 1:
            hole = max(0.0, start - prev_end - busy)
            if hole <= MAX_GAP_US and (nccl is None or inside(prev_end, start, nccl)):
                out[c].append(hole)
        prev_end, busy = end, 0.0
    return out, memsets


def device_seconds(fn, calls, hold_s=0.0):
    """Device seconds per call of `calls` calls between two CUDA events (after a spin of hold_s, if any)."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if hold_s > 0:
        hold_gpu(hold_s)
    e0.record()
    for _ in range(calls):
        fn()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) * 1e-3 / calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gemm-shapes", help="the GEMMs, 'forward|dgrad|wgrad M N K' per line (default: 21 transformer "
                                          "linears at 4096-8192 tokens, interference_training.linear_shapes)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--pairs", type=int, default=12, help="units (add, GEMM, two copies) per profiled sequence")
    ap.add_argument("--beside", default="", help="two GPUs: comma-separated modes beside an all-reduce: transfer, waiting")
    ap.add_argument("--bucket-mib", type=int, default=25, help="the all-reduces' size, MiB of fp32 (DDP's bucket_cap_mb)")
    ap.add_argument("--reps", type=int, default=3, help="profiled sequences per GEMM beside NCCL")
    a = ap.parse_args()
    modes = [m for m in a.beside.split(",") if m]
    if any(m not in ("transfer", "waiting") for m in modes):
        raise SystemExit(f"gemm_gaps.py: --beside takes transfer and/or waiting, got {a.beside!r}")
    world, rank, dev = int(os.environ.get("WORLD_SIZE", "1")), 0, torch.device("cuda", 0)
    if modes and world < 2:
        raise SystemExit("gemm_gaps.py: --beside needs two processes (torchrun --nproc-per-node 2)")
    if world > 1:
        import torch.distributed as dist
        from gathered import agree_max, join_ranks
        rank, dev = join_ranks()
    shapes = read_shapes(a.gemm_shapes) if a.gemm_shapes else linear_shapes()
    r = lambda *s: torch.randn(*s, device=dev, dtype=torch.bfloat16)
    x, y, z = r(8192, 2048), r(8192, 2048), r(8192, 2048)
    grad, bucket = torch.randn(1 << 22, device=dev), torch.empty(1 << 22, device=dev)
    add = lambda: torch.add(x, y, out=z)
    side = torch.cuda.Stream()
    # the all-reduces rotate through 4 buckets (100 MiB at 25, twice the L2), read from HBM as DDP's are
    bufs = [torch.zeros(a.bucket_mib << 18, device=dev) for _ in range(4 if modes else 0)]
    turn = [0]

    def all_reduce():
        turn[0] += 1
        dist.all_reduce(bufs[turn[0] % len(bufs)])

    if modes:
        for _ in range(5):
            all_reduce()
        torch.cuda.synchronize()
        ar_s = agree_max(device_seconds(all_reduce, 10))
    recs, pooled = [], {}
    common = {"kind": "launch", "source": "pytorch", "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
              "rank": rank}
    for role, m, n, k in shapes:
        _, name, fn, _ = gemm(r, role, m, n, k)

        def units():
            for _ in range(a.pairs):
                add()
                fn()
                torch.mul(grad, 0.5, out=bucket)
                grad.copy_(bucket)

        for _ in range(3):
            units()
        hold = 2.0 * host_seconds(units, 1) + 2e-3
        units_s = device_seconds(units, 1, hold)
        if modes:
            hold, units_s = agree_max(hold), agree_max(units_s)
        alone, memsets = unit_holes(profiled(units, None, hold, 1))
        shape = {"form": role, "m": m, "n": n, "k": k}
        for c, v in alone.items():
            pooled.setdefault(("alone", c), []).extend(v)
        if alone["gemm"]:
            recs.append(dict(common, op="step_gap_gemm_shape", **shape, time_us=stats(alone["gemm"]), memsets=memsets))
        line = f"{name:30s} alone {stats(alone['gemm'])['mean'] if alone['gemm'] else float('nan'):.2f} us"
        for mode in modes:
            late = mode == "waiting" and rank == 1
            if mode == "transfer":  # both ranks, from shortly before the units to well past them
                count = int(agree_max(math.ceil(2.0 * (0.2 * hold + units_s) / ar_s) + 2))
                lead = 0.8 * hold
            else:  # rank 0's one all-reduce waits for rank 1, which joins after its units
                count, lead = 1, 0.5 * hold

            def comm():
                dist.barrier()
                if not late:
                    with torch.cuda.stream(side):
                        hold_gpu(lead)
                        for _ in range(count):
                            all_reduce()

            def step():
                units()
                if late:
                    done = torch.cuda.Event()
                    done.record()
                    with torch.cuda.stream(side):
                        side.wait_event(done)
                        hold_gpu(units_s + 1e-3)
                        all_reduce()

            events = profiled(step, comm, hold, a.reps)
            nccl = sorted([s, e] for s, e, nm, *_ in events if "nccl" in nm.lower())
            beside, _ = unit_holes(events, nccl)
            if late:
                continue  # rank 1 computed with no NCCL kernel resident
            for c, v in beside.items():
                pooled.setdefault((mode, c), []).extend(v)
            if beside["gemm"]:
                recs.append(dict(common, op="step_gap_gemm_shape_beside_nccl", mode=mode, comm_bytes=a.bucket_mib << 20,
                                 **shape, time_us=stats(beside["gemm"]), memsets=memsets))
                line += f", {mode} {stats(beside['gemm'])['mean']:.2f} us ({len(beside['gemm'])} holes)"
        print(f"rank {rank} {line}", flush=True)
    for (mode, c), v in sorted(pooled.items()):
        if v:
            recs.append(dict(common, op=f"step_gap_unit_{c}", mode=mode, time_us=stats(v),
                             **({"comm_bytes": a.bucket_mib << 20} if mode != "alone" else {})))
    if world > 1:
        from gathered import write_gathered
        write_gathered(a.out, recs)
        dist.destroy_process_group()
    else:
        with open(a.out, "w") as f:
            for rec in recs:
                f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
