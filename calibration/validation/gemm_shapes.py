#!/usr/bin/env python3
"""Lists the GEMMs of stepsim scenarios, for interference_training.py --gemm-shapes: one "forward|dgrad|wgrad M N K"
line per distinct GEMM, shapes as stepsim names them (forward m=T n=out k=in, dgrad m=T n=in k=out, wgrad m=out
n=in k=T). It runs `stepsim run FILE --trace` on each scenario and reads the trace's GEMM spans (their args m, n, k;
a name ending in " dgrad" or " wgrad" gives the form). Deterministic: the same scenarios give the same file.

  python3 calibration/validation/gemm_shapes.py --stepsim build/stepsim scenarios/validation/*.yaml \\
      > calibration/validation/gemm_shapes.txt
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def shapes_of(stepsim, scenario):
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        subprocess.run([stepsim, "run", scenario, "--trace", trace, "-q", "--set", "sim.steps=1"], check=True)
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
    out = set()
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "gemm":
            continue
        name = e["name"]
        role = "dgrad" if name.endswith(" dgrad") else "wgrad" if name.endswith(" wgrad") else "forward"
        a = e["args"]
        out.add((role, a["m"], a["n"], a["k"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stepsim", required=True, help="the stepsim binary")
    ap.add_argument("scenarios", nargs="+")
    a = ap.parse_args()
    shapes = set()
    for s in a.scenarios:
        shapes |= shapes_of(a.stepsim, s)
    order = {"forward": 0, "dgrad": 1, "wgrad": 2}
    print(f"# GEMMs of {len(a.scenarios)} scenarios ({len(shapes)} distinct): calibration/validation/gemm_shapes.py")
    for role, m, n, k in sorted(shapes, key=lambda s: (s[1], s[2], s[3], order[s[0]])):
        print(role, m, n, k)
    return 0


if __name__ == "__main__":
    sys.exit(main())
