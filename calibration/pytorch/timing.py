"""Device timing shared by the PyTorch calibration scripts (stepsim_torch_bench.py, attention_default.py,
gemm_training_shapes.py, interference_training.py, optimizer_state.py).

A loop of launches between two CUDA events measures the device only while the host stays ahead of it. Small
kernels behind a costly launch (cuDNN SDPA spends ~50 µs of host time per call, an autograd.grad call more) run
faster than the host can queue them, and the events then time the host. `hold_gpu` first parks the stream
behind a spin kernel long enough for the host to queue the whole loop, so the events see back-to-back device
periods only — the kernels as they run inside a training step, where the host is far ahead.
"""
import math
import statistics
import time

import torch


def summarize(v):
    """Median, p10, p90 and count of a list of times (µs), in the raw files' `time_us` format."""
    v = sorted(v)
    q = lambda p: v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]
    return {"median": statistics.median(v), "p10": q(0.1), "p90": q(0.9), "n": len(v)}


def host_seconds(fn, calls):
    """Host time to enqueue `calls` calls of fn (the device drained before and after)."""
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    host = time.perf_counter() - t
    torch.cuda.synchronize()
    return host


def hold_gpu(seconds):
    """Queue a spin kernel of at least `seconds` on the current stream (2e9 cycles per second: H200's SMs clock at
    most 1.98 GHz, so it never spins shorter)."""
    torch.cuda._sleep(int(2e9 * seconds))


def looped(fn, reps=7, inner=20, holder=hold_gpu, hold_s=None):
    """Per-call device time (µs) of `inner` back-to-back calls between two CUDA events, `reps` times, the stream
    held (`holder(seconds)`: a spin kernel unless given another) until the host has queued them all."""
    for _ in range(3):
        fn()
    hold = 2.0 * host_seconds(fn, inner) + 1e-3 if hold_s is None else hold_s
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        holder(hold)
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) * 1e3 / inner)
    return out


class Heater:
    """Back-to-back 8192³ BF16 GEMMs on the compute stream, in place of timing.hold_gpu's spin kernel: while the host
    queues the timed calls the board draws its power limit, as through a training step (run 34: SM clock ~1725 MHz
    at ~665 W in a step, ~1965 MHz at ~520 W in interference_training.py's spin-and-burst timing), so the calls run at
    the power limit as a step's do (the heater's own GEMMs draw more: 1470-1500 MHz at ~685 W, run 35), and an NCCL
    kernel's extra power lowers the clock as in a step. Run 35 found the same slowdowns beside NCCL as without it;
    run 91 found the fused AdamW 3-7% slower after it, as in the steps' traces."""

    def __init__(self, dev=None):
        r = lambda: torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
        self.a, self.b, self.c = r(), r(), r()
        for _ in range(200):  # half a second or so: at the power limit before timing
            self.call()
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(40):
            self.call()
        e1.record()
        torch.cuda.synchronize()
        self.call_s = e0.elapsed_time(e1) * 1e-3 / 40

    def call(self):
        torch.mm(self.a, self.b, out=self.c)

    def __call__(self, seconds):
        for _ in range(max(1, math.ceil(seconds / self.call_s))):
            self.call()


class ClockLog:
    """The GPU's SM clock (MHz) and board power (W), read through NVML every `period_s` in a thread, stamped with
    time.time(): what a calibration ran at, next to what it measured (nvidia-smi's 50 ms log cannot be lined up with
    one timed burst). NVML through pynvml (nvidia-ml-py) where it is installed, else through the driver's own
    libnvidia-ml.so.1 by ctypes (the same four calls). The GPU is found by the UUID CUDA gives `dev`.
    `between(t0, t1)` gives the samples' medians in a window of time.time() stamps."""

    def __init__(self, dev, period_s=0.01):
        import threading
        self.period_s, self.samples, self.stop_flag = period_s, [], threading.Event()
        uuid = str(torch.cuda.get_device_properties(dev).uuid)
        uuid = (uuid if uuid.startswith("GPU-") else "GPU-" + uuid).encode()
        try:
            import pynvml
            pynvml.nvmlInit()
            h = pynvml.nvmlDeviceGetHandleByUUID(uuid)
            self.read = lambda: (pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                                 pynvml.nvmlDeviceGetPowerUsage(h) / 1e3)
        except ImportError:
            import ctypes
            nvml = ctypes.CDLL("libnvidia-ml.so.1")
            h, clock, mw = ctypes.c_void_p(), ctypes.c_uint(), ctypes.c_uint()

            def check(rc, what):
                if rc != 0:
                    raise RuntimeError(f"NVML {what} failed with code {rc}")

            check(nvml.nvmlInit_v2(), "nvmlInit_v2")
            check(nvml.nvmlDeviceGetHandleByUUID(ctypes.c_char_p(uuid), ctypes.byref(h)), "nvmlDeviceGetHandleByUUID")

            def read():
                check(nvml.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(clock)), "nvmlDeviceGetClockInfo")  # 1: SM
                check(nvml.nvmlDeviceGetPowerUsage(h, ctypes.byref(mw)), "nvmlDeviceGetPowerUsage")
                return clock.value, mw.value / 1e3

            self.read = read
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stop_flag.wait(self.period_s):
            self.samples.append((time.time(), *self.read()))

    def stop(self):
        self.stop_flag.set()
        self.thread.join()

    def between(self, t0, t1):
        """{"sm_clock_mhz", "power_w": medians, "clock_samples": count} of the samples stamped in [t0, t1]; with
        none there, the nearest sample's values and count 0."""
        w = [s for s in list(self.samples) if t0 <= s[0] <= t1]
        if not w:
            near = min(self.samples, key=lambda s: min(abs(s[0] - t0), abs(s[0] - t1)))
            return {"sm_clock_mhz": near[1], "power_w": round(near[2], 1), "clock_samples": 0}
        return {"sm_clock_mhz": statistics.median(s[1] for s in w),
                "power_w": round(statistics.median(s[2] for s in w), 1), "clock_samples": len(w)}
