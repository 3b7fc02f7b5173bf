#!/usr/bin/env python3
"""How much a training step's kernels slow down while an NCCL all-reduce is resident on the GPU, by kernel class.

The harness's interference bench (calibration/bench, group interference) runs one large cuBLASLt GEMM beside one
all-reduce. A DDP step runs PyTorch's own kernels beside a chain of bucket-sized all-reduces, and those kernels
lose more: cuBLAS's persistent GEMMs launch one CTA per SM, so the SMs an NCCL kernel holds (one block per channel)
push part of the grid into a second wave, and memory-bound kernels share HBM with the reduction. In a profiled
two-GPU step (d2-l24-h2048-s2048-mb4-b25) the GEMMs wholly inside an NCCL kernel ran 1.72x as long as the same
GEMMs of the one-GPU step (aligned kernel by kernel), those outside 1.05x.

Under torchrun with two processes, each kernel below (GEMMs of transformer linears in the forms a step runs,
SDPA attention, memory-bound elementwise and norm kernels) is timed on the compute stream over 20 calls between two
CUDA events, the stream held behind a spin kernel until they are queued (timing.looped): alone, then with a chain
of all-reduces of one DDP bucket (25 MiB of fp32 gradients; --bucket-mib 4,25,64,128 measures each size in turn)
on a second stream, started shortly before the calls
and long enough to cover them (both ranks issue the same number; a record without `with_comm_us` is a kernel the
chain did not cover). The chain's own time with and without the compute is
kept too. Two modes: "transfer", both ranks in the chain at once (NCCL moving data all along), and "waiting",
rank 1 joining one all-reduce only after its calls, so rank 0's NCCL kernel sits resident, polling for its peer,
through rank 0's calls, as when DDP's ranks drift apart (rank 0's slowdown only). The all-reduces rotate through
8 buckets (--buckets), so they read HBM as DDP's do. A third mode, "bucketed" (--modes bucketed), issues one
bucket's all-reduce after each call, waiting on that call's end, as DDP issues them: the all-reduce then starts
beside the next call, and its own slowdown is kept (`comm_with_compute_us`); the fit reports these records only.
Those all-reduces, and every link of a chain after the first, start while a kernel holds the SMs and wait for it
(beside a long GEMM a 64 MiB all-reduce took exactly one GEMM's period, the harness's interference bench), which
the simulator models apart; a fourth mode, "resident", times the all-reduce's own rate beside compute without that
wait: one all-reduce whose kernel starts on both ranks 20 µs before a run of calls that outlasts it (resident()),
into `comm_slowdown` (its moving time beside the calls over the same time alone) and interference.comm_slowdown.

How much a GEMM loses depends on its shape more than on anything else: NCCL holds one SM per channel (24 for a
2-GPU fp32 all-reduce), and a GEMM cuBLAS tiles into exactly one wave over every SM (a small output of a long K,
split across the SMs) runs in two, where one of many tiles loses about the SMs' share (runs 38-39: x1.21 to x1.95
across 21 shapes, waiting mode). --gemm-shapes FILE times the GEMMs listed there instead of the default kernels
(lines "forward|dgrad|wgrad M N K", as stepsim names a training step's GEMMs; calibration/validation/gemm_shapes.py
lists a set of scenarios' shapes), so a model's own shapes can be measured.

Writes JSON Lines {"kind": "interference_training", "mode", "class": gemm|attention|memory, "op", "alone_us",
"with_comm_us", "slowdown", "comm_bytes", "comm_alone_us", "comm_with_compute_us", "rank", and for GEMMs "m", "n",
"k"}; resident records hold "comm_lead_us", "comm_beside_us" and "comm_slowdown" instead of the compute's times.
`stepsim calibrate fit` takes the median slowdown per mode and class into interference.beside_transfer and
.beside_waiting, and the waiting mode's per GEMM shape into interference.gemm_by_shape.
Usage: torchrun --standalone --nproc-per-node 2 interference_training.py --out FILE [--modes transfer,waiting,bucketed,resident]
       [--bucket-mib 25[,...]] [--heat-s S] [--gemm-shapes FILE]
"""
import argparse
import math
import os
import statistics

import torch
import torch.distributed as dist
import torch.nn.functional as F

from gathered import agree_max, join_ranks, write_gathered
from timing import Heater, hold_gpu, host_seconds, looped



def gemm(r, role, m, n, k):
    """(class, name, fn, shape) of one GEMM in the form a training step runs it for `role`, shaped as stepsim names
    it: forward m=T n=out k=in (F.linear(x, W)), dgrad m=T n=in k=out (dy @ W), wgrad m=out n=in k=T (dy^T @ x)."""
    if role == "forward":
        x, w = r(m, k), r(n, k)
        fn = lambda: F.linear(x, w)
    elif role == "dgrad":
        dy, w = r(m, k), r(k, n)
        fn = lambda: torch.mm(dy, w)
    else:
        dy, x = r(k, m), r(k, n)
        fn = lambda: torch.mm(dy.t(), x)
    return ("gemm", f"{role} {m}x{n}x{k}", fn, (m, n, k))


def read_shapes(path):
    """(role, m, n, k) per line of a --gemm-shapes file: "forward|dgrad|wgrad M N K"; '#' starts a comment."""
    out = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            words = line.split("#")[0].split()
            if not words:
                continue
            if len(words) != 4 or words[0] not in ("forward", "dgrad", "wgrad") or not all(w.isdigit() and int(w) > 0
                                                                                           for w in words[1:]):
                raise SystemExit(f"{path}:{no}: expected 'forward|dgrad|wgrad M N K' (positive integers), got {line.strip()!r}")
            out.append((words[0], *map(int, words[1:])))
    if not out:
        raise SystemExit(f"{path}: no shapes")
    return out


def linear_shapes():
    """(role, m, n, k) of the default GEMMs: transformer linears (tokens, out, in) in the three forms a step runs."""
    out = []
    for (T, o, i) in ((8192, 6144, 2048), (8192, 8192, 2048), (8192, 2048, 8192), (8192, 2048, 2048),
                      (8192, 2304, 768), (8192, 3072, 768), (4096, 10240, 2560)):
        out += [("forward", T, o, i), ("dgrad", T, i, o), ("wgrad", o, i, T)]
    return out


def kernels(dev, shapes=None):
    """(class, name, fn, GEMM shape or None) of the kernels timed, with their operands: `shapes` ((role, m, n, k)) when
    given, GEMMs only; else GEMMs of transformer linears in the three forms, SDPA attention and memory-bound kernels."""
    bf = torch.bfloat16
    r = lambda *s: torch.randn(*s, device=dev, dtype=bf)
    if shapes:
        return [gemm(r, *s) for s in shapes]
    out = [gemm(r, *s) for s in linear_shapes()]
    for (b, h, s, d) in ((4, 16, 2048, 128), (8, 12, 1024, 64)):
        q, k, v = r(b, h, s, d), r(b, h, s, d), r(b, h, s, d)
        out.append(("attention", f"sdpa_fwd b{b} h{h} s{s} d{d}",
                    lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v, is_causal=True), None))
    for (T, h) in ((8192, 2048), (8192, 768), (16384, 4096)):
        a, b2, c = r(T, h), r(T, h), r(T, h)
        up = r(T, 4 * h)
        wln = torch.ones(h, device=dev, dtype=bf)
        out.append(("memory", f"add {T}x{h}", lambda a=a, b2=b2, c=c: torch.add(a, b2, out=c), None))
        out.append(("memory", f"gelu {T}x{4 * h}", lambda up=up: F.gelu(up, approximate="tanh"), None))
        out.append(("memory", f"layer_norm {T}x{h}", lambda a=a, wln=wln: F.layer_norm(a, (a.shape[-1],), wln), None))
    return out


def bucketed(cls, name, fn, a, rank, side, next_grad, ar_us, bucket_bytes):
    """As DDP issues them: after each call, one bucket's all-reduce on the side stream, waiting for that call's end
    (an event), so each all-reduce starts beside the next call. Both ranks run the same loop."""
    alone = statistics.median(looped(fn, reps=5, inner=a.inner))
    # the host queues the calls and the all-reduces (~50 µs each to issue) before the GPU starts; the same on both
    hold = agree_max(2.0 * host_seconds(fn, a.inner) + a.inner * 150e-6 + 2e-3)
    per, comm = [], []
    for _ in range(5):
        dist.barrier()
        torch.cuda.synchronize()
        hold_gpu(hold)
        s0, s1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        marks = []
        s0.record()
        for _ in range(a.inner):
            fn()
            done = torch.cuda.Event()
            done.record()
            with torch.cuda.stream(side):
                side.wait_event(done)
                c0, c1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                c0.record()
                dist.all_reduce(next_grad())
                c1.record()
                marks.append((c0, c1))
        s1.record()
        torch.cuda.synchronize()
        per.append(s0.elapsed_time(s1) * 1e3 / a.inner)
        comm.append(statistics.median(c0.elapsed_time(c1) * 1e3 for c0, c1 in marks))
    rec = {"kind": "interference_training", "class": cls, "op": name, "rank": rank, "mode": "bucketed",
           "buckets": a.buckets, "alone_us": alone, "comm_bytes": bucket_bytes, "comm_alone_us": ar_us,
           "with_comm_us": statistics.median(per), "comm_with_compute_us": statistics.median(comm)}
    rec["slowdown"] = rec["with_comm_us"] / alone
    print(f"rank {rank} bucketed {cls:9s} {name:28s} alone {alone:9.1f} us  with buckets {rec['with_comm_us']:9.1f} us"
          f"  x{rec['slowdown']:.3f}  all-reduce {rec['comm_with_compute_us']:.1f} us (alone {ar_us:.1f})", flush=True)
    return rec


LEAD_S = 20e-6  # resident: how long before the calls the all-reduce's kernel starts


def resident(cls, name, fn, a, rank, side, next_grad, bucket_bytes):
    """The all-reduce's own rate beside compute, with no wait for SMs: one all-reduce whose kernel starts (on both
    ranks) LEAD_S before a run of calls long enough to outlast it, both streams held by spin kernels of the same GPU
    clock until the host has queued everything. The rank whose NCCL kernel arrived last moves data from its start;
    of the all-reduce's time alone (the same single all-reduce after a barrier, that rank's time) the part before
    the calls moves at full rate, the rest beside them: slowdown = (end − calls' start) / (alone − lead). Returns
    one record (rank 0's; None on the other rank), or None when the calls did not cover the all-reduce, or when the
    all-reduce alone lasts under 5 leads (4 MiB: ~40 µs, half of it ahead of the calls)."""
    dev = torch.device("cuda")

    def both(x):
        """[rank 0's, rank 1's] value of x."""
        t = torch.zeros(2, device=dev)
        t[min(rank, 1)] = x
        dist.all_reduce(t)
        return t.tolist()

    def single(hold_s, lead_s):
        """One all-reduce on the side stream after a spin of hold_s − lead_s: the events around it (c0, c1)."""
        c0, c1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(side):
            hold_gpu(hold_s - lead_s)
            c0.record()
            dist.all_reduce(next_grad())
            c1.record()
        return c0, c1

    comm_alone = []
    for _ in range(5):
        dist.barrier()
        torch.cuda.synchronize()
        c0, c1 = single(1e-3, 0.0)
        torch.cuda.synchronize()
        comm_alone.append(min(both(c0.elapsed_time(c1) * 1e3)))
    ar_us = statistics.median(comm_alone)
    if ar_us < 5 * LEAD_S * 1e6:
        if rank == 0:
            print(f"rank 0 resident {name}: all-reduce of {bucket_bytes >> 20} MiB alone {ar_us:.1f} us, under 5 leads: "
                  "not timed", flush=True)
        return None
    alone = statistics.median(looped(fn, reps=5, inner=a.inner))
    calls = max(a.inner, math.ceil(1.5 * ar_us / alone) + 1)
    hold = agree_max(2.0 * host_seconds(fn, calls) + 1e-3)  # the host queues the calls meanwhile
    lead, beside, covered = [], [], 0
    for _ in range(5):
        dist.barrier()
        torch.cuda.synchronize()
        c0, c1 = single(hold, LEAD_S)
        hold_gpu(hold)
        s0, s1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s0.record()
        for _ in range(calls):
            fn()
        s1.record()
        torch.cuda.synchronize()
        total = both(c0.elapsed_time(c1) * 1e3)
        late = total.index(min(total))  # arrived last: no wait for the peer
        lead_us = both(c0.elapsed_time(s0) * 1e3)[late]
        beside_us = both(s0.elapsed_time(c1) * 1e3)[late]
        ends_inside = min(both(1.0 if c1.elapsed_time(s1) >= 0 else 0.0))  # the calls outlast it on both ranks
        if ends_inside and 0 < lead_us < ar_us and beside_us > 0:
            lead.append(lead_us)
            beside.append(beside_us)
            covered += 1
    if rank != 0 or not covered:
        return None
    slowdowns = [b / (ar_us - l) for l, b in zip(lead, beside)]
    rec = {"kind": "interference_training", "class": cls, "op": name, "rank": rank, "mode": "resident",
           "buckets": a.buckets, "alone_us": alone, "calls": calls, "comm_bytes": bucket_bytes, "comm_alone_us": ar_us,
           "comm_lead_us": statistics.median(lead), "comm_beside_us": statistics.median(beside),
           "comm_slowdown": statistics.median(slowdowns), "covered_reps": covered}
    print(f"rank {rank} resident {cls:9s} {name:28s} all-reduce alone {ar_us:8.1f} us, {rec['comm_lead_us']:5.1f} us "
          f"ahead, {rec['comm_beside_us']:8.1f} beside {calls} calls: x{rec['comm_slowdown']:.3f} ({covered}/5)",
          flush=True)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--inner", type=int, default=20)
    ap.add_argument("--buckets", type=int, default=8, help="distinct buckets the all-reduces rotate through")
    ap.add_argument("--bucket-mib", default="25",
                    help="comma-separated sizes of the all-reduces, MiB of fp32 gradients, each measured in turn (DDP's "
                         "bucket_cap_mb; a parameter larger than the cap is its own bucket: 64 MiB for a 2048x8192 "
                         "weight, and the first bucket is 1 MiB)")
    ap.add_argument("--modes", default="transfer,waiting",
                    help="comma-separated: transfer, waiting, bucketed, resident")
    ap.add_argument("--heat-s", type=float, default=0.0,
                    help="transfer and waiting: hold the stream with this long (at least) of back-to-back GEMMs "
                         "before each timed batch, alone and beside NCCL (the board at its power limit), not a spin")
    ap.add_argument("--gemm-shapes", help="time these GEMMs only: a file of 'forward|dgrad|wgrad M N K' lines, shapes as "
                                          "stepsim names them (calibration/validation/gemm_shapes.py lists a scenario's)")
    a = ap.parse_args()
    if int(os.environ.get("WORLD_SIZE", "1")) < 2:
        raise SystemExit("interference_training.py: run under torchrun with two processes")
    rank, dev = join_ranks()
    torch.manual_seed(rank)
    side = torch.cuda.Stream()
    # DDP reduces a different bucket each time, read from HBM: rotate through 8 buckets (200 MiB, four times the
    # L2), not one that stays in L2 (run 21 did: its all-reduces read L2, and slowed the GEMMs less than a step's).
    grads = []  # per size, below
    turn = [0]

    def next_grad():
        turn[0] += 1
        return grads[turn[0] % len(grads)]

    def chain(n, delay_s=0.0, after=None):
        """n all-reduces of one bucket on the side stream after event `after` and a spin of delay_s, between two
        events there."""
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(side):
            if after is not None:
                side.wait_event(after)
            if delay_s > 0:
                hold_gpu(delay_s)
            e0.record()
            for _ in range(n):
                dist.all_reduce(next_grad())
            e1.record()
        return e0, e1

    heat = Heater(dev) if a.heat_s > 0 else None
    timed = kernels(dev, read_shapes(a.gemm_shapes) if a.gemm_shapes else None)
    recs = []
    modes = a.modes.split(",")
    for mib in [int(x) for x in a.bucket_mib.split(",")]:
        bucket_bytes = mib << 20
        grads[:] = [torch.randn(bucket_bytes // 4, device=dev) for _ in range(a.buckets)]
        for _ in range(5):  # NCCL's communicator and buffers
            dist.all_reduce(next_grad())
        torch.cuda.synchronize()
        e0, e1 = chain(20)
        torch.cuda.synchronize()
        ar_us = agree_max(e0.elapsed_time(e1) * 1e3 / 20)

        for (cls, name, fn, shape), mode in ((k, m) for k in timed for m in modes):
            if mode == "bucketed":
                recs.append(bucketed(cls, name, fn, a, rank, side, next_grad, ar_us, bucket_bytes))
                continue
            if mode == "resident":
                rec = resident(cls, name, fn, a, rank, side, next_grad, bucket_bytes)
                if rec:
                    recs.append(rec)
                continue
            hold = agree_max(2.0 * host_seconds(fn, a.inner) + 1e-3)  # the same spins on both ranks
            if heat:
                hold = agree_max(max(hold, a.heat_s))
                alone = statistics.median(looped(fn, reps=5, inner=a.inner, holder=heat, hold_s=hold))
            else:
                alone = statistics.median(looped(fn, reps=5, inner=a.inner))
            compute_s = a.inner * alone * 1e-6
            lead, margin = (0.1, 2.0) if heat else (0.2, 1.5)
            if mode == "transfer":
                # both ranks start the chain shortly before the calls; it covers them with margin (same count on both)
                # (heated: closer to the calls, with more margin, as the heater's last GEMMs slow beside NCCL too)
                n = int(agree_max(3 + margin * (lead * hold * 1e6 + a.inner * alone) / ar_us))
                delay = ((1 - lead) * hold, (1 - lead) * hold)
            else:
                # rank 1 joins the one all-reduce only after its calls: rank 0's NCCL kernel waits, resident, all along
                n = 1
                late_s = 2.0 * agree_max(compute_s) + 1e-3
                delay = (0.8 * hold, hold + late_s)
            with_comm, comm_with = [], []
            for _ in range(5):
                dist.barrier()
                torch.cuda.synchronize()
                late = heat and mode == "waiting" and rank == 1
                if heat:
                    # the chain starts at an event between the heater's GEMMs, not after a spin: a spin kernel counts
                    # cycles, and at the power limit's clock it outlasts the heater
                    heat((1 - lead) * hold)
                    mark = torch.cuda.Event()
                    mark.record()
                    if not late:
                        c0, c1 = chain(n, after=mark)
                    heat(lead * hold)
                else:
                    c0, c1 = chain(n, delay[min(rank, 1)])
                    hold_gpu(hold)
                s0, s1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s0.record()
                for _ in range(a.inner):
                    fn()
                s1.record()
                if late:  # rank 1 joins after its calls, with a margin: rank 0's NCCL kernel waits through its calls
                    c0, c1 = chain(n, delay_s=late_s, after=s1)
                torch.cuda.synchronize()
                covered = c0.elapsed_time(s0) >= 0 and s1.elapsed_time(c1) >= 0  # NCCL resident around all calls
                if covered:
                    with_comm.append(s0.elapsed_time(s1) * 1e3 / a.inner)
                comm_with.append(c0.elapsed_time(c1) * 1e3 / n)
            rec = {"kind": "interference_training", "class": cls, "op": name, "rank": rank, "mode": mode, "buckets": a.buckets,
                   "alone_us": alone, "comm_bytes": bucket_bytes, "comm_alone_us": ar_us, "chain": n, "heat_s": a.heat_s,
                   "comm_with_compute_us": statistics.median(comm_with), "covered_reps": len(with_comm)}
            if shape:
                rec.update(m=shape[0], n=shape[1], k=shape[2])
            if with_comm and (mode == "transfer" or rank == 0):  # waiting: rank 1 computes with no NCCL kernel
                rec["with_comm_us"] = statistics.median(with_comm)
                rec["slowdown"] = rec["with_comm_us"] / alone
            recs.append(rec)
            print(f"rank {rank} {mode:8s} {cls:9s} {name:28s} alone {alone:9.1f} us  with comm "
                  f"{rec.get('with_comm_us', float('nan')):9.1f} us  x{rec.get('slowdown', float('nan')):.3f}  "
                  f"({len(with_comm)}/5 covered, chain {n})", flush=True)
    write_gathered(a.out, recs, {"kind": "metadata", "tool": "interference_training.py", "torch": torch.__version__,
                                 "gpu": torch.cuda.get_device_name(), "world": dist.get_world_size(),
                                 "nccl": str(torch.cuda.nccl.version())})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
