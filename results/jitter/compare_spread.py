#!/usr/bin/env python3
"""The step-to-step spread the validation's GPUs measured against stepsim's Monte Carlo of the same configurations.

For every record of results/validation/measured/measured.jsonl (its timed steps' times, `step_time_ms.all`: 10-30
consecutive steps of one run, CUDA events at each step's start), stepsim runs its scenario
(scenarios/validation/<id>.yaml) with sim.samples = --samples and reports the pooled measured steps' p50/p90/p99 and
standard deviation (docs/jitter.md). Compared are spreads relative to each one's own median, since the medians
themselves are the validation table's business (results/validation/TABLE.md):
  cv       = sd / mean
  tail90   = (p90 − p50) / p50
  tailmax  = (max − p50) / p50 measured (its ~30 steps' largest) against (p99 − p50) / p50 predicted
Writes spread.csv (one row per configuration) and prints the medians over the configurations, by world size.
Usage: python3 results/jitter/compare_spread.py --stepsim build/stepsim [--samples 16] [--out results/jitter]
"""
import argparse
import ast
import csv
import json
import math
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def nearest_rank(v, p):
    v = sorted(v)
    return v[max(1, min(len(v), math.ceil(p / 100.0 * len(v) - 1e-9))) - 1]


def measured_spread(steps):
    m = statistics.mean(steps)
    p50 = nearest_rank(steps, 50)
    return {"n": len(steps), "p50": p50, "cv": statistics.stdev(steps) / m,
            "tail90": (nearest_rank(steps, 90) - p50) / p50, "tailmax": (max(steps) - p50) / p50}


def predicted_spread(stepsim, scenario, samples):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([stepsim, "run", scenario, "-q", "--json", f.name, "--set", f"sim.samples={samples}"],
                       check=True)
        r = json.load(open(f.name))
    p50 = r["step_time_ms_p50"]
    return {"p50": p50, "cv": r["step_time_ms_std"] / r["step_time_ms"],
            "tail90": (r["step_time_ms_p90"] - p50) / p50, "tailmax": (r["step_time_ms_p99"] - p50) / p50}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stepsim", required=True)
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "jitter"))
    a = ap.parse_args()
    rows = []
    for line in open(os.path.join(ROOT, "results", "validation", "measured", "measured.jsonl")):
        d = json.loads(line)
        st = d["step_time_ms"]
        st = ast.literal_eval(st) if isinstance(st, str) else st
        steps = st.get("all") or []
        scenario = os.path.join(ROOT, "scenarios", "validation", d["id"] + ".yaml")
        if d.get("status") != "ok" or len(steps) < 10 or not os.path.exists(scenario):
            continue
        m = measured_spread(steps)
        p = predicted_spread(a.stepsim, scenario, a.samples)
        rows.append({"id": d["id"], "world": d["config"]["world"], "steps": m["n"],
                     **{f"measured_{k}": m[k] for k in ("p50", "cv", "tail90", "tailmax")},
                     **{f"predicted_{k}": p[k] for k in ("p50", "cv", "tail90", "tailmax")}})
    with open(os.path.join(a.out, "spread.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    for world in sorted({r["world"] for r in rows}):
        rs = [r for r in rows if r["world"] == world]
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0] if k.startswith(("measured_", "predicted_"))}
        print(f"world {world}: {len(rs)} configurations; medians over them:")
        for k in ("cv", "tail90", "tailmax"):
            print(f"  {k:8s} measured {100 * med['measured_' + k]:6.2f}%   predicted {100 * med['predicted_' + k]:6.2f}%")


if __name__ == "__main__":
    main()
