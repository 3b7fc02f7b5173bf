#!/usr/bin/env python3
"""Runs the calibration stages of calibration/bench/stages.txt, each into its own raw file in OUT_DIR, and writes
OUT_DIR/inputs.txt, the manifest of the raw files it wrote, so that `stepsim calibrate fit --manifest
OUT_DIR/inputs.txt` fits exactly them. `stepsim calibrate` and calibrate.sh run it; it needs only Python's standard
library (the stages need PyTorch).

  stages.py --out-dir DIR --harness BIN [--python PY] [--gemm-shapes FILE] [--only a,b] [--skip a,b]
            [--budget-scale F] [--gpus N] [--stages FILE] [--list]

Before each stage it prints a progress line (the stage, the time spent, the time left at the budgets of the stages
still to run); after it, the time it took. A stage that fails or runs past 1.5 x its budget + 15 s is stopped and
noted; what it wrote is kept. OUT_DIR/stages.jsonl records each stage's command, exit status and seconds.
"""
import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # calibration/
START_S = 6.0  # a PyTorch script's start (import, CUDA context) before its own deadline counts


def parse_stages(path):
    """[(name, gpus, budget_s, raw_file, command)] from the stage file; a malformed line is an error with its line."""
    stages = []
    for n, line in enumerate(open(path), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        f = s.split(None, 4)
        if len(f) != 5 or f[1] not in ("1", "2"):
            raise SystemExit(f"{path}:{n}: expected 'name gpus(1|2) budget_s raw_file command', got {s!r}")
        try:
            budget = float(f[2])
        except ValueError:
            raise SystemExit(f"{path}:{n}: budget_s: expected seconds, got {f[2]!r}")
        stages.append((f[0], int(f[1]), budget, f[3], f[4]))
    return stages


def gpu_count(python):
    try:
        r = subprocess.run([python, "-c", "import torch; print(torch.cuda.device_count())"], capture_output=True,
                           text=True, timeout=120)
        return int(r.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001  (no torch, no GPU: the one-GPU stages run and fail on their own)
        return 1


def command(template, a, gpus, out, budget):
    py = shlex.quote(a.python)
    run = lambda n: f"{py} -m torch.distributed.run --standalone --nproc-per-node {n}"
    subs = {"python": py, "torchrun1": run(1), "torchrun2": run(2), "torchrunall": run(max(gpus, 1)),
            "harness": shlex.quote(a.harness or "stepsim-bench"), "pytorch": shlex.quote(os.path.join(ROOT, "pytorch")),
            "bench": shlex.quote(HERE), "validation": shlex.quote(os.path.join(ROOT, "validation")),
            "gemm_shapes": shlex.quote(os.path.abspath(a.gemm_shapes)), "out": shlex.quote(out),
            "dir": shlex.quote(os.path.abspath(a.out_dir)), "budget": f"{budget:.0f}",
            "deadline": f"{max(3.0, budget - START_S):.0f}"}
    for k, v in subs.items():
        template = template.replace("{" + k + "}", v)
    return template


def has_record(path):
    try:
        with open(path) as f:
            return any(line.strip() for line in f)
    except OSError:
        return False


def run_stage(cmd, limit, log):
    """Runs cmd in its own process group; stops the group past `limit` seconds. Returns (exit status, seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, shell=True, start_new_session=True, stdout=log, stderr=subprocess.STDOUT)
    try:
        rc = p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        rc = "timeout"
    return rc, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--harness", default="")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--gemm-shapes", default=os.path.join(ROOT, "validation", "gemm_shapes.txt"))
    ap.add_argument("--stages", default=os.path.join(HERE, "stages.txt"))
    ap.add_argument("--only", default="", help="comma-separated stage names to run (default: all)")
    ap.add_argument("--skip", default="", help="comma-separated stage names not to run")
    ap.add_argument("--budget-scale", type=float, default=1.0, help="every budget times this (0.25: a smoke test)")
    ap.add_argument("--gpus", type=int, default=0, help="GPUs to plan for (default: torch.cuda.device_count())")
    ap.add_argument("--list", action="store_true", help="print the stages that would run, with their budgets")
    a = ap.parse_args()
    if not os.path.exists(a.stages) and os.path.exists(os.path.join(HERE, a.stages)):
        a.stages = os.path.join(HERE, a.stages)  # a stage file of this folder by its name (check.txt)
    stages = parse_stages(a.stages)
    names = {s[0] for s in stages}
    only, skip = set(filter(None, a.only.split(","))), set(filter(None, a.skip.split(",")))
    for n in only | skip:
        if n not in names:
            raise SystemExit(f"stages.py: no stage {n!r} in {a.stages} (stages: {', '.join(s[0] for s in stages)})")
    gpus = a.gpus or (1 if a.list else gpu_count(a.python))
    todo = [s for s in stages if (not only or s[0] in only) and s[0] not in skip and gpus >= s[1]]
    if a.list:
        for name, g, budget, raw, tmpl in todo:
            print(f"{name:24s} {g} GPU{'s' if g > 1 else ' '} {budget * a.budget_scale:5.0f} s  {raw}")
        print(f"total {sum(s[2] for s in todo) * a.budget_scale:.0f} s at {gpus} GPU(s)")
        return 0
    os.makedirs(a.out_dir, exist_ok=True)
    t0 = time.monotonic()
    written, records = [], []
    left = sum(s[2] for s in todo) * a.budget_scale
    with open(os.path.join(a.out_dir, "stages.log"), "w") as log:
        for i, (name, g, budget, raw, tmpl) in enumerate(todo, 1):
            budget *= a.budget_scale
            out = os.path.abspath(os.path.join(a.out_dir, raw))
            if os.path.exists(out):
                os.remove(out)  # never fit an earlier run's file by mistake
            cmd = command(tmpl, a, gpus, out, budget)
            print(f"[{i}/{len(todo)}] {name}: {time.monotonic() - t0:.0f} s elapsed, about {left:.0f} s left",
                  flush=True)
            log.write(f"\n===== {name}\n+ {cmd}\n")
            log.flush()
            rc, secs = run_stage(cmd, 1.5 * budget + 15, log)
            left -= budget
            if name == "harness" and rc == 2:  # stepsim-bench found no GPU: nothing else can run either
                print("stages.py: the harness found no GPU; nothing measured", flush=True)
                return 2
            ok = has_record(out)
            if ok:
                written.append(raw)
            note = "" if rc == 0 and ok else (f"  (stopped past {1.5 * budget + 15:.0f} s" if rc == "timeout"
                                              else f"  (exit status {rc}") + (
                "; kept what it wrote)" if ok else "; wrote nothing: its fields keep the base profile's)")
            print(f"      {name} took {secs:.1f} s (budget {budget:.0f} s){note}", flush=True)
            records.append({"stage": name, "gpus": g, "budget_s": budget, "seconds": round(secs, 2),
                            "exit": rc, "raw": raw if ok else None, "command": cmd})
    with open(os.path.join(a.out_dir, "stages.jsonl"), "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(a.out_dir, "inputs.txt"), "w") as f:
        f.write(f"# written by calibration/bench/stages.py ({len(written)} of {len(todo)} stages wrote records;"
                f" stages.jsonl has each command)\n")
        for raw in written:
            f.write(raw + "\n")
    print(f"stages took {time.monotonic() - t0:.1f} s; {len(written)} raw files in {a.out_dir}/inputs.txt", flush=True)
    return 0 if "bench.jsonl" in written or "harness" not in {s[0] for s in todo} else 3


if __name__ == "__main__":
    sys.exit(main())
