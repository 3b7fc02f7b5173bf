"""Run 70's probe: the hidden-4096 step's four forward GEMMs timed as gemm_training_shapes.py times them (20
back-to-back calls behind a spin, 7 repetitions, 4 rotating input sets), after 5 s idle and again at once, with a
wall-clock mark at each start and end to align with nvidia-smi's samples."""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, "calibration/pytorch")
from timing import looped  # noqa: E402

SHAPES = [(4096, 12288, 4096), (4096, 4096, 4096), (4096, 16384, 4096), (4096, 4096, 16384)]


def mark(text):
    print(f"MARK {time.time():.3f} {text}", flush=True)


def forward(m, n, k, sets=4):
    r = lambda *s: torch.randn(*s, device="cuda", dtype=torch.bfloat16)
    xs, ws = [r(m, k) for _ in range(sets)], [r(n, k) for _ in range(sets)]
    turn = [0]

    def fn():
        turn[0] = (turn[0] + 1) % sets
        return F.linear(xs[turn[0]], ws[turn[0]])
    return fn


for phase in ("after-idle", "again"):
    if phase == "after-idle":
        torch.cuda.synchronize()
        time.sleep(5)
    for s in SHAPES:
        fn = forward(*s)
        mark(f"start {phase} {s[0]}x{s[1]}x{s[2]}")
        us = statistics.median(looped(fn, reps=7, inner=20))
        mark(f"end {phase} {s[0]}x{s[1]}x{s[2]} {us:.1f} us")
