#!/usr/bin/env python3
"""Each timed run's SM clock beside the prediction's error: how far the GPU-bound rows' remaining error follows the
clock the step held at the power limit.

For every validation run that logged nvidia-smi (calibration/profiles/h200x2/power/runN-smi.csv.gz, every 50 ms) beside
its sweep's records (results/validation/measured/raw/runN-sweep-w1.jsonl), the median SM clock and power over the
run's timed steps (from the record's start, setup and warm-up, for the timed steps' count times their median), and the
error of this build's prediction (results/validation/table.json) against that run's median step. The record's start
is stamped to the second, and some older logs do not line up with it: a window whose median power is under 300 W
(an idle or loading GPU, not a GPU-bound training step, which draws 550-700 W) is left out and counted. Prints one
line per run of a row the simulation calls GPU-bound, then the errors binned by clock and their correlation.

With --stepsim BINARY, also the clock the model holds each of those rows at (`stepsim run --json`'s sm_clock_mhz, the
power model of the scenario's profile) against the one each run held: the median and mean absolute difference and
their correlation.

usage: python3 calibration/investigations/clock_error.py [--stepsim build/stepsim]      (from the repository root)
"""
import argparse
import datetime
import glob
import gzip
import json
import math
import re
import statistics
import subprocess
import tempfile


def smi_samples(path):
    out = []
    for line in gzip.open(path, "rt"):
        p = [x.strip() for x in line.split(",")]
        try:
            ts = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
            out.append((ts.timestamp(), float(p[2].split()[0]), float(p[4].split()[0])))
        except (ValueError, IndexError):
            continue  # a header or a truncated line
    return out


def model_clock(stepsim, cid):
    """The SM clock (MHz) `stepsim run` holds the row's scenario at."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([stepsim, "run", f"scenarios/validation/{cid}.yaml", "--json", out.name, "-q"], check=True)
        return json.load(open(out.name))["sm_clock_mhz"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stepsim", help="also compare the model's clock (this stepsim binary) with the runs'")
    a = ap.parse_args()
    table = json.load(open("results/validation/table.json"))
    pred = {r["id"]: (r["predicted_step_time_ms"], r["predicted_host_bound"]) for r in table["rows"]}
    rows, idle = [], 0
    for smi in sorted(glob.glob("calibration/profiles/h200x2/power/run*-smi.csv.gz")):
        m = re.search(r"/run(\d+)-smi\.csv\.gz$", smi)
        sweeps = glob.glob(f"results/validation/measured/raw/run{m.group(1)}-sweep-w1.jsonl") if m else []
        if not sweeps:
            continue
        samples = smi_samples(smi)
        for line in open(sweeps[0]):
            r = json.loads(line)
            if r.get("status") != "ok" or r["id"] not in pred or pred[r["id"]][1]:
                continue
            t0 = datetime.datetime.fromisoformat(r["measured_utc"]).timestamp() + r["setup_s"] + r["warmup_s"]
            step = r["step_time_ms"]["median"]
            w = [s for s in samples if t0 <= s[0] <= t0 + step * r["timed_steps"] / 1000]
            if len(w) < 5:
                continue
            if statistics.median(s[2] for s in w) < 300:
                idle += 1
                continue
            rows.append((r["id"], int(m.group(1)), statistics.median(s[1] for s in w), statistics.median(s[2] for s in w),
                         100 * (pred[r["id"]][0] / step - 1)))
    rows.sort(key=lambda x: x[2])
    for cid, run, clk, pw, err in rows:
        print(f"{cid:45s} run {run:3d} {clk:6.0f} MHz {pw:5.0f} W  error {err:+5.1f}%")
    print(f"{len(rows)} runs of GPU-bound rows ({idle} more left out: their window drew under 300 W)")
    for lo, hi in ((0, 1650), (1650, 1750), (1750, 1850), (1850, 2100)):
        e = [x[4] for x in rows if lo <= x[2] < hi]
        if e:
            print(f"  {lo:4d}-{hi:4d} MHz: {len(e):3d} runs, error median {statistics.median(e):+.1f}%, "
                  f"from {min(e):+.1f}% to {max(e):+.1f}%")
    xs, ys = [x[2] for x in rows], [x[4] for x in rows]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    vx, vy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    print(f"  correlation {cov / math.sqrt(vx * vy):.2f}, slope {100 * cov / vx:+.2f} points of error per 100 MHz")
    if a.stepsim:
        model = {cid: model_clock(a.stepsim, cid) for cid in sorted({x[0] for x in rows})}
        d = [model[x[0]] - x[2] for x in rows]
        ms = [model[x[0]] for x in rows]
        mm = statistics.mean(ms)
        c = sum((m - mm) * (x - mx) for m, x in zip(ms, xs)) / math.sqrt(sum((m - mm) ** 2 for m in ms) * vx)
        print(f"the model's clock against the runs': median {statistics.median(d):+.0f} MHz, mean absolute "
              f"{statistics.mean(abs(x) for x in d):.0f} MHz, from {min(d):+.0f} to {max(d):+.0f}, correlation {c:.2f}")


if __name__ == "__main__":
    main()
