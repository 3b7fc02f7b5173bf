#!/usr/bin/env python3
"""Peak GPU memory and step time of the project's GPT under each data-parallel wrapper and optimizer, on one GPU.

What stepsim's memory model (sim/workload/MemoryEstimate.hpp, result keys peak_memory_gib and memory_gib) predicts,
measured: for each configuration below, the model of calibration/validation/train_gpt.py (bias-free Linears,
LayerNorm, learned positions) is built fresh, trained --warmup steps (the optimizer's state made, DDP's buckets
rebuilt), the allocator's peak reset, then trained --steps steps: torch.cuda.max_memory_allocated over those steps,
torch.cuda.memory_allocated before a step (what stays between steps), and the median step time (CUDA events).
One process; DDP and FSDP2 run over a one-rank NCCL group (init_process_group with world_size 1): their hooks, buckets,
copies and gathers run as at any world size, the one-rank collectives move nothing.

  plain            the module itself, optimizer adamw | adam | sgd (momentum 0.9) | sgd (no momentum), foreach
                   (PyTorch's default on CUDA), bf16 autocast over fp32 parameters; one with full activation
                   checkpointing (each block recomputed: torch.utils.checkpoint, use_reentrant=False)
  ddp              DistributedDataParallel (bucket_cap_mb 25); gradient_as_bucket_view; find_unused_parameters;
                   static_graph; PowerSGD (powerSGD_hook, matrix_approximation_rank 1, start_powerSGD_iter 2, error
                   feedback and warm start on: its state exists after the warm-up)
  fsdp2            fully_shard on every block and on the root, reshard_after_forward true | false, without and with
                   MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32) (no autocast then)

find_unused_parameters' host cost: DDP with and without it, two models built side by side and stepped in turn
(--pair-rounds rounds), the device drained before each forward so the host never waits on a full launch queue; the
host time of the wrapped forward (perf_counter around model(x): DDP's prepare_for_backward walks the autograd graph
there) per step, median over the rounds, of each; their difference per parameter tensor is what stepsim's
launch.ddp_find_unused_host_us means.

Writes JSON Lines: {"kind": "memory_check", "id", "wrapper", "optimizer", ..., "max_allocated_gib",
"between_steps_gib", "step_ms"} per configuration and {"kind": "ddp_find_unused", "layers", "param_tensors",
"forward_host_us": {"ddp", "find_unused"}, "rounds"} per model size.
Usage: python3 memory_check.py --out FILE [--steps 10] [--warmup 4] [--pair-rounds 40] [--only ID,ID]
       [--device cpu --tiny]   (a CPU check of the script with a tiny model: gloo, no CUDA numbers)
"""
import argparse
import gc
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "validation"))
import configs as cfgmod  # noqa: E402
from train_gpt import GPT  # noqa: E402

GIB = 2.0 ** 30


def model_config(tiny, layers=None, activation_checkpointing="none"):
    """The GPT measured: 12 layers of hidden 1536 (about 0.5B parameters), 4 sequences of 1024 tokens."""
    if tiny:
        c = cfgmod._cfg("tiny", 1, 2, 64, 2, 64, 2)
        c["vocab"] = 256
    else:
        c = cfgmod._cfg("mem", 1, 12, 1536, 12, 1024, 4)
    if layers is not None:
        c["layers"] = layers
    c["activation_checkpointing"] = activation_checkpointing
    return c


CONFIGS = [
    # id, wrapper, optimizer, options
    ("plain-adamw", "plain", "adamw", {}),
    ("plain-adam", "plain", "adam", {}),
    ("plain-sgd-momentum", "plain", "sgd", {"momentum": 0.9}),
    ("plain-sgd", "plain", "sgd", {"momentum": 0.0}),
    ("plain-adamw-full-ckpt", "plain", "adamw", {"activation_checkpointing": "full"}),
    ("ddp-adamw", "ddp", "adamw", {}),
    ("ddp-sgd-momentum", "ddp", "sgd", {"momentum": 0.9}),
    ("ddp-adamw-bucket-view", "ddp", "adamw", {"gradient_as_bucket_view": True}),
    ("ddp-adamw-find-unused", "ddp", "adamw", {"find_unused_parameters": True}),
    ("ddp-adamw-static-graph", "ddp", "adamw", {"static_graph": True}),
    ("ddp-adamw-powersgd", "ddp", "adamw", {"powersgd": True}),
    ("fsdp2-adamw-reshard", "fsdp2", "adamw", {"reshard": True}),
    ("fsdp2-adamw-noreshard", "fsdp2", "adamw", {"reshard": False}),
    ("fsdp2-adamw-reshard-mp", "fsdp2", "adamw", {"reshard": True, "mp": True}),
    ("fsdp2-adamw-noreshard-mp", "fsdp2", "adamw", {"reshard": False, "mp": True}),
]


def make_optimizer(params, name, momentum):
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1, foreach=True)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4, betas=(0.9, 0.95), foreach=True)
    return torch.optim.SGD(params, lr=1e-3, momentum=momentum, foreach=True)


def wrap(model, wrapper, opts, dev):
    """The model under its wrapper; returns (module to call, whether autocast runs)."""
    if wrapper == "plain":
        return model, True
    if wrapper == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        m = DDP(model, device_ids=[dev.index] if dev.type == "cuda" else None, bucket_cap_mb=25,
                gradient_as_bucket_view=opts.get("gradient_as_bucket_view", False),
                find_unused_parameters=opts.get("find_unused_parameters", False),
                static_graph=opts.get("static_graph", False))
        if opts.get("powersgd"):
            from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd
            state = psgd.PowerSGDState(process_group=None, matrix_approximation_rank=1, start_powerSGD_iter=2,
                                       use_error_feedback=True, warm_start=True)
            m.register_comm_hook(state, psgd.powerSGD_hook)
        return m, True
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    kw = {"reshard_after_forward": opts["reshard"]}
    if opts.get("mp"):
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for b in model.blocks:
        fully_shard(b, **kw)
    fully_shard(model, **kw)
    return model, not opts.get("mp")


def measure(cid, wrapper, optimizer, opts, args, dev):
    c = model_config(args.tiny, activation_checkpointing=opts.get("activation_checkpointing", "none"))
    torch.manual_seed(1234)
    model, autocast = wrap(GPT(c).to(dev), wrapper, opts, dev)
    opt = make_optimizer(model.parameters(), optimizer, opts.get("momentum", 0.0))
    V, T = c["vocab"], c["seq_len"]
    x = torch.randint(0, V, (c["micro_batch"], T), device=dev)
    y = torch.randint(0, V, (c["micro_batch"], T), device=dev)
    cuda = dev.type == "cuda"

    def step():
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=autocast):
            loss = F.cross_entropy(model(x).view(-1, V).float(), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        step()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    between = torch.cuda.memory_allocated() / GIB if cuda else 0.0
    ends = []
    for _ in range(args.steps + 1):
        step()
        if cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            ends.append(e)
    step_ms = None
    if cuda:
        torch.cuda.synchronize()
        step_ms = statistics.median(a.elapsed_time(b) for a, b in zip(ends, ends[1:]))
    rec = {"kind": "memory_check", "source": "pytorch", "id": cid, "wrapper": wrapper, "optimizer": optimizer,
           "options": opts, "layers": c["layers"], "hidden": c["hidden"], "heads": c["heads"],
           "seq_len": c["seq_len"], "micro_batch": c["micro_batch"], "vocab": c["vocab"],
           "params": sum(p.numel() for p in model.parameters()), "param_tensors": len(list(model.parameters())),
           "max_allocated_gib": torch.cuda.max_memory_allocated() / GIB if cuda else None,
           "between_steps_gib": between, "step_ms": step_ms, "steps": args.steps}
    del model, opt, x, y
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return rec


def find_unused_host(layers, args, dev):
    """Forward host time per step of DDP without and with find_unused_parameters, stepped in turn."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    c = model_config(args.tiny, layers=layers)
    V, T = c["vocab"], c["seq_len"]
    x = torch.randint(0, V, (c["micro_batch"], T), device=dev)
    y = torch.randint(0, V, (c["micro_batch"], T), device=dev)
    runs = {}
    for name, fu in (("ddp", False), ("find_unused", True)):
        torch.manual_seed(1234)
        m = DDP(GPT(c).to(dev), device_ids=[dev.index] if dev.type == "cuda" else None, bucket_cap_mb=25,
                find_unused_parameters=fu)
        runs[name] = (m, torch.optim.AdamW(m.parameters(), lr=1e-4, foreach=True), [])
    cuda = dev.type == "cuda"
    for r in range(args.warmup + args.pair_rounds):
        for name, (m, opt, times) in runs.items():
            if cuda:
                torch.cuda.synchronize()
            with torch.autocast(dev.type, dtype=torch.bfloat16):
                t0 = time.perf_counter()
                out = m(x)
                t1 = time.perf_counter()
                loss = F.cross_entropy(out.view(-1, V).float(), y.view(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            if r >= args.warmup:
                times.append((t1 - t0) * 1e6)
    tensors = len(list(runs["ddp"][0].parameters()))
    rec = {"kind": "ddp_find_unused", "source": "pytorch", "layers": c["layers"], "hidden": c["hidden"],
           "param_tensors": tensors, "rounds": args.pair_rounds,
           "forward_host_us": {k: statistics.median(v[2]) for k, v in runs.items()},
           "forward_host_us_p10_p90": {k: [sorted(v[2])[len(v[2]) // 10], sorted(v[2])[(9 * len(v[2])) // 10]]
                                       for k, v in runs.items()}}
    del runs
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--pair-rounds", type=int, default=40)
    ap.add_argument("--only", default="", help="comma-separated configuration ids (default: all)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--find-unused-only", action="store_true",
                    help="only the ddp_find_unused records (stepsim calibrate's stage for launch.ddp_find_unused_host_us)")
    ap.add_argument("--tiny", action="store_true", help="a tiny model (for the CPU check)")
    args = ap.parse_args()
    cuda = args.device == "cuda"
    dev = torch.device("cuda", 0) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(0)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl" if cuda else "gloo", rank=0, world_size=1)
    only = set(filter(None, args.only.split(",")))
    with open(args.out, "w") as f:
        for cid, wrapper, optimizer, opts in CONFIGS:
            if (only and cid not in only) or args.find_unused_only:
                continue
            try:
                rec = measure(cid, wrapper, optimizer, opts, args, dev)
            except Exception as e:  # noqa: BLE001  (a configuration that fails is recorded, the rest still run)
                rec = {"kind": "memory_check", "id": cid, "error": f"{type(e).__name__}: {e}"}
            print(json.dumps(rec), flush=True)
            f.write(json.dumps(rec) + "\n")
            f.flush()
        if not only or args.find_unused_only:
            for layers in ((2, 4) if args.tiny else (6, 12)):
                rec = find_unused_host(layers, args, dev)
                print(json.dumps(rec), flush=True)
                f.write(json.dumps(rec) + "\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
