#!/usr/bin/env python3
"""The optimizer step and the norms' kernels timed in the power state a training step runs them in.

A training step runs AdamW right after the backward's GEMMs, with the board at its power limit and the SM clock
where those GEMMs hold it (1530-1725 MHz at hidden 2048, against ~1980 at rest: README §3). The bench
(stepsim_torch_bench.py) times the optimizer after a spin kernel, at rest, over 16 Mi-parameter tensors. In the
H200 steps' traces the fused AdamW ran 3-5% over the fitted rate over fp32 parameters and 10-12% over it over bf16
ones. This script separates the two candidate causes, each case timed both ways in one process:

  rested: timing.looped's spin-and-burst (the stream held by a spin kernel while the host queues the calls);
  heated: the stream held by 8192³ BF16 GEMMs for `--heat-s` before every burst (timing.Heater), so the calls run
          at the clock a step's GEMMs leave behind;

over two parameter lists of one size: a GPT model's own tensors (`--layers`, `--hidden`; every weight, bias and
norm parameter, embeddings included, the untied head with `--head`: run 91 ran without it) and 16 Mi-parameter
chunks (the bench's layout). Cases: AdamW fused and foreach, fp32 and bf16 parameters (bf16 states), and the norms'
three kernels at a few sizes (fp32 and bf16).

Writes JSON Lines: one record per case and state: {"kind": "optimizer_state" | "norm_state", "case", "state",
"time_us": {median, p10, p90, n}, ...}.

usage: optimizer_state.py --out FILE [--layers 24 --hidden 2048 --vocab 50304 --seq 2048] [--heat-s 1.0]
"""
import argparse
import json
import sys
import time

import torch

from timing import Heater, looped, summarize


def gpt_shapes(layers, hidden, vocab, seq, head=True):
    """The parameter tensors of the harness's GPT (calibration/validation/train_gpt.py, GELU MLP, LayerNorm), with
    its untied head unless `head` is false (run 91 timed the models without it)."""
    h = hidden
    per_layer = [(3 * h, h), (3 * h,), (h, h), (h,), (4 * h, h), (4 * h,), (h, 4 * h), (h,), (h,), (h,), (h,), (h,)]
    return [(vocab, h), (seq, h)] + per_layer * layers + [(h,), (h,)] + ([(vocab, h)] if head else [])


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def make_params(shapes, dtype):
    params = [torch.nn.Parameter(torch.randn(s, device="cuda", dtype=dtype) * 0.02) for s in shapes]
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    return params


def timed(fn, heater, heat_s, reps, inner):
    rested = looped(fn, reps=reps, inner=inner)
    heated = looped(fn, reps=reps, inner=inner, holder=heater, hold_s=heat_s)
    return {"rested": summarize(rested), "heated": summarize(heated)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--vocab", type=int, default=50304)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--heat-s", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--head", action="store_true", help="include the untied head's weight (vocab × hidden)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("optimizer_state: no CUDA GPU is visible to PyTorch; nothing was measured.", file=sys.stderr)
        return 2
    out = open(args.out, "a")

    def write(rec):
        rec.update({"gpu": torch.cuda.get_device_name(), "torch_version": torch.__version__,
                    "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        out.write(json.dumps(rec) + "\n")
        out.flush()
        print(json.dumps({k: rec[k] for k in rec if k not in ("gpu", "torch_version")}), flush=True)

    heater = Heater("cuda")
    shapes = gpt_shapes(args.layers, args.hidden, args.vocab, args.seq, args.head)
    total = sum(numel(s) for s in shapes)
    chunk = 16 * 2**20
    chunks = [(chunk,)] * (total // chunk) + ([(total % chunk,)] if total % chunk else [])
    for dname, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        for impl in ("fused", "foreach"):
            for layout, sh in (("model", shapes), ("chunks", chunks)):
                params = make_params(sh, dt)
                opt = torch.optim.AdamW(params, lr=1e-4, fused=impl == "fused",
                                        foreach=True if impl == "foreach" else None)
                t = timed(opt.step, heater, args.heat_s, args.reps, inner=3)
                for state, s in t.items():
                    write({"kind": "optimizer_state", "case": f"adamw_{impl}_{dname}", "layout": layout,
                           "params": total, "tensors": len(sh), "model": {"layers": args.layers, "hidden": args.hidden},
                           "state": state, "heat_s": args.heat_s if state == "heated" else 0, "time_us": s})
                del params, opt
                torch.cuda.empty_cache()
    F = torch.nn.functional
    for tokens, hidden in ((8192, 768), (8192, 2048), (4096, 4096)):
        for dname, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            x = torch.randn(tokens, hidden, device="cuda", dtype=dt)
            w = torch.randn(hidden, device="cuda", dtype=dt)
            bias = torch.randn(hidden, device="cuda", dtype=dt)
            xr = x.detach().clone().requires_grad_(True)
            wr = w.detach().clone().requires_grad_(True)
            br = bias.detach().clone().requires_grad_(True)
            out_x = F.layer_norm(xr, (hidden,), w, bias)
            out_w = F.layer_norm(x, (hidden,), wr, br)
            g = torch.randn_like(out_x)
            cases = (("fwd", lambda: F.layer_norm(x, (hidden,), w, bias)),
                     ("bwd", lambda: torch.autograd.grad(out_x, xr, g, retain_graph=True)),
                     ("bwd_weight", lambda: torch.autograd.grad(out_w, (wr, br), g, retain_graph=True)))
            for what, fn in cases:
                t = timed(fn, heater, args.heat_s, args.reps, inner=20)
                for state, s in t.items():
                    write({"kind": "norm_state", "case": f"layer_norm_{what}_{dname}",
                           "shape": {"tokens": tokens, "hidden": hidden}, "state": state,
                           "heat_s": args.heat_s if state == "heated" else 0, "time_us": s})
            del x, w, bias, xr, wr, br, out_x, out_w, g
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
