#!/usr/bin/env python3
"""Training steps of Hugging Face models built from their config.json with random weights, on one GPU: the held-out
rounds of the built-in model's `hf` implementation (docs/validation.md).

Per row of the rounds file (JSON list of {"name", "config", "layers"?, "micro_batch", "seq_len", "compile", "fp8"}):
transformers' class named by the config's `architectures` entry, built from the config (use_cache off, train mode;
`layers` overrides num_hidden_layers / n_layer), fp32 parameters, bf16 autocast, the loss transformers computes from
labels = input_ids, torch.optim.AdamW (foreach, PyTorch's default); `compile`: torch.compile(model) (default mode);
`fp8`: tensorwise or rowwise, every eligible nn.Linear converted to calibration/pytorch/fp8_linear.py's Float8Linear
(torchao's, written with torch._scaled_mm; torchao is not installed on the measuring machine). Step: zero_grad, forward
and loss, backward, optimizer step. 5 warm-up steps, then 20 steps timed back to back between CUDA events; the median
step and the host-free device time are written, one JSON line per row, with the machine and versions.

Usage: python3 hf_round.py ROUNDS.json --out FILE.jsonl [--configs scenarios/hf] [--budget-s 200]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pytorch"))
sys.path.insert(0, HERE)  # a copy of fp8_linear.py beside this file


def build(row, base):
    import transformers
    cfg_dict = json.load(open(os.path.join(base, row["config"])))
    cls = getattr(transformers, cfg_dict["architectures"][0])
    cfg = cls.config_class.from_dict(dict(cfg_dict))
    cfg.use_cache = False
    if "layers" in row:
        for k in ("num_hidden_layers", "n_layer"):
            if hasattr(cfg, k):
                setattr(cfg, k, row["layers"])
    torch.manual_seed(0)
    model = cls(cfg).cuda().train()
    if row.get("fp8", "none") != "none":
        import fp8_linear
        row["fp8_linears"] = fp8_linear.convert(model, row["fp8"], with_bias=True)
    return model, cfg


def measure(row, base):
    model, cfg = build(row, base)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fwd = torch.compile(model) if row.get("compile") else model
    B, S = row["micro_batch"], row["seq_len"]
    x = torch.randint(0, cfg.vocab_size, (B, S), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()

    t0 = time.perf_counter()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    warm_s = time.perf_counter() - t0
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(21)]
    for i in range(20):
        ev[i].record()
        step()
        ev[i + 1].record()
    torch.cuda.synchronize()
    steps = [ev[i].elapsed_time(ev[i + 1]) for i in range(20)]
    out = {"kind": "hf_step", "name": row["name"], "step_ms": statistics.median(steps),
           "step_ms_p10": sorted(steps)[2], "step_ms_p90": sorted(steps)[17], "warmup_s": warm_s,
           "params": sum(p.numel() for p in model.parameters()), "row": row}
    del model, opt, fwd
    torch._dynamo.reset()
    torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rounds")
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=200)
    ap.add_argument("--configs", default=None, help="the folder of the config files (default: the rounds file's)")
    a = ap.parse_args()
    rows = json.load(open(a.rounds))
    base = a.configs or os.path.dirname(os.path.abspath(a.rounds))
    import transformers
    t0 = time.perf_counter()
    with open(a.out, "w") as f:
        f.write(json.dumps({"kind": "metadata", "tool": "hf_round.py", "torch": torch.__version__,
                            "transformers": transformers.__version__, "gpu": torch.cuda.get_device_name(),
                            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n")
        for row in rows:
            if time.perf_counter() - t0 > a.budget_s:
                f.write(json.dumps({"kind": "skipped", "name": row["name"], "why": "budget"}) + "\n")
                continue
            try:
                r = measure(row, base)
            except Exception as e:  # keep the other rows
                r = {"kind": "error", "name": row["name"], "error": repr(e)[:400]}
            f.write(json.dumps(r) + "\n")
            f.flush()
            print(json.dumps({k: v for k, v in r.items() if k != "row"}), flush=True)
    print(f"done in {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
