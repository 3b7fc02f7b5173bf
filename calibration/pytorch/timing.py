"""Device timing shared by the PyTorch calibration scripts (stepsim_torch_bench.py, attention_default.py,
gemm_training_shapes.py, interference_training.py, optimizer_state.py).

A loop of launches between two CUDA events measures the device only while the host stays ahead of it. Small
kernels behind a costly launch (cuDNN SDPA spends ~50 µs of host time per call, an autograd.grad call more) run
faster than the host can queue them, and the events then time the host. `hold_gpu` first parks the stream
behind a spin kernel long enough for the host to queue the whole loop, so the events see back-to-back device
periods only — the kernels as they run inside a training step, where the host is far ahead.
"""
import math
import statistics
import time

import torch


def summarize(v):
    """Median, p10, p90 and count of a list of times (µs), in the raw files' `time_us` format."""
    v = sorted(v)
    q = lambda p: v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]
    return {"median": statistics.median(v), "p10": q(0.1), "p90": q(0.9), "n": len(v)}


def host_seconds(fn, calls):
    """Host time to enqueue `calls` calls of fn (the device drained before and after)."""
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    host = time.perf_counter() - t
    torch.cuda.synchronize()
    return host


def hold_gpu(seconds):
    """Queue a spin kernel of at least `seconds` on the current stream (2e9 cycles per second: H200's SMs clock at
    most 1.98 GHz, so it never spins shorter)."""
    torch.cuda._sleep(int(2e9 * seconds))


def looped(fn, reps=7, inner=20, holder=hold_gpu, hold_s=None):
    """Per-call device time (µs) of `inner` back-to-back calls between two CUDA events, `reps` times, the stream
    held (`holder(seconds)`: a spin kernel unless given another) until the host has queued them all."""
    for _ in range(3):
        fn()
    hold = 2.0 * host_seconds(fn, inner) + 1e-3 if hold_s is None else hold_s
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        holder(hold)
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) * 1e3 / inner)
    return out


class Heater:
    """Back-to-back 8192³ BF16 GEMMs on the compute stream, in place of timing.hold_gpu's spin kernel: while the host
    queues the timed calls the board draws its power limit, as through a training step (run 34: SM clock ~1725 MHz
    at ~665 W in a step, ~1965 MHz at ~520 W in interference_training.py's spin-and-burst timing), so the calls run at
    the power limit as a step's do (the heater's own GEMMs draw more: 1470-1500 MHz at ~685 W, run 35), and an NCCL
    kernel's extra power lowers the clock as in a step. Run 35 found the same slowdowns beside NCCL as without it;
    run 91 found the fused AdamW 3-7% slower after it, as in the steps' traces."""

    def __init__(self, dev=None):
        r = lambda: torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
        self.a, self.b, self.c = r(), r(), r()
        for _ in range(200):  # half a second or so: at the power limit before timing
            self.call()
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(40):
            self.call()
        e1.record()
        torch.cuda.synchronize()
        self.call_s = e0.elapsed_time(e1) * 1e-3 / 40

    def call(self):
        torch.mm(self.a, self.b, out=self.c)

    def __call__(self, seconds):
        for _ in range(max(1, math.ceil(seconds / self.call_s))):
            self.call()
