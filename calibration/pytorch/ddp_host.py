#!/usr/bin/env python3
"""DDP's host cost on the validation's own models, on one GPU.

The profile's DDP host costs (the forward's cost per kernel under DDP, the reducer's hook per parameter tensor) come
from host_overhead.py's tiny model (hidden 64) run under DDP over two GPUs. On the narrow validation models they make
the DDP step host-bound where most of its runs went at the GPU's pace (README section 3), so here the same
measurement runs on the models themselves.

For each configuration id (configs.py, a two-GPU DDP row: its model, bucket_cap_mb and gradient_as_bucket_view, at
--micro-batch sequences so that the GPU outpaces the host), the model twice on this GPU: plain, and wrapped in
DistributedDataParallel over a one-rank NCCL group (torchrun --nproc-per-node 1: the reducer's hooks, bucket copies,
all-reduce issue and copy back run as at any world size; the one-rank all-reduce moves nothing). After warm-up (DDP
rebuilds its buckets after the first iteration), one bf16-autocast training step of each in turn (forward with the
loss, backward, fused AdamW step and zero_grad), the device drained between steps and never waited on inside one:
each phase's host time as it issues (perf_counter), the median over the rounds; then each phase's kernels, counted
by the profiler. Taking the two in turn cancels the host's drift, which moves ~2x between and within machine starts.

Writes one JSON Lines record per configuration {"kind": "ddp_host", "id", "micro_batch", "param_tensors",
"buckets", "plain": {"forward_us", "backward_us", "optimizer_us", "forward_kernels", ...}, "ddp": {...}}.
Usage: python3 -m torch.distributed.run --standalone --nproc-per-node 1 ddp_host.py --ids ID[,ID...] --out FILE
       [--micro-batch N] [--rounds R]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from gathered import join_ranks

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation"))
import configs as cfgmod  # noqa: E402
from train_gpt import GPT  # noqa: E402

PHASES = ("forward", "backward", "optimizer")


def trainer(model, c, mb, dev):
    """One training step of `model` as three phases (forward with the loss, backward, optimizer), each a callable."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    V, T = c["vocab"], c["seq_len"]
    x = torch.randint(0, V, (mb, T), device=dev)
    y = torch.randint(0, V, (mb, T), device=dev)
    state = {}

    def forward():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            state["loss"] = F.cross_entropy(model(x).view(-1, V), y.view(-1))

    def backward():
        state.pop("loss").backward()

    def optimizer():
        opt.step()
        opt.zero_grad(set_to_none=True)

    return {"forward": forward, "backward": backward, "optimizer": optimizer}


def timed_step(phases):
    """Host microseconds of each phase of one step, issued back to back; the device drained after."""
    out = {}
    t = time.perf_counter()
    for name in PHASES:
        phases[name]()
        now = time.perf_counter()
        out[name] = (now - t) * 1e6
        t = now
    torch.cuda.synchronize()
    return out


def kernels_per_phase(phases):
    """The kernels each phase of one step launches (profiler, CUDA activity), and of those NCCL's."""
    from torch.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for name in PHASES:
            with record_function("phase_" + name):
                phases[name]()
        torch.cuda.synchronize()
    events = prof.events()
    ranges = {e.name[len("phase_"):]: (e.time_range.start, e.time_range.end)
              for e in events if e.name.startswith("phase_") and e.device_type.name == "CPU"}
    launches = [e for e in events if e.device_type.name == "CPU"
                and e.name.startswith(("cudaLaunch", "cuLaunch", "cudaMemcpyAsync", "cudaMemsetAsync"))]
    out = {}
    for name, (a, b) in ranges.items():
        inside = [e for e in launches if a <= e.time_range.start <= b]
        out[name + "_launches"] = len(inside)
    out["nccl_kernels"] = sum(1 for e in events if e.device_type.name == "CUDA" and "nccl" in e.name.lower())
    return out


def measure(cid, mb, rounds, dev):
    c = cfgmod.by_id(cid)
    if c["world"] < 2 or c["compute_dtype"] != "bf16" or c["param_dtype"] != "fp32" or c["grad_accum"] != 1:
        raise SystemExit(f"ddp_host.py: {cid}: expected a two-GPU bf16-autocast row without accumulation")
    torch.manual_seed(1234)
    with torch.device(dev):
        plain_model, ddp_model = GPT(c), GPT(c)
    ddp_model = DDP(ddp_model, device_ids=[dev.index], bucket_cap_mb=c["bucket_cap_mb"],
                    gradient_as_bucket_view=c["gradient_as_bucket_view"])
    runs = {"plain": trainer(plain_model, c, mb, dev), "ddp": trainer(ddp_model, c, mb, dev)}
    for _ in range(4):  # DDP rebuilds its buckets after the first iteration
        for phases in runs.values():
            timed_step(phases)
    times = {k: {p: [] for p in PHASES} for k in runs}
    for _ in range(rounds):
        for k, phases in runs.items():
            for p, us in timed_step(phases).items():
                times[k][p].append(us)
    rec = {"kind": "ddp_host", "source": "pytorch", "id": cid, "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(), "micro_batch": mb, "seq_len": c["seq_len"], "layers": c["layers"],
           "hidden": c["hidden"], "bucket_cap_mb": c["bucket_cap_mb"],
           "gradient_as_bucket_view": c["gradient_as_bucket_view"], "rounds": rounds,
           "param_tensors": sum(1 for _ in plain_model.parameters())}
    logging = ddp_model._get_ddp_logging_data()
    rec["buckets"] = len(str(logging.get("rebuilt_bucket_sizes", "")).split(","))
    for k, phases in runs.items():
        rec[k] = {p + "_us": statistics.median(times[k][p]) for p in PHASES}
        rec[k].update({p + "_us_p10_p90": [statistics.quantiles(times[k][p], n=10)[0],
                                           statistics.quantiles(times[k][p], n=10)[-1]] for p in PHASES})
        rec[k].update(kernels_per_phase(phases))
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ids", required=True, help="comma-separated configs.py ids (two-GPU DDP rows)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=30)
    a = ap.parse_args()
    rank, dev = join_ranks()
    if torch.distributed.get_world_size() != 1:
        raise SystemExit("ddp_host.py: run with torchrun --nproc-per-node 1 (a one-rank DDP on one GPU)")
    with open(a.out, "a") as f:
        for cid in a.ids.split(","):
            rec = measure(cid, a.micro_batch, a.rounds, dev)
            f.write(json.dumps(rec) + "\n")
            f.flush()
            p, d = rec["plain"], rec["ddp"]
            print(f"{cid}: mb {a.micro_batch}, {rec['param_tensors']} tensors, {rec['buckets']} buckets; host us "
                  + ", ".join(f"{ph} {p[ph + '_us']:.0f} -> {d[ph + '_us']:.0f}" for ph in PHASES)
                  + f"; launches fwd {p['forward_launches']} -> {d['forward_launches']}, bwd {p['backward_launches']}"
                  f" -> {d['backward_launches']}, nccl kernels {d['nccl_kernels']}", flush=True)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
