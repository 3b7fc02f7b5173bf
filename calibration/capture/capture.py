#!/usr/bin/env python3
"""Capture one training step of a PyTorch model as an op graph (docs/ops-format.md, docs/capture.md), with no
weights and no device memory: the model is built under FakeTensorMode on the fake CUDA device, its optimizer state
made by one step on zero gradients, and one step (forward with the loss, backward, optimizer, zero_grad) recorded by
recorder.StepRecorder. With --second B2,S2 the step is recorded again at that shape and every dimension that scales
is written as a monomial of B and S (scaling.py).

usage: python3 calibration/capture/capture.py --model transformers:LlamaForCausalLM --config config.json \
           --micro-batch 2 --seq-len 1024 [--second 6,2048] [--dtype-policy fp32_autocast_bf16|bf16|fp32] \
           [--optimizer adamw|adam|sgd] [--optimizer-impl foreach|fused|for_loop] \
           [--activation-checkpointing none|full] [--loss cross_entropy] -o out.ops.json.gz
Exit status: 0 written; 1 the model or the step failed (the message names the op and module); 2 bad flags.
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import options  # noqa: E402
import opsfile  # noqa: E402
import scaling  # noqa: E402


def _fake_exceptions():
    from torch._subclasses import fake_tensor as ft
    return {getattr(ft, "UnsupportedOperatorException", ()):
            "the op has no fake (meta) implementation, so it cannot run without data",
            getattr(ft, "DataDependentOutputException", ()):
            "the code reads a tensor's value (.item(), a branch on a tensor, data-dependent control flow), "
            "which a capture without data cannot follow",
            getattr(ft, "DynamicOutputShapeException", ()):
            "the op's output shape depends on the data (nonzero, masked_select, unique, ...)"}


def explain(e: BaseException) -> str | None:
    """Why a fake-mode failure happened, from the exception or one it was raised from."""
    kinds = _fake_exceptions()
    seen = e
    while seen is not None:
        for cls, why in kinds.items():
            if cls and isinstance(seen, cls):
                return why
        seen = seen.__cause__ or seen.__context__
    return None


def device_info() -> dict:
    import torch
    if not torch.cuda.is_available():
        return {"type": "cuda", "name": None, "capability": None}
    return {"type": "cuda", "name": torch.cuda.get_device_name(0),
            "capability": list(torch.cuda.get_device_capability(0))}


def build_fake(args, fake_mode, source, name, config):
    """The model, its optimizer (state made) and batch maker, all fake CUDA tensors. A model whose construction
    reads tensor values (timm's drop-path schedule: linspace(...).item()) is built for real on the CPU and its
    parameters and buffers then made fake."""
    import torch
    import models
    import step
    t0 = time.perf_counter()
    if source in ("transformers", "timm"):
        __import__(source)
        getattr(sys.modules[source], name, None)  # transformers loads a model's module on first access
    TIMES["import_library_s"] = time.perf_counter() - t0
    try:
        with fake_mode, torch.device("cuda"):
            built = models.build(source, name, config, args.activation_checkpointing, args.dtype_policy)
    except models.BuildError:
        raise
    except Exception as e:  # noqa: BLE001 -- any failure here is the model's; reported with its source
        if explain(e) is None:
            raise models.BuildError(f"{args.model}: the model failed to build: {type(e).__name__}: {e}") from e
        built = models.build(source, name, config, args.activation_checkpointing, args.dtype_policy)
        to_fake(built.model, fake_mode)
        built.info["built_on_cpu_then_faked"] = True
    TIMES["construct_s"] = time.perf_counter() - t0 - TIMES["import_library_s"]
    t1 = time.perf_counter()
    with fake_mode:
        step.apply_dtype_policy(built.model, args.dtype_policy)
        opt = step.make_optimizer([p for p in built.model.parameters() if p.requires_grad], args.optimizer,
                                  args.optimizer_impl)
        step.warm_optimizer(built.model, opt)
    TIMES["optimizer_state_s"] = time.perf_counter() - t1
    return built, opt


def to_fake(model, fake_mode) -> None:
    """Replace a real CPU module's parameters and buffers by fake CUDA tensors, shared ones staying shared."""
    import torch
    memo = {}
    for m in model.modules():
        for key, p in list(m._parameters.items()):
            if p is None:
                continue
            if id(p) not in memo:
                f = fake_mode.from_tensor(p.detach())
                with fake_mode:
                    f = f.to("cuda")
                memo[id(p)] = torch.nn.Parameter(f, requires_grad=p.requires_grad)
            m._parameters[key] = memo[id(p)]
        for key, b in list(m._buffers.items()):
            if b is not None:
                f = fake_mode.from_tensor(b)
                with fake_mode:
                    m._buffers[key] = f.to("cuda")


def capture_once(built, opt, fake_mode, args, B, S) -> dict:
    import torch
    import models
    import recorder
    import step
    with fake_mode:
        batch = built.make_batch(B, S, torch.device("cuda"), models.batch_dtype(args.dtype_policy))
    gc.collect()
    rec = recorder.StepRecorder(built.model, opt, batch)
    try:
        with fake_mode, rec:
            loss = step.train_step(built.model, opt, batch, built.loss, args.dtype_policy, "cuda",
                                   on_phase=rec.set_phase)
    except Exception as e:  # noqa: BLE001 -- reported with the op and module it happened in
        raise CaptureError(describe_failure(rec.failure, e)) from e
    graph = rec.result()
    del loss, batch
    graph["symbols"] = {"B": B, "S": S} if built.has_seq else {"B": B}
    return graph


TIMES: dict[str, float] = {}


class CaptureError(RuntimeError):
    pass


def describe_failure(failure: dict | None, e: BaseException) -> str:
    why = explain(e)
    head = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
    if failure is None or (failure["error"] is not e and failure["error"] not in _chain(e)):
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return (f"the step failed outside any aten op ({tb.filename}:{tb.lineno} in {tb.name}): {head}"
                + (f"\n  {why}" if why else ""))
    where = (f"in module {failure['module']!r} ({failure['module_class']})" if failure["module"] is not None
             else "outside the model's modules")
    return (f"aten op {failure['op']} failed {where}, phase {failure['phase']}: {head}"
            + (f"\n  {why}" if why else ""))


def _chain(e):
    out = []
    while e is not None:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def summary(graph: dict, seconds: float) -> str:
    import recorder
    by_phase = {}
    for op in graph["ops"]:
        k = by_phase.setdefault(op["phase"], [0, 0])
        k[0] += 1
        k[1] += 0 if op["view"] else 1
    kinds = {}
    for t in graph["tensors"]:
        kinds[t["kind"]] = kinds.get(t["kind"], 0) + 1
    pk = recorder.peak_bytes(graph)
    recompute = sum(op["recompute"] for op in graph["ops"])
    linked = sum(op["fwd_op"] is not None for op in graph["ops"] if op["phase"] == "backward")
    back = sum(op["phase"] == "backward" and not op["recompute"] for op in graph["ops"])
    ready = sum(p["grad_ready_op"] is not None for p in graph["params"])
    return (f"{len(graph['ops'])} aten ops in {seconds:.2f} s: "
            + ", ".join(f"{ph} {n} ({k} not views)" for ph, (n, k) in by_phase.items())
            + f"; recompute {recompute}; backward ops linked to a forward op {linked}/{back}; "
            + f"params {len(graph['params'])} (gradient ready op found for {ready}); storages "
            + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
            + f"; device bytes before the step {pk['start_bytes'] / 2**20:.1f} MiB, peak "
            + f"{pk['peak_bytes'] / 2**20:.1f} MiB after op {pk['peak_op']}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_step_arguments(ap)
    ap.add_argument("--second", help="B2,S2 (or B2): a second capture that marks which dimensions scale")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    try:
        source, name = options.parse_model(args.model)
        config = options.load_config(args.config)
    except options.OptionError as e:
        print(f"capture: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    import models
    TIMES["import_torch_s"] = time.perf_counter() - t0
    if not torch.cuda.is_available():
        print("capture: warning: no CUDA device is visible; the fake CUDA step needs one for the backward "
              "(docs/capture.md)", file=sys.stderr)
    fake_mode = FakeTensorMode()
    TIMES["fake_mode_s"] = time.perf_counter() - t0 - TIMES["import_torch_s"]
    try:
        built, opt = build_fake(args, fake_mode, source, name, config)
    except models.BuildError as e:
        print(f"capture: {e}", file=sys.stderr)
        return 1
    if built.has_seq and args.seq_len is None:
        print(f"capture: --seq-len is required for {args.model} (a token model)", file=sys.stderr)
        return 2
    if not built.has_seq and args.seq_len is not None:
        print(f"capture: warning: {args.model} takes images; --seq-len {args.seq_len} is ignored", file=sys.stderr)
        args.seq_len = None
    try:
        second = options.parse_second(args.second, built.has_seq)
    except options.OptionError as e:
        print(f"capture: {e}", file=sys.stderr)
        return 2
    t_build = time.perf_counter() - t0
    try:
        graph = capture_once(built, opt, fake_mode, args, args.micro_batch, args.seq_len)
        t_first = time.perf_counter() - t0
        print(f"capture: built in {t_build:.2f} s ("
              + ", ".join(f"{k[:-2].replace('_', ' ')} {v:.2f} s" for k, v in TIMES.items()) + "); "
              + summary(graph, t_first - t_build), file=sys.stderr)
        warnings = []
        if second is not None:
            g2 = capture_once(built, opt, fake_mode, args, second[0], second[1])
            t_second = time.perf_counter()
            graph, warnings = scaling.merge(graph, g2)
            print(f"capture: second capture at {g2['symbols']} in {t_second - t0 - t_first:.2f} s, merged in "
                  f"{time.perf_counter() - t_second:.2f} s", file=sys.stderr)
    except (CaptureError, scaling.ScaleError) as e:
        print(f"capture: {args.model}: {e}", file=sys.stderr)
        return 1
    for w in warnings[:20]:
        print(f"capture: warning: {w}", file=sys.stderr)
    if len(warnings) > 20:
        print(f"capture: warning: ... {len(warnings) - 20} more", file=sys.stderr)
    params = sum(p.numel() for p in built.model.parameters())
    out = {"format": opsfile.FORMAT, "version": opsfile.VERSION, "torch": torch.__version__,
           "python": platform.python_version(), "device": device_info(),
           "model": {"source": args.model, "config": config, "parameters": params, **built.info,
                     "fsdp_unit_classes": built.units},
           "step": options.step_spec(args), "symbols": graph["symbols"], "scaled": second is not None,
           **{k: graph[k] for k in ("modules", "params", "tensors", "ops")}}
    if second is not None:
        out["second_symbols"] = graph["second_symbols"]
    opsfile.write(args.output, out)
    print(f"capture: wrote {args.output} ({os.path.getsize(args.output)} bytes) in "
          f"{time.perf_counter() - t0:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
