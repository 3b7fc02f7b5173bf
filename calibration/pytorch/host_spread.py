#!/usr/bin/env python3
"""How far apart the hosts of concurrent training processes run: the spread of one rank's host speed against the
others'.

A data-parallel step is paced by its slowest rank's host whenever the step is host-bound: the faster ranks queue
their kernels ahead and then wait, resident in NCCL, for the slowest. On the H200 VMs two host-bound training
processes started together ran 5-37% apart over the same seconds (run 25, the 2xH200 machine),
and which one was faster changed from start to start.

One process per GPU (started here, no communication between them) runs the tiny GPT of host_overhead.py (10
layers, hidden 64: every kernel far shorter than its launch, so a step's wall time is host time) in a loop from a
common start time, and keeps the median step time of each 0.5 s window. Per window the spread is the standard
deviation of the log of the processes' medians; the record keeps every window. With --share-gpu every process
runs on GPU 0 instead (a one-GPU machine: the step never waits for the GPU, so what is timed is still the host).

Writes one JSON Lines record {"kind": "host_spread", "procs", "window_s", "windows": [[median ms per process],
...]}. `stepsim calibrate fit` takes the root mean over the windows of that variance into jitter.host_rank_cv:
each rank's host keeps its own speed for a run at the expected order statistics of that spread (README, section 3).
Usage: python3 host_spread.py --out FILE [--procs N] [--windows W] [--share-gpu]
       (N defaults to the number of GPUs; at least 2)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

WINDOW_S = 0.5


def worker(a):
    import torch
    import torch.nn.functional as F

    from host_overhead import Model
    dev = torch.device("cuda", 0)  # CUDA_VISIBLE_DEVICES picks the GPU
    model = Model(10).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    idx = torch.randint(0, 256, (1, 32), device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(idx).view(-1, 256), idx.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(30):
        step()
    torch.cuda.synchronize()
    while time.time() < a.start:
        time.sleep(0.001)
    per_window = [[] for _ in range(a.windows)]
    end = a.start + a.windows * WINDOW_S
    while True:
        t = time.time()
        if t >= end:
            break
        step()
        per_window[int((t - a.start) / WINDOW_S)].append((time.time() - t) * 1e3)
    torch.cuda.synchronize()
    with open(a.out, "w") as f:
        json.dump([statistics.median(v) if v else None for v in per_window], f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--procs", type=int, default=0, help="processes, one per GPU (default: every GPU)")
    ap.add_argument("--windows", type=int, default=24)
    ap.add_argument("--share-gpu", action="store_true", help="every process on GPU 0 (a one-GPU machine)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=float, default=0.0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a)
        return
    import torch
    gpus = torch.cuda.device_count()
    procs = a.procs or gpus
    if not a.share_gpu and procs > gpus:
        raise SystemExit(f"host_spread.py: {procs} processes need as many GPUs ({gpus} here), or --share-gpu")
    if procs < 2:
        raise SystemExit("host_spread.py: needs two processes or more (one per GPU, or --procs N --share-gpu)")
    start = time.time() + 20.0  # every worker initialised and warmed up by then
    tmp = tempfile.mkdtemp(prefix="host_spread-")
    outs = [os.path.join(tmp, f"p{i}.json") for i in range(procs)]
    here = os.path.dirname(os.path.abspath(__file__))
    running = [subprocess.Popen([sys.executable, os.path.join(here, "host_spread.py"), "--worker", "--out", outs[i],
                                 "--windows", str(a.windows), "--start", str(start)],
                                env=dict(os.environ, CUDA_VISIBLE_DEVICES="0" if a.share_gpu else str(i)), cwd=here)
               for i in range(procs)]
    if any(p.wait() != 0 for p in running):
        raise SystemExit("host_spread.py: a worker failed")
    medians = [json.load(open(o)) for o in outs]
    windows = [[m[w] for m in medians] for w in range(a.windows) if all(m[w] for m in medians)]
    rec = {"kind": "host_spread", "source": "pytorch", "procs": procs, "window_s": WINDOW_S, "share_gpu": a.share_gpu,
           "model": "host_overhead.py tiny GPT, 10 layers, hidden 64", "windows": windows}
    with open(a.out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    import math
    spreads = [statistics.stdev(math.log(x) for x in w) for w in windows]
    print(f"host_spread: {procs} processes, {len(windows)} windows, per-process step medians "
          f"{[round(statistics.median(m[w] for w in range(a.windows) if m[w]), 2) for m in medians]} ms, "
          f"spread rms {math.sqrt(statistics.fmean(s * s for s in spreads)):.3f}")


if __name__ == "__main__":
    main()
