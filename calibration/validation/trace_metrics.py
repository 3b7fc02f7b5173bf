"""Step metrics from a PyTorch profiler trace (Chrome trace JSON, as torch.profiler exports it).

No torch import: this runs (and is tested) on machines without PyTorch.

Definitions (DESIGN.md, "Metrics"), for the GPU events of one step on one rank:
  C = union of the intervals of every non-NCCL device activity (kernels, memcpy, memset)
  M = union of the intervals of the NCCL kernels (name contains "nccl", any case)
  compute_ms = |C|, comm_ms = |M|, overlap_ms = |C ∩ M|, exposed_comm_ms = |M \\ C| = |M| − |C ∩ M|
  overlap_ratio = |C ∩ M| / max(|C|, |M|)  (0 when both are empty)
  span_ms = last device event end − first device event start;  idle_in_span_ms = span − |C ∪ M|

A step is the CPU range of a `record_function(STEP_LABEL)`; the worker synchronizes the device inside
that range, so every device event of the step starts inside it. Device events are assigned to the step
whose CPU range holds their start. Without CPU activity in the trace (the worker's `--profile-cpu off`,
which keeps the profiler's per-op host cost out of host-bound steps), steps are split at device idle
gaps longer than a threshold; the worker sleeps between profiled steps to make those gaps.
"""
from __future__ import annotations

import json
from collections import defaultdict

STEP_LABEL = "stepsim_step"
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def merge(intervals):
    """Sorted, disjoint union of [start, end) intervals."""
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(merged):
    return sum(e - s for s, e in merged)


def intersect(a, b):
    """Intersection of two merged interval lists (two-pointer sweep)."""
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0])
        e = min(a[i][1], b[j][1])
        if s < e:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def is_nccl(name: str) -> bool:
    return "nccl" in name.lower()


def category(name: str, cat: str) -> str:
    """Kernel category from its name (cuBLAS/cuBLASLt/CUTLASS GEMMs, flash/mem-efficient attention,
    fused optimizer, NCCL, copies and sets, everything else)."""
    n = name.lower()
    if is_nccl(n):
        return "nccl"
    if cat == "gpu_memcpy":
        return "memcpy"
    if cat == "gpu_memset":
        return "memset"
    if "adam" in n or "multi_tensor_apply" in n:
        return "optimizer"
    if "flash" in n or "fmha" in n or "attention" in n or "sdpa" in n:
        return "attention"
    if ("gemm" in n or "nvjet" in n or "xmma" in n or "cutlass" in n or "cublas" in n
            or "splitkreduce" in n or n.startswith("sm90_") or n.startswith("sm80_")):
        return "gemm"
    return "elementwise_other"


def device_events(trace: dict):
    """(start_us, end_us, name, cat, device, stream) for every kernel/memcpy/memset in the trace."""
    out = []
    for ev in trace.get("traceEvents", []):
        if ev.get("ph") != "X" or ev.get("cat") not in DEVICE_CATS:
            continue
        ts, dur = float(ev["ts"]), float(ev.get("dur", 0.0))
        out.append((ts, ts + dur, ev.get("name", ""), ev["cat"], ev.get("pid"), ev.get("tid")))
    out.sort()
    return out


def step_ranges(trace: dict, label: str = STEP_LABEL):
    """CPU [start, end) ranges, in µs, of the record_function(label) ranges, in time order."""
    out = []
    for ev in trace.get("traceEvents", []):
        if ev.get("ph") == "X" and ev.get("name") == label and ev.get("cat") in (
                "user_annotation", "cpu_op", "python_function"):
            ts = float(ev["ts"])
            out.append((ts, ts + float(ev.get("dur", 0.0))))
    out.sort()
    return out


def split_steps(trace: dict, label: str = STEP_LABEL):
    """Device events grouped by step; also the count of device events outside every step range."""
    ranges = step_ranges(trace, label)
    steps = [[] for _ in ranges]
    unassigned = 0
    for ev in device_events(trace):
        placed = False
        for k, (s, e) in enumerate(ranges):
            if s <= ev[0] < e:
                steps[k].append(ev)
                placed = True
                break
        if not placed:
            unassigned += 1
    return steps, unassigned


def split_by_gaps(trace: dict, min_gap_us: float):
    """Device events grouped by idle gaps longer than min_gap_us (for traces without CPU activity,
    where the worker leaves such a gap between profiled steps); no event is left unassigned."""
    groups = []
    last_end = None
    for ev in device_events(trace):
        if last_end is None or ev[0] - last_end > min_gap_us:
            groups.append([])
        groups[-1].append(ev)
        last_end = ev[1] if last_end is None else max(last_end, ev[1])
    return groups, 0


def step_metrics(events, top_n: int = 25) -> dict:
    """The metrics of one step from its device events (see module docstring). Times in ms."""
    if not events:
        return {"kernels": 0}
    comp = merge([[s, e] for s, e, n, c, *_ in events if not is_nccl(n)])
    comm = merge([[s, e] for s, e, n, c, *_ in events if is_nccl(n)])
    both = merge(comp + comm)
    ov = length(intersect(comp, comm))
    c_len, m_len = length(comp), length(comm)
    span = max(e for _, e, *_ in events) - min(s for s, *_ in events)
    per_cat = defaultdict(float)
    per_cat_n = defaultdict(int)
    per_name = defaultdict(lambda: [0.0, 0])
    nccl_durs = []
    streams = set()
    for s, e, n, c, dev, tid in events:
        k = category(n, c)
        per_cat[k] += e - s
        per_cat_n[k] += 1
        per_name[n][0] += e - s
        per_name[n][1] += 1
        streams.add(str(tid))
        if k == "nccl":
            nccl_durs.append(round((e - s) / 1e3, 4))
    top = sorted(per_name.items(), key=lambda kv: -kv[1][0])[:top_n]
    ms = 1e-3  # trace times are µs
    return {
        "kernels": len(events),
        "streams": len(streams),
        "span_ms": span * ms,
        "compute_ms": c_len * ms,
        "comm_ms": m_len * ms,
        "overlap_ms": ov * ms,
        "exposed_comm_ms": (m_len - ov) * ms,
        "overlap_ratio": (ov / max(c_len, m_len)) if max(c_len, m_len) > 0 else 0.0,
        "busy_ms": length(both) * ms,
        "idle_in_span_ms": (span - length(both)) * ms,
        "category_ms": {k: v * ms for k, v in sorted(per_cat.items())},
        "category_count": dict(sorted(per_cat_n.items())),
        "nccl_kernel_ms": nccl_durs[:400],
        "top_kernels": [{"name": n[:160], "ms": v[0] * ms, "count": v[1]} for n, v in top],
    }


def analyze_trace(trace: dict, label: str = STEP_LABEL, min_gap_us: float | None = None) -> dict:
    """Metrics for every profiled step; `primary` is the last step (the profiler's warm-up is past).
    Steps are the record_function ranges, or with min_gap_us the groups between idle gaps."""
    steps, unassigned = split_by_gaps(trace, min_gap_us) if min_gap_us else split_steps(trace, label)
    per_step = [step_metrics(evs) for evs in steps]
    return {
        "profiled_steps": len(per_step),
        "unassigned_device_events": unassigned,
        "primary": per_step[-1] if per_step else None,
        "all_steps": [{k: v for k, v in m.items() if k not in ("top_kernels", "nccl_kernel_ms")}
                      for m in per_step],
    }


def analyze_file(path: str, label: str = STEP_LABEL, min_gap_us: float | None = None) -> dict:
    with open(path) as f:
        return analyze_trace(json.load(f), label, min_gap_us)
