#!/usr/bin/env python3
"""Writes the hand-built profiler traces of tests/workload/TraceScheduleTest.cpp and tests/scenario/TraceImportTest.cpp
(Chrome/Kineto format as torch.profiler's export_chrome_trace writes it; no GPU ran them: the durations are chosen, so
that every count and time the tests expect follows from this file):

  synthetic-step.json.gz  two ProfilerSteps of one made-up training step on stream 7: forward (4 aten::mm GEMMs of
                          C[512x256] = A[512x256]·B[256x256], each followed by a GELU kernel; one flash attention
                          kernel; a softmax), backward on the autograd thread (per GEMM an evaluate_function: MmBackward0
                          with its input-gradient mm (k=256) and its weight-gradient mm (m=256, k=512, n=256), one flash
                          backward kernel, one kernel of an unknown name), optimizer (Optimizer.step#AdamW.step: a
                          memset and one fused Adam kernel). Kernels start at the later of their launch + 5 us and the
                          stream's previous end + 2 us (GPU-bound: host launches every 20 us, kernels of 30-80 us).
  no-gpu.json             the same without any GPU activity.
  no-step.json            the same without ProfilerStep or Optimizer.step events.
usage: python3 make_synthetic.py  (writes beside itself)
"""
import gzip
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
STREAM = 7


class Trace:
    def __init__(self):
        self.ev = []
        self.corr = 1
        self.gpu_free = 0.0

    def op(self, tid, name, ts, dur, cat="cpu_op", args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": 100, "tid": tid, "ts": ts, "dur": dur}
        if args:
            e["args"] = args
        self.ev.append(e)

    def launch(self, tid, ts, kname, kdur, cat="kernel", api="cudaLaunchKernel"):
        c = self.corr
        self.corr += 1
        self.op(tid, api, ts, 8, "cuda_runtime", {"correlation": c})
        start = max(ts + 5, self.gpu_free + 2)
        self.gpu_free = start + kdur
        self.ev.append({"ph": "X", "cat": cat, "name": kname, "pid": 0, "tid": STREAM, "ts": start, "dur": kdur,
                        "args": {"correlation": c, "stream": STREAM, "device": 0}})


def step(t, o, n):
    t.op(1, "ProfilerStep#%d" % n, o, 1000, "user_annotation")
    ts = o + 10
    for i in range(4):  # forward
        t.op(1, "aten::linear", ts, 18)
        t.op(1, "aten::mm", ts + 1, 16, args={"Input Dims": [[512, 256], [256, 256]]})
        t.launch(1, ts + 2, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 60)
        ts += 20
        t.op(1, "aten::gelu", ts, 15)
        t.launch(1, ts + 2, "void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>", 30)
        ts += 20
    t.op(1, "aten::_flash_attention_forward", ts, 15)
    t.launch(1, ts + 2, "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits>", 80)
    ts += 20
    t.op(1, "aten::_log_softmax", ts, 15)
    t.launch(1, ts + 2, "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>", 40)
    ts += 40
    for i in range(4):  # backward, on the autograd thread
        t.op(2, "autograd::engine::evaluate_function: MmBackward0", ts, 38)
        t.op(2, "aten::mm", ts + 1, 16, args={"Input Dims": [[512, 256], [256, 256]]})
        t.launch(2, ts + 2, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", 60)
        t.op(2, "aten::mm", ts + 20, 16, args={"Input Dims": [[256, 512], [512, 256]]})
        t.launch(2, ts + 21, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64", 60)
        ts += 40
    t.op(2, "autograd::engine::evaluate_function: FlashAttnBackward", ts, 18)
    t.launch(2, ts + 2, "void pytorch_flash::flash_bwd_dq_dk_dv_loop_kernel<Flash_bwd_kernel_traits>", 80)
    ts += 20
    t.op(2, "autograd::engine::evaluate_function: MysteryBackward", ts, 18)
    t.launch(2, ts + 2, "mystery_kernel_xyz", 30)
    ts += 40
    t.op(1, "Optimizer.step#AdamW.step", ts, 60, "user_annotation")
    t.launch(1, ts + 2, "Memset (Device)", 3, "gpu_memset", "cudaMemsetAsync")
    t.launch(1, ts + 22, "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>", 70)


def build(gpu=True, steps=True):
    t = Trace()
    for n, o in ((1, 0), (2, 1000)):
        step(t, o, n)
    ev = t.ev
    if not gpu:
        ev = [e for e in ev if e["cat"] not in ("kernel", "gpu_memcpy", "gpu_memset")]
    if not steps:
        ev = [e for e in ev if not e["name"].startswith(("ProfilerStep#", "Optimizer.step#"))]
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], "traceEvents": ev}


def main():
    with gzip.GzipFile(os.path.join(HERE, "synthetic-step.json.gz"), "wb", mtime=0) as f:
        f.write(json.dumps(build(), indent=0).encode())
    for name, kw in (("no-gpu.json", {"gpu": False}), ("no-step.json", {"steps": False})):
        with open(os.path.join(HERE, name), "w") as f:
            json.dump(build(**kw), f, indent=0)


if __name__ == "__main__":
    main()
