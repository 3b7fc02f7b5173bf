#!/usr/bin/env python3
"""Gaps between consecutive GPU operations of an eager training step, the host far ahead of the device.

The launch bench's `device_gap` times 1000 queued copies of one tiny kernel. A training step's stream runs a
mix — cuBLAS GEMMs with their 4-byte semaphore memsets, cuDNN attention, norms, elementwise kernels, copies,
the fused optimizer — and the gap from one operation's end to the next one's start is longer on average, and
longer again while an NCCL kernel is resident on the GPU. Those gaps are the holes through which a
communication kernel beside a dense compute stream is exposed.

A GPT-style model's whole step (forward, backward, fused AdamW) is queued behind a spin kernel (timing.hold_gpu)
so the host never starves the stream, profiled with CUDA activity only, and every gap between consecutive
operations on the compute stream is kept. Under torchrun with two processes, each step also runs a chain of
large all-reduces on a second stream that covers the compute, and the gaps that lie wholly inside an NCCL
kernel are reported apart (op step_gap_beside_nccl).

The gap before an operation is the idle time since the previous operation ended; cuBLAS's 4-byte memsets in
between count as busy time, not as operations (the simulator prices them inside the GEMM). Gaps longer than
20 µs are not launch gaps (the host fell behind: counted as `starved`, left out).

Writes JSON Lines records {"kind": "launch", "op": ..., "time_us": {mean, median, p10, p90, p99, n}}: op
step_gap_<class> for the gaps before operations of each of the simulator's kernel classes (gemm, attention,
memory, copy, optimizer), step_gap for all of them, and the same ops with the suffix _beside_nccl; on two GPUs
every record carries comm_bytes, the size of the all-reduces (--bucket-mib), and ddp. `stepsim calibrate fit` reads
the per-class means of the gaps alone. The gaps beside NCCL are reported, not fitted: how much longer a hole is
depends on whether the NCCL kernel moves data or waits for its peer, which a step's gaps here do not separate (beside
a chain of 256 MiB all-reduces, run 19, the gaps were 45-65% longer, beside 25 MiB ones, run 48, 19-59%; with --ddp,
DistributedDataParallel's own buckets, run 49: GEMM gaps 1.02x, memory-bound 1.15x); gemm_gaps.py --beside measures
the two states apart, and the fit takes those (calibration/profiles/h200x2/NOTES.md, launch and host).
Usage: python3 kernel_gaps.py --out FILE            (one GPU: the gaps alone)
       torchrun --standalone --nproc-per-node 2 kernel_gaps.py --out FILE [--ddp] [--bucket-mib 25]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import torch
import torch.nn.functional as F

from host_overhead import Model
from timing import hold_gpu, host_seconds

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation"))
from trace_metrics import category, device_events, is_nccl, merge  # noqa: E402

MAX_GAP_US = 20.0
# trace_metrics' categories as the simulator's kernel classes (the class of the operation after the gap).
SIM_CLASS = {"gemm": "gemm", "attention": "attention", "optimizer": "optimizer", "memcpy": "copy",
             "elementwise_other": "memory"}
# (layers, hidden, heads, seq, batch): three widths at 4096 and 8192 tokens per step (cuBLAS picks other kernels,
# some with a semaphore memset before them, as the token count grows), a few hundred operations per step.
SHAPES = [(4, 768, 12, 1024, 8), (4, 1024, 16, 1024, 4), (2, 2048, 16, 2048, 2), (2, 2048, 16, 2048, 4)]


def stats(v):
    v = sorted(v)
    q = lambda p: v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]
    return {"median": statistics.median(v), "mean": statistics.fmean(v), "p10": q(0.1), "p90": q(0.9),
            "p99": q(0.99), "n": len(v)}


def inside(a, b, merged):
    """Whether [a, b] lies within one interval of a sorted disjoint union."""
    return any(s <= a and b <= e for s, e in merged)


def profiled(step, comm, hold, reps):
    """Device events of `reps` steps, each queued behind a spin kernel; `comm` (if given) queues the all-reduce
    chain on its own stream first."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            if comm is not None:
                comm()
            hold_gpu(hold)
            step()
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            return device_events(json.load(f))


def measure(shape, world, reps=5, bucket_mib=256, ddp=False):
    layers, h, heads, seq, batch = shape
    vocab = 8192
    dev = torch.device("cuda", torch.cuda.current_device())
    model = Model(layers, h, heads, vocab, seq).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    idx = torch.randint(0, vocab, (batch, seq), device=dev)

    def step_of(m):
        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(m(idx).view(-1, vocab), idx.view(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return step

    step = step_of(model)
    for _ in range(3):
        step()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    step()
    b.record()
    torch.cuda.synchronize()
    device_ms = a.elapsed_time(b)
    hold = 2.0 * host_seconds(step, 1) + 5e-3

    side = torch.cuda.Stream() if world > 1 and not ddp else None
    beside_step = step
    if world > 1 and ddp:
        # DistributedDataParallel's own bucket all-reduces beside the backward, spaced as DDP issues them
        from torch.nn.parallel import DistributedDataParallel
        beside_step = step_of(DistributedDataParallel(model, device_ids=[dev.index], bucket_cap_mb=bucket_mib))
        for _ in range(3):
            beside_step()
        torch.cuda.synchronize()
        from gathered import agree_max
        ddp_hold = agree_max(2.0 * host_seconds(beside_step, 1) + 5e-3)  # the same spin on both ranks
    if side is not None:
        import torch.distributed as dist
        buf = torch.zeros(bucket_mib * 2**18, device=dev)  # fp32: 256 MiB ~1 ms per all-reduce on NVLink
        from gathered import agree_max
        longest = agree_max(device_ms)  # every rank must issue the same number of all-reduces
        chain = int(1.5 * longest * 256 / bucket_mib) + 4  # all-reduces of this size covering the step

        def comm():
            with torch.cuda.stream(side):
                hold_gpu(hold)
                for _ in range(chain):
                    dist.all_reduce(buf)
        comm()
        torch.cuda.synchronize()

    alone, beside, starved, memsets, operations = {}, {}, 0, 0, 0
    for with_comm in ([False, True] if world > 1 else [False]):
        if ddp and with_comm:
            events = profiled(beside_step, None, ddp_hold, reps)
        else:
            events = profiled(step, comm if with_comm else None, hold, reps)
        nccl = merge([(s, e) for s, e, name, *_ in events if is_nccl(name)])
        by_stream = {}
        for ev in events:  # (start, end, name, category, device, stream)
            if not is_nccl(ev[2]):
                by_stream.setdefault(ev[5], []).append(ev)
        compute = sorted(max(by_stream.values(), key=len))
        # The hole before each operation the simulator models (kernels and copies): the idle time since the
        # previous one ended, cuBLAS's 4-byte semaphore memsets in between counted as busy, not as operations.
        prev_end, busy = None, 0.0
        for start, end, name, cat, *_ in compute:
            if "spin" in name or "sleep" in name:
                prev_end, busy = None, 0.0  # the next operation waited for the spin kernel
                continue
            if cat == "gpu_memset":
                busy += end - start
                memsets += not with_comm
                continue
            operations += not with_comm
            if prev_end is not None:
                hole = max(0.0, start - prev_end - busy)
                if hole > MAX_GAP_US:
                    starved += 1
                elif not with_comm:
                    alone.setdefault(SIM_CLASS[category(name, cat)], []).append(hole)
                elif inside(prev_end, start, nccl):
                    beside.setdefault(SIM_CLASS[category(name, cat)], []).append(hole)
            prev_end, busy = end, 0.0
    return {"shape": {"layers": layers, "hidden": h, "heads": heads, "seq": seq, "batch": batch},
            "operations": operations, "memsets": memsets, "device_step_ms": device_ms, "starved": starved,
            "alone": alone, "beside": beside}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="kernel_gaps.jsonl")
    ap.add_argument("--ddp", action="store_true",
                    help="two GPUs: the steps beside NCCL run under DistributedDataParallel (buckets of --bucket-mib), "
                         "its all-reduces spaced as DDP issues them, instead of beside a chain")
    ap.add_argument("--bucket-mib", type=int, default=256,
                    help="two GPUs: the size of the all-reduces beside the step (256: run 19's chain, which loads the "
                         "GPU more than a step's buckets; 25: DDP's default bucket); recorded as comm_bytes")
    a = ap.parse_args()
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = 0
    if world > 1:
        import torch.distributed as dist
        from gathered import join_ranks
        rank, _ = join_ranks()
    runs = [measure(s, world, bucket_mib=a.bucket_mib, ddp=a.ddp) for s in SHAPES]
    if rank == 0:
        common = {"kind": "launch", "source": "pytorch", "torch": torch.__version__,
                  "gpu": torch.cuda.get_device_name(), "world": world,
                  "shapes": [r["shape"] for r in runs], "operations": [r["operations"] for r in runs],
                  "memsets": [r["memsets"] for r in runs],
                  "device_step_ms": [r["device_step_ms"] for r in runs], "starved": [r["starved"] for r in runs],
                  "max_gap_us": MAX_GAP_US, **({"comm_bytes": a.bucket_mib << 20, "ddp": a.ddp} if world > 1 else {}),
                  "method": "idle time from the end of one operation to the start of the next on the compute "
                            "stream (memsets busy), eager training step queued behind a spin kernel; by the next "
                            "operation's class"}
        recs = []
        for where, suffix in (("alone", ""), ("beside", "_beside_nccl")):
            gaps = {}
            for r in runs:
                for cls, v in r[where].items():
                    gaps.setdefault(cls, []).extend(v)
            if gaps:
                recs.append(dict(common, op="step_gap" + suffix, time_us=stats([g for v in gaps.values() for g in v])))
            recs += [dict(common, op=f"step_gap_{cls}{suffix}", time_us=stats(v)) for cls, v in sorted(gaps.items())]
        with open(a.out, "a") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
        for r in recs:
            t = r["time_us"]
            print(f"{r['op']:36s} n {t['n']:5d}  mean {t['mean']:.2f}  median {t['median']:.2f}  p90 {t['p90']:.2f} us")
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
