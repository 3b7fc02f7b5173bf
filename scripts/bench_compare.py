#!/usr/bin/env python3
"""Prints each benchmark's change against the last recorded result in results/bench/.

  build/tests/bench/stepsim_scale_bench --benchmark_out=new.json --benchmark_out_format=json
  scripts/bench_compare.py new.json            # the change against the newest results/bench/*.json
  scripts/bench_compare.py new.json --record   # and keep new.json there as <UTC date>-<commit>-<suite>.json

Benchmarks are Google Benchmark JSON (--benchmark_out_format=json); the change is in CPU time (the machine is
shared: wall time is not the simulator's), and in the counters both files have.
"""
import argparse
import datetime
import json
import pathlib
import shutil
import subprocess
import sys

BENCH = pathlib.Path(__file__).resolve().parent.parent / "results" / "bench"


def load(path):
    with open(path) as f:
        data = json.load(f)
    return {b["name"]: b for b in data.get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"}


def suite(path):
    """The benchmark executable a JSON came from (stepsim_bench, stepsim_scale_bench)."""
    with open(path) as f:
        return pathlib.Path(json.load(f).get("context", {}).get("executable", "bench")).name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("new", help="Google Benchmark JSON of this build")
    ap.add_argument("--against", help="a recorded JSON (default: the newest of the same suite in results/bench)")
    ap.add_argument("--record", action="store_true", help="copy NEW into results/bench as <date>-<commit>-<suite>.json")
    a = ap.parse_args()
    new = load(a.new)
    recorded = [p for p in sorted(BENCH.glob("*.json")) if suite(p) == suite(a.new)]
    old_path = pathlib.Path(a.against) if a.against else (recorded[-1] if recorded else None)
    if old_path is None:
        print("no recorded result in results/bench: nothing to compare")
    else:
        old = load(old_path)
        print(f"against {old_path.name}")
        print(f"{'benchmark':48} {'before':>12} {'now':>12} {'change':>8}")
        for name, b in new.items():
            unit = b.get("time_unit", "ns")
            if name not in old:
                print(f"{name:48} {'-':>12} {b['cpu_time']:>10.3f}{unit:>2} {'new':>8}")
                continue
            o = old[name]
            change = (b["cpu_time"] / o["cpu_time"] - 1) * 100 if o["cpu_time"] else float("nan")
            print(f"{name:48} {o['cpu_time']:>10.3f}{unit:>2} {b['cpu_time']:>10.3f}{unit:>2} {change:>+7.1f}%")
            for k in ("peak_rss_MB", "events", "simulated_ranks"):
                if k in b and k in o and o[k]:
                    print(f"  {k:46} {o[k]:>12.0f} {b[k]:>12.0f} {(b[k] / o[k] - 1) * 100:>+7.1f}%")
    if a.record:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=BENCH).stdout.strip() or "unknown"
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M")
        dest = BENCH / f"{stamp}-{commit}-{suite(a.new)}.json"
        shutil.copyfile(a.new, dest)
        print(f"recorded {dest.relative_to(BENCH.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
