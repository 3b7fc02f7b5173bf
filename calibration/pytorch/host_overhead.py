#!/usr/bin/env python3
"""Host-side cost of eager PyTorch training, per GPU kernel: what the framework spends on the CPU.

A tiny GPT-style model (hidden 64, sequence 32, batch 1) makes every kernel far shorter than its launch, so
the step is host-bound and wall time is host time. Timing the model at two depths and taking the difference
isolates the per-layer cost; the PyTorch profiler counts the kernels each phase launches, so the result is a
host cost per kernel for the forward (Python modules, autocast, dispatch, launch), the backward (the C++
autograd engine) and, per parameter tensor, the fused AdamW step and DDP's gradient hooks. Under --ddp it also
times the backward with and without DDP's gradient sync alternately (per_layer backward_sync_us and
backward_nosync_us: DDP's own cost, the host's drift cancelled) and the host side of issuing one NCCL all-reduce
through torch.distributed (async, 1 MiB, the GPU kept busy so the call never waits), what DDP's reducer pays per
bucket. On one GPU it also times the model with activation checkpointing (torch.utils.checkpoint, non-reentrant:
selective around SDPA, full around each block) and records the host time each checkpointed layer adds to the
forward and to the backward, and the kernels its recompute launches (a "checkpoint_host" record), and what
gradient accumulation adds to a backward that finds .grad present, per parameter tensor and over the backward's cost
per kernel (an "accumulate_host" record; `--only accumulate` measures that alone).

Writes JSON Lines records {"kind": "host_overhead" | "checkpoint_host" | "accumulate_host", ...} that
`stepsim calibrate fit` reads.
Usage: python3 host_overhead.py [--out FILE] [--ddp] [--only accumulate]
       (run with torchrun --nproc-per-node 2 for --ddp)
"""
import argparse
import contextlib
import json
import os
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from timing import hold_gpu


class Block(nn.Module):
    def __init__(self, h, heads, recompute_attention=False):
        super().__init__()
        self.nh, self.hd = heads, h // heads
        self.recompute_attention = recompute_attention
        self.norm1 = nn.LayerNorm(h)
        self.qkv = nn.Linear(h, 3 * h, bias=False)
        self.proj = nn.Linear(h, h, bias=False)
        self.norm2 = nn.LayerNorm(h)
        self.fc = nn.Linear(h, 4 * h, bias=False)
        self.fc_out = nn.Linear(4 * h, h, bias=False)

    def forward(self, x):
        B, T, h = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(h, dim=-1)
        q = q.view(B, T, self.nh, self.hd).transpose(1, 2)
        k = k.view(B, T, self.nh, self.hd).transpose(1, 2)
        v = v.view(B, T, self.nh, self.hd).transpose(1, 2)
        if self.recompute_attention:
            y = checkpoint(F.scaled_dot_product_attention, q, k, v, is_causal=True, use_reentrant=False)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, h))
        return x + self.fc_out(F.gelu(self.fc(self.norm2(x)), approximate="tanh"))


class Model(nn.Module):
    """`checkpointing`: none, selective (SDPA recomputed in backward) or full (each block recomputed), through
    torch.utils.checkpoint (non-reentrant), as calibration/validation/train_gpt.py does."""

    def __init__(self, layers, h=64, heads=4, vocab=256, seq=32, checkpointing="none"):
        super().__init__()
        self.emb = nn.Embedding(vocab, h)
        self.pos = nn.Parameter(torch.zeros(seq, h))
        self.blocks = nn.ModuleList(Block(h, heads, checkpointing == "selective") for _ in range(layers))
        self.recompute_blocks = checkpointing == "full"
        self.norm_f = nn.LayerNorm(h)
        self.head = nn.Linear(h, vocab, bias=False)

    def forward(self, idx):
        x = self.emb(idx) + self.pos[: idx.shape[1]]
        for b in self.blocks:
            x = checkpoint(b, x, use_reentrant=False) if self.recompute_blocks else b(x)
        return self.head(self.norm_f(x))


def count_kernels(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def training_pass(model, idx):
    """The tiny model's forward (bf16 autocast, cross-entropy over its 256 tokens) and backward, sharing the loss."""
    state = {}

    def fwd():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            state["loss"] = F.cross_entropy(model(idx).view(-1, 256), idx.view(-1))

    def bwd():
        state["loss"].backward()

    return fwd, bwd


def timed_backward(fwd, bwd):
    """Host microseconds of one backward after a forward, the device drained before and after."""
    fwd()
    torch.cuda.synchronize()
    t = time.perf_counter()
    bwd()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e6


def measure(layers, ddp, iters=60):
    dev = torch.device("cuda", torch.cuda.current_device())
    model = Model(layers).to(dev)
    if ddp:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    fwd, bwd = training_pass(model, torch.randint(0, 256, (1, 32), device=dev))

    def step():
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(10):
        fwd(); bwd(); step()
    torch.cuda.synchronize()
    out = {}
    for name, fn in (("forward", fwd), ("backward", bwd), ("optimizer", step)):
        times = []
        for _ in range(iters):
            if name == "backward":
                fwd()
            elif name == "optimizer":
                fwd(); bwd()
            torch.cuda.synchronize()
            t = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t) * 1e6)
        out[name + "_us"] = statistics.median(times)
    if ddp:
        # What DDP adds to the backward (hooks, bucket copies, all-reduce issue, copy back), free of the host's
        # drift: backward with gradient sync and under no_sync (the reducer's hooks return at once), alternated
        # in one loop. The host's speed moves ~2x between and within machine starts; back to back it cancels.
        sync, nosync = [], []
        for i in range(2 * iters):
            quiet = i % 2 == 1
            with model.no_sync() if quiet else contextlib.nullcontext():
                (nosync if quiet else sync).append(timed_backward(fwd, bwd))
        out["backward_sync_us"] = statistics.median(sync)
        out["backward_nosync_us"] = statistics.median(nosync)
    # kernels per phase
    out["forward_kernels"] = count_kernels(fwd)
    fwd()
    out["backward_kernels"] = count_kernels(bwd)
    fwd(); bwd()
    out["optimizer_kernels"] = count_kernels(step)
    out["param_tensors"] = sum(1 for _ in model.parameters())
    return out


def checkpoint_costs(iters=40):
    """Activation checkpointing's extra host time per checkpointed layer, free of the host's drift: the plain,
    selective and full models at 2 and 10 layers, one forward and backward of each in turn per round."""
    dev = torch.device("cuda", torch.cuda.current_device())
    idx = torch.randint(0, 256, (1, 32), device=dev)
    models = {(mode, n): Model(n, checkpointing=mode).to(dev) for mode in ("none", "selective", "full") for n in (2, 10)}

    def loss_of(model):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return F.cross_entropy(model(idx).view(-1, 256), idx.view(-1))

    times = {key: ([], []) for key in models}
    for i in range(iters + 5):
        for key, model in models.items():
            model.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            loss = loss_of(model)
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            loss.backward()
            torch.cuda.synchronize()
            if i >= 5:  # warm-up rounds left out
                times[key][0].append((t1 - t0) * 1e6)
                times[key][1].append((time.perf_counter() - t1) * 1e6)
    per_layer = {}
    for mode in ("none", "selective", "full"):
        lo, hi = models[(mode, 2)], models[(mode, 10)]
        fwd = lambda m: count_kernels(lambda: loss_of(m))
        bwd = lambda m: (lambda loss: count_kernels(loss.backward))(loss_of(m))
        per_layer[mode] = {
            "forward_us": (statistics.median(times[(mode, 10)][0]) - statistics.median(times[(mode, 2)][0])) / 8,
            "backward_us": (statistics.median(times[(mode, 10)][1]) - statistics.median(times[(mode, 2)][1])) / 8,
            "forward_kernels": (fwd(hi) - fwd(lo)) / 8,
            "backward_kernels": (bwd(hi) - bwd(lo)) / 8}
    plain = per_layer["none"]
    out = {"per_layer": per_layer, "plain_forward_us_per_kernel": plain["forward_us"] / plain["forward_kernels"]}
    for mode in ("selective", "full"):
        c = per_layer[mode]
        out[mode] = {"forward_extra_us_per_layer": c["forward_us"] - plain["forward_us"],
                     "backward_extra_us_per_layer": c["backward_us"] - plain["backward_us"],
                     "recomputed_kernels_per_layer": c["backward_kernels"] - plain["backward_kernels"]}
    return out


def accumulate_costs(iters=40):
    """Gradient accumulation's host cost: every micro-step after the first adds each parameter's new gradient into
    its .grad (AccumulateGrad, an in-place add a tensor) where the first hands it over. The backward with .grad
    present against the backward after zero_grad(set_to_none=True), alternated in one loop so the host's drift
    cancels, at 2 and 10 layers; per parameter tensor, and over the backward's cost per kernel measured in the same
    loop (the ratio carries to the calibrated backward cost whatever the host's speed that day)."""
    per = {}
    for layers in (2, 10):
        dev = torch.device("cuda", torch.cuda.current_device())
        model = Model(layers).to(dev)
        fwd, bwd = training_pass(model, torch.randint(0, 256, (1, 32), device=dev))
        for _ in range(10):
            fwd(); bwd()
        fresh, accum = [], []
        for i in range(2 * iters):
            keep = i % 2 == 1
            if not keep:
                model.zero_grad(set_to_none=True)
            (accum if keep else fresh).append(timed_backward(fwd, bwd))
        model.zero_grad(set_to_none=True)
        fwd()
        fresh_kernels = count_kernels(bwd)
        fwd()
        accum_kernels = count_kernels(bwd)  # .grad present: the adds counted
        per[layers] = {"backward_fresh_us": statistics.median(fresh),
                       "backward_accumulate_us": statistics.median(accum),
                       "backward_kernels": fresh_kernels, "backward_accumulate_kernels": accum_kernels,
                       "param_tensors": sum(1 for _ in model.parameters())}
    d = {k: (per[10][k] - per[2][k]) / 8 for k in per[10]}
    acc = (d["backward_accumulate_us"] - d["backward_fresh_us"]) / d["param_tensors"]
    return {"raw": {str(k): v for k, v in per.items()}, "per_layer": d, "accumulate_us_per_param_tensor": acc,
            "accumulate_over_backward_kernel": acc / (d["backward_fresh_us"] / d["backward_kernels"])}


def allreduce_issue_us(calls=400):
    """Median host time (µs) of dist.all_reduce(async_op=True) on a 1 MiB tensor, in batches of 20 calls queued
    behind a spin kernel (the GPU busy, so no call blocks on a full queue or an idle device)."""
    import torch.distributed as dist
    t = torch.zeros(2**18, device="cuda")
    for _ in range(20):
        dist.all_reduce(t, async_op=True)
    torch.cuda.synchronize()
    times = []
    for _ in range(calls // 20):
        hold_gpu(5e-3)
        for _ in range(20):
            a = time.perf_counter()
            dist.all_reduce(t, async_op=True)
            times.append((time.perf_counter() - a) * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="host_overhead.jsonl")
    ap.add_argument("--ddp", action="store_true")
    ap.add_argument("--only", choices=["accumulate"], default=None,
                    help="measure only gradient accumulation's host cost (an \"accumulate_host\" record)")
    a = ap.parse_args()
    rank = 0
    if a.ddp:
        import torch.distributed as dist
        from gathered import join_ranks
        rank, _ = join_ranks()
    accumulate = {"kind": "accumulate_host", "source": "pytorch", "torch": torch.__version__,
                  "gpu": torch.cuda.get_device_name(), "layers": [2, 10]}
    if a.only == "accumulate":
        recs = [dict(accumulate, **accumulate_costs())]
        with open(a.out, "a") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
        print(json.dumps({k: v for k, v in recs[0].items() if k != "raw"}, indent=1))
        return
    lo, hi = measure(2, a.ddp), measure(10, a.ddp)
    d = {k: (hi[k] - lo[k]) / 8 for k in hi}  # per layer
    rec = {"kind": "host_overhead", "source": "pytorch", "ddp": a.ddp, "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(), "layers": [2, 10], "raw": {"2": lo, "10": hi},
           "per_layer": d,
           "forward_us_per_kernel": d["forward_us"] / d["forward_kernels"],
           "backward_us_per_kernel": d["backward_us"] / d["backward_kernels"],
           "optimizer_us_per_param_tensor": d["optimizer_us"] / d["param_tensors"]}
    recs = [rec]
    if a.ddp:
        rec["allreduce_issue_us"] = allreduce_issue_us()
    else:
        # Activation checkpointing's host cost per checkpointed layer, against the plain model timed in the same
        # rounds: the forward's (torch.utils.checkpoint's saved-tensor hooks and state capture) and the backward's
        # (the recompute, its kernels' launches included), with the recomputed kernels counted.
        recs.append(dict({"kind": "checkpoint_host", "source": "pytorch", "torch": torch.__version__,
                          "gpu": torch.cuda.get_device_name(), "layers": [2, 10]}, **checkpoint_costs()))
        recs.append(dict(accumulate, **accumulate_costs()))
    if rank == 0:
        with open(a.out, "a") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
        for r in recs:
            print(json.dumps({k: v for k, v in r.items() if k != "raw"}, indent=1))
    if a.ddp:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
