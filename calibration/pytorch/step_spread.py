#!/usr/bin/env python3
"""Run-to-run and rank-to-rank spread of a training step, and of each DDP bucket's all-reduce, on real GPUs.

What stepsim's Monte Carlo (sim.samples) predicts, measured: the distribution of step times (p50, p90, p99), how far
apart the ranks reach each gradient bucket's all-reduce (NCCL's barrier: delta_sync of docs/jitter.md), and each
bucket's window. One process per GPU under torchrun trains a validation configuration (configs.py; its model, micro
batch and DDP bucket size; world = the number of processes: one GPU trains plainly, two or more under DDP) for
--steps steps after --warmup, never waiting on the device inside the loop:

  - every step's end is a CUDA event on the compute stream (step time: the time between consecutive ends);
  - under DDP a communication hook records, per bucket, a CUDA event on the compute stream when DDP hands it the
    bucket (the gradients are ready there: the rank's arrival at the all-reduce) and the host time of the hand-over;
    the all-reduce itself is the default one (dist.all_reduce, then division by the world size, as DDP's default hook);
  - the backward's end on the GPU (an event recorded right after loss.backward() returns, which DDP delays until every
    bucket's all-reduce is issued, so this is the compute's end plus what waits behind it).

All GPU times are read at the end, as microseconds since one event every rank recorded right after a common barrier
(the ranks' GPU clocks run at one rate; the barrier aligns them to within its own exit skew, a few µs on NVLink).

Writes JSON Lines: one record {"kind": "step_spread", "id", "world", "steps", "per_rank": [{"rank", "step_end_us",
"bucket_ready_us" [step][bucket], "bucket_host_us" [step][bucket], "backward_end_us"}], "bucket_bytes"} and one
{"kind": "step_spread_summary", ...} of summarize(): p50/p90/p99 of step time, each bucket's delta_sync p50/p99
(max − min over ranks of its arrival), the ranks' step-time skew. Statistics need no torch (test_step_spread.py).
Usage: python3 -m torch.distributed.run --standalone --nproc-per-node N step_spread.py --id ID --out FILE
       [--steps 300] [--warmup 20] [--device cuda|cpu] [--set KEY=INT ...]
       (cpu: gloo, for checking the script without a GPU, e.g. with --set layers=2 --set hidden=64 --set heads=2
       --set seq_len=64 --set vocab=256 --set micro_batch=2 --set ffn_hidden=256)
"""
import argparse
import json
import math
import os
import sys


def nearest_rank(values, p):
    """The nearest-rank percentile of stepsim (Metrics.hpp): x_(ceil(p/100 * N)) of the sorted values."""
    v = sorted(values)
    if not v:
        raise ValueError("nearest_rank: no values")
    k = max(1, min(len(v), math.ceil(p / 100.0 * len(v) - 1e-9)))
    return v[k - 1]


def spread(values):
    """p50, p90, p99 and the sample standard deviation, stepsim's Spread."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1)) if n > 1 else 0.0
    return {"p50": nearest_rank(values, 50), "p90": nearest_rank(values, 90), "p99": nearest_rank(values, 99),
            "mean": mean, "std": sd, "n": n}


def summarize(rec):
    """The record's statistics: step time as stepsim reports it (per step the slowest rank's, each rank's step from its
    previous step's end), each bucket's delta_sync (max − min over the ranks of its arrival, per step), and the ranks'
    skew at the end of the backward (max − min over the ranks)."""
    ranks = rec["per_rank"]
    steps = len(ranks[0]["step_end_us"]) - 1
    step_ms = []
    for s in range(1, steps + 1):
        step_ms.append(max(r["step_end_us"][s] - r["step_end_us"][s - 1] for r in ranks) / 1e3)
    out = {"kind": "step_spread_summary", "id": rec["id"], "world": rec["world"], "steps": steps,
           "step_time_ms": spread(step_ms)}
    if len(ranks) > 1 and ranks[0].get("bucket_ready_us"):
        buckets = len(ranks[0]["bucket_ready_us"][0])
        per_bucket = []
        for b in range(buckets):
            d = [max(r["bucket_ready_us"][s][b] for r in ranks) - min(r["bucket_ready_us"][s][b] for r in ranks)
                 for s in range(len(ranks[0]["bucket_ready_us"]))]
            per_bucket.append({"bucket": b, "bytes": rec["bucket_bytes"][b], "delta_sync_us": spread(d)})
        out["buckets"] = per_bucket
        skew = [(max(r["backward_end_us"][s] for r in ranks) - min(r["backward_end_us"][s] for r in ranks)) / 1e3
                for s in range(len(ranks[0]["backward_end_us"]))]
        out["backward_end_skew_ms"] = spread(skew)
    return out


def _causal_attention(q, k, v, is_causal=True, enable_gqa=False):
    """softmax(q kᵀ / √d + causal mask) v, for the CPU check only (torch < 2.0 has no scaled_dot_product_attention)."""
    import torch
    if enable_gqa and k.shape[1] != q.shape[1]:
        k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
        v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    n = q.shape[-2]
    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(s.float(), dim=-1).to(v.dtype) @ v


def train(c, world, rank, dev, steps, warmup):
    """Trains `c` for warmup + steps steps; returns this rank's record part (GPU times in µs since the common mark)."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation"))
    from train_gpt import GPT

    cuda = dev.type == "cuda"
    if not cuda and not hasattr(F, "scaled_dot_product_attention"):
        F.scaled_dot_product_attention = _causal_attention  # a CPU check on a torch older than 2.0
    torch.manual_seed(1234)
    model = GPT(c).to(dev)
    event = (lambda: torch.cuda.Event(enable_timing=True)) if cuda else None
    clock = {"t0": None}
    marks = []  # (kind, step, bucket, event or host time)
    state = {"step": -1}
    bucket_bytes = {}

    def mark():
        """A GPU timestamp on the current stream (cuda), or the host time after draining the work (cpu)."""
        if cuda:
            e = event()
            e.record()
            return e
        return time.perf_counter()

    if world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP

        def hook(_, bucket):
            i = bucket.index()
            bucket_bytes[i] = bucket.buffer().numel() * bucket.buffer().element_size()
            marks.append(("ready", state["step"], i, mark()))
            marks.append(("host", state["step"], i, time.perf_counter()))
            buf = bucket.buffer().div_(world)
            return dist.all_reduce(buf, async_op=True).get_future().then(lambda f: f.value()[0])

        model = DDP(model, device_ids=[dev.index] if cuda else None, bucket_cap_mb=c["bucket_cap_mb"],
                    gradient_as_bucket_view=c["gradient_as_bucket_view"])
        model.register_comm_hook(None, hook)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1,
                            **({"fused": True} if cuda else {}))
    V, T = c["vocab"], c["seq_len"]
    x = torch.randint(0, V, (c["micro_batch"], T), device=dev)
    y = torch.randint(0, V, (c["micro_batch"], T), device=dev)
    dtype = torch.bfloat16

    def step():
        with torch.autocast(dev.type, dtype=dtype):
            loss = F.cross_entropy(model(x).view(-1, V), y.view(-1))
        loss.backward()
        marks.append(("backward", state["step"], 0, mark()))
        opt.step()
        opt.zero_grad(set_to_none=True)
        marks.append(("end", state["step"], 0, mark()))

    for _ in range(warmup):
        step()
    marks.clear()
    if cuda:
        torch.cuda.synchronize()
    if world > 1:
        dist.barrier()
    clock["t0"] = mark()
    host_t0 = time.perf_counter()
    for s in range(steps + 1):  # step 0's end is the first step's start
        state["step"] = s
        step()
    if cuda:
        torch.cuda.synchronize()

    def us(v):
        return clock["t0"].elapsed_time(v) * 1e3 if cuda else (v - clock["t0"]) * 1e6

    part = {"rank": rank, "step_end_us": [0.0] * (steps + 1), "backward_end_us": [0.0] * (steps + 1)}
    nb = len(bucket_bytes)
    if world > 1:
        part["bucket_ready_us"] = [[0.0] * nb for _ in range(steps + 1)]
        part["bucket_host_us"] = [[0.0] * nb for _ in range(steps + 1)]
    for kind, s, b, v in marks:
        if kind == "end":
            part["step_end_us"][s] = us(v)
        elif kind == "backward":
            part["backward_end_us"][s] = us(v)
        elif kind == "ready":
            part["bucket_ready_us"][s][b] = us(v)
        elif kind == "host":
            part["bucket_host_us"][s][b] = (v - host_t0) * 1e6
    return part, [bucket_bytes[i] for i in range(nb)]


import time  # noqa: E402  (used by train; kept below the pure functions' imports so that they need no torch)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--id", required=True, help="a configs.py id (calibration/validation/configs.py)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=INT",
                    help="override an integer of the configuration (a smaller model for the CPU check)")
    a = ap.parse_args()

    import torch
    import torch.distributed as dist

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation"))
    import configs as cfgmod

    c = dict(cfgmod.by_id(a.id))
    for kv in a.set:
        k, v = kv.split("=", 1)
        if k not in c:
            raise SystemExit(f"step_spread.py: --set {kv}: {a.id} has no key {k}")
        c[k] = int(v)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 or "RANK" in os.environ:
        dist.init_process_group("nccl" if a.device == "cuda" else "gloo")
    rank = dist.get_rank() if dist.is_initialized() else 0
    local = int(os.environ.get("LOCAL_RANK", rank))
    if a.device == "cuda":
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
    else:
        dev = torch.device("cpu")
    part, bucket_bytes = train(c, world, rank, dev, a.steps, a.warmup)
    parts = [part]
    if dist.is_initialized():
        parts = [None] * world
        dist.all_gather_object(parts, part)
    if rank == 0:
        rec = {"kind": "step_spread", "source": "pytorch", "id": a.id, "overrides": a.set, "world": world,
               "steps": a.steps,
               "torch": torch.__version__, "device": torch.cuda.get_device_name() if a.device == "cuda" else "cpu",
               "bucket_bytes": bucket_bytes, "per_rank": parts}
        with open(a.out, "w") as f:
            f.write(json.dumps(rec) + "\n")
            f.write(json.dumps(summarize(rec)) + "\n")
        print(json.dumps(summarize(rec), indent=1))
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
