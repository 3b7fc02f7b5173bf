#!/usr/bin/env python3
"""The input-pipeline and checkpoint validation runs: train_gpt's model and AdamW on one GPU, fed by a
torch.utils.data.DataLoader of random tokens whose collate spends `--cpu-ms` of CPU time per batch (a busy wait,
the loader's preprocessing), copied with `.to("cuda", non_blocking=pin_memory)`, and saved every
`--ckpt-interval` steps with torch.distributed.checkpoint (`--ckpt-mode sync | async`, `--pinned-staging`).

Each step starts with a CUDA event; the host never synchronizes inside the loop except where the copy or the
checkpoint does, as in real training. One record per run: mean step time over the timed steps (the wall time from
the first timed step's start to the end of the last, over their count), GPU-side step times from the events, and
each checkpoint call's blocking time on the host.

Usage: python3 calibration/validation/io_train.py --id CONFIG_ID --out FILE [--pin-memory] [--workers N]
       [--cpu-ms MS] [--ckpt-interval N --ckpt-mode sync|async --ckpt-dir DIR [--pinned-staging]] [--steps N]
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import configs as cfgmod  # noqa: E402
import train_gpt  # noqa: E402


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, seq, vocab):
        self.n, self.seq, self.vocab = n, seq, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randint(0, self.vocab, (self.seq + 1,), generator=g)


def make_collate(cpu_ms):
    def collate(items):
        t = time.perf_counter()
        batch = torch.stack(items)
        while (time.perf_counter() - t) * 1e3 < cpu_ms:
            pass
        return batch
    return collate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--id", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--pin-memory", action="store_true")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--prefetch", type=int, default=2)
    ap.add_argument("--cpu-ms", type=float, default=0.0)
    ap.add_argument("--ckpt-interval", type=int, default=0)
    ap.add_argument("--ckpt-mode", default="sync", choices=("sync", "async"))
    ap.add_argument("--pinned-staging", action="store_true")
    ap.add_argument("--ckpt-dir", default="/tmp/io_ckpt")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    c = cfgmod.by_id(a.id)
    dev = torch.device("cuda")
    torch.manual_seed(1234)
    with torch.device(dev):
        model = train_gpt.GPT(c)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    mb, T, V = c["micro_batch"], c["seq_len"], c["vocab"]
    total = a.warmup + a.steps
    kw = {"prefetch_factor": a.prefetch, "persistent_workers": True} if a.workers > 0 else {}
    loader = torch.utils.data.DataLoader(Tokens(mb * (total + 4), T, V), batch_size=mb, num_workers=a.workers,
                                         pin_memory=a.pin_memory, collate_fn=make_collate(a.cpu_ms), **kw)
    ckpt = None
    if a.ckpt_interval > 0:
        import torch.distributed as dist
        import torch.distributed.checkpoint as dcp
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29534")
        dist.init_process_group("cpu:gloo,cuda:nccl", rank=0, world_size=1)
        stager = None
        if a.pinned_staging:
            from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions
            stager = lambda: DefaultStager(StagingOptions(True, False, False, False))  # noqa: E731
        ckpt = (dcp, stager)
    pending, blocks, ckpt_steps = None, [], []
    events = [torch.cuda.Event(enable_timing=True) for _ in range(total + 1)]
    it = iter(loader)
    side = torch.cuda.Stream()
    t_first = None
    for s in range(total):
        if s == a.warmup:
            torch.cuda.synchronize()
            t_first = time.perf_counter()
        events[s].record()
        if a.pin_memory:  # the prefetcher's recipe: a non-blocking copy on a side stream, the compute stream waits
            with torch.cuda.stream(side):
                batch = next(it).to(dev, non_blocking=True)
            torch.cuda.current_stream().wait_stream(side)
            batch.record_stream(torch.cuda.current_stream())
        else:  # a plain .to(): a synchronous copy from pageable memory
            batch = next(it).to(dev)
        x, y = batch[:, :-1], batch[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if ckpt is not None and (s + 1) % a.ckpt_interval == 0:
            dcp, stager = ckpt
            if pending is not None:  # DCP's recipe: the previous async save must end before the next one
                pending.result()
            path = os.path.join(a.ckpt_dir, f"step{s}")
            sd = {"model": model.state_dict(), "optim": opt.state_dict()}
            t = time.perf_counter()
            if a.ckpt_mode == "sync":
                dcp.save(sd, checkpoint_id=path)
            else:
                f = dcp.async_save(sd, checkpoint_id=path, **({} if stager is None else {"async_stager": stager()}))
                pending = getattr(f, "upload_completion", f)
            if s >= a.warmup:
                blocks.append((time.perf_counter() - t) * 1e3)
                ckpt_steps.append(s - a.warmup)
    events[total].record()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t_first
    if pending is not None:
        pending.result()
    gpu = [events[i].elapsed_time(events[i + 1]) for i in range(a.warmup, total)]
    rec = {"kind": "io_train", "id": a.id, "label": a.label, "pin_memory": a.pin_memory, "workers": a.workers,
           "prefetch": a.prefetch, "cpu_ms": a.cpu_ms, "ckpt_interval": a.ckpt_interval, "ckpt_mode": a.ckpt_mode,
           "pinned_staging": a.pinned_staging, "steps": a.steps, "step_ms": wall * 1e3 / a.steps,
           "gpu_step_ms": gpu, "gpu_step_ms_median": statistics.median(gpu), "checkpoint_blocking_ms": blocks,
           "checkpoint_steps": ckpt_steps, "loss": float(loss), "torch": torch.__version__}
    print(json.dumps({k: v for k, v in rec.items() if k != "gpu_step_ms"}), flush=True)
    with open(a.out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    shutil.rmtree(a.ckpt_dir, ignore_errors=True)
    if ckpt is not None:
        import torch.distributed as dist
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
