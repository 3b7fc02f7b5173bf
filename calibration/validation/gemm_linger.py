#!/usr/bin/env python3
"""How long a GEMM stays slow after the NCCL kernel beside it leaves, read off a DDP step's PyTorch traces.

Usage: gemm_linger.py ONE_GPU_TRACE TWO_GPU_TRACE [TWO_GPU_TRACE ...] [--waves GROUP_US=N ...]
  e.g., in results/validation/measured/traces (git history): gemm_linger.py run34-steady-s1-l24-h2048-s2048-mb4.rank0.json.gz
  run34-steady-d2-l24-h2048-s2048-mb4-b25.rank{1,0}.json.gz --waves 100=1 --waves 350=4 --waves 375=4 --waves 400=4

The one-GPU trace is the same configuration's step without DDP (the same GEMMs in the same order, no NCCL): each of
the two-GPU trace's GEMMs is matched to its one-GPU twin by order, and the twin's duration is the GEMM's time alone.
A GEMM wholly inside an NCCL kernel gives the slowdown beside it (median per group of GEMMs whose time alone rounds to
the same 25 µs: one shape each in a GPT step). A GEMM that started with an NCCL kernel resident and outlived it is
priced four ways: work-conserving (the slowdown while the NCCL kernel stays, full speed after: what the engine did),
one wave of its tiles more at the slowdown after the NCCL kernel leaves (tried, not kept), the engine's lag rule (its
time alone plus the time the NCCL kernel held its SMs, up to one wave, never sooner than work-conserving nor later
than slow throughout: run 108, calibration/pytorch/gemm_linger_probe.py), and slow throughout; the waves of a group
come from `--waves` (without it the two wave rules fall back to work-conserving). And the linger tau is solved from
its measured time d, its time alone t and the overlap o:
d = o + tau + (t - (o + tau) / f), i.e. tau = (d - t) / (1 - 1/f) - o, how long after the NCCL kernel left it still
ran at 1/f. Prints, per group, tau's quartiles and tau in units of one wave of the GEMM at 1/f (t / waves · f), with
waves the kernel's tiles over 132 SMs when `--waves GROUP_US=N` names them.

The traces are results/validation/measured/traces/run{29,34}-*.json.gz (PyTorch profiler, Chrome format, gzip), removed
from the tree: `git checkout ac72eab -- results/validation/measured/traces` restores them.
"""
import argparse
import collections
import gzip
import json
import statistics


def kernels(path):
    with gzip.open(path) as f:
        t = json.load(f)
    ev = t["traceEvents"] if isinstance(t, dict) else t
    return sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"), key=lambda e: e["ts"])


def is_gemm(name):
    return "nvjet" in name or "gemm" in name.lower()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("one_gpu")
    ap.add_argument("two_gpu", nargs="+")
    ap.add_argument("--waves", action="append", default=[], metavar="GROUP_US=N",
                    help="tile waves of the GEMMs of a group (its time alone, rounded to 25 µs)")
    a = ap.parse_args()
    waves = {int(k): float(v) for k, v in (w.split("=") for w in a.waves)}
    alone = [e for e in kernels(a.one_gpu) if is_gemm(e["name"])]
    for path in a.two_gpu:
        ks = kernels(path)
        nccl = [e for e in ks if "nccl" in e["name"]]
        gemms = [e for e in ks if is_gemm(e["name"])]
        if len(gemms) != len(alone):
            raise SystemExit(f"{path}: {len(gemms)} GEMMs against {len(alone)} in {a.one_gpu}: not the same step")
        inside, partial = collections.defaultdict(list), collections.defaultdict(list)
        for solo, g in zip(alone, gemms):
            s, e = g["ts"], g["ts"] + g["dur"]
            group = int(round(solo["dur"] / 25.0)) * 25
            for n in nccl:
                ns, ne = n["ts"], n["ts"] + n["dur"]
                if ne <= s or ns >= e:
                    continue
                if ns <= s and ne >= e:
                    inside[group].append(g["dur"] / solo["dur"])
                elif ns <= s:  # resident when the GEMM started, gone before it ended
                    partial[group].append((solo["dur"], g["dur"], ne - s))
                break
        print(path)
        tot = collections.Counter()
        for group in sorted(partial):
            if not inside[group]:
                continue
            f = statistics.median(inside[group])
            taus, rows = [], partial[group]
            for t, d, o in rows:
                taus.append((d - t) / (1 - 1 / f) - o)
                tot["measured"] += d
                tot["work_conserving"] += o + max(t - o / f, 0.0) if o / f < t else t * f
                tot["slow_throughout"] += t * f
                if group in waves:  # the engine's rule: one wave of its tiles more at 1/f, then full speed
                    left = max(t - o / f, 0.0)
                    held = min(t / waves[group], left)
                    tot["one_wave_more"] += o + held * f + (left - held)
                else:
                    tot["one_wave_more"] += o + max(t - o / f, 0.0) if o / f < t else t * f
                # the lag rule (run 108): never sooner than work-conserving, else its time alone plus the time the
                # SMs were held, up to one wave, and never later than beside the NCCL kernel throughout
                wc = o + max(t - o / f, 0.0) if o / f < t else t * f
                wave = t / waves.get(group, 1e9)
                tot["lag"] += max(wc, min(t + min(o, wave), t * f))
            q = statistics.quantiles(taus, n=4) if len(taus) > 1 else taus * 3
            line = (f"  alone ~{group:4d} us: inside x{f:.2f} ({len(inside[group])}), outlived {len(rows):3d}: "
                    f"tau {q[0]:6.0f} {q[1]:6.0f} {q[2]:6.0f} us (quartiles)")
            if group in waves:
                wave = group / waves[group] * f
                line += f", one wave at 1/f {wave:.0f} us: tau/wave {q[1] / wave:.2f}"
            print(line)
        if tot["measured"]:
            print(f"  outlived GEMMs, ms over the trace: measured {tot['measured'] / 1e3:.1f}, work-conserving "
                  f"{tot['work_conserving'] / 1e3:.1f}, one wave more {tot['one_wave_more'] / 1e3:.1f}, lag {tot['lag'] / 1e3:.1f}, slow throughout "
                  f"{tot['slow_throughout'] / 1e3:.1f}")


if __name__ == "__main__":
    main()
