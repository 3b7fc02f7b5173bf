"""Device timing shared by the PyTorch calibration scripts (attention_default.py, gemm_training_shapes.py)."""
import statistics

import torch


def summarize(v):
    """Median, p10, p90 and count of a list of times (µs), in the raw files' `time_us` format."""
    v = sorted(v)
    q = lambda p: v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]
    return {"median": statistics.median(v), "p10": q(0.1), "p90": q(0.9), "n": len(v)}


def looped(fn, reps=7, inner=20):
    """Per-call device time (µs) of `inner` back-to-back calls between two CUDA events, `reps` times: as kernels
    run inside a training step, the host's launch overhead hidden behind the previous call."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) * 1e3 / inner)
    return out
