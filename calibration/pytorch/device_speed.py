#!/usr/bin/env python3
"""How much the GPUs of one machine differ in speed when they all train at once.

At the board's power limit (a training step holds it: SM clock ~1725 MHz at ~665 W on H200, against 1980 MHz at
rest; calibration/profiles/h200x2/NOTES.md, power) each GPU settles at its own clock, and in a profiled
two-GPU step the second GPU ran the same GEMMs 1.8% and 3.4% slower than the first (two machine starts). In data
parallel training the slowest GPU sets the pace and the others wait for it at every bucket.

Under torchrun, every rank at once: 3 s of back-to-back 8192³ BF16 GEMMs to reach the power limit, then `windows`
timed windows of about 0.4 s each of the same GEMMs and then of a memory-bound add over 1 GiB operands, between
CUDA events. Each rank's median window rate, gathered on rank 0.

Writes JSON Lines {"kind": "device_speed", "set", "rank", "gpu", "gemm_tflops", "memory_gbps", ...}, one per rank;
`stepsim calibrate fit` takes the spread of log rates across the ranks of each set into jitter.device_compute_cv
and jitter.device_memory_cv.
Usage: torchrun --standalone --nproc-per-node N device_speed.py --out FILE [--sets 3]
"""
import argparse
import datetime
import statistics
import time

import torch
import torch.distributed as dist

from gathered import join_ranks, write_gathered


def window_rate(fn, work, seconds):
    """Median over calls-per-window of `work` units per second, the calls sized to last about `seconds`."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(5):
        fn()
    e1.record()
    torch.cuda.synchronize()
    calls = max(5, int(seconds / (e0.elapsed_time(e1) * 1e-3 / 5)))
    e0.record()
    for _ in range(calls):
        fn()
    e1.record()
    torch.cuda.synchronize()
    return work * calls / (e0.elapsed_time(e1) * 1e-3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--sets", type=int, default=3, help="measurements, each with its own warm-up")
    ap.add_argument("--windows", type=int, default=5)
    a = ap.parse_args()
    rank, dev = join_ranks()
    props = torch.cuda.get_device_properties(dev)
    bf = torch.bfloat16
    x, w, y = (torch.randn(8192, 8192, device=dev, dtype=bf) for _ in range(3))
    gemm = lambda: torch.mm(x, w, out=y)
    p, q, r = (torch.empty(2**29, device=dev, dtype=bf) for _ in range(3))  # 1 GiB each
    add = lambda: torch.add(p, q, out=r)
    recs = []
    for s in range(a.sets):
        stamp = [datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")]
        dist.broadcast_object_list(stamp, src=0)  # one set name on every rank
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 3.0:  # every GPU at its power limit together
            for _ in range(20):
                gemm()
            torch.cuda.synchronize()
        g = [window_rate(gemm, 2 * 8192**3 / 1e12, 0.4) for _ in range(a.windows)]
        m = [window_rate(add, 3 * 2**30 / 1e9, 0.4) for _ in range(a.windows)]
        recs.append({"kind": "device_speed", "set": f"{stamp[0]}#{s}", "rank": dist.get_rank(),
                     "gpu": torch.cuda.get_device_name(dev), "gpu_uuid": str(getattr(props, "uuid", "")),
                     "world": dist.get_world_size(),
                     "gemm_tflops": statistics.median(g), "memory_gbps": statistics.median(m),
                     "gemm_windows": g, "memory_windows": m})
        print(f"rank {dist.get_rank()} set {s}: GEMM {recs[-1]['gemm_tflops']:.1f} TFLOP/s, "
              f"add {recs[-1]['memory_gbps']:.0f} GB/s", flush=True)
    write_gathered(a.out, recs, {"kind": "metadata", "tool": "device_speed.py", "torch": torch.__version__,
                                 "world": dist.get_world_size()})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
