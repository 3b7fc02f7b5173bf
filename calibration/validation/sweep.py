#!/usr/bin/env python3
"""Runs the validation configurations (configs.py) through train_gpt.py, one worker process per world
size that loops over its configurations (torch import and NCCL set-up paid once), with a timeout per
configuration and a deadline for the whole sweep. A configuration that hangs or kills its worker is
recorded as such and the worker is started again on the rest.

  python3 calibration/validation/sweep.py --out DIR            # the full suite (DDP first, then 1 GPU)
  python3 calibration/validation/sweep.py --out DIR --smoke    # the four smoke configurations
  python3 calibration/validation/sweep.py --out DIR --dry-run  # print the plan, run nothing

Writes DIR/measured-w2.jsonl, DIR/measured-w1.jsonl (one record per configuration), DIR/sweep-w*.log,
and with --keep-traces DIR/traces.tar (rank 0's profiler traces, gzip, up to --traces-max-mib).
Set NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 (the runner forces
them for its workers too).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import configs as cfgmod  # noqa: E402

FORCED_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1",
              "PYTHONUNBUFFERED": "1"}


def read_jsonl(path):
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass  # a line cut by a kill: the configuration counts as not done
    return out


def last_start(progress):
    recs = read_jsonl(progress)
    return (recs[-1]["start"], recs[-1]["t"]) if recs else (None, None)


def worker_cmd(world, ids, out, progress, args):
    script = args.worker
    common = [script, "--ids", ",".join(ids), "--out", out, "--progress", progress,
              "--gqa", args.gqa, "--profile-cpu", args.profile_cpu, "--steady-steps", str(args.steady_steps),
              "--host-probe", str(args.host_probe), "--timed-seconds", str(args.timed_seconds),
              "--max-steps", str(args.max_steps)] + (
                  ["--trace-dir", args.trace_dir] if args.trace_dir else [])
    if world == 1:
        return [sys.executable] + common
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={world}"] + common


def kill_group(proc):
    """End the worker's process group (the one this runner started, by its id)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def failure_record(cid, status, error):
    c = cfgmod.by_id(cid)
    return {"id": cid, "config": c, "scenario": cfgmod.scenario(c), "status": status, "error": error}


def run_world(world, ids, args, deadline):
    out = os.path.join(args.out, f"measured-w{world}.jsonl")
    log_path = os.path.join(args.out, f"sweep-w{world}.log")
    remaining = list(ids)
    env = dict(os.environ, **FORCED_ENV)
    if world == 1:
        env["CUDA_VISIBLE_DEVICES"] = env.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
    while remaining:
        if time.time() > deadline:
            for cid in remaining:
                append(out, failure_record(cid, "not_run", "sweep deadline reached"))
            return
        progress = tempfile.mktemp(prefix=f"progress-w{world}-", suffix=".jsonl")
        cmd = worker_cmd(world, remaining, out, progress, args)
        print(f"[sweep] world {world}: {len(remaining)} configurations: {' '.join(cmd[:6])} ...", flush=True)
        with open(log_path, "a") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
            launched = time.time()
            reason = None
            while proc.poll() is None:
                time.sleep(0.5)
                cid, t = last_start(progress)
                now = time.time()
                if now > deadline:
                    reason = ("not_run", "sweep deadline reached")
                elif cid is None and now - launched > args.init_timeout_s:
                    reason = ("timeout", f"worker made no progress in {args.init_timeout_s} s after launch")
                elif cid is not None and now - t > args.config_timeout_s:
                    reason = ("timeout", f"configuration exceeded {args.config_timeout_s} s")
                if reason:
                    kill_group(proc)
                    break
            rc = proc.wait()
        done = {r["id"] for r in read_jsonl(out)}
        cid, _ = last_start(progress)
        todo = [i for i in remaining if i not in done]
        if not todo:
            return
        # the configuration in flight when the worker stopped is the one that failed
        bad = cid if (cid in todo) else todo[0]
        status, error = reason or ("error", f"worker exited with {rc} during this configuration; "
                                             f"log tail:\n{tail(log_path, 2000)}")
        append(out, failure_record(bad, status, error))
        print(f"[sweep] {bad}: {status}: {error.splitlines()[0]}", flush=True)
        if status == "not_run":
            for other in todo:
                if other != bad:
                    append(out, failure_record(other, "not_run", "sweep deadline reached"))
            return
        remaining = [i for i in todo if i != bad]


def tail(path, nbytes):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - nbytes))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def append(path, rec):
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def pack_traces(args):
    """One tar of the kept traces (gzip each), smallest first, up to the size limit."""
    if not args.trace_dir or not os.path.isdir(args.trace_dir):
        return
    files = sorted((os.path.getsize(os.path.join(args.trace_dir, f)), f) for f in os.listdir(args.trace_dir))
    budget = args.traces_max_mib * 2**20
    with tarfile.open(os.path.join(args.out, "traces.tar"), "w") as tar:
        for size, f in files:
            if size > budget:
                print(f"[sweep] trace {f} left out ({size / 2**20:.1f} MiB over the budget)", flush=True)
                continue
            tar.add(os.path.join(args.trace_dir, f), arcname=f)
            budget -= size


def summary(args, worlds):
    rows = []
    for w in worlds:
        for r in read_jsonl(os.path.join(args.out, f"measured-w{w}.jsonl")):
            p = ((r.get("profile") or {}).get("primary")) or {}
            st = r.get("step_time_ms") or {}
            rows.append((r["id"], r["status"], st.get("median"), (r.get("host_issue_ms") or {}).get("median"),
                         p.get("compute_ms"), p.get("comm_ms"), p.get("exposed_comm_ms"), p.get("overlap_ratio"),
                         r.get("peak_memory_gib")))
    f = lambda v, d=2: "-" if v is None else f"{v:.{d}f}"  # noqa: E731
    print(f"{'id':48s} {'status':8s} {'step':>8s} {'host':>7s} {'comp':>8s} {'comm':>7s} {'exp':>7s} "
          f"{'ovl':>6s} {'GiB':>6s}")
    for r in rows:
        print(f"{r[0]:48s} {r[1]:8s} {f(r[2]):>8s} {f(r[3]):>7s} {f(r[4]):>8s} {f(r[5]):>7s} {f(r[6]):>7s} "
              f"{f(r[7], 3):>6s} {f(r[8], 1):>6s}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "results/runs/validation"))
    ap.add_argument("--smoke", action="store_true", help="run the smoke configurations only")
    ap.add_argument("--ids", default="", help="comma-separated subset of configuration ids")
    ap.add_argument("--worlds", default="2,1", help="world sizes to run, in order")
    ap.add_argument("--deadline-s", type=float, default=340.0, help="whole sweep, from start")
    ap.add_argument("--config-timeout-s", type=float, default=90.0)
    ap.add_argument("--init-timeout-s", type=float, default=150.0)
    ap.add_argument("--gqa", choices=("native", "repeat"), default="native")
    ap.add_argument("--profile-cpu", choices=("on", "off"), default="on")
    ap.add_argument("--steady-steps", type=int, default=0, help="train_gpt.py --steady-steps")
    ap.add_argument("--host-probe", type=int, default=0, help="train_gpt.py --host-probe")
    ap.add_argument("--timed-seconds", type=float, default=1.5, help="train_gpt.py --timed-seconds")
    ap.add_argument("--max-steps", type=int, default=30, help="train_gpt.py --max-steps")
    ap.add_argument("--keep-traces", action="store_true")
    ap.add_argument("--traces-max-mib", type=float, default=15.0)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--worker", default=os.path.join(HERE, "train_gpt.py"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    start = time.time()
    deadline = start + args.deadline_s
    os.makedirs(args.out, exist_ok=True)
    args.trace_dir = tempfile.mkdtemp(prefix="traces-") if args.keep_traces else None
    pool = cfgmod.SMOKE if args.smoke else cfgmod.CONFIGS
    if args.ids:
        want = args.ids.split(",")
        pool = [cfgmod.by_id(i) for i in want]
    worlds = [int(w) for w in args.worlds.split(",")]
    for w in worlds:
        ids = [c["id"] for c in pool if c["world"] == w]
        if args.dry_run:
            for cid in ids:
                c = cfgmod.by_id(cid)
                print(f"w{w} {cid:48s} params {cfgmod.param_count(c) / 1e6:8.1f}M "
                      f"{cfgmod.model_flops_per_step(c) / 1e12:7.1f} TFLOP/step "
                      f"est {cfgmod.estimate_memory_gib(c):5.1f} GiB")
            if ids:
                print("  " + " ".join(worker_cmd(w, ids, "OUT.jsonl", "PROGRESS", args)[:8]) + " ...")
            continue
        if ids:
            run_world(w, ids, args, deadline)
    if args.dry_run:
        return 0
    pack_traces(args)
    print(f"[sweep] done in {time.time() - start:.1f} s", flush=True)
    summary(args, worlds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
