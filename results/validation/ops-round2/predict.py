#!/usr/bin/env python3
"""ops-round2's predictions: `stepsim run` on each row's scenario (scenarios/ID.yaml) with the capture's own op times
(model.op_times) and with the profile alone, one JSON line per row into predicted.jsonl (beside this file).

usage: python3 results/validation/ops-round2/predict.py [--stepsim build/bin/stepsim]   (from the repository root)
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REL = os.path.relpath(HERE)


def run(stepsim, scenario, extra):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        subprocess.run([stepsim, "run", scenario, *extra, "--json", out], check=True, stdout=subprocess.DEVNULL)
        return json.load(open(out))
    finally:
        os.unlink(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stepsim", default="build/bin/stepsim")
    ap.add_argument("-o", "--output", default=os.path.join(REL, "predicted.jsonl"))
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    rows = []
    for line in open(os.path.join(HERE, "round.txt")):
        if line.startswith("#") or not line.strip():
            continue
        rid, stem = [x.strip() for x in line.split("|")[:2]]
        scenario = os.path.join(REL, "scenarios", f"{rid}.yaml")
        times = f"model.op_times=../captures/{stem}.op_times.json"
        if not os.path.exists(os.path.join(HERE, "captures", f"{stem}.ops.json.gz")):
            rows.append({"id": rid, "error": f"no capture captures/{stem}.ops.json.gz"})
            continue
        try:
            r = run(args.stepsim, scenario, ["--set", times])
            p = run(args.stepsim, scenario, [])
        except subprocess.CalledProcessError as e:
            rows.append({"id": rid, "error": f"stepsim exit {e.returncode}"})
            continue
        rows.append({"id": rid, "scenario": scenario, "step_time_ms": r["step_time_ms"],
                     "peak_memory_gib": r["peak_memory_gib"], "idle_ms": r.get("idle_ms"),
                     "ops_host": next((w for w in r.get("warnings", []) if w.startswith("host time the op times")), None),
                     "command": f"stepsim run {scenario} --set {times}",
                     "step_time_ms_profile_only": p["step_time_ms"],
                     "command_profile_only": f"stepsim run {scenario}", "profile": "h200x2 (built in)",
                     "stepsim_commit": commit,
                     "predicted_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")})
        print(json.dumps(rows[-1]))
    with open(args.output, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
