#!/usr/bin/env python3
"""The ways users write the same GPT model, timed one at a time on one GPU (issue 32).

The base model is the validation suite's (calibration/validation/train_gpt.py): fp32 parameters under bf16
autocast, fused AdamW, zero_grad(set_to_none=True), token embedding + a learned position parameter sliced to the
sequence, pre-norm blocks with one qkv Linear split into q, k, v, causal SDPA, GELU-tanh MLP, LayerNorm, untied
head, cross_entropy on the logits under autocast, every Linear bias-free. Each variant changes one thing:
  pos:     param (a parameter sliced) | embedding (nn.Embedding over arange, GPT-2 / nanoGPT / Hugging Face) |
           rope (rotary: cos/sin tables, rotate-half, Llama / Hugging Face style) | none
  loss:    autocast (cross_entropy on the bf16 logits under autocast) | fp32 (logits.float() first)
  qkv:     split (one Linear, split, view, transpose) | permute (one Linear viewed (B,T,3,H,D), permuted, unbound)
           | separate (three Linears q, k, v, as Hugging Face Llama and torchtitan)
  bias:    every Linear with a bias (GPT-2, nanoGPT default) or none
  tied:    head weight = token embedding
  dropout: p on the embedding, SDPA and both residual branches (nanoGPT style)
  mlp/norm: gelu|swiglu, layernorm|rmsnorm (Llama-style configurations)
Per configuration: warm-up, then STEPS steps queued behind a held GPU (timing.py) with a CUDA event at each step's
start, so the events time the device's step; the median. Then one step under torch.profiler (CUDA activity only):
kernel count and per-kernel-name count and device time, and the SDPA backend its kernels show.

usage: model_variants.py --out FILE [--shapes NAMES] [--variants NAMES] [--configs JSON_FILE] [--steps N]
Writes JSON Lines, one record per configuration (kind "variant_step").
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import hold_gpu  # noqa: E402

BASE = {"layers": 12, "hidden": 2048, "heads": 16, "kv_heads": None, "ffn_hidden": None, "vocab": 50304,
        "seq_len": 2048, "micro_batch": 4, "pos": "param", "loss": "autocast", "qkv": "split", "bias": False,
        "tied": False, "dropout": 0.0, "mlp": "gelu", "norm": "layernorm"}

SHAPES = {
    "h1024": {"layers": 12, "hidden": 1024, "heads": 16, "seq_len": 2048, "micro_batch": 8},
    "h2048": {"layers": 12, "hidden": 2048, "heads": 16, "seq_len": 2048, "micro_batch": 4},
    "h3072": {"layers": 8, "hidden": 3072, "heads": 24, "seq_len": 2048, "micro_batch": 2},
    "h4096": {"layers": 6, "hidden": 4096, "heads": 32, "seq_len": 2048, "micro_batch": 2},
    # a quarter of the tokens x hidden of the shapes above (16.8M each, h3072 12.6M): with it the bias and rotary
    # kernels span 4x in bytes, and a fit of fixed cost and bandwidth needs two sizes or more. No "-" in a shape's
    # name: variant_raw.py splits the ids on it.
    "h1024mb2": {"layers": 12, "hidden": 1024, "heads": 16, "seq_len": 2048, "micro_batch": 2},
}

VARIANTS = {
    "base": {},
    "pos_embedding": {"pos": "embedding"},
    "pos_rope": {"pos": "rope"},
    "pos_none": {"pos": "none"},
    "loss_fp32": {"loss": "fp32"},
    "qkv_permute": {"qkv": "permute"},
    "qkv_separate": {"qkv": "separate"},
    "bias": {"bias": True},
    "tied": {"tied": True},
    "dropout": {"dropout": 0.1},
    "heldout_style": {"pos": "embedding", "qkv": "permute", "loss": "fp32"},
    "gpt2_style": {"pos": "embedding", "bias": True, "tied": True},
    "base_again": {},
}


def norm(kind, h, bias):
    return nn.LayerNorm(h) if kind == "layernorm" else nn.RMSNorm(h)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, b = c["hidden"], c["bias"]
        self.nh, self.nkv = c["heads"], c["kv_heads"]
        self.hd = h // self.nh
        self.c = c
        self.n1, self.n2 = norm(c["norm"], h, b), norm(c["norm"], h, b)
        qd, kd = self.nh * self.hd, self.nkv * self.hd
        if c["qkv"] == "separate":
            self.q, self.k, self.v = nn.Linear(h, qd, bias=b), nn.Linear(h, kd, bias=b), nn.Linear(h, kd, bias=b)
        else:
            self.qkv = nn.Linear(h, qd + 2 * kd, bias=b)
        self.proj = nn.Linear(h, h, bias=b)
        f = c["ffn_hidden"]
        if c["mlp"] == "swiglu":
            self.gate, self.up, self.down = nn.Linear(h, f, bias=b), nn.Linear(h, f, bias=b), nn.Linear(f, h, bias=b)
        else:
            self.fc, self.fc_out = nn.Linear(h, f, bias=b), nn.Linear(f, h, bias=b)
        self.drop = nn.Dropout(c["dropout"]) if c["dropout"] > 0 else nn.Identity()

    def forward(self, x, rope):
        B, T, h = x.shape
        z = self.n1(x)
        if self.c["qkv"] == "separate":
            q = self.q(z).view(B, T, self.nh, self.hd).transpose(1, 2)
            k = self.k(z).view(B, T, self.nkv, self.hd).transpose(1, 2)
            v = self.v(z).view(B, T, self.nkv, self.hd).transpose(1, 2)
        elif self.c["qkv"] == "permute":
            assert self.nkv == self.nh
            q, k, v = self.qkv(z).view(B, T, 3, self.nh, self.hd).permute(2, 0, 3, 1, 4).unbind(0)
        else:
            q, k, v = self.qkv(z).split([self.nh * self.hd, self.nkv * self.hd, self.nkv * self.hd], dim=-1)
            q = q.view(B, T, self.nh, self.hd).transpose(1, 2)
            k = k.view(B, T, self.nkv, self.hd).transpose(1, 2)
            v = v.view(B, T, self.nkv, self.hd).transpose(1, 2)
        if rope is not None:
            cos, sin = rope
            cos, sin = cos.to(q.dtype), sin.to(q.dtype)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.nkv != self.nh,
                                           dropout_p=self.c["dropout"] if self.training else 0.0)
        x = x + self.drop(self.proj(y.transpose(1, 2).reshape(B, T, h)))
        z = self.n2(x)
        m = self.down(F.silu(self.gate(z)) * self.up(z)) if self.c["mlp"] == "swiglu" else \
            self.fc_out(F.gelu(self.fc(z), approximate="tanh"))
        return x + self.drop(m)


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, T = c["hidden"], c["seq_len"]
        self.c = c
        self.tok = nn.Embedding(c["vocab"], h)
        if c["pos"] == "param":
            self.pos = nn.Parameter(torch.randn(T, h) * 0.02)
        elif c["pos"] == "embedding":
            self.pos = nn.Embedding(T, h)
        elif c["pos"] == "rope":
            hd = h // c["heads"]
            inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
            ang = torch.outer(torch.arange(T, dtype=torch.float32), inv)
            ang = torch.cat((ang, ang), dim=-1)
            self.register_buffer("cos", ang.cos(), persistent=False)
            self.register_buffer("sin", ang.sin(), persistent=False)
        self.drop = nn.Dropout(c["dropout"]) if c["dropout"] > 0 else nn.Identity()
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.nf = norm(c["norm"], h, c["bias"])
        self.head = nn.Linear(h, c["vocab"], bias=False)
        if c["tied"]:
            self.head.weight = self.tok.weight

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok(idx)
        rope = None
        if self.c["pos"] == "param":
            x = x + self.pos[:T]
        elif self.c["pos"] == "embedding":
            x = x + self.pos(torch.arange(T, device=idx.device))
        elif self.c["pos"] == "rope":
            rope = (self.cos[:T], self.sin[:T])
        x = self.drop(x)
        for b in self.blocks:
            x = b(x, rope)
        return self.head(self.nf(x))


def complete(c):
    c = dict(c)
    if c.get("kv_heads") is None:
        c["kv_heads"] = c["heads"]
    if c.get("ffn_hidden") is None:
        h = c["hidden"]
        c["ffn_hidden"] = 4 * h if c["mlp"] == "gelu" else 256 * math.ceil(8 * h / 3 / 256)
    return c


def kernel_table(prof):
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None)
        if t is None:
            t = getattr(e, "cuda_time_total", 0.0)
        if t and e.count:
            rows.append({"name": e.key[:160], "count": e.count, "total_us": round(float(t), 2)})
    rows.sort(key=lambda r: -r["total_us"])
    return rows


def backend(rows):
    names = " ".join(r["name"].lower() for r in rows)
    if "cudnn" in names and ("sdpa" in names or "fort_native" in names):
        return "cudnn"
    if "flash" in names:
        return "flash"
    if "fmha" in names or "efficient" in names or "mem_eff" in names:
        return "efficient"
    return "math_or_unknown"


def run(c, steps, warmup, dev):
    torch.manual_seed(1234)
    with torch.device(dev):
        model = GPT(c)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    V, T, mb = c["vocab"], c["seq_len"], c["micro_batch"]
    tok = torch.randint(0, V, (mb, T + 1), device=dev)
    x, y = tok[:, :-1].contiguous(), tok[:, 1:].contiguous()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            if c["loss"] == "fp32":
                logits = logits.float()
            loss = F.cross_entropy(logits.view(-1, V), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    t = time.perf_counter()
    step()
    torch.cuda.synchronize()
    one = time.perf_counter() - t
    # host issue time of one step (the device drained first): a GPU-bound step issues in well under its time
    torch.cuda._sleep(int(2e9 * 0.2))
    t = time.perf_counter()
    step()
    host = time.perf_counter() - t
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
    hold_gpu(min(0.5, 1.2 * host * steps) + 2e-3)
    for i in range(steps):
        ev[i].record()
        step()
    ev[steps].record()
    torch.cuda.synchronize()
    ms = [ev[i].elapsed_time(ev[i + 1]) for i in range(steps)]
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    rows = kernel_table(prof)
    s = sorted(ms)
    out = {"step_ms": {"median": statistics.median(ms), "p10": s[int(0.1 * (len(s) - 1))],
                       "p90": s[int(0.9 * (len(s) - 1) + 0.5)], "n": len(ms), "all": [round(v, 4) for v in ms]},
           "first_timed_single_s": one, "host_issue_ms": host * 1e3,
           "kernels_per_step": sum(r["count"] for r in rows), "kernel_busy_ms": sum(r["total_us"] for r in rows) / 1e3,
           "sdpa_backend": backend(rows), "kernels": rows,
           "params": sum(p.numel() for p in model.parameters()),
           "peak_memory_gib": torch.cuda.max_memory_allocated(dev) / 2**30}
    del model, opt
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", default="h1024,h2048,h3072,h4096")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--configs", default=None, help="JSON file: a list of {id, ...BASE fields} (held-out rounds)")
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--time-limit", type=float, default=1e9, help="stop starting configurations after this many s")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("no GPU", file=sys.stderr)
        return 2
    dev = torch.device("cuda", 0)
    jobs = []
    if args.configs:
        for c in json.load(open(args.configs)):
            jobs.append((c["id"], complete({**BASE, **{k: v for k, v in c.items() if k != "id"}})))
    else:
        for sname in args.shapes.split(","):
            for vname in args.variants.split(","):
                jobs.append((f"{sname}-{vname}", complete({**BASE, **SHAPES[sname], **VARIANTS[vname]})))
    t0 = time.monotonic()
    meta = {"kind": "meta", "torch": torch.__version__, "cuda": torch.version.cuda,
            "gpu": torch.cuda.get_device_name(0), "cudnn": torch.backends.cudnn.version(),
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with open(args.out, "w") as f:
        f.write(json.dumps(meta) + "\n")
        for jid, c in jobs:
            if time.monotonic() - t0 > args.time_limit:
                f.write(json.dumps({"kind": "skipped", "id": jid, "reason": "time limit"}) + "\n")
                continue
            torch.cuda.reset_peak_memory_stats()
            rec = {"kind": "variant_step", "id": jid, "config": c}
            try:
                rec.update(run(c, args.steps, args.warmup, dev))
                rec["status"] = "ok"
            except Exception as e:  # noqa: BLE001 -- recorded per configuration, the rest go on
                rec.update(status="error", error=repr(e)[:800])
            torch.cuda.empty_cache()
            rec["wall_s"] = time.monotonic() - t0
            f.write(json.dumps(rec) + "\n")
            f.flush()
            st = rec.get("step_ms", {})
            print(f"[variants] {jid}: {rec['status']} {st.get('median', float('nan')):.3f} ms "
                  f"host {rec.get('host_issue_ms', float('nan')):.1f} ms kernels {rec.get('kernels_per_step')} "
                  f"sdpa {rec.get('sdpa_backend')} ({rec['wall_s']:.0f} s) {rec.get('error', '')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
