#!/usr/bin/env python3
"""Capture a PyTorch profiler trace of a small GPT training step on one GPU, and time the same step without the
profiler, for stepsim's trace import (`model.type: trace`, docs/trace.md).

The model is calibration/validation/train_gpt.py's GPT (the validation suite's, built from a configs.py dict):
--layers blocks of hidden --hidden, --heads heads, sequence --seq-len, micro-batch --micro-batch, GPT-2's padded
vocabulary, GELU MLP, LayerNorm, bf16 autocast over fp32 parameters, fused AdamW. One step is forward, loss,
backward, optimizer step and zero_grad, with no synchronization inside (as real training runs).

What it writes under --out-dir:
  trace_1gpu.json.gz   torch.profiler (CPU and CUDA activities, record_shapes=True) over
                       schedule(wait=1, warmup=2, active=--active): the active steps appear as ProfilerStep#N;
                       export_chrome_trace, then gzip.
  trace_ddp1.json.gz   the same model wrapped in DistributedDataParallel at world size 1 (NCCL, bucket_cap_mb 25),
                       profiled the same way (with --ddp1).
  timings.json         per configuration: the step time without the profiler (a CUDA event at every step's start,
                       --steps steps after --warmup; median, mean, p10, p90 in ms), the same during the profiled
                       steps (events around each active step), and the host's time to issue one step.
usage: capture_trace.py --out-dir DIR [--validation-dir DIR] [--layers 4] [--hidden 768] [--heads 12]
                        [--seq-len 1024] [--micro-batch 8] [--steps 200] [--warmup 30] [--active 2] [--ddp1]
Exit status: 0 done; 2 no GPU; 1 failure.
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import sys
import time


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))]


def summary(ms):
    return {"n": len(ms), "median_ms": statistics.median(ms), "mean_ms": statistics.fmean(ms),
            "p10_ms": pct(ms, 0.1), "p90_ms": pct(ms, 0.9), "min_ms": min(ms), "max_ms": max(ms)}


def build(args, ddp):
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, args.validation_dir)
    import configs as cfgmod
    from train_gpt import GPT

    c = cfgmod._cfg("trace-l%d-h%d-s%d-mb%d" % (args.layers, args.hidden, args.seq_len, args.micro_batch), 1,
                    args.layers, args.hidden, args.heads, args.seq_len, args.micro_batch)
    dev = torch.device("cuda", 0)
    torch.manual_seed(1234)
    with torch.device(dev):
        model = GPT(c)
    if ddp:
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model, device_ids=[0], bucket_cap_mb=25)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    V, T, B = c["vocab"], c["seq_len"], c["micro_batch"]
    g = torch.Generator(device=dev)
    g.manual_seed(1000)
    tok = torch.randint(0, V, (B, T + 1), device=dev, generator=g)
    x, y = tok[:, :-1].contiguous(), tok[:, 1:].contiguous()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x).view(-1, V), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    return c, step


def timed(step, n):
    """Step times (ms) from CUDA events at every step's start, no synchronization inside; the host's time per step."""
    import torch
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    host = []
    torch.cuda.synchronize()
    for i in range(n):
        ev[i].record()
        h0 = time.perf_counter()
        step()
        host.append((time.perf_counter() - h0) * 1e3)
    ev[n].record()
    torch.cuda.synchronize()
    return [ev[i].elapsed_time(ev[i + 1]) for i in range(n)], host


def profiled(step, args, path):
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule
    active = args.active
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(3 + active + 1)]
    torch.cuda.synchronize()
    raw = path[:-3]
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 schedule=schedule(wait=1, warmup=2, active=active, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for i in range(3 + active):
            ev[i].record()
            step()
            prof.step()
        ev[3 + active].record()
    torch.cuda.synchronize()
    with open(raw, "rb") as f, gzip.open(path, "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(raw)
    ms = [ev[i].elapsed_time(ev[i + 1]) for i in range(3, 3 + active)]
    return ms


def census(path):
    """Counts of the trace's events by category (a check that CUPTI recorded GPU activity)."""
    with gzip.open(path, "rt") as f:
        t = json.load(f)
    cats = {}
    for e in t.get("traceEvents", []):
        cats[e.get("cat", "?")] = cats.get(e.get("cat", "?"), 0) + 1
    steps = [e["name"] for e in t.get("traceEvents", []) if str(e.get("name", "")).startswith("ProfilerStep#")]
    return {"categories": cats, "profiler_steps": steps, "bytes_gz": os.path.getsize(path)}


def one(args, ddp, name, env):
    import torch
    c, step = build(args, ddp)
    for _ in range(args.warmup):
        step()
    before, host_before = timed(step, args.steps)
    path = os.path.join(args.out_dir, name)
    prof_ms = profiled(step, args, path)
    after, host_after = timed(step, args.steps)
    rec = {"config": c, "ddp_world1": ddp, "trace": name, "env": env,
           "no_profiler_before": summary(before), "no_profiler_after": summary(after),
           "no_profiler_host_ms": summary(host_before + host_after),
           "profiled_steps_ms": prof_ms, "census": census(path)}
    torch.cuda.synchronize()
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--validation-dir",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation"))
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--seq-len", type=int, default=1024)
    ap.add_argument("--micro-batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--active", type=int, default=2)
    ap.add_argument("--ddp1", action="store_true")
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("capture_trace.py: no CUDA GPU", file=sys.stderr)
        return 2
    os.makedirs(args.out_dir, exist_ok=True)
    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    out = [one(args, False, "trace_1gpu.json.gz", env)]
    if args.ddp1:
        import torch.distributed as dist
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29531")
        dist.init_process_group("nccl", rank=0, world_size=1)
        try:
            out.append(one(args, True, "trace_ddp1.json.gz", env))
        finally:
            dist.destroy_process_group()
    with open(os.path.join(args.out_dir, "timings.json"), "w") as f:
        json.dump(out, f, indent=1)
    for r in out:
        print(r["trace"], "no-profiler median %.3f ms (before) %.3f ms (after), host %.3f ms; profiled %s ms; %s"
              % (r["no_profiler_before"]["median_ms"], r["no_profiler_after"]["median_ms"],
                 r["no_profiler_host_ms"]["median_ms"], ["%.3f" % x for x in r["profiled_steps_ms"]],
                 json.dumps(r["census"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
