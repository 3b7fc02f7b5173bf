#!/usr/bin/env python3
"""How much a GPU slows under the power limit, as a function of how hard its tensor cores work.

The profile's kernel rates come from short spin-and-burst loops (timing.looped, as every calibration script times
them), mostly below the board's power limit. A training step repeated for seconds runs at the power limit instead:
H200 runs 8192^3 GEMMs at ~790 TFLOP/s for 0.1 s, then ~665 (sustained_speed.py, runs 44-45), and the timed steps
of GEMM-heavy models run 1.6-3.2% above their fastest (run 45). How much a step slows depends on its power draw,
which grows with its tensor-core load.

This script measures that dependence. On every rank at once (torchrun; nothing is communicated but the start), it
runs mixes of a training-shaped GEMM (8192 tokens x 2048 -> 8192, bf16), causal SDPA forward and backward
(batch 4, 16 heads, 2048 tokens, head dim 128) and a memory-bound add (64 Mi bf16 elements), cycle after cycle for
`--seconds`, with CUDA events between the kinds, so each window's time in each kind is known. A mix is named by
its counts per cycle; the memory add fills the cycle so that the compute-bound kernels take a chosen fraction of
it (at the reference times). One mix leaves the GPU idle instead (the host sleeps), as a host-bound step does.
`--mixes idle` (since run 104) runs another set instead or besides: the memory add alone, and GEMMs, GEMMs with
memory adds, SDPA and memory adds each with the host sleeping part of every cycle, so that the calls take a chosen
fraction of it (0.5-0.9): what the GPU's idle time does to the clock a load holds. `--blocks 768,2048,...` (since
run 105) then runs a GPT block's own kernels at each hidden size over 8192 tokens (block_kinds: its linears' GEMMs in
their three forms, then its LayerNorms, GELU and residual adds), cycle after cycle, the GPU busy throughout: whether a
training step's kernels hold the clock the reference kernels' line gives for their load.
Before each mix the GPU rests `--rest` seconds; the reference per-call times are timing.looped's, taken rested.

--shapes FILE (interference_training.py's 'forward|dgrad|wgrad M N K' lines) and --attention 'b,h,kv,s,d;...' also
time those kernels (after the mixes, or alone with --no-mixes) under a held load, to tie the rates to a load: the
reference GEMM and memory adds run as a background mix (`--loads`: named compute fractions), cycle after cycle
without a rest, and each kernel
listed joins every cycle for `--per-shape` seconds (about a fifth of the cycle, a burst between two events); its
per-call time is the median over the bursts of the later half, with the load of those cycles (its own FLOP
included) and their memory-bound fraction; beside it the kernel's spin-and-burst time (timing.looped, as the
calibration scripts time kernels), taken before the loads. `--every N`: only every Nth kernel at loads after the
first.

Writes JSON Lines, one per rank and mix: {"kind": "power_duty", "rank", "gpu", "mix", "counts": {"gemm",
"attention", "memory", "idle_ms"}, "reference_us": {"gemm", "attention", "memory"}, "flop": {"gemm",
"attention"}, "sustained_from_s", "sustained": {"load_tflops": tensor-core FLOP per second of cycle time,
"compute_fraction", "memory_fraction", "busy_fraction" (these two since run 104), "gemm_us", "attention_us",
"memory_us": per-call medians over windows, "windows"}, "block_hidden" (a --blocks mix),
"slowdown": {class: sustained / reference}, "t_s", "load_tflops", "gemm_us": per-window series}; with --shapes or
--attention one per rank, load and kernel: {"kind": "power_loaded", "rank", "gpu", "load": name, "class":
"gemm"|"attention", "form": forward|dgrad|wgrad (GEMMs), "m", "n", "k" (GEMMs) or "batch", "heads", "kv_heads", "seq",
"head_dim", "pass": "forward"|"forward_backward" (attention), "flop", "time_us": per call, "burst_us", "calls",
"load_tflops", "memory_fraction", "cycles"}. The clock each ran at (timing.ClockLog, NVML every 10 ms; since
run 101): "reference_clock" {class: ...} beside the rested times, "sm_clock_mhz", "power_w" (medians) and
"clock_samples" in "sustained" (the windows counted) and in each power_loaded record (its later half of cycles), and
"burst_clock" beside its spin-and-burst time. Each rank also writes its records to FILE.rankN.partial as they come
(removed at the end), so a failure keeps what was measured. H200's results: calibration/profiles/h200x2/NOTES.md,
power.
Usage: torchrun --standalone --nproc-per-node N power_duty.py --out FILE [--seconds 6] [--rest 4]
       [--shapes FILE] [--attention 'b,h,kv,s,d;...'] [--loads mid=0.45,...] [--per-shape 0.25] [--every 3] [--no-mixes]
       [--mixes standard,idle] [--blocks 768,1024,...]
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

from gathered import join_ranks, write_gathered
from interference_training import gemm as gemm_kernel, read_shapes
from timing import ClockLog, looped


def run_mix(kinds, counts, idle_ms, seconds, window_s):
    """Cycles of counts[k] calls of each kind, for `seconds`; the time.time() of their start on the device (the GPU
    idle before it) and, per window of about `window_s`: its start (s), its length (s) and the time (s) spent in each
    kind."""
    order = [k for k in ("gemm", "attention", "memory") if counts.get(k, 0)]
    torch.cuda.synchronize()
    t0, wall0 = time.perf_counter(), time.time()
    start = torch.cuda.Event(enable_timing=True)
    start.record()
    cycles = []  # per cycle: the events that close each kind, the first opening the cycle
    while time.perf_counter() - t0 < seconds:
        marks = [torch.cuda.Event(enable_timing=True)]
        marks[0].record()
        for k in order:
            for _ in range(counts[k]):
                kinds[k]()
            marks.append(torch.cuda.Event(enable_timing=True))
            marks[-1].record()
        if idle_ms:
            marks[-1].synchronize()
            time.sleep(idle_ms * 1e-3)
        cycles.append(marks)
        if len(cycles) > 40:
            cycles[-40][0].synchronize()  # keep at most ~40 cycles queued
    torch.cuda.synchronize()
    rows = []  # per cycle: start, end (s since start) and the time in each kind
    for i, marks in enumerate(cycles):
        t = [start.elapsed_time(m) * 1e-3 for m in marks]
        end = start.elapsed_time(cycles[i + 1][0]) * 1e-3 if i + 1 < len(cycles) else t[-1]
        rows.append((t[0], end, {k: b - a for k, a, b in zip(order, t, t[1:])}))
    windows, cur = [], None
    for s, e, parts in rows:
        if cur is None or s - cur[0] >= window_s:
            cur = [s, 0.0, {k: 0.0 for k in order}, 0]
            windows.append(cur)
        cur[1] = e - cur[0]
        cur[3] += 1
        for k, v in parts.items():
            cur[2][k] += v
    return order, wall0, windows


def block_kinds(h, dev, tokens=8192):
    """A GPT block's kernels at hidden h over `tokens` tokens, as two kinds: "gemm", its four linears (QKV, the
    projection, the MLP's two; FFN 4h) in the three forms a training step runs each; "memory", its memory-bound
    kernels at their sizes (four LayerNorms for the two norms' forward and backward, GELU forward and backward, four
    residual adds). And the FLOP of one call of each."""
    bf = torch.bfloat16
    r = lambda *sh: torch.randn(*sh, device=dev, dtype=bf)
    gemms = []
    for o, i in ((3 * h, h), (h, h), (4 * h, h), (h, 4 * h)):
        gemms += [gemm_kernel(r, "forward", tokens, o, i)[2], gemm_kernel(r, "dgrad", tokens, i, o)[2],
                  gemm_kernel(r, "wgrad", o, i, tokens)[2]]
    x, g, u, gu, w, b = r(tokens, h), r(tokens, h), r(tokens, 4 * h), r(tokens, 4 * h), r(h), r(h)

    def memory():
        for _ in range(4):
            F.layer_norm(x, (h,), w, b)
            torch.add(x, g)
        F.gelu(u, approximate="tanh")
        torch.ops.aten.gelu_backward(gu, u, approximate="tanh")

    def gemm():
        for fn in gemms:
            fn()

    return {"gemm": gemm, "memory": memory}, {"gemm": 2 * tokens * 12 * h * h * 3}


def loaded(kinds, ref, tests, background, per_shape_s, clocks):
    """Each test (fn, flop, estimated µs per call) timed inside a held background of `background` counts per cycle of
    the reference GEMM and the memory add: per test (time per call in µs, calls per burst, load in TFLOP/s,
    memory-bound fraction, cycles counted, the clock and power over those cycles: ClockLog.between)."""
    g, f = background["gemm"], background["memory"]
    cycle_us = g * ref["gemm"] + f * ref["memory"]
    bg_flop = g * 2 * 8192 * 8192 * 2048
    out = []
    for fn, flop, est_us in tests:
        calls = max(1, round(0.2 * cycle_us / max(est_us, 1.0)))
        rows = []
        torch.cuda.synchronize()
        t0, wall0 = time.perf_counter(), time.time()
        mark = torch.cuda.Event(enable_timing=True)
        mark.record()
        while time.perf_counter() - t0 < per_shape_s:
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
            ev[0].record()
            for _ in range(g):
                kinds["gemm"]()
            ev[1].record()
            for _ in range(f):
                kinds["memory"]()
            ev[2].record()
            for _ in range(calls):
                fn()
            ev[3].record()
            rows.append(ev)
            if len(rows) > 30:
                rows[-30][0].synchronize()
        torch.cuda.synchronize()
        per_call, total, memory, cycles = [], 0.0, 0.0, 0
        for i in range(len(rows) // 2, len(rows) - 1):  # the later half; a cycle ends where the next begins
            ev, nxt = rows[i], rows[i + 1][0]
            per_call.append(ev[2].elapsed_time(ev[3]) * 1e3 / calls)
            total += ev[0].elapsed_time(nxt) * 1e-3
            memory += ev[1].elapsed_time(ev[2]) * 1e-3
            cycles += 1
        load = (bg_flop + calls * flop) * cycles / total / 1e12
        at = lambda ev: wall0 + mark.elapsed_time(ev) * 1e-3
        clock = clocks.between(at(rows[len(rows) // 2][0]), at(rows[-1][0]))
        out.append((statistics.median(per_call), calls, load, memory / total, cycles, clock))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=6.0, help="length of each mix")
    ap.add_argument("--rest", type=float, default=4.0, help="idle seconds before each mix")
    ap.add_argument("--sustained-from", type=float, default=2.0, help="windows after this many seconds count")
    ap.add_argument("--window", type=float, default=0.05, help="window length (s)")
    ap.add_argument("--shapes", help="GEMMs to time under held loads: 'forward|dgrad|wgrad M N K' lines")
    ap.add_argument("--attention", default="", help="causal SDPA shapes to time under held loads: 'b,h,kv,s,d;...'")
    ap.add_argument("--loads", default="mid=0.45,low=0.3,high=0.7",
                    help="held loads: name=compute fraction of the background, the first for every kernel")
    ap.add_argument("--per-shape", type=float, default=0.25, help="seconds per kernel and load")
    ap.add_argument("--every", type=int, default=3, help="at loads after the first, every Nth kernel only")
    ap.add_argument("--no-mixes", action="store_true", help="skip the mixes (only --shapes/--attention)")
    ap.add_argument("--mixes", default="standard", help="which sets of mixes: 'standard', 'idle' or both, comma-separated")
    ap.add_argument("--blocks", default="", help="hidden sizes: after the mixes, a transformer block's kernels at each")
    a = ap.parse_args()
    rank, dev = join_ranks()
    clocks = ClockLog(dev)
    bf = torch.bfloat16
    x, w = torch.randn(8192, 2048, device=dev, dtype=bf), torch.randn(2048, 8192, device=dev, dtype=bf)
    y = torch.empty(8192, 8192, device=dev, dtype=bf)
    p, q, r = (torch.randn(2**26, device=dev, dtype=bf) for _ in range(3))
    qkv = [torch.randn(4, 16, 2048, 128, device=dev, dtype=bf, requires_grad=True) for _ in range(3)]
    dout = torch.randn(4, 16, 2048, 128, device=dev, dtype=bf)
    # operands bound as defaults: names reused below never reach these calls
    kinds = {"gemm": lambda x=x, w=w, y=y: torch.mm(x, w, out=y),
             "attention": lambda qkv=qkv, dout=dout: torch.autograd.grad(
                 F.scaled_dot_product_attention(*qkv, is_causal=True), qkv, dout),
             "memory": lambda p=p, q=q, r=r: torch.add(p, q, out=r)}
    flop = {"gemm": 2 * 8192 * 8192 * 2048, "attention": 4 * 4 * 16 * 2048 * 2048 * 128 / 2 * 3.5}
    gpu = torch.cuda.get_device_name(dev)

    def rest():
        torch.cuda.synchronize()
        dist.barrier()
        time.sleep(a.rest)

    def timed_rested(fn, **kw):
        """timing.looped's median (µs per call) and the clock it ran at."""
        t0 = time.time()
        us = statistics.median(looped(fn, **kw))
        return us, clocks.between(t0, time.time())

    rest()
    ref, ref_clock = {}, {}
    for k, fn in kinds.items():  # µs per call, rested
        ref[k], ref_clock[k] = timed_rested(fn, reps=7)

    def fill(gemm, attention, fraction):
        """Memory adds per cycle so that the compute-bound calls take `fraction` of it at the reference times."""
        busy = gemm * ref["gemm"] + attention * ref["attention"]
        return max(0, round(busy * (1 - fraction) / fraction / ref["memory"]))

    def idle_ms(counts, busy_fraction):
        """Host sleep per cycle so that the calls take `busy_fraction` of it at the reference times."""
        return sum(n * ref[k] for k, n in counts.items()) * 1e-3 * (1 - busy_fraction) / busy_fraction

    sets = set(a.mixes.split(","))
    if not sets <= {"standard", "idle"}:
        raise SystemExit(f"--mixes: expected 'standard' and/or 'idle', got {a.mixes!r}")
    mixes = []
    if "standard" in sets:
        mixes += [("gemm", {"gemm": 4}, 0)]
        mixes += [(f"gemm+memory {f:.2f}", {"gemm": 4, "memory": fill(4, 0, f)}, 0)
                  for f in (0.8, 0.6, 0.45, 0.3, 0.15)]
        mixes += [("attention", {"attention": 4}, 0)]
        mixes += [(f"gemm+attention+memory {f:.2f}", {"gemm": 4, "attention": 2, "memory": fill(4, 2, f)}, 0)
                  for f in (0.9, 0.7, 0.5)]
        mixes += [("gemm+idle 0.50", {"gemm": 4}, 4 * ref["gemm"] * 1e-3)]
    if "idle" in sets:  # what time the GPU spends idle (a host-bound step's bubbles) does to the clock
        heavy = {"gemm": 16}
        mixed = {"gemm": 8, "memory": fill(8, 0, 0.45)}
        mixes += [("memory", {"memory": 40}, 0)]
        mixes += [(f"gemm+idle {u:.2f}", heavy, idle_ms(heavy, u)) for u in (0.9, 0.8, 0.7, 0.6, 0.5)]
        mixes += [(f"gemm+memory 0.45+idle {u:.2f}", mixed, idle_ms(mixed, u)) for u in (0.9, 0.75, 0.6)]
        mixes += [(f"attention+idle {u:.2f}", {"attention": 8}, idle_ms({"attention": 8}, u)) for u in (0.85, 0.7)]
        mixes += [("memory+idle 0.70", {"memory": 40}, idle_ms({"memory": 40}, 0.7))]
    recs = []
    partial = open(f"{a.out}.rank{rank}.partial", "w")  # each record as it comes, should a later part fail

    def keep(rec):
        recs.append(rec)
        partial.write(json.dumps(rec) + "\n")
        partial.flush()

    def measure(name, counts, idle_ms, kinds, flop, ref, ref_clock, extra=None):
        rest()
        order, wall0, windows = run_mix(kinds, counts, idle_ms, a.seconds, a.window)
        late = [wd for wd in windows if wd[0] >= a.sustained_from and wd[3] > 0]
        total = sum(wd[1] for wd in late)
        per_call = lambda k, wd: wd[2][k] / (wd[3] * counts[k]) * 1e6
        sus = {f"{k}_us": statistics.median(per_call(k, wd) for wd in late) for k in order}
        tensor = sum(flop.get(k, 0) * counts[k] * sum(wd[3] for wd in late) for k in order)
        compute = sum(wd[2][k] for wd in late for k in order if k != "memory")
        memory = sum(wd[2][k] for wd in late for k in order if k == "memory")
        rec = {"kind": "power_duty", "rank": rank, "gpu": gpu, "mix": name,
               "counts": {**{k: counts.get(k, 0) for k in kinds}, "idle_ms": round(idle_ms, 4)},
               "reference_us": {k: round(v, 3) for k, v in ref.items()}, "reference_clock": ref_clock, "flop": flop,
               "sustained_from_s": a.sustained_from,
               "sustained": {"load_tflops": tensor / total / 1e12, "compute_fraction": compute / total,
                             "memory_fraction": memory / total, "busy_fraction": (compute + memory) / total,
                             "windows": len(late), **sus,
                             **clocks.between(wall0 + late[0][0], wall0 + late[-1][0] + late[-1][1])},
               "slowdown": {k: sus[f"{k}_us"] / ref[k] for k in order},
               "t_s": [round(wd[0], 4) for wd in windows],
               "load_tflops": [round(sum(flop.get(k, 0) * counts[k] for k in order) * wd[3] / wd[1] / 1e12, 2)
                               if wd[1] > 0 else 0.0 for wd in windows],
               "gemm_us": [round(per_call("gemm", wd), 2) if "gemm" in order else None for wd in windows],
               **(extra or {})}
        keep(rec)
        s = rec["sustained"]
        print(f"rank {rank} {name}: {s['windows']} windows, load {s['load_tflops']:.0f} TFLOP/s, compute "
              f"{100 * s['compute_fraction']:.0f}% of the time, {s['sm_clock_mhz']:.0f} MHz at {s['power_w']:.0f} W; "
              "slowdown "
              + ", ".join(f"{k} {v:.3f}" for k, v in rec["slowdown"].items()), flush=True)

    for name, counts, idle in ([] if a.no_mixes else mixes):
        measure(name, counts, idle, kinds, flop, ref, ref_clock)
    for h in (int(x) for x in filter(None, a.blocks.split(","))):
        block, block_flop = block_kinds(h, dev)
        rest()
        block_ref, block_clock = {}, {}
        for k, fn in block.items():
            block_ref[k], block_clock[k] = timed_rested(fn, reps=5)
        measure(f"block h{h}", {"gemm": 1, "memory": 1}, 0, block, block_flop, block_ref, block_clock,
                {"block_hidden": h})
    tests = []  # (record fields, fn, flop)
    if a.shapes:
        operand = lambda *sh: torch.randn(*sh, device=dev, dtype=bf)
        for role, m, n, k in read_shapes(a.shapes):
            fn = gemm_kernel(operand, role, m, n, k)[2]
            tests.append(({"class": "gemm", "form": role, "m": m, "n": n, "k": k}, fn, 2 * m * n * k))
    for spec in filter(None, a.attention.split(";")):
        b, h, kv, sq, d = map(int, spec.split(","))
        aq = torch.randn(b, h, sq, d, device=dev, dtype=bf, requires_grad=True)
        ak, av = (torch.randn(b, kv, sq, d, device=dev, dtype=bf, requires_grad=True) for _ in range(2))
        go = torch.randn(b, h, sq, d, device=dev, dtype=bf)
        fwd = lambda aq=aq, ak=ak, av=av, gqa=kv != h: F.scaled_dot_product_attention(aq, ak, av, is_causal=True,
                                                                                         enable_gqa=gqa)
        both = lambda aq=aq, ak=ak, av=av, go=go, fwd=fwd: torch.autograd.grad(fwd(), (aq, ak, av), go)
        fl = 4 * b * h * sq * sq * d / 2
        shape = {"class": "attention", "batch": b, "heads": h, "kv_heads": kv, "seq": sq, "head_dim": d}
        tests.append(({**shape, "pass": "forward"}, fwd, fl))
        tests.append(({**shape, "pass": "forward_backward"}, both, 3.5 * fl))
    if tests:
        rested = [timed_rested(fn, reps=3, inner=5) for _, fn, _ in tests]
        est = [us for us, _ in rested]
        loads = [(w.split("=")[0], float(w.split("=")[1])) for w in a.loads.split(",")]
        rest()
        for li, (lname, fraction) in enumerate(loads):
            picked = [i for i in range(len(tests)) if li == 0 or i % a.every == 0]
            background = {"gemm": 4, "memory": max(1, fill(4, 0, fraction))}
            run_mix(kinds, background, 0, 2.0, a.window)  # settle
            res = loaded(kinds, ref, [(tests[i][1], tests[i][2], est[i]) for i in picked], background, a.per_shape,
                         clocks)
            for i, (us, calls, load, mem, cycles, clock) in zip(picked, res):
                keep({"kind": "power_loaded", "rank": rank, "gpu": gpu, "load": lname, **tests[i][0],
                             "flop": tests[i][2], "time_us": round(us, 3), "burst_us": round(est[i], 3),
                             "burst_clock": rested[i][1], "calls": calls, "load_tflops": round(load, 2),
                             "memory_fraction": round(mem, 4), "cycles": cycles, **clock})
            print(f"rank {rank} load {lname}: {len(res)} kernels, load {statistics.median(x[2] for x in res):.0f} "
                  f"TFLOP/s, {statistics.median(x[5]['sm_clock_mhz'] for x in res):.0f} MHz (medians), per-call time / "
                  "spin-and-burst time: median "
                  f"{statistics.median(x[0] / est[i] for i, x in zip(picked, res)):.3f}", flush=True)
    clocks.stop()
    write_gathered(a.out, recs)
    partial.close()
    os.remove(partial.name)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
