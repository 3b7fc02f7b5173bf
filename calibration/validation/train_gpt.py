#!/usr/bin/env python3
"""GPT-style training step, measured: step times with CUDA events, then one profiled step's
compute / communication / overlap from the PyTorch profiler. One JSON line per configuration.

Single GPU:  python3 train_gpt.py --ids s1-l12-h768-s1024-mb8 --out r.jsonl
DDP, 2 GPUs: python3 -m torch.distributed.run --standalone --nproc_per_node=2 train_gpt.py --ids ... --out r.jsonl
Ad hoc:      --config '{"id": "x", "world": 1, "layers": 4, ...}'  (any configs.py fields; the rest default)

The model (all Linear layers bias-free; fp32 parameters under bf16 autocast unless the configuration says otherwise:
compute_dtype fp16 runs fp16 autocast with torch.amp.GradScaler (scale the loss, scaler.step, scaler.update);
param_dtype bf16 casts the model to bf16 and runs without autocast, the loss on logits.float()):
  x = tok_emb[idx] + pos_emb[:T]
  per block (pre-norm):  x += proj(SDPA_causal(split(qkv(norm1(x)))));  x += mlp(norm2(x))
      qkv: one Linear h → (heads + 2·kv_heads)·head_dim (GQA when kv_heads < heads)
      mlp: gelu (h → ffn → h, tanh GELU) or swiglu (down(silu(gate(x)) · up(x)))
      norm: LayerNorm (weight and bias) or RMSNorm (weight)
  logits = head(norm_f(x)) (head.weight is tok_emb.weight when tied_embeddings), loss = cross_entropy(logits, next tokens)
Optimizer torch.optim.AdamW(fused=True) (optimizer_impl foreach: foreach=True, PyTorch's default on CUDA), after
torch.nn.utils.clip_grad_norm_(max_norm) when grad_clip > 0 (scaler.unscale_ first under fp16);
zero_grad(set_to_none=True). Data: random tokens made on the
GPU before timing. DDP: bucket_cap_mb, gradient_as_bucket_view; grad_accum micro-steps run under no_sync()
except the last.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import json
import math
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import configs as cfgmod  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "pytorch"))
import fp8_linear  # noqa: E402
import trace_metrics  # noqa: E402


# ----------------------------------------------------------------------------------------- model
PROFILE_GAP_S = 0.03  # host sleep between profiled steps with --profile-cpu off
GQA_MODE = "native"  # "native": SDPA enable_gqa=True; "repeat": repeat_interleave K and V to all heads
def make_norm(kind: str, h: int) -> nn.Module:
    return nn.LayerNorm(h) if kind == "layernorm" else nn.RMSNorm(h)


class Block(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        h = c["hidden"]
        self.nh, self.nkv = c["heads"], c["kv_heads"]
        self.hd = h // self.nh
        self.swiglu = c["mlp"] == "swiglu"
        # selective: the attention core (SDPA) is recomputed in backward, not saved
        self.recompute_attention = c["activation_checkpointing"] == "selective"
        self.norm1 = make_norm(c["norm"], h)
        self.qkv = nn.Linear(h, (self.nh + 2 * self.nkv) * self.hd, bias=False)
        self.proj = nn.Linear(h, h, bias=False)
        self.norm2 = make_norm(c["norm"], h)
        f = c["ffn_hidden"]
        if self.swiglu:
            self.gate = nn.Linear(h, f, bias=False)
            self.up = nn.Linear(h, f, bias=False)
            self.down = nn.Linear(f, h, bias=False)
        else:
            self.fc = nn.Linear(h, f, bias=False)
            self.fc_out = nn.Linear(f, h, bias=False)

    def attention(self, q, k, v):
        if k.shape[1] != q.shape[1]:  # GQA_MODE "native": SDPA reads the shared K/V heads itself
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def forward(self, x):
        B, T, h = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(
            [self.nh * self.hd, self.nkv * self.hd, self.nkv * self.hd], dim=-1)
        q = q.view(B, T, self.nh, self.hd).transpose(1, 2)
        k = k.view(B, T, self.nkv, self.hd).transpose(1, 2)
        v = v.view(B, T, self.nkv, self.hd).transpose(1, 2)
        if self.nkv != self.nh and GQA_MODE == "repeat":
            k = k.repeat_interleave(self.nh // self.nkv, dim=1)
            v = v.repeat_interleave(self.nh // self.nkv, dim=1)
        if self.recompute_attention:
            y = checkpoint(self.attention, q, k, v, use_reentrant=False)
        else:
            y = self.attention(q, k, v)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, h))
        z = self.norm2(x)
        if self.swiglu:
            m = self.down(F.silu(self.gate(z)) * self.up(z))
        else:
            m = self.fc_out(F.gelu(self.fc(z), approximate="tanh"))
        return x + m


class GPT(nn.Module):
    def __init__(self, c: dict):
        super().__init__()
        h = c["hidden"]
        self.tok_emb = nn.Embedding(c["vocab"], h)
        self.pos_emb = nn.Parameter(torch.randn(c["seq_len"], h) * 0.02)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.norm_f = make_norm(c["norm"], h)
        self.head = nn.Linear(h, c["vocab"], bias=False)
        if c["tied_embeddings"]:
            self.head.weight = self.tok_emb.weight
        # full: each block's forward is recomputed in backward; only its input is saved
        self.recompute_blocks = c["activation_checkpointing"] == "full"

    def forward(self, idx):
        x = self.tok_emb(idx) + self.pos_emb[: idx.shape[1]]
        for b in self.blocks:
            x = checkpoint(b, x, use_reentrant=False) if self.recompute_blocks else b(x)
        return self.head(self.norm_f(x))


# ------------------------------------------------------------------------------------- helpers
def environment(rank: int) -> dict:
    nccl = None
    try:
        v = torch.cuda.nccl.version()
        nccl = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
    except Exception:  # noqa: BLE001 -- recorded as unknown
        pass
    env = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "nccl": nccl,
        "gpu": torch.cuda.get_device_name(),
        "gpu_capability": list(torch.cuda.get_device_capability()),
        "gpu_count": torch.cuda.device_count(),
        "python": platform.python_version(),
        "hostname": socket.gethostname(),
        "env": {k: v for k, v in sorted(os.environ.items())
                if k.startswith(("NCCL_", "TORCH_", "NVSHMEM_", "CUDA_", "PYTORCH_", "OMP_"))},
    }
    if rank == 0:
        try:
            env["nvidia_smi"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,"
                 "power.limit,memory.total", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
        except Exception as e:  # noqa: BLE001
            env["nvidia_smi"] = f"unavailable: {e}"
    return env


def pct(xs, q):
    s = sorted(xs)
    if not s:
        return None
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def ddp_logging(model) -> dict:
    try:
        d = model._get_ddp_logging_data()
    except Exception as e:  # noqa: BLE001
        return {"unavailable": str(e)}
    keep = ("bucket", "comm", "num_", "rebuilt", "backward", "gradient_as_bucket_view", "iteration")
    return {k: v for k, v in d.items() if any(s in k for s in keep)}


# --------------------------------------------------------------------------------- host probe
def host_probe(iters: int) -> dict:
    """The host's speed now, measured as the profile's launch costs are (calibration/pytorch/host_overhead.py, one
    GPU, no DDP): host microseconds per kernel of a tiny model's forward and backward, from its 2- and 10-layer
    timings' difference, and per parameter tensor of its fused AdamW step. The host's speed moves ~2x between and
    within machine starts; this shows how far it moves around one configuration's timed steps (run 33: 19-67 µs
    per backward kernel, often 1.5x between before and after, too fast to correct the prediction with)."""
    sys.path.insert(0, os.path.join(HERE, "..", "pytorch"))
    import host_overhead  # noqa: E402 -- beside the calibration scripts it belongs to
    lo, hi = host_overhead.measure(2, False, iters), host_overhead.measure(10, False, iters)
    d = {k: (hi[k] - lo[k]) / 8 for k in hi}
    return {"forward_us_per_kernel": d["forward_us"] / d["forward_kernels"],
            "backward_us_per_kernel": d["backward_us"] / d["backward_kernels"],
            "optimizer_us_per_param_tensor": d["optimizer_us"] / d["param_tensors"], "iters": iters}


# --------------------------------------------------------------------------------- one config
def steady_gaps(events, step_ms):
    """Busy and idle time of consecutive steps' device events (sorted (start, end, name, ...)), the compute,
    communication, overlap and exposed communication per step (as trace_metrics.step_metrics counts them), and
    the 12 longest idle gaps with the names of the operations either side."""
    busy = trace_metrics.merge([(a, b) for a, b, *_ in events])
    span = busy[-1][1] - busy[0][0] if busy else 0.0
    busy_us = sum(b - a for a, b in busy)
    gaps = []
    last_end, last_name = None, ""
    for a, b, name, *_ in events:
        if last_end is not None and a > last_end:
            gaps.append((a - last_end, last_name[:80], name[:80]))
        if last_end is None or b > last_end:
            last_end, last_name = b, name
    gaps.sort(reverse=True)
    n = max(1, len(step_ms))
    m = trace_metrics.step_metrics(events)  # over the whole window: communication figures per step below
    comm = {k: m[k] / n for k in ("compute_ms", "comm_ms", "overlap_ms", "exposed_comm_ms")} if events else {}
    comm["overlap_ratio"] = m.get("overlap_ratio", 0.0)
    return {**comm, "steps": len(step_ms), "step_time_ms": step_ms, "window_ms": span / 1e3,
            "busy_ms_per_step": busy_us / 1e3 / n, "idle_ms_per_step": (span - busy_us) / 1e3 / n,
            "idle_over_20us_ms_per_step": sum(g for g, *_ in gaps if g > 20) / 1e3 / n,
            "largest_gaps": [{"us": g, "after": x, "before": y} for g, x, y in gaps[:12]]}


def run_config(c: dict, world: int, rank: int, local_rank: int, args) -> dict:
    dev = torch.device("cuda", local_rank)
    t_setup = time.perf_counter()
    torch.manual_seed(1234)
    with torch.device(dev):
        model = GPT(c)
    if c.get("fp8", "none") != "none":  # torchao-style Float8Linear (fp8_linear.py), every eligible Linear
        fp8_linear.convert(model, c["fp8"])
    pure = c["param_dtype"] == "bf16"  # bf16 parameters, no autocast
    if pure:
        model = model.to(torch.bfloat16)
    n_params = sum(p.numel() for p in model.parameters())
    expected = cfgmod.param_count(c)
    if n_params != expected:
        raise RuntimeError(f"parameter count {n_params} != configs.param_count {expected}")
    if world > 1:
        model = DDP(model, device_ids=[local_rank], bucket_cap_mb=c["bucket_cap_mb"],
                    gradient_as_bucket_view=c["gradient_as_bucket_view"])
    cmode = c.get("compile")
    if cmode:  # the model (the DDP wrapper at world > 1) compiled whole; the loss and the optimizer stay eager
        model = torch.compile(model, fullgraph=True, dynamic=False, mode=cmode)
    graphs = cmode in ("reduce-overhead", "max-autotune")  # CUDA graphs (cudagraph trees)
    fused = c.get("optimizer_impl", "fused") == "fused"  # else PyTorch's default on CUDA, foreach
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=fused, foreach=None if fused else True)
    scaler = torch.amp.GradScaler("cuda") if c["compute_dtype"] == "fp16" else None
    amp_dtype = torch.float16 if c["compute_dtype"] == "fp16" else torch.bfloat16
    ga, mb, T, V = c["grad_accum"], c["micro_batch"], c["seq_len"], c["vocab"]
    g = torch.Generator(device=dev)
    g.manual_seed(1000 + rank)
    tokens = torch.randint(0, V, (ga, mb, T + 1), device=dev, generator=g)
    xs = [tokens[i, :, :-1].contiguous() for i in range(ga)]
    ys = [tokens[i, :, 1:].contiguous() for i in range(ga)]
    del tokens

    def step():
        for i in range(ga):
            ctx = model.no_sync() if (world > 1 and i < ga - 1) else contextlib.nullcontext()
            with ctx:
                if graphs:
                    torch.compiler.cudagraph_mark_step_begin()
                with contextlib.nullcontext() if pure else torch.autocast("cuda", dtype=amp_dtype):
                    logits = model(xs[i])
                    loss = F.cross_entropy((logits.float() if pure else logits).view(-1, V), ys[i].view(-1))
                scaled = loss / ga if ga > 1 else loss
                (scaler.scale(scaled) if scaler is not None else scaled).backward()
        if c.get("grad_clip", 0.0) > 0:
            if scaler is not None:  # PyTorch's AMP recipe: unscale before clipping
                scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), c["grad_clip"])
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    torch.cuda.synchronize()
    setup_s = time.perf_counter() - t_setup

    # warm-up: allocator, cuBLAS/flash heuristics, DDP bucket rebuild after the first iteration
    t0 = time.perf_counter()
    first_step_s = None
    for w in range(args.warmup - 2):
        loss = step()
        if w == 0:  # the first step: torch.compile traces and compiles here
            torch.cuda.synchronize()
            first_step_s = time.perf_counter() - t0
    torch.cuda.synchronize()
    first_loss = float(loss.detach())
    t1 = time.perf_counter()
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    warm_step_s = (time.perf_counter() - t1) / 2
    warmup_s = time.perf_counter() - t0
    n = max(args.min_steps, min(args.max_steps, math.ceil(args.timed_seconds / max(warm_step_s, 1e-4))))
    if world > 1:  # every rank must run the same number of steps, or their collectives stop matching
        n_t = torch.tensor([n], device=dev, dtype=torch.int64)
        dist.all_reduce(n_t, op=dist.ReduceOp.MAX)
        n = int(n_t.item())

    probe = {"before": host_probe(args.host_probe)} if args.host_probe > 0 else None
    scale_before = float(scaler.get_scale()) if scaler is not None else None

    # timed steps: events at each step's start, no per-step synchronization (the host may run ahead,
    # as in real training); the last event closes the last step
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    host = []
    torch.cuda.synchronize()
    w0 = time.perf_counter()
    for i in range(n):
        ev[i].record()
        h0 = time.perf_counter()
        loss = step()
        host.append((time.perf_counter() - h0) * 1e3)
    ev[n].record()
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - w0) * 1e3
    times = [ev[i].elapsed_time(ev[i + 1]) for i in range(n)]
    last_loss = float(loss.detach())
    if not math.isfinite(last_loss):
        raise RuntimeError(f"loss is {last_loss}")
    if probe is not None:
        probe["after"] = host_probe(args.host_probe)
        probe["rank"] = rank
        probes = [None] * world
        if world > 1:
            dist.all_gather_object(probes, probe)
        else:
            probes = [probe]

    out = {
        "n_params": n_params,
        "model_tflop_per_step": cfgmod.model_flops_per_step(c) / 1e12,
        "tokens_per_step": mb * ga * T * world,
        "timed_steps": n,
        "first_step_s": first_step_s,
        "step_time_ms": {
            "median": statistics.median(times), "p10": pct(times, 0.10), "p90": pct(times, 0.90),
            "mean": statistics.fmean(times), "min": min(times), "max": max(times),
            "all": [round(t, 4) for t in times],
        },
        "wall_ms_per_step": wall_ms / n,
        "host_issue_ms": {"median": statistics.median(host), "all": [round(t, 4) for t in host]},
        "loss_first": first_loss, "loss_last": last_loss,
        "setup_s": setup_s, "warmup_s": warmup_s,
    }
    med_s = out["step_time_ms"]["median"] / 1e3
    out["achieved_tflops_per_gpu"] = cfgmod.model_flops_per_step(c) / world / med_s / 1e12
    out["tokens_per_s"] = out["tokens_per_step"] / med_s
    if world > 1:
        out["ddp_logging"] = ddp_logging(model)
    if scaler is not None:  # a step GradScaler skips (inf/NaN gradients) halves the scale and its AdamW exits early
        out["grad_scale"] = {"before_timed": scale_before, "after_timed": float(scaler.get_scale())}
    if probe is not None:
        out["host_probe"] = probes  # every rank's, before and after its timed steps

    # profiled steps: the first is the profiler's warm-up, the next `profile_steps` are recorded;
    # each step synchronizes inside its record_function range so its device events fall inside it
    from torch.profiler import ProfilerActivity, profile, record_function, schedule
    trace_path = None
    if rank == 0:
        fd, trace_path = tempfile.mkstemp(prefix=f"trace-{c['id']}-", suffix=".json")
        os.close(fd)

    def on_ready(p):
        if trace_path:
            p.export_chrome_trace(trace_path)

    # --profile-cpu off: CUDA activity only (no per-op host recording, which slows host-bound steps);
    # steps are then told apart by an idle gap of PROFILE_GAP_S the host leaves after each one
    cpu = args.profile_cpu == "on"
    tp0 = time.perf_counter()
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if cpu else [ProfilerActivity.CUDA]
    with profile(activities=acts, schedule=schedule(wait=0, warmup=1, active=args.profile_steps, repeat=1),
                 on_trace_ready=on_ready) as prof:
        for _ in range(1 + args.profile_steps):
            with record_function(trace_metrics.STEP_LABEL) if cpu else contextlib.nullcontext():
                step()
                torch.cuda.synchronize()
            if not cpu:
                time.sleep(PROFILE_GAP_S)
            prof.step()
    if world > 1:
        dist.barrier()
    if rank == 0:
        out["profile"] = trace_metrics.analyze_file(
            trace_path, min_gap_us=None if cpu else PROFILE_GAP_S * 1e6 / 2)
        out["profile"]["mode"] = "cpu+cuda, record_function steps" if cpu else "cuda only, gap-split steps"
        p = out["profile"]["primary"] or {}
        if p.get("busy_ms") is not None:
            out["profile"]["idle_vs_median_ms"] = out["step_time_ms"]["median"] - p["busy_ms"]
        if args.trace_dir:
            import gzip
            import shutil
            os.makedirs(args.trace_dir, exist_ok=True)
            with open(trace_path, "rb") as src, gzip.open(
                    os.path.join(args.trace_dir, f"{c['id']}.rank0.json.gz"), "wb", 6) as dst:
                shutil.copyfileobj(src, dst)
        os.unlink(trace_path)
    out["profile_s"] = time.perf_counter() - tp0

    # --steady-steps N: N consecutive steps profiled with CUDA activity only and no synchronization or sleep in
    # between, as the timed steps run: rank 0's compute, communication, overlap and exposed communication per step
    # in steady state, its idle time and the largest gaps with the kernels either side.
    if args.steady_steps > 0:
        fd, steady_path = tempfile.mkstemp(prefix=f"steady-{c['id']}-", suffix=".json")
        os.close(fd)
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(args.steady_steps + 1)]
        for _ in range(2):
            step()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as sprof:
            for i in range(args.steady_steps):
                ev[i].record()
                step()
            ev[-1].record()
            torch.cuda.synchronize()
        if rank == 0 or args.steady_trace_dir:
            sprof.export_chrome_trace(steady_path)
        if rank == 0:
            with open(steady_path) as f:
                dev_ev = trace_metrics.device_events(json.load(f))  # this process's GPU only
            out["steady"] = steady_gaps(dev_ev, [ev[i].elapsed_time(ev[i + 1]) for i in range(args.steady_steps)])
        if args.steady_trace_dir:  # every rank's steady-state trace, CUDA activity only
            import gzip
            import shutil
            os.makedirs(args.steady_trace_dir, exist_ok=True)
            with open(steady_path, "rb") as src, gzip.open(
                    os.path.join(args.steady_trace_dir, f"steady-{c['id']}.rank{rank}.json.gz"), "wb", 6) as dst:
                shutil.copyfileobj(src, dst)
        os.unlink(steady_path)

    out["peak_memory_gib"] = torch.cuda.max_memory_allocated(dev) / 2**30
    out["peak_reserved_gib"] = torch.cuda.max_memory_reserved(dev) / 2**30
    if world > 1:  # every rank's median and peak memory, to see skew between ranks
        mine = torch.tensor([out["step_time_ms"]["median"], out["peak_memory_gib"]], device=dev,
                            dtype=torch.float64)
        allv = [torch.zeros_like(mine) for _ in range(world)]
        dist.all_gather(allv, mine)
        out["per_rank"] = [{"rank": r, "step_time_ms_median": float(t[0]), "peak_memory_gib": float(t[1])}
                           for r, t in enumerate(allv)]
    return out


# ---------------------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ids", default="", help="comma-separated configuration ids from configs.py")
    ap.add_argument("--config", action="append", default=[], help="an ad-hoc configuration as JSON")
    ap.add_argument("--out", required=True, help="JSONL file to append one record per configuration")
    ap.add_argument("--progress", default=None, help="file where rank 0 notes each configuration's start")
    ap.add_argument("--trace-dir", default=None, help="keep rank 0's profiler traces here (gzip)")
    ap.add_argument("--warmup", type=int, default=6, help="warm-up steps (>= 5)")
    ap.add_argument("--min-steps", type=int, default=10)
    ap.add_argument("--max-steps", type=int, default=30)
    ap.add_argument("--timed-seconds", type=float, default=1.5,
                    help="aim for this much timed work (between min and max steps)")
    ap.add_argument("--profile-steps", type=int, default=2)
    ap.add_argument("--steady-steps", type=int, default=0,
                    help="also profile this many consecutive steps, CUDA only and unsynchronized (rank 0's "
                         "steady-state comm figures and idle gaps)")
    ap.add_argument("--steady-trace-dir", default=None, help="keep every rank's steady-state trace here (gzip)")
    ap.add_argument("--host-probe", type=int, default=0, metavar="ITERS",
                    help="measure the host's launch costs (host_overhead.py's way, ITERS timings per phase) on "
                         "every rank before and after the timed steps")
    ap.add_argument("--max-memory-gib", type=float, default=120.0,
                    help="skip a configuration whose rough memory estimate is larger")
    ap.add_argument("--nccl-timeout-s", type=int, default=120)
    ap.add_argument("--profile-cpu", choices=("on", "off"), default="on",
                    help="record CPU ops too (steps marked by record_function; the measured default) or "
                         "CUDA activity only (less host overhead; not yet run on the GPU machine)")
    ap.add_argument("--gqa", choices=("native", "repeat"), default="native",
                    help="GQA in SDPA (enable_gqa) or by repeating K/V heads before it")
    args = ap.parse_args(argv)
    global GQA_MODE
    GQA_MODE = args.gqa
    if args.warmup < 5:
        ap.error("--warmup must be >= 5")

    cfgs = [cfgmod.by_id(i) for i in args.ids.split(",") if i]
    for j in args.config:
        base = cfgmod._cfg("adhoc", 1, 2, 256, 4, 256, 1)
        base.update(json.loads(j))
        cfgmod.check(base)
        cfgs.append(base)

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    if world > 1:
        dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=args.nccl_timeout_s),
                                device_id=torch.device("cuda", local_rank))
    env = environment(rank)
    if rank == 0:
        print(f"[train_gpt] world={world} torch={env['torch']} cuda={env['cuda']} nccl={env['nccl']} "
              f"gpu={env['gpu']}", flush=True)

    for c in cfgs:
        if c["world"] != world:
            raise SystemExit(f"{c['id']}: configuration world {c['world']} != WORLD_SIZE {world}")
        if rank == 0 and args.progress:
            with open(args.progress, "a") as f:
                f.write(json.dumps({"start": c["id"], "t": time.time()}) + "\n")
        rec = {"id": c["id"], "config": c, "scenario": cfgmod.scenario(c), "environment": env,
               "gqa_mode": GQA_MODE if c["kv_heads"] != c["heads"] else None,
               "measured_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        est = cfgmod.estimate_memory_gib(c)
        if est > args.max_memory_gib:
            rec.update(status="skipped", error=f"estimated memory {est:.1f} GiB > {args.max_memory_gib}")
        else:
            try:
                rec.update(run_config(c, world, rank, local_rank, args))
                rec["status"] = "ok"
            except torch.cuda.OutOfMemoryError as e:
                rec.update(status="oom", error=str(e)[:800])
            except Exception:  # noqa: BLE001 -- recorded per configuration, the sweep goes on
                rec.update(status="error", error=traceback.format_exc()[-3000:])
        gc.collect()
        torch.cuda.empty_cache()
        rec["config_wall_s"] = time.perf_counter() - t0
        if rank != 0 and rec["status"] != "ok":
            print(f"[train_gpt] rank {rank} {c['id']}: {rec['status']}\n{rec['error']}", flush=True)
        if rank == 0:
            with open(args.out, "a") as f:
                f.write(json.dumps(rec) + "\n")
                f.flush()
                os.fsync(f.fileno())
            p = (rec.get("profile") or {}).get("primary") or {}
            st = rec.get("step_time_ms", {})
            print(f"[train_gpt] {c['id']}: {rec['status']} step {st.get('median', float('nan')):.2f} ms "
                  f"host {rec.get('host_issue_ms', {}).get('median', float('nan')):.2f} ms "
                  f"comp {p.get('compute_ms', float('nan')):.2f} comm {p.get('comm_ms', float('nan')):.2f} "
                  f"exp {p.get('exposed_comm_ms', float('nan')):.2f} ovl {p.get('overlap_ratio', float('nan')):.3f} "
                  f"mem {rec.get('peak_memory_gib', float('nan')):.1f} GiB ({rec['config_wall_s']:.1f} s)"
                  + (f"\n{rec['error']}" if rec["status"] != "ok" else ""), flush=True)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
