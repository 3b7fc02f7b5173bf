#!/usr/bin/env python3
"""Host time of a validation model's forward and backward with and without activation checkpointing, the GPU held
behind a spin kernel so the host never waits for it: what torch.utils.checkpoint costs the host on the real model
(host_overhead.py measures it on a tiny one). Modes are timed in turn, round by round, so the host's drift cancels.
A phase that launches more kernels than CUDA's launch queue holds blocks on the held GPU and reads the hold, not
the host (the backward of s1-l24-h1024-s2048-mb4 did: ~300 ms).

Usage: python3 calibration/investigations/checkpoint_host_probe.py CONFIG_ID [CONFIG_ID ...] [--out FILE]   (one GPU)
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "validation"))
sys.path.insert(0, os.path.join(HERE, "..", "pytorch"))
import configs as cfgmod  # noqa: E402
import train_gpt  # noqa: E402
from timing import hold_gpu  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ids", nargs="+")
    ap.add_argument("--out", default="checkpoint_host_probe.jsonl")
    ap.add_argument("--rounds", type=int, default=10)
    a = ap.parse_args()
    for cid in a.ids:
        base = cfgmod.by_id(cid)
        runs = {}
        for mode in ("none", "selective", "full"):
            c = dict(base, activation_checkpointing=mode)
            torch.manual_seed(0)
            model = train_gpt.GPT(c).cuda()
            idx = torch.randint(0, c["vocab"], (c["micro_batch"], c["seq_len"]), device="cuda")
            runs[mode] = (model, idx, c["vocab"])
        times = {m: ([], []) for m in runs}
        for r in range(a.rounds + 2):
            for mode, (model, idx, vocab) in runs.items():
                model.zero_grad(set_to_none=True)
                torch.cuda.synchronize()
                hold_gpu(0.3)  # longer than the host takes to queue the forward and backward (~0.1 s)
                t0 = time.perf_counter()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = F.cross_entropy(model(idx).view(-1, vocab), idx.view(-1))
                t1 = time.perf_counter()
                loss.backward()
                t2 = time.perf_counter()
                torch.cuda.synchronize()
                if r >= 2:
                    times[mode][0].append((t1 - t0) * 1e3)
                    times[mode][1].append((t2 - t1) * 1e3)
        rec = {"kind": "checkpoint_host_probe", "id": cid, "layers": base["layers"], "torch": torch.__version__,
               "host_ms": {m: {"forward": statistics.median(f), "backward": statistics.median(b)}
                           for m, (f, b) in times.items()}}
        L = base["layers"]
        rec["extra_us_per_layer"] = {m: {ph: 1e3 * (rec["host_ms"][m][ph] - rec["host_ms"]["none"][ph]) / L
                                         for ph in ("forward", "backward")} for m in ("selective", "full")}
        print(json.dumps(rec), flush=True)
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        del runs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
