#!/usr/bin/env python3
"""Cross-checks of the h200x2 calibration run against our other measurements of the same machine kind
(nccl-tests and a PyTorch micro-benchmark file, kept outside this repository). Prints Markdown tables.

usage: python3 calibration/investigations/compare_h200x2.py SHARED_DATA_DIR
"""
import json
import os
import sys

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "profiles", "h200x2")
if len(sys.argv) != 2:
    sys.exit(__doc__)
shared = sys.argv[1]
bench = [json.loads(l) for l in open(os.path.join(here, "raw/bench.jsonl"))]
torch = [json.loads(l) for l in open(os.path.join(here, "raw/torch.jsonl"))]
micro = [json.loads(l) for l in open(os.path.join(shared, "h200x2-pytorch-micro.jsonl"))]


def pct(a, b):
    return 100.0 * (a - b) / b


def flag(d):
    return " **>10%**" if abs(d) > 10 else ""


print("### NCCL: stepsim-bench (median of 20 per-iteration event times, slowest rank) vs nccl-tests 2.19.6 "
      "(out-of-place, host-timed mean of 20)\n")
for op in ("all_reduce", "all_gather", "reduce_scatter"):
    ref = {}
    for line in open(os.path.join(shared, f"h200x2-nccltests-{op}.txt")):
        p = line.split()
        if p and p[0].isdigit():
            ref[int(p[0])] = float(p[5])
    ours = {r["bytes"]: r["time_us"]["median"] for r in bench
            if r["kind"] == "collective" and r["op"] == op and r["dtype"] == "bf16" and r["algo"] == "auto"}
    print(f"{op} (bf16)\n\n| bytes | stepsim-bench us | nccl-tests us | diff |\n|---:|---:|---:|---:|")
    big = []
    for b in sorted(ref):
        if b in ours:
            d = pct(ours[b], ref[b])
            print(f"| {b} | {ours[b]:.2f} | {ref[b]:.2f} | {d:+.1f}%{flag(d)} |")
            if b >= 4 << 20:
                big.append(abs(d))
    big.sort()
    print(f"\nmedian |diff| for sizes >= 4 MiB: {big[len(big) // 2]:.1f}%\n")

print("### GEMMs: TFLOP/s by shape\n")
print("bench = stepsim-bench cuBLASLt TN, cold L2, inside the full grid (sustained load); torch = "
      "stepsim_torch_bench.py in the same run (torch.mm / torch._scaled_mm, NT, rotating inputs); micro = "
      "h200x2-pytorch-micro.jsonl in the folder given (FP8 there: torch._scaled_mm tensorwise).\n")
print("| dtype | m | n | k | bench | bench fast-acc | torch | torch fast-acc | micro | bench vs micro |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def find(recs, dt, fast, m, n, k):
    for r in recs:
        if r["kind"] == "gemm" and r["dtype"] == dt and r["m"] == m and r["n"] == n and r["k"] == k and \
                (dt == "bf16" or r.get("fast_accum") == fast):
            return r["tflops"]
    return float("nan")


for r in micro:
    if r["kind"] != "gemm":
        continue
    dt, m, n, k = r["dtype"], r["m"], r["n"], r["k"]
    b0, b1 = find(bench, dt, False, m, n, k), find(bench, dt, True, m, n, k)
    t0, t1 = find(torch, dt, False, m, n, k), find(torch, dt, True, m, n, k)
    ref = b0 if dt == "bf16" else b1
    d = pct(ref, r["tflops"])
    print(f"| {dt} | {m} | {n} | {k} | {b0:.0f} | {b1 if dt != 'bf16' else float('nan'):.0f} | {t0:.0f} | "
          f"{t1 if dt != 'bf16' else float('nan'):.0f} | {r['tflops']:.0f} | {d:+.1f}%{flag(d)} |")

print("\n### Other records of the micro file\n")
launch = {r["op"]: r["time_us"] for r in bench if r["kind"] == "launch"}
disp = {r["op"]: r["time_us"] for r in torch if r["kind"] == "dispatch"}
for r in micro:
    if r["kind"] == "launch":
        print(f"- host launch of a tiny op: micro {r['host_us_median']:.2f} us (p99 {r['host_us_p99']:.2f}); "
              f"ours eager torch.add {disp['eager_host']['median']:.2f} us (p99 {disp['eager_host']['p99']:.2f}); "
              f"raw cudaLaunchKernel {launch['host_enqueue']['median']:.2f} us (p99 {launch['host_enqueue']['p99']:.2f})")
        print(f"- device time per back-to-back tiny op: micro {r['device_us_per_tiny_kernel']:.2f} us; ours eager "
              f"torch.add {disp['eager_per_op_device']['median']:.2f} us; empty kernels queued by the harness "
              f"{launch['device_period']['median']:.2f} us (gap {launch['device_gap']['median']:.2f} us)")
tr = {(r["op"], r["size_bytes"]): r for r in bench if r["kind"] == "transfer"}
for r in micro:
    if r["kind"] == "p2p_copy":
        o = tr.get(("peer_ce", r["bytes"]))
        if o:
            print(f"- GPU0->GPU1 copy {r['bytes']} B: micro {r['time_us']:.0f} us ({r['GBps']:.1f} GB/s); ours "
                  f"(copy engine) {o['time_us']['median']:.1f} us ({o['GBps']:.1f} GB/s)")
    if r["kind"] == "h2d_pinned":
        o = tr.get(("h2d_pinned", r["bytes"]))
        if o:
            print(f"- H2D pinned {r['bytes']} B: micro {r['GBps']:.1f} GB/s; ours {o['GBps']:.1f} GB/s")
    if r["kind"] == "interference":
        ours = [x for x in bench if x["kind"] == "interference" and x["comm_bytes"] == 256 << 20]
        for x in ours:
            print(f"- interference, 256 MiB all_reduce + bf16 8192^3 GEMM: micro GEMM x{r['gemm_with_comm_us'] / r['gemm_alone_us']:.3f}, "
                  f"all_reduce x{r['comm_with_gemm_us'] / r['comm_alone_us']:.3f}; ours (GPU {x['device']}) GEMM "
                  f"x{x['gemm_slowdown']:.3f}, all_reduce x{x['comm_slowdown']:.3f}")
print("\n### all_reduce through torch.distributed (micro) vs NCCL directly (ours), bf16\n")
print("| bytes | micro us | ours us | diff us |\n|---:|---:|---:|---:|")
ours = {r["bytes"]: r["time_us"]["median"] for r in bench
        if r["kind"] == "collective" and r["op"] == "all_reduce" and r["dtype"] == "bf16" and r["algo"] == "auto"}
for r in micro:
    if r["kind"] == "collective" and r["op"] == "all_reduce" and r["bytes"] in ours:
        print(f"| {r['bytes']} | {r['time_us']:.1f} | {ours[r['bytes']]:.1f} | {r['time_us'] - ours[r['bytes']]:+.1f} |")
