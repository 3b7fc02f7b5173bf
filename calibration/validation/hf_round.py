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

A row with "nanogpt": {n_layer, n_head, n_embd, vocab_size, block_size, bias, dropout} builds nanoGPT's model instead
(Karpathy's model.py as written there: LayerNorm with an optional bias, c_attn split and transposed into causal SDPA,
y.transpose(1, 2).contiguous(), nn.GELU(), wte + wpe(arange), tied lm_head, F.cross_entropy inside the forward) and
trains it as nanoGPT's train.py does: AdamW fused with weight decay on the 2-D parameters (configure_optimizers), the
row's "grad_clip" (train.py's default 1.0) by clip_grad_norm_ before the step.

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


class NanoGPT(torch.nn.Module):
    """nanoGPT's GPT (model.py), the parts a training step runs."""

    class LayerNorm(torch.nn.Module):
        def __init__(self, n, bias):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(n))
            self.bias = torch.nn.Parameter(torch.zeros(n)) if bias else None

        def forward(self, x):
            return torch.nn.functional.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)

    class Block(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            nn, n, b = torch.nn, c["n_embd"], c["bias"]
            self.nh, self.n, self.p = c["n_head"], n, c["dropout"]
            self.ln_1, self.ln_2 = NanoGPT.LayerNorm(n, b), NanoGPT.LayerNorm(n, b)
            self.c_attn, self.c_proj = nn.Linear(n, 3 * n, bias=b), nn.Linear(n, n, bias=b)
            self.attn_dropout, self.resid_dropout = nn.Dropout(self.p), nn.Dropout(self.p)
            self.c_fc, self.mlp_proj, self.gelu = nn.Linear(n, 4 * n, bias=b), nn.Linear(4 * n, n, bias=b), nn.GELU()
            self.mlp_dropout = nn.Dropout(self.p)

        def attn(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n, dim=2)
            k = k.view(B, T, self.nh, C // self.nh).transpose(1, 2)
            q = q.view(B, T, self.nh, C // self.nh).transpose(1, 2)
            v = v.view(B, T, self.nh, C // self.nh).transpose(1, 2)
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.p if self.training else 0, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp_dropout(self.mlp_proj(self.gelu(self.c_fc(self.ln_2(x)))))

    def __init__(self, c):
        super().__init__()
        nn = torch.nn
        self.wte, self.wpe = nn.Embedding(c["vocab_size"], c["n_embd"]), nn.Embedding(c["block_size"], c["n_embd"])
        self.drop = nn.Dropout(c["dropout"])
        self.h = nn.ModuleList(NanoGPT.Block(c) for _ in range(c["n_layer"]))
        self.ln_f = NanoGPT.LayerNorm(c["n_embd"], c["bias"])
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.wte.weight = self.lm_head.weight
        self.vocab_size = c["vocab_size"]

    def forward(self, input_ids, labels):
        t = input_ids.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=input_ids.device)
        x = self.drop(self.wte(input_ids) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-1)
        return logits, loss


def nanogpt_optimizer(model, lr=1e-4, weight_decay=0.1):
    """configure_optimizers: decay on the parameters of 2 or more dimensions, fused AdamW."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), fused=True)


def build(row, base):
    if "nanogpt" in row:
        torch.manual_seed(0)
        model = NanoGPT(row["nanogpt"]).cuda().train()
        return model, model
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
    opt = nanogpt_optimizer(model) if "nanogpt" in row else torch.optim.AdamW(model.parameters(), lr=1e-4)
    clip = row.get("grad_clip", 0.0)
    fwd = torch.compile(model) if row.get("compile") else model
    B, S = row["micro_batch"], row["seq_len"]
    x = torch.randint(0, cfg.vocab_size, (B, S), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = fwd(input_ids=x, labels=x)
            loss = out[1] if isinstance(out, tuple) else out.loss  # nanoGPT returns (logits, loss)
        loss.backward()
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
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
