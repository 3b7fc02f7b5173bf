#!/usr/bin/env python3
"""stepsim's predictions of calibration/pytorch/memory_check.py's configurations, and their comparison.

  python3 results/validation/memory/predict.py predict [PROFILE]   # predicted.jsonl and predicted.md (before the run)
  python3 results/validation/memory/predict.py compare measured.jsonl   # writes compare.md (after it)
  python3 results/validation/memory/predict.py rescore measured.jsonl   # writes rescored.md: this build against the
                                                                        # same run, beside the committed prediction

Each configuration is the measured GPT (12 layers, hidden 1536, 12 heads, vocabulary 50304, 4 sequences of 1024
tokens, fp32 parameters under bf16 autocast, foreach optimizers) as a stepsim scenario, run with
`build/stepsim run --json`: its peak_memory_gib and memory_gib, and step_time_ms. A DDP configuration runs on two
GPUs of an hgx-h200 node (stepsim adds no DDP to a one-GPU scenario; DDP's memory per GPU does not depend on the
world size), every other on one.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BIN = os.path.join(ROOT, "build", "stepsim")

MODEL = {"type": "transformer", "layers": 12, "hidden": 1536, "heads": 12, "ffn_hidden": 6144, "vocab": 50304,
         "seq_len": 1024, "mlp": "gelu", "norm": "layernorm"}

# memory_check.py's ids → (gpus, training, ddp, parallel data, fsdp)
CONFIGS = {
    "plain-adamw": (1, {}, {}, "ddp", {}),
    "plain-adam": (1, {"optimizer": "adam"}, {}, "ddp", {}),
    "plain-sgd-momentum": (1, {"optimizer": "sgd", "sgd_momentum": 0.9}, {}, "ddp", {}),
    "plain-sgd": (1, {"optimizer": "sgd"}, {}, "ddp", {}),
    "plain-adamw-full-ckpt": (1, {"activation_checkpointing": "full"}, {}, "ddp", {}),
    "ddp-adamw": (2, {}, {}, "ddp", {}),
    "ddp-sgd-momentum": (2, {"optimizer": "sgd", "sgd_momentum": 0.9}, {}, "ddp", {}),
    "ddp-adamw-bucket-view": (2, {}, {"gradient_as_bucket_view": True}, "ddp", {}),
    "ddp-adamw-find-unused": (2, {}, {"find_unused_parameters": True}, "ddp", {}),
    "ddp-adamw-static-graph": (2, {}, {"static_graph": True}, "ddp", {}),
    "ddp-adamw-powersgd": (2, {}, {"comm_hook": "powersgd", "powersgd_start_iter": 2}, "ddp", {}),
    "fsdp2-adamw-reshard": (1, {}, {}, "fsdp2", {"reshard_after_forward": True}),
    "fsdp2-adamw-noreshard": (1, {}, {}, "fsdp2", {"reshard_after_forward": False}),
    "fsdp2-adamw-reshard-mp": (1, {}, {}, "fsdp2", {"reshard_after_forward": True, "param_dtype": "bf16",
                                                   "reduce_dtype": "fp32"}),
    "fsdp2-adamw-noreshard-mp": (1, {}, {}, "fsdp2", {"reshard_after_forward": False, "param_dtype": "bf16",
                                                     "reduce_dtype": "fp32"}),
}


def scenario(cid, profile):
    gpus, training, ddp, data, fsdp = CONFIGS[cid]
    t = {"micro_batch": 4, "grad_accum": 1, "param_dtype": "fp32", "compute_dtype": "bf16", "optimizer": "adamw",
         "optimizer_impl": "foreach"}
    t.update(training)
    sc = {"stepsim": 1, "name": cid, "cluster": {"node": "hgx-h200", "nodes": 1, "gpus_per_node": gpus,
                                                 "profile": profile},
          "model": MODEL, "training": t, "parallel": {"data": data}, "sim": {"steps": 4, "seed": 1}}
    if ddp:
        sc["ddp"] = ddp
    if fsdp:
        sc["fsdp"] = fsdp
    return sc


def run_all(profile):
    """This build's result for every configuration: id -> stepsim's --json."""
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for cid in CONFIGS:
            path = os.path.join(d, cid + ".yaml")
            with open(path, "w") as f:
                json.dump(scenario(cid, profile), f)  # JSON is YAML
            res = os.path.join(d, cid + ".json")
            subprocess.run([BIN, "run", path, "--json", res], check=True, stdout=subprocess.DEVNULL)
            with open(res) as f:
                out[cid] = json.load(f)
    return out


def rescore(measured_path):
    """The committed prediction (before the run) and this build (refined on the run: not held out) per row."""
    pred = {}
    with open(os.path.join(HERE, "predicted.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            pred[r["id"]] = r
    now = run_all("builtin")
    err = lambda a, b: f"{100 * (a - b) / b:+.1f}%"
    lines = ["# Peak memory and step time, rescored: the committed prediction and this build against the same run", "",
             "Made by `predict.py rescore` from predicted.jsonl (before the run), this build's `stepsim run --json` on the",
             "built-in profile and measured.jsonl. The \"now\" columns are refined on these runs (the peak's phase model",
             "was written after them), not held out. The DDP rows are predicted on two GPUs and measured on one rank: their",
             "step times differ by the all-reduces.", "",
             "| id | measured GiB | before GiB | error | now GiB | error | peak phase | measured ms | before ms | "
             "error | now ms | error |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    with open(measured_path) as f:
        for line in f:
            m = json.loads(line)
            if m.get("kind") != "memory_check" or m["id"] not in pred or "error" in m:
                continue
            p, n = pred[m["id"]], now[m["id"]]
            me, ms = m["max_allocated_gib"], m["step_ms"]
            lines.append(f"| {m['id']} | {me:.2f} | {p['peak_memory_gib']:.2f} | {err(p['peak_memory_gib'], me)} | "
                         f"{n['peak_memory_gib']:.2f} | {err(n['peak_memory_gib'], me)} | {n.get('memory_peak_phase', '')} | "
                         f"{ms:.1f} | {p['step_time_ms']:.1f} | {err(p['step_time_ms'], ms)} | "
                         f"{n['step_time_ms']:.1f} | {err(n['step_time_ms'], ms)} |")
    with open(os.path.join(HERE, "rescored.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def predict(profile):
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for cid in CONFIGS:
            path = os.path.join(d, cid + ".yaml")
            with open(path, "w") as f:
                json.dump(scenario(cid, profile), f)  # JSON is YAML
            out = os.path.join(d, cid + ".json")
            subprocess.run([BIN, "run", path, "--json", out], check=True, stdout=subprocess.DEVNULL)
            with open(out) as f:
                r = json.load(f)
            rows.append({"id": cid, "peak_memory_gib": r["peak_memory_gib"], "memory_gib": r["memory_gib"],
                         "step_time_ms": r["step_time_ms"]})
    with open(os.path.join(HERE, "predicted.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    lines = ["# stepsim's predictions for memory_check.py's configurations (before the run)", "",
             "GiB per GPU; step time in ms. Made by `predict.py predict` from this build, profile: "
             + ("built in" if profile == "builtin" else os.path.basename(profile)) + ".", "",
             "| id | peak | params | grads | optimizer | activations | buffers | step ms |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m = r["memory_gib"]
        lines.append(f"| {r['id']} | {r['peak_memory_gib']:.2f} | {m['params']:.2f} | {m['grads']:.2f} | "
                     f"{m['optimizer']:.2f} | {m['activations']:.2f} | {m['buffers']:.2f} | {r['step_time_ms']:.1f} |")
    with open(os.path.join(HERE, "predicted.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def compare(measured_path):
    pred = {}
    with open(os.path.join(HERE, "predicted.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            pred[r["id"]] = r
    lines = ["# Peak memory and step time: stepsim's prediction against torch.cuda.max_memory_allocated", "",
             "Made by `predict.py compare` from predicted.jsonl (committed before the run) and the run's records.", "",
             "| id | predicted GiB | measured GiB | error | between steps GiB | predicted ms | measured ms | error |",
             "|---|---|---|---|---|---|---|---|"]
    with open(measured_path) as f:
        for line in f:
            m = json.loads(line)
            if m.get("kind") != "memory_check" or m["id"] not in pred:
                continue
            p = pred[m["id"]]
            if "error" in m:
                lines.append(f"| {m['id']} | {p['peak_memory_gib']:.2f} | failed: {m['error'][:60]} | | | | | |")
                continue
            me, pe = m["max_allocated_gib"], p["peak_memory_gib"]
            ms, ps = m["step_ms"], p["step_time_ms"]
            lines.append(f"| {m['id']} | {pe:.2f} | {me:.2f} | {100 * (pe - me) / me:+.1f}% | "
                         f"{m['between_steps_gib']:.2f} | {ps:.1f} | {ms:.1f} | {100 * (ps - ms) / ms:+.1f}% |")
    with open(os.path.join(HERE, "compare.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) in (2, 3) and sys.argv[1] == "predict":
        predict(os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else "builtin")
    elif len(sys.argv) == 3 and sys.argv[1] == "compare":
        compare(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "rescore":
        rescore(sys.argv[2])
    else:
        sys.exit(__doc__)
