#!/usr/bin/env python3
"""Measure the real training step of the model capture.py captures, built the same way (models.py, step.py, the
same flags) with random weights on the GPU: the median step time over --steps steps after --warmup (a CUDA event at
each step's start, no synchronization inside), and torch.cuda.max_memory_allocated over the timed steps.

--wrap none | ddp | fsdp2 at world size 1: a one-process group (NCCL); DDP(model, device_ids=[0]) with its
defaults; FSDP2: torch.distributed.fsdp.fully_shard on each unit (the decoder layer classes, models.py) and then
on the root, with no mixed-precision policy (autocast does the casting). --compile: torch.compile of the model
(for fsdp2, of each unit before it is sharded). One JSON line per configuration on stdout (and --out).

usage: python3 calibration/capture/measure_step.py --model ... [capture.py's model and step flags]
           [--wrap none|ddp|fsdp2] [--compile] [--steps 30] [--warmup 10] [--host-split N] [--out r.jsonl]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import options  # noqa: E402


def pct(xs, q):
    s = sorted(xs)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def init_group():
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29541")
    dist.init_process_group("nccl", rank=0, world_size=1)


def wrap(model, built, how, compile_):
    import torch
    import models
    if how == "none":
        return torch.compile(model) if compile_ else model
    init_group()
    if how == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model, device_ids=[0])
        return torch.compile(model) if compile_ else model
    from torch.distributed.fsdp import fully_shard
    units = models.fsdp_units(model, built.units)
    if not units:
        raise SystemExit(f"measure_step: no FSDP units found (classes {built.units})")
    for u in units:
        if compile_:
            u.compile()
        fully_shard(u)
    fully_shard(model)
    return model


def measure(args) -> dict:
    import torch
    import models
    import step
    source, name = options.parse_model(args.model)
    config = options.load_config(args.config)
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    with torch.device(dev):
        built = models.build(source, name, config, args.activation_checkpointing, args.dtype_policy)
    model = step.apply_dtype_policy(built.model, args.dtype_policy)
    model = wrap(model, built, args.wrap, args.compile)
    opt = step.make_optimizer([p for p in model.parameters() if p.requires_grad], args.optimizer,
                              args.optimizer_impl)
    batch = built.make_batch(args.micro_batch, args.seq_len if built.has_seq else None, dev,
                             models.batch_dtype(args.dtype_policy))

    def one_marked(on_phase=None):
        step.train_step(model, opt, batch, built.loss, args.dtype_policy, "cuda", on_phase)

    def one():
        one_marked()

    for _ in range(args.warmup):
        one()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps + 1)]
    host = []
    for i in range(args.steps):
        ev[i].record()
        h0 = time.perf_counter()
        one()
        host.append((time.perf_counter() - h0) * 1e3)
    ev[args.steps].record()
    torch.cuda.synchronize()
    ms = [ev[i].elapsed_time(ev[i + 1]) for i in range(args.steps)]
    split = host_split(one_marked, args.host_split) if args.host_split else None
    rec = {"model": args.model, "config": config, "step": options.step_spec(args), "wrap": args.wrap,
            "compile": args.compile, "world_size": 1,
            "parameters": sum(p.numel() for p in model.parameters()),
            "step_ms": {"median": statistics.median(ms), "mean": statistics.fmean(ms), "p10": pct(ms, 0.1),
                        "p90": pct(ms, 0.9), "min": min(ms), "max": max(ms), "n": len(ms)},
            "host_ms_median": statistics.median(host),
            "max_memory_allocated": torch.cuda.max_memory_allocated(),
            "max_memory_reserved": torch.cuda.max_memory_reserved(),
            "torch": torch.__version__, "device": torch.cuda.get_device_name(0),
            "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "steps": args.steps, "warmup": args.warmup}
    if split:
        rec["host_split_ms"] = split
    return rec


def host_split(one_marked, n: int) -> dict:
    """The host's time in each phase of a step that starts with the GPU drained (synchronized before it), the median
    of n such steps after the timed ones: forward (with the loss), backward, optimizer (step and zero_grad), the
    whole step. Calibration of the host costs (the GPU idle ahead of the host), not the step time."""
    import torch
    rows = []
    for _ in range(n):
        torch.cuda.synchronize()
        marks = {}
        one_marked(lambda phase: marks.__setitem__(phase, time.perf_counter()))
        rows.append(marks)
    out = {}
    for name, a, b in (("forward", "forward", "backward"), ("backward", "backward", "optimizer"),
                       ("optimizer", "optimizer", "done"), ("step", "forward", "done")):
        out[name] = statistics.median([(r[b] - r[a]) * 1e3 for r in rows])
    out["n"] = n
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_step_arguments(ap)
    ap.add_argument("--wrap", choices=("none", "ddp", "fsdp2"), default="none")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--host-split", type=int, default=0, metavar="N",
                    help="after the timed steps, N steps each started with the GPU drained, timing the host's "
                         "forward, backward and optimizer separately (host_split_ms)")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    try:
        options.parse_model(args.model)
        options.load_config(args.config)
    except options.OptionError as e:
        print(f"measure_step: {e}", file=sys.stderr)
        return 2
    rec = measure(args)
    line = json.dumps(rec)
    print(line, flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")
    if args.wrap != "none":
        import torch.distributed as dist
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
