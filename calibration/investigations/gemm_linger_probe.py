#!/usr/bin/env python3
"""How long a GEMM stays slow after a kernel holding some of the SMs leaves, on one GPU.

In a DDP step every NCCL kernel that overlapped a GEMM was resident before the GEMM started (it waits for the SMs a
running kernel holds), and a GEMM that started beside one and outlived it ran 4.9-7.7% longer than a slowdown that
lifts the moment the NCCL kernel leaves (calibration/validation/gemm_linger.py on the 1.4B step's traces). This
probe isolates the SM side of that on one GPU: a kernel of --blocks blocks (24, as NCCL's 2-GPU all-reduce), each
holding an SM's worth of shared memory so no GEMM CTA fits beside it, spins on the global timer for a set time; a
GEMM (torch.mm in bf16, output m x n, reduction k, as stepsim names a step's GEMMs) is launched on another stream once
the holder is resident, and the holder leaves at a set fraction of the GEMM's time alone (0.1 to 0.9), or after it
(inside). The PyTorch profiler gives each kernel's start and end, so the overlap is measured, not assumed. Each
instance runs alone (the device drained between), so the clock is the GPU's at rest, not at its power limit: the
slowdown here is the SMs' alone (no NCCL memory traffic, no power), and what matters is its shape in time.

Writes JSON Lines {"kind": "gemm_linger", "m", "n", "k", "hold_blocks", "fraction" (null: no holder; "inside"),
"gemm_us", "overlap_us" (holder end - GEMM start, clamped to [0, gemm_us]), "holder_lead_us" (GEMM start - holder
start)} and prints per shape the GEMM alone, inside, and for the partial overlaps the measured time against a
slowdown that lifts as the holder leaves (work-conserving), one that holds one more wave of 128x256 tiles over
the SMs (tried first, not kept), and the engine's lag rule (interference.linger_tile_m/n): the GEMM's time alone plus
the time the SMs were held, up to one wave of its tiles, never sooner than work-conserving nor later than inside.
Run 108 printed the first two; `--summarize FILE` prints all three from the records (no GPU needed).
Usage: python3 gemm_linger_probe.py --out FILE [--blocks 24] [--reps 12] [--shapes M,N,K;...]
       python3 gemm_linger_probe.py --summarize FILE [--sms 132]
"""
import argparse
import ctypes
import gzip
import json
import math
import os
import statistics
import subprocess
import tempfile

HOLDER_CU = r"""
#include <cuda_runtime.h>
extern "C" __global__ void hold_sms(long long ns) {
    extern __shared__ char pad[];
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
    if (threadIdx.x == 0 && t == 0) pad[0] = 1;  // keeps the shared memory allocated
}
extern "C" int launch_hold(int blocks, int threads, int smem, long long ns, void* stream) {
    static int set = 0;
    if (!set) {
        cudaError_t e = cudaFuncSetAttribute(hold_sms, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess) return (int)e;
        set = 1;
    }
    hold_sms<<<blocks, threads, smem, (cudaStream_t)stream>>>(ns);
    return (int)cudaGetLastError();
}
"""

DEFAULT_SHAPES = "8192,2048,8192;2048,8192,8192;2048,2048,8192;8192,2048,2048;8192,6144,2048;8192,8192,2048"
FRACTIONS = [None, 0.1, 0.25, 0.5, 0.75, 0.9, "inside"]
SMEM = 160 * 1024  # per holder block: no 213 KB GEMM CTA fits beside it on its SM
LEAD_US = 40.0     # the GEMM's stream is held this long behind a spin kernel, so the holder is resident first


def build_holder(tmp):
    src, lib = os.path.join(tmp, "hold.cu"), os.path.join(tmp, "hold.so")
    with open(src, "w") as f:
        f.write(HOLDER_CU)
    nvcc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    subprocess.run([nvcc, "-O2", "-arch=sm_90", "-shared", "-Xcompiler", "-fPIC", "-o", lib, src], check=True)
    h = ctypes.CDLL(lib)
    h.launch_hold.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_void_p]
    h.launch_hold.restype = ctypes.c_int
    return h


def waves(m, n, sms, tile=(128, 256)):
    return max(1, math.ceil(math.ceil(m / tile[0]) * math.ceil(n / tile[1]) / sms))


def summarize(records, sms, reps):
    """Per shape: the GEMM alone, inside the holder, and each partial overlap's measured time against a slowdown that
    lifts as the holder leaves (work-conserving), the engine's lag rule (its time alone plus the time the SMs were
    held, up to one wave of 128x256 tiles, never sooner than work-conserving nor later than inside throughout), and
    one wave more at the slowed rate (tried first, not kept)."""
    blocks = records[0]["hold_blocks"]
    print(f"{sms} SMs, holder {blocks} blocks x {SMEM // 1024} KB; GEMM time (us), medians of {reps}")
    for shape in dict.fromkeys((r["m"], r["n"], r["k"]) for r in records):
        rs = [r for r in records if (r["m"], r["n"], r["k"]) == shape]
        solo = statistics.median(r["gemm_us"] for r in rs if r["fraction"] is None)
        inside = [r["gemm_us"] / solo for r in rs if r["fraction"] == "inside" and r["holder_lead_us"] > 0]
        f = statistics.median(inside) if inside else float("nan")
        wv = waves(shape[0], shape[1], sms)
        print(f"{shape}: alone {solo:.1f}, inside x{f:.3f}, {wv} waves of 128x256")
        for frac in FRACTIONS[1:-1]:
            part = [r for r in rs if r["fraction"] == frac and r["holder_lead_us"] > 0]
            if not part:
                continue
            meas, wc, lag, one = [], [], [], []
            for r in part:
                o, d = r["overlap_us"], r["gemm_us"]
                left = max(solo - o / f, 0.0)
                held = min(solo / wv, left)
                meas.append(d)
                wc.append(o + left)
                lag.append(max(o + left, min(solo + min(o, solo / wv), solo * f)))
                one.append(o + held * f + (left - held))
            print(f"   holder leaves at {frac:4}: overlap {statistics.median(r['overlap_us'] for r in part):7.1f}, "
                  f"measured {statistics.median(meas):7.1f}, work-conserving {statistics.median(wc):7.1f}, "
                  f"lag {statistics.median(lag):7.1f}, one wave more {statistics.median(one):7.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="measure (a GPU) and write the records here")
    ap.add_argument("--summarize", metavar="FILE", help="print the summary of records written before (no GPU)")
    ap.add_argument("--sms", type=int, default=132, help="with --summarize: the GPU's SMs")
    ap.add_argument("--blocks", type=int, default=24)
    ap.add_argument("--reps", type=int, default=12)
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    a = ap.parse_args()
    if a.summarize:
        with open(a.summarize) as f:
            summarize([json.loads(line) for line in f], a.sms, a.reps)
        return
    if not a.out:
        ap.error("--out or --summarize is required")
    import torch

    shapes = [tuple(int(x) for x in s.split(",")) for s in a.shapes.split(";")]
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    tmp = tempfile.mkdtemp()
    holder = build_holder(tmp)
    gemm_stream, hold_stream = torch.cuda.Stream(), torch.cuda.Stream()

    def hold(us):
        rc = holder.launch_hold(a.blocks, 128, SMEM, int(us * 1e3), ctypes.c_void_p(hold_stream.cuda_stream))
        if rc:
            raise SystemExit(f"launch_hold: CUDA error {rc}")

    plan, alone = [], {}
    ops = {}
    for m, n, k in shapes:
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
        ops[(m, n, k)] = (x, w)
        for _ in range(10):
            torch.mm(x, w)
        torch.cuda.synchronize()
        t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0.record()
        for _ in range(20):
            torch.mm(x, w)
        t1.record()
        torch.cuda.synchronize()
        alone[(m, n, k)] = t0.elapsed_time(t1) * 1e3 / 20
    hold(10.0)  # the holder's first launch sets its shared-memory attribute: out of the profile
    torch.cuda.synchronize()

    trace = os.path.join(tmp, "trace.json")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for shape in shapes:
            x, w = ops[shape]
            for frac in FRACTIONS:
                for _ in range(a.reps):
                    torch.cuda.synchronize()
                    if frac is not None:
                        span = 3.0 * alone[shape] if frac == "inside" else frac * alone[shape]
                        hold(LEAD_US + span)
                    with torch.cuda.stream(gemm_stream):
                        torch.cuda._sleep(int(2e9 * LEAD_US * 1e-6))
                        torch.mm(x, w)
                    torch.cuda.synchronize()
                    plan.append((shape, frac))
    prof.export_chrome_trace(trace)
    with open(trace) as f:
        ev = json.load(f)["traceEvents"]
    ks = sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"), key=lambda e: e["ts"])
    spins = [i for i, e in enumerate(ks) if "spin" in e["name"]]
    holds = [e for e in ks if "hold_sms" in e["name"]]
    if len(spins) != len(plan):
        raise SystemExit(f"{len(spins)} spin kernels in the trace for {len(plan)} instances")
    records, hi = [], 0
    for j, (shape, frac) in enumerate(plan):
        lo, up = spins[j] + 1, spins[j + 1] if j + 1 < len(spins) else len(ks)
        gemm = max((e for e in ks[lo:up] if "hold_sms" not in e["name"]), key=lambda e: e["dur"])
        rec = {"kind": "gemm_linger", "m": shape[0], "n": shape[1], "k": shape[2], "hold_blocks": a.blocks,
               "fraction": frac, "gemm_us": gemm["dur"], "gemm_kernel": gemm["name"][:80]}
        if frac is not None:
            h = holds[hi]
            hi += 1
            rec["overlap_us"] = min(max(h["ts"] + h["dur"] - gemm["ts"], 0.0), gemm["dur"])
            rec["holder_lead_us"] = gemm["ts"] - h["ts"]
        records.append(rec)
    with open(a.out, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    with gzip.open(a.out + ".trace.json.gz", "wt") as f:
        json.dump({"traceEvents": ks}, f)

    summarize(records, sms, a.reps)

if __name__ == "__main__":
    main()
