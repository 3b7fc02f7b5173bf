#!/usr/bin/env python3
"""Host↔device copies and checkpoint writes on one GPU: what the input pipeline and torch.distributed.checkpoint
cost (stepsim's `io` profile section, fitted by sim/fit/IoFit.cpp).

Records (one JSON object a line, `kind` names it):
  copy        H2D and D2H of `bytes` from pinned or pageable host memory: device time between CUDA events
              (`device_us`), the host's time inside the call (`host_us`) with the stream idle, and with the
              stream busy behind a spin kernel of `held_us` (`host_busy_us`: a synchronous copy waits for it)
  copy_pair   two pinned copies at once on two streams (`same` direction or `both` directions): each one's
              device time and the pair's span, against one copy alone: does one PCIe link share its bandwidth
  disk        `bytes` written to a file in DIR with os.write and fsync: local storage's write bandwidth
  dcp         torch.distributed.checkpoint.save / async_save of a state dict of `bytes` (fp32 tensors of a
              model's shapes) to DIR: the call's blocking time, and for async the time until the write ends

Usage: python3 calibration/pytorch/io_transfer.py --out FILE --dir DIR [--quick]   (one GPU)
"""
import argparse
import json
import os
import shutil
import statistics
import time

import torch

from timing import hold_gpu

MiB = 1 << 20


def emit(out, rec):
    print(json.dumps(rec), flush=True)
    out.write(json.dumps(rec) + "\n")
    out.flush()


def host_tensor(nbytes, pinned):
    return torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned).fill_(1)


def time_copy(src, dst, pinned, reps):
    """Median device time (CUDA events) and host time of dst.copy_(src): pinned non-blocking on a side stream as
    a DataLoader with pin_memory feeds `.to(non_blocking=True)`, pageable as a plain `.to()`."""
    side = torch.cuda.Stream()
    dev, host, busy = [], [], []
    for r in range(reps + 2):
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s = side if pinned else torch.cuda.current_stream()
        with torch.cuda.stream(s):
            a.record()
            t = time.perf_counter()
            dst.copy_(src, non_blocking=pinned)
            host_s = time.perf_counter() - t
            b.record()
        torch.cuda.synchronize()
        # the same copy behind 20 ms of GPU work on the stream it joins: a synchronous copy waits for it
        with torch.cuda.stream(s):
            hold_gpu(0.02)
            t = time.perf_counter()
            dst.copy_(src, non_blocking=pinned)
            busy_s = time.perf_counter() - t
        torch.cuda.synchronize()
        if r >= 2:
            dev.append(a.elapsed_time(b) * 1e3)
            host.append(host_s * 1e6)
            busy.append(busy_s * 1e6)
    return statistics.median(dev), statistics.median(host), statistics.median(busy)


def copies(out, sizes, reps):
    for nbytes in sizes:
        g = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        for pinned in (True, False):
            h = host_tensor(nbytes, pinned)
            for direction in ("h2d", "d2h"):
                src, dst = (h, g) if direction == "h2d" else (g, h)
                d, hu, bu = time_copy(src, dst, pinned, reps)
                emit(out, {"kind": "copy", "direction": direction, "pinned": pinned, "bytes": nbytes,
                           "device_us": d, "host_us": hu, "host_busy_us": bu, "held_us": 20000.0,
                           "GBps": nbytes / d / 1e3})
            del h
        del g


def pair(out, nbytes, reps):
    """Two pinned copies at once on two streams against one alone."""
    g1, g2 = (torch.empty(nbytes, dtype=torch.uint8, device="cuda") for _ in range(2))
    h1, h2 = host_tensor(nbytes, True), host_tensor(nbytes, True)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    for mode in ("alone", "same", "both"):
        spans, each = [], []
        for r in range(reps + 2):
            torch.cuda.synchronize()
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
            hold_gpu(0.005)  # both streams start together behind the current stream's spin
            start = torch.cuda.Event()
            start.record()
            s1.wait_event(start)
            s2.wait_event(start)
            with torch.cuda.stream(s1):
                ev[0].record()
                g1.copy_(h1, non_blocking=True)
                ev[1].record()
            if mode != "alone":
                with torch.cuda.stream(s2):
                    ev[2].record()
                    if mode == "same":
                        g2.copy_(h2, non_blocking=True)
                    else:
                        h2.copy_(g2, non_blocking=True)
                    ev[3].record()
            torch.cuda.synchronize()
            if r >= 2:
                t1 = ev[0].elapsed_time(ev[1]) * 1e3
                if mode == "alone":
                    spans.append(t1)
                    each.append(t1)
                else:
                    t2 = ev[2].elapsed_time(ev[3]) * 1e3
                    spans.append(max(ev[0].elapsed_time(ev[1]), ev[0].elapsed_time(ev[3])) * 1e3)
                    each.append((t1 + t2) / 2)
        emit(out, {"kind": "copy_pair", "mode": mode, "bytes": nbytes, "span_us": statistics.median(spans),
                   "each_us": statistics.median(each)})


def disk(out, d, nbytes, reps):
    buf = os.urandom(64 * MiB)
    for r in range(reps):
        path = os.path.join(d, f"disk_{r}.bin")
        t = time.perf_counter()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        written = 0
        while written < nbytes:
            written += os.write(fd, buf)
        os.fsync(fd)
        os.close(fd)
        s = time.perf_counter() - t
        os.remove(path)
        emit(out, {"kind": "disk", "bytes": written, "seconds": s, "GBps": written / s / 1e9, "dir": d})


_x = None


def launch_us(n=400):
    """Host µs per launch of a tiny CUDA op, the GPU held behind a spin kernel so the host never waits for it."""
    global _x
    if _x is None:
        _x = torch.zeros(256, device="cuda")
    hold_gpu(0.02)
    t = time.perf_counter()
    for _ in range(n):
        _x.add_(1.0)
    us = (time.perf_counter() - t) * 1e6 / n
    torch.cuda.synchronize()
    return us


def state_dict(nbytes):
    """fp32 tensors shaped like a transformer's (3·h² qkv, h² proj, 4·h² twice), h = 2048, to `nbytes`."""
    h, sd, total, i = 2048, {}, 0, 0
    shapes = [(3 * h, h), (h, h), (4 * h, h), (h, 4 * h)]
    while total < nbytes:
        shp = shapes[i % 4]
        sd[f"w{i}"] = torch.randn(shp, device="cuda")
        total += sd[f"w{i}"].numel() * 4
        i += 1
    return sd, total


def dcp_runs(out, d, sizes, reps):
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    if not dist.is_initialized():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29533")
        dist.init_process_group("cpu:gloo,cuda:nccl", rank=0, world_size=1)
    stagers = {"default": None}
    try:
        from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions
        stagers["pinned"] = lambda: DefaultStager(StagingOptions(True, False, False, False))
    except Exception as e:  # an older torch: only the default stager
        emit(out, {"kind": "note", "text": f"no DefaultStager: {e!r}"})
    for nbytes in sizes:
        sd, total = state_dict(nbytes)
        for mode in ["sync"] + [f"async_{k}" for k in stagers]:
            for r in range(reps):
                path = os.path.join(d, f"ckpt_{mode}_{r}")
                torch.cuda.synchronize()
                t = time.perf_counter()
                if mode == "sync":
                    dcp.save(sd, checkpoint_id=path)
                    block = time.perf_counter() - t
                    done = block
                else:
                    mk = stagers[mode[len("async_"):]]
                    kw = {} if mk is None else {"async_stager": mk()}
                    fut = dcp.async_save(sd, checkpoint_id=path, **kw)
                    block = time.perf_counter() - t
                    fut = getattr(fut, "upload_completion", fut)
                    during = []
                    while not fut.done():  # the host's launch cost while the write runs beside it
                        during.append(launch_us())
                    fut.result()
                    done = time.perf_counter() - t
                    after = [launch_us() for _ in range(max(3, min(len(during), 20)))]
                rec = {"kind": "dcp", "mode": mode, "bytes": total, "rep": r, "blocking_ms": block * 1e3,
                       "total_ms": done * 1e3, "torch": torch.__version__}
                if mode != "sync" and during:
                    rec.update(launch_us_during=statistics.median(during), launch_us_after=statistics.median(after),
                               launch_probes=len(during))
                emit(out, rec)
                shutil.rmtree(path, ignore_errors=True)
        del sd
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--dir", required=True, help="a folder on the local disk checkpoints are written to")
    ap.add_argument("--quick", action="store_true", help="small sizes, one rep (a smoke test)")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    q = a.quick
    sizes = [64 << 10, 1 * MiB] if q else [16 << 10, 64 << 10, 256 << 10, 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB,
                                          256 * MiB, 1024 * MiB]
    with open(a.out, "a") as out:
        emit(out, {"kind": "env", "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
                   "cpus": os.cpu_count(), "dir": a.dir})
        copies(out, sizes, 1 if q else 7)
        pair(out, 4 * MiB if q else 256 * MiB, 1 if q else 5)
        disk(out, a.dir, 128 * MiB if q else 2048 * MiB, 1 if q else 3)
        dcp_runs(out, a.dir, [64 * MiB] if q else [256 * MiB, 1024 * MiB, 4096 * MiB], 1 if q else 3)


if __name__ == "__main__":
    main()
