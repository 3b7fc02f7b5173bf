#!/usr/bin/env python3
"""A battery of bad and edge inputs against every reader and command of stepsim (tests/battery/README.md).

Usage: tests/battery/run.py STEPSIM [--short] [--jobs N] [--filter TEXT] [--list] [--verbose]

Each case is a command line (with the files it reads, written into a scratch folder) and the class it is expected
to end in:
  refuse  exit status 2, and a message on stderr starting `error:` that names the input: `FILE:LINE: KEY` for a key
          of a file, `--set KEY` for an override, the file for a file-level error, the flag for a command-line one;
  warn    exit status 0, and the result's warnings (its --json) name the key as having no effect;
  run     exit status 0, and no key named as having no effect.
Every case is also checked for what must never happen: an `internal error` (exit status 3), a crash (a signal), a
hang (past its timeout), more than 2 GiB of address space (RLIMIT_AS; an allocation past it ends as an internal
error or a crash, reported as over 2 GiB). The cases are generated from tables (key x value, flag x value, file x
defect), not written one by one. Python's standard library only.
"""
import argparse
import concurrent.futures
import gzip
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

LIMIT_AS = 2 << 30
TIMEOUT_S = 30
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Case:
    def __init__(self, name, argv, expect, files=None, key=None, where=None, timeout=TIMEOUT_S, short=False):
        self.name = name
        self.argv = argv            # argv after the binary; '{dir}' is the case's scratch folder
        self.expect = expect        # refuse | warn | run
        self.files = files or {}    # name -> bytes or str, written into the scratch folder
        self.key = key              # the key a warning or a refusal names
        self.where = where          # a regex the refusal's message must match (the default: from key and files)
        self.timeout = timeout
        self.short = short          # in the short run


# ---------------------------------------------------------------------------------------------------------------
# Scenarios written from nested dicts, so that a key lands on a known line.

BASE = {
    "stepsim": "1",
    "name": "battery",
    "cluster": {"node": "hgx-h200", "gpus_per_node": "2"},
    "model": {"layers": "2", "hidden": "256", "heads": "4", "seq_len": "128", "vocab": "1024"},
    "training": {"micro_batch": "2"},
    "sim": {"steps": "3"},
}


def merged(base, extra):
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for path, value in extra.items():
        parts = path.split(".")
        node = out
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ValueError(path)
        node[parts[-1]] = value
    return out


def yaml_text(tree, indent=0):
    """Block-style YAML; returns (text, {path: line})."""
    lines, where = [], {}

    def emit(node, depth, prefix):
        for k, v in node.items():
            path = prefix + k
            if isinstance(v, dict):
                lines.append("  " * depth + k + ":")
                where[path] = len(lines)
                emit(v, depth + 1, path + ".")
            else:
                lines.append("  " * depth + k + ": " + v)
                where[path] = len(lines)

    emit(tree, indent, "")
    return "\n".join(lines) + "\n", where


def scenario(extra=None, base=BASE):
    return yaml_text(merged(base, extra or {}))[0]


# ---------------------------------------------------------------------------------------------------------------
# The scenario's keys: kind, and the context in which the key acts (so that a valid value is read, not ignored).

I_POS, I_NONNEG, F_POS, F_NONNEG, F_UNIT, BOOL, ENUM, STR, OPT_I, OPT_F, OPT_ENUM = (
    "int>=1", "int>=0", "num>0", "num>=0", "num in [0,1)", "bool", "enum", "str", "int|null", "num|null", "enum|null")

# key: (kind, a valid value other than the default, the context that makes the key act)
FSDP = {"parallel.data": "fsdp2"}
ZERO3 = {"parallel.data": "zero3"}
COMPILE = {"compile.enabled": "true"}
PSGD = {"ddp.comm_hook": "powersgd", "sim.steps": "3"}
CKPT = {"checkpoint.interval_steps": "1", "checkpoint.mode": "async"}
LOADER = {"data_loader.num_workers": "2"}
PP = {"parallel.pp": "2", "training.grad_accum": "2"}
KEYS = {
    "cluster.nodes": (I_POS, "2", {}),
    "cluster.gpus_per_node": (I_POS, "4", {}),
    "cluster.network.nic_gbps": (F_POS, "200", {"cluster.nodes": "2"}),
    "cluster.network.nics_per_node": (I_POS, "4", {"cluster.nodes": "2"}),
    "cluster.network.oversubscription": ("num>=1", "2", {"cluster.nodes": "2"}),
    "model.layers": (I_POS, "4", {}),
    "model.hidden": (I_POS, "512", {}),
    "model.heads": (I_POS, "8", {}),
    "model.kv_heads": (OPT_I, "2", {}),
    "model.ffn_hidden": (OPT_I, "512", {}),
    "model.vocab": (I_POS, "2048", {}),
    "model.seq_len": (I_POS, "256", {}),
    "model.mlp": (ENUM, "swiglu", {}),
    "model.norm": (ENUM, "rmsnorm", {}),
    "model.tied_embeddings": (BOOL, "true", {}),
    "model.dropout": (F_UNIT, "0.1", {}),
    "training.micro_batch": (I_POS, "4", {}),
    "training.grad_accum": (I_POS, "2", {}),
    "training.param_dtype": (ENUM, "bf16", {}),
    "training.compute_dtype": (ENUM, "fp16", {}),
    "training.optimizer": (ENUM, "sgd", {}),
    "training.optimizer_impl": (ENUM, "fused", {}),
    "training.sgd_momentum": (F_UNIT, "0.9", {"training.optimizer": "sgd"}),
    "training.grad_clip_norm": (F_NONNEG, "1.0", {}),
    "training.activation_checkpointing": (ENUM, "full", {}),
    "parallel.data": (ENUM, "fsdp2", {}),
    "parallel.tp": (I_POS, "2", {}),
    "parallel.pp": (I_POS, "2", {}),
    "ddp.bucket_cap_mb": (F_POS, "5", {}),
    "ddp.first_bucket_mb": (F_POS, "2", {}),
    "ddp.gradient_as_bucket_view": (BOOL, "true", {}),
    "ddp.find_unused_parameters": (BOOL, "true", {}),
    "ddp.static_graph": (BOOL, "true", {}),
    "ddp.comm_hook": (ENUM, "fp16_compress", {}),
    "ddp.duplicate_gradients": (I_NONNEG, "2", {}),
    "ddp.powersgd_rank": (I_POS, "2", PSGD),
    "ddp.powersgd_start_iter": ("int>=2", "5", PSGD),
    "ddp.powersgd_min_compression_rate": (F_POS, "4", PSGD),
    "fsdp.reshard_after_forward": ("bool|int", "false", FSDP),
    "fsdp.forward_prefetch": (BOOL, "true", FSDP),
    "fsdp.param_dtype": (OPT_ENUM, "bf16", FSDP),
    "fsdp.reduce_dtype": (OPT_ENUM, "fp32", FSDP),
    "zero.reduce_bucket_size": (F_POS, "1000000", ZERO3),
    "zero.stage3_prefetch_bucket_size": (F_NONNEG, "1000000", ZERO3),
    "zero.stage3_max_reuse_distance": (F_NONNEG, "1000000", ZERO3),
    "zero.stage3_param_persistence_threshold": (F_NONNEG, "1000", ZERO3),
    "compile.enabled": (BOOL, "true", {}),
    "compile.mode": (ENUM, "reduce-overhead", COMPILE),
    "compile.graph_breaks": (I_NONNEG, "2", COMPILE),
    "compile.comm_fusion_depth": ("int in [1,8]", "2", COMPILE),
    "data_loader.num_workers": (I_NONNEG, "2", {}),
    "data_loader.prefetch_factor": (I_POS, "4", LOADER),
    "data_loader.batch_cpu_ms": (F_NONNEG, "5", {}),
    "data_loader.sample_bytes": (OPT_F, "4096", {}),
    "data_loader.pin_memory": (BOOL, "false", {}),
    "checkpoint.interval_steps": (I_NONNEG, "1", {}),
    "checkpoint.mode": (ENUM, "async", {"checkpoint.interval_steps": "1"}),
    "checkpoint.storage_GBps": (OPT_F, "2", CKPT),
    "checkpoint.pinned_staging": (BOOL, "true", CKPT),
    "nccl.algo": (ENUM, "ring", {}),
    "nccl.proto": (ENUM, "simple", {}),
    "jitter.enabled": (BOOL, "false", {}),
    "sim.steps": (I_POS, "4", {}),
    "sim.seed": (I_NONNEG, "7", {}),
    "sim.samples": (I_POS, "2", {}),
    "sim.symmetry": (ENUM, "off", {}),
    "name": (STR, "other", {}),
    "cluster.node": (STR, "hgx-h100", {}),
    "cluster.profile": (STR, "h200x2", {}),
}

NUMERIC = {I_POS, I_NONNEG, F_POS, F_NONNEG, F_UNIT, OPT_I, OPT_F, "num>=1", "int>=2", "int in [1,8]"}
INTEGER = {I_POS, I_NONNEG, OPT_I, "int>=2", "int in [1,8]"}


# Keys whose every large value means something (a clipping norm no gradient reaches, a compression rate no matrix
# meets): 1e300 runs.
HUGE_OK = {"training.grad_clip_norm", "ddp.powersgd_min_compression_rate"}


def bad_values(kind, huge_ok=False):
    """(value, label, expected) for a key of `kind`: wrong types, out of range, NaN, huge numbers."""
    out = [("[1, 2]", "list", "refuse"), ("{x: 1}", "mapping", "refuse")]
    if kind in NUMERIC:
        out += [("abc", "word", "refuse"), (".nan", "nan", "refuse"), (".inf", "inf", "refuse"),
                ("-1", "negative", "refuse"), ("1e300", "huge", "run" if huge_ok else "refuse"),
                ("true", "bool", "refuse")]
        if kind in INTEGER:
            out += [("1.5", "fraction", "refuse"), ("99999999999999999999", "int overflow", "refuse")]
        zero_ok = kind in (I_NONNEG, F_NONNEG, F_UNIT)
        out.append(("0", "zero", "run" if zero_ok else "refuse"))
        if kind == F_UNIT:
            out.append(("1", "one", "refuse"))
    elif kind == BOOL:
        out += [("maybe", "word", "refuse"), ("2", "number", "refuse"), ("''", "empty", "refuse")]
    elif kind == "bool|int":
        out += [("maybe", "word", "refuse"), ("3", "not a divisor", "refuse"), ("-2", "negative", "refuse"),
                ("''", "empty", "refuse")]
    elif kind in (ENUM, OPT_ENUM):
        out += [("no_such_value", "unknown", "refuse"), ("5", "number", "refuse"), ("''", "empty", "refuse")]
    elif kind == STR:
        out += [("''", "empty", "refuse")]
    if kind not in (OPT_I, OPT_F, OPT_ENUM):
        out.append(("~", "null", "refuse"))
    return out


# The one value per key kind the short run takes.
SHORT_LABEL = {ENUM: "unknown", OPT_ENUM: "unknown", STR: "empty"}


def where_key(key, via_set):
    if via_set:
        return r"--set " + re.escape(key)
    return r"s\.yaml:\d+: " + re.escape(key)


def key_cases():
    cases = []
    for key, (kind, valid, context) in KEYS.items():
        values = bad_values(kind, key in HUGE_OK)
        if key == "name":
            values = [v for v in values if v[1] not in ("null",)]  # an empty or null name: the file's stem
        for value, label, expect in values:
            for via_set in (False, True):
                if via_set:
                    files = {"s.yaml": scenario(context)}
                    argv = ["run", "{dir}/s.yaml", "--set", f"{key}={value}", "--json", "{dir}/out.json", "-q"]
                else:
                    files = {"s.yaml": scenario({**context, key: value})}
                    argv = ["run", "{dir}/s.yaml", "--json", "{dir}/out.json", "-q"]
                cases.append(Case(f"key {key} = {value} ({label}, {'--set' if via_set else 'file'})", argv, expect,
                                  files, key, where_key(key, via_set),
                                  short=not via_set and label == SHORT_LABEL.get(kind, "word") and len(cases) % 2 == 0))
        # The valid value in its context runs.
        cases.append(Case(f"key {key} = {valid} (valid)", ["run", "{dir}/s.yaml", "--json", "{dir}/out.json", "-q"],
                          "run", {"s.yaml": scenario({**context, key: valid})}, key))
    return cases


# Keys set where they have no effect: they run, and the result's warnings name them (docs/scenario.md, "Keys with no
# effect").
NO_EFFECT = [
    ("ddp.bucket_cap_mb", "100", {"parallel.data": "fsdp2"}),
    ("ddp.gradient_as_bucket_view", "true", {"parallel.data": "fsdp2"}),
    ("ddp.find_unused_parameters", "true", {"parallel.data": "zero2"}),
    ("ddp.comm_hook", "fp16_compress", {"parallel.data": "fsdp1"}),
    ("ddp.static_graph", "true", {"parallel.data": "zero3"}),
    ("ddp.powersgd_rank", "2", {}),
    ("ddp.powersgd_start_iter", "5", {}),
    ("ddp.powersgd_warm_start", "false", {}),
    ("fsdp.reshard_after_forward", "false", {}),
    ("fsdp.forward_prefetch", "true", {}),
    ("fsdp.param_dtype", "bf16", {}),
    ("fsdp.reduce_dtype", "fp32", {"parallel.data": "zero2"}),
    ("fsdp.limit_all_gathers", "false", {"parallel.data": "fsdp2"}),
    ("zero.reduce_bucket_size", "1000", {}),
    ("zero.overlap_comm", "false", {"parallel.data": "fsdp2"}),
    ("zero.stage3_prefetch_bucket_size", "1000", {"parallel.data": "zero2"}),
    ("compile.mode", "reduce-overhead", {}),
    ("compile.fullgraph", "true", {}),
    ("compile.loss", "true", {}),
    ("compile.optimizer", "true", {}),
    ("compile.graph_breaks", "2", {}),
    ("fp8.recipe", "rowwise", {}),
    ("fp8.fp8_all_gather", "true", {"fp8.enabled": "true"}),
    ("fp8.sync_after_all_gather", "true", {}),
    ("checkpoint.mode", "async", {}),
    ("checkpoint.pinned_staging", "true", {}),
    ("checkpoint.storage_GBps", "5", {}),
    ("checkpoint.pinned_staging", "true", {"checkpoint.interval_steps": "1", "checkpoint.mode": "sync"}),
    ("training.sgd_momentum", "0.9", {}),
    ("parallel.pp_schedule", "gpipe", {}),
    ("parallel.pp_virtual_stages", "2", {"parallel.pp": "2", "training.grad_accum": "2"}),
    ("parallel.sequence_parallel", "true", {}),
    ("parallel.async_tp", "true", {"parallel.tp": "2"}),
    ("model.trace_host", "profile", {}),
    ("model.trace_params", "1000", {}),
    ("nccl.nvls", "on", {"cluster.node": "pcie-8gpu"}),
    ("fsdp.sync_every_micro_batch", "false", {"parallel.data": "fsdp2", "parallel.pp": "2", "training.grad_accum": "2"}),
]


def no_effect_cases():
    cases = []
    for n, (key, value, context) in enumerate(NO_EFFECT):
        for via_set in (False, True):
            files = {"s.yaml": scenario(context if via_set else {**context, key: value})}
            argv = ["run", "{dir}/s.yaml", "--json", "{dir}/out.json", "-q"] + (["--set", f"{key}={value}"] if via_set
                                                                               else [])
            cases.append(Case(f"no effect: {key}={value} with {context or 'defaults'} ({'--set' if via_set else 'file'})",
                              argv, "warn", files, key, short=via_set == (n % 2 == 0) and n % 3 == 0))
    # The what-ifs: a strategy switched by --set on a file with the other's section; checkpoints off beside
    # the checkpoint keys of the documented example.
    cases.append(Case("what-if: --set parallel.data=fsdp2 on a file with a ddp section",
                      ["run", "{dir}/s.yaml", "--set", "parallel.data=fsdp2", "--json", "{dir}/out.json", "-q"],
                      "warn", {"s.yaml": scenario({"ddp.bucket_cap_mb": "50", "ddp.gradient_as_bucket_view": "true"})},
                      "ddp.bucket_cap_mb", short=True))
    cases.append(Case("what-if: checkpoint.interval_steps=0 on scenarios/io/gpt-1p3b-ckpt-2x8xh200.yaml",
                      ["run", os.path.join(SRC, "scenarios/io/gpt-1p3b-ckpt-2x8xh200.yaml"), "--set",
                       "checkpoint.interval_steps=0", "--set", "sim.steps=2", "--json", "{dir}/out.json", "-q"],
                      "warn", {}, "checkpoint.mode", timeout=60, short=True))
    return cases


# Structure: unknown keys, wrong nesting, sections of the wrong type, duplicate keys, schema version.
def structure_cases():
    cases = []
    def scen(name, text, expect="refuse", where=r"s\.yaml", short=False):
        cases.append(Case(name, ["run", "{dir}/s.yaml", "--json", "{dir}/out.json", "-q"], expect, {"s.yaml": text},
                          where=where, short=short))
    for section in ("cluster", "model", "training", "parallel", "ddp", "fsdp", "zero", "compile", "fp8", "data_loader",
                    "checkpoint", "nccl", "jitter", "sim"):
        scen(f"unknown key in {section}", scenario({f"{section}.no_such_key": "1"}),
             where=rf"s\.yaml:\d+: {section}\.no_such_key", short=section == "model")
        scen(f"{section} as a scalar", scenario({section: "5"}) if section not in BASE else
             yaml_text({**merged(BASE, {}), section: "5"})[0], where=rf"s\.yaml:\d+: {section}")
        scen(f"{section} as a list", yaml_text({**merged(BASE, {}), section: "[1, 2]"})[0],
             where=rf"s\.yaml:\d+: {section}")
        scen(f"a key of {section} at the top level", scenario({"no_such_section_" + section: "{a: 1}"}),
             where=r"s\.yaml:\d+: no_such_section_" + section)
    scen("misspelled top-level key", scenario({"modle": "{layers: 2}"}), where=r"s\.yaml:\d+: modle", short=True)
    scen("a model key in training", scenario({"training.hidden": "256"}), where=r"s\.yaml:\d+: training\.hidden")
    scen("nested too deep", scenario({"model.hidden": "{value: 256}"}), where=r"s\.yaml:\d+: model\.hidden")
    scen("duplicate key", scenario() + "sim: {steps: 4}\n", where=r"s\.yaml:\d+", short=True)
    scen("duplicate key in a section", scenario().replace("  layers: 2\n", "  layers: 2\n  layers: 3\n"),
         where=r"s\.yaml:\d+")
    scen("schema version 2", scenario({"stepsim": "2"}), where=r"s\.yaml:\d+: stepsim")
    scen("schema version a string", scenario({"stepsim": "one"}), where=r"s\.yaml:\d+: stepsim")
    scen("no schema version", scenario().replace("stepsim: 1\n", ""), where=r"s\.yaml:\d+: stepsim")
    scen("no model", scenario().split("model:")[0] + "training: {micro_batch: 2}\n", where=r"s\.yaml:\d+: model")
    scen("model without hidden", scenario().replace("  hidden: 256\n", ""), where=r"s\.yaml:\d+: model\.hidden")
    scen("heads not dividing hidden", scenario({"model.heads": "7"}), where=r"s\.yaml:\d+: model\.heads")
    scen("kv_heads not dividing heads", scenario({"model.kv_heads": "3"}), where=r"s\.yaml:\d+: model\.kv_heads")
    scen("tp not dividing the world", scenario({"parallel.tp": "3"}), where=r"s\.yaml:\d+: parallel\.tp")
    scen("pp above the layers", scenario({"parallel.pp": "4", "cluster.gpus_per_node": "4"}),
         where=r"s\.yaml:\d+: parallel\.pp")
    scen("hsdp on one node", scenario({"parallel.data": "hsdp"}), where=r"s\.yaml:\d+: parallel\.data")
    scen("tab indentation", scenario().replace("  layers: 2", "\tlayers: 2"), where=r"s\.yaml")
    scen("unclosed quote", scenario({"name": '"battery'}), where=r"s\.yaml")
    scen("unclosed flow mapping", scenario({"model": "{layers: 2, hidden: 256"}), where=r"s\.yaml")
    scen("a list at the top", "- stepsim: 1\n", where=r"s\.yaml")
    scen("a scalar at the top", "hello\n", where=r"s\.yaml")
    scen("only a comment", "# nothing\n", where=r"s\.yaml", short=True)
    scen("empty file", "", where=r"s\.yaml", short=True)
    scen("whitespace only", "   \n\n  \n", where=r"s\.yaml")
    scen("binary junk", bytes(range(256)) * 8, where=r"s\.yaml", short=True)
    scen("NUL bytes in a value", scenario({"name": "bat\x00tery"}).encode(), expect="run", where=None)
    scen("invalid UTF-8", scenario().encode() + b"name2: \xff\xfe\n", where=r"s\.yaml")
    scen("alias bomb", "stepsim: 1\na: &a [x, x, x, x, x, x, x, x, x, x]\n" +
         "".join(f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi")) +
         "model: {layers: 2, hidden: 256, heads: 4}\n", where=r"s\.yaml", short=True)
    scen("deep nesting", "stepsim: 1\nmodel: " + "[" * 5000 + "]" * 5000 + "\n", where=r"s\.yaml")
    scen("a very long line", scenario({"name": "x" * 2_000_000}), expect="run", where=None)
    scen("many unknown keys", scenario() + "".join(f"k{i}: {i}\n" for i in range(20000)), where=r"s\.yaml:\d+: k0")
    scen("an anchor merged into a section", scenario() + "base: &b {layers: 2}\n", where=r"s\.yaml:\d+: base")
    scen("CRLF line ends", scenario().replace("\n", "\r\n"), expect="run", where=None)
    scen("a byte-order mark", "\ufeff" + scenario(), expect="run", where=None)
    scen("straggler rank out of the world", scenario({"jitter.stragglers": "[{ranks: [5], factor: 1.5}]"}),
         where=r"s\.yaml:\d+: jitter\.stragglers")
    scen("straggler rank listed twice", scenario({"jitter.stragglers": "[{ranks: [1, 1], factor: 1.5}]"}),
         where=r"s\.yaml:\d+: jitter\.stragglers")
    scen("straggler factor 0", scenario({"jitter.stragglers": "[{ranks: [1], factor: 0}]"}),
         where=r"s\.yaml:\d+: jitter\.stragglers")
    scen("straggler with ranks and random", scenario({"jitter.stragglers": "[{ranks: [1], random: 1, factor: 2}]"}),
         where=r"s\.yaml:\d+: jitter\.stragglers")
    scen("straggler not a mapping", scenario({"jitter.stragglers": "[5]"}), where=r"s\.yaml:\d+: jitter\.stragglers")
    scen("stragglers a mapping", scenario({"jitter.stragglers": "{ranks: [1]}"}),
         where=r"s\.yaml:\d+: jitter\.stragglers")
    scen("NVLS forced on a node without NVSwitch", scenario({"cluster.node": "pcie-8gpu", "nccl.algo": "nvls"}),
         where=r"s\.yaml:\d+: nccl\.algo")
    scen("a B200 node on the built-in profile", scenario({"cluster.node": "hgx-b200"}),
         where=r"s\.yaml:\d+: cluster\.node")
    scen("a profile file that does not exist", scenario({"cluster.profile": "no-such-profile.yaml"}),
         where=r"s\.yaml:\d+: cluster\.profile")
    scen("a topology file that does not exist", scenario({"cluster.node": "no-such-topology.yaml"}),
         where=r"s\.yaml:\d+: cluster\.node")
    scen("a trace file that does not exist", scenario({"model": "{type: trace, trace: no-such-trace.json}"}),
         where=r"s\.yaml:\d+: model\.trace")
    # Sizes past what a simulation holds.
    for key, value in (("model.layers", "100000"), ("model.hidden", "1000000"), ("training.micro_batch", "1000000"),
                       ("model.seq_len", "10000000"), ("training.grad_accum", "100000"), ("sim.steps", "100000"),
                       ("cluster.nodes", "100000"), ("sim.samples", "100000"), ("model.vocab", "1000000000"),
                       ("data_loader.num_workers", "1000000000"), ("data_loader.batch_cpu_ms", "1e12"),
                       ("data_loader.prefetch_factor", "1000000000"), ("checkpoint.storage_GBps", "1e-12"),
                       ("cluster.network.nic_gbps", "1e-9"), ("cluster.gpus_per_node", "100000"),
                       ("ddp.duplicate_gradients", "1000000000"), ("compile.graph_breaks", "1000000000"),
                       ("data_loader.sample_bytes", "1e15")):
        context = dict(KEYS.get(key, (None, None, {}))[2])
        if key == "data_loader.prefetch_factor":
            context = dict(LOADER)
        if key == "checkpoint.storage_GBps":
            context = {"checkpoint.interval_steps": "1"}
        if key == "cluster.network.nic_gbps":
            context = {"cluster.nodes": "2"}
        scen(f"too large: {key}={value}", scenario({**context, key: value}), where=rf"s\.yaml:\d+: {re.escape(key)}",
             short=key in ("data_loader.num_workers", "model.layers"))
    return cases


def set_syntax_cases():
    cases = []
    good = {"s.yaml": scenario()}
    def st(name, arg, where, expect="refuse", short=False):
        cases.append(Case(name, ["run", "{dir}/s.yaml", "--set", arg, "--json", "{dir}/out.json", "-q"], expect, good,
                          where=where, short=short))
    st("--set without =", "model.hidden", r"--set model\.hidden", short=True)
    st("--set with an empty key", "=5", r"--set")
    st("--set with an empty part", "model..hidden=5", r"--set model\.\.hidden")
    st("--set with a leading dot", ".model.hidden=5", r"--set \.model\.hidden")
    st("--set with a trailing dot", "model.=5", r"--set model\.")
    st("--set with an empty value", "model.hidden=", r"--set model\.hidden")
    st("--set of an unknown section", "nosuch.key=5", r"--set nosuch")
    st("--set of an unknown key", "model.hiden=5", r"--set model\.hiden", short=True)
    st("--set replacing a section by a scalar", "model=5", r"--set model")
    st("--set under a scalar", "model.hidden.x=5", r"--set model\.hidden")
    st("--set with bad YAML", "model.hidden=[1,", r"--set model\.hidden")
    st("--set with an unclosed quote", "name='abc", r"--set name")
    st("--set with a mapping value", "model.hidden={a: 1}", r"--set model\.hidden")
    st("--set of a list index", "jitter.stragglers[0].factor=2", r"--set jitter\.stragglers")
    st("--set of the schema version", "stepsim=2", r"--set stepsim")
    st("--set with a NUL", "name=a\x01b", None, expect="run")
    st("--set with a key of spaces", " =5", r"--set")
    st("--set of a huge key path", ".".join(["a"] * 5000) + "=1", r"--set a")
    st("--set with = in the value", "name=a=b", None, expect="run")
    return cases


def cli_cases():
    cases = []
    good = {"s.yaml": scenario()}
    def cl(name, argv, where, expect="refuse", files=good, short=False, timeout=TIMEOUT_S):
        cases.append(Case(name, argv, expect, files, where=where, short=short, timeout=timeout))
    # The command line's own errors are CLI11's (it names the first problem it meets): exit status 2 is checked.
    cl("no subcommand", [], None, short=True)
    cl("unknown subcommand", ["runn"], None)
    for sub in ("run", "explain", "sweep", "topo", "validate"):
        cl(f"{sub} without its positional", [sub], None)
        cl(f"{sub} with an unknown flag", [sub, "{dir}/s.yaml", "--no-such-flag"], None)
    for sub in ("run", "explain"):
        cl(f"{sub} of a missing file", [sub, "{dir}/missing.yaml"], r"missing\.yaml", short=sub == "run")
        cl(f"{sub} of a folder", [sub, "{dir}"], r"{dir}")
        cl(f"{sub} of /dev/zero", [sub, "/dev/zero"], r"/dev/zero", short=sub == "run", timeout=20)
        cl(f"{sub} of /dev/null", [sub, "/dev/null"], r"/dev/null")
    for value in ("-1", "abc", "1e9", ""):
        cl(f"run --threads {value!r}", ["run", "{dir}/s.yaml", "--threads", value, "-q"], r"threads")
    cl("run --json into a missing folder", ["run", "{dir}/s.yaml", "--json", "{dir}/no/such/out.json", "-q"],
       r"out\.json", short=True)
    cl("run --json onto its own scenario", ["run", "{dir}/s.yaml", "--json", "{dir}/s.yaml", "-q"], r"s\.yaml")
    cl("run --json onto a folder", ["run", "{dir}/s.yaml", "--json", "{dir}", "-q"], r"{dir}")
    cl("run --trace into a missing folder", ["run", "{dir}/s.yaml", "--trace", "{dir}/no/such/t.json", "-q"],
       r"t\.json")
    cl("run --trace onto its own scenario", ["run", "{dir}/s.yaml", "--trace", "{dir}/s.yaml", "-q"], r"s\.yaml")
    cl("run --plot onto a file", ["run", "{dir}/s.yaml", "--plot", "{dir}/s.yaml", "-q"], r"s\.yaml")
    cl("run --json to /dev/full", ["run", "{dir}/s.yaml", "--json", "/dev/full", "-q"], r"/dev/full")
    cl("run --set without a value", ["run", "{dir}/s.yaml", "--set"], r"set")
    cl("run twice the file", ["run", "{dir}/s.yaml", "{dir}/s.yaml"], r"s\.yaml|arguments")
    cl("run --require-fit of a model that fits", ["run", "{dir}/s.yaml", "--require-fit", "-q"], None, expect="run")
    # collective
    for flag, values in (("--op", ["bogus", ""]), ("--gpus", ["0", "-1", "100000", "abc"]),
                         ("--nodes", ["0", "-1", "1000000", "abc"]), ("--nics", ["0", "-1", "100000"]),
                         ("--nic-gbps", ["0", "-1", "nan", "inf", "1e300"]),
                         ("--oversubscription", ["0", "0.5", "nan", "1e9"]),
                         ("--node", ["bogus", "", "{dir}/missing.yaml"]), ("--profile", ["bogus", "{dir}/missing.yaml"]),
                         ("-b", ["abc", "-1", "0", "1Q", "1e30"]), ("-e", ["abc", "-5", "1P", "1e30"]),
                         ("-f", ["1", "0", "-2", "nan"]), ("-d", ["int4", ""]), ("--algo", ["bogus", "collnet"]),
                         ("--proto", ["bogus"]), ("--nvls", ["maybe"])):
        for v in values:
            cl(f"collective {flag} {v!r}", ["collective", flag, v], re.escape(flag.lstrip("-")) + "|" + re.escape(v),
               short=v in ("bogus", "0"))
    cl("collective -b above -e", ["collective", "-b", "1G", "-e", "1M"], r"minbytes|maxbytes|-b|-e")
    cl("collective --json into a missing folder", ["collective", "--json", "{dir}/no/such/c.json"], r"c\.json")
    cl("collective with nvls on a PCIe node", ["collective", "--node", "pcie-8gpu", "--nvls", "on"], r"nvls|NVLS")
    cl("collective of one GPU", ["collective", "--gpus", "1", "-e", "1M"], None, expect="run")
    # topo
    for flag, values in (("--nodes", ["0", "-1", "100000000", "abc"]), ("--gpus-per-node", ["0", "-1", "1000"]),
                         ("--nics-per-node", ["0", "-1", "100000"]), ("--nic-gbps", ["0", "-1", "nan", "1e300"]),
                         ("--oversubscription", ["0", "0.5", "nan", "inf"])):
        for v in values:
            cl(f"topo hgx-h200 {flag} {v!r}", ["topo", "hgx-h200", flag, v], re.escape(flag.lstrip("-")) + "|" +
               re.escape(v), short=v == "0")
    cl("topo of an unknown node", ["topo", "bogus"], r"bogus", short=True)
    cl("topo --dot into a missing folder", ["topo", "hgx-h200", "--dot", "{dir}/no/such/g.dot"], r"g\.dot")
    cl("topo --json into a missing folder", ["topo", "hgx-h200", "--json", "{dir}/no/such/g.json"], r"g\.json")
    # profile show
    cl("profile show of an unknown name", ["profile", "show", "bogus"], r"bogus", short=True)
    cl("profile show of a missing file", ["profile", "show", "{dir}/missing.yaml"], r"missing\.yaml")
    cl("profile show of a scenario", ["profile", "show", "{dir}/s.yaml"], r"s\.yaml")
    cl("profile without a subcommand", ["profile"], r"subcommand|show")
    # validate
    cl("validate of a missing file", ["validate", "{dir}/missing.jsonl", "--scenarios", "{dir}"], r"missing\.jsonl")
    cl("validate without --scenarios", ["validate", "{dir}/m.jsonl"], r"scenarios", files={"m.jsonl": "{}\n"})
    for label, text in (("empty", ""), ("junk", "not json\n"), ("a list", "[1, 2]\n"), ("no id", '{"step_ms": 5}\n'),
                        ("an unknown scenario", '{"id": "nope", "step_time_ms": 5}\n'),
                        ("a negative time", '{"id": "s", "step_time_ms": -5}\n'),
                        ("a NaN time", '{"id": "s", "step_time_ms": NaN}\n'),
                        ("binary", "\x00\x01\x02\n")):
        cl(f"validate of {label} measurements", ["validate", "{dir}/m.jsonl", "--scenarios", "{dir}"], r"m\.jsonl",
           files={"m.jsonl": text, "s.yaml": scenario()}, short=label == "junk")
    # calibrate fit
    cl("calibrate fit without -o", ["calibrate", "fit", "{dir}/r.jsonl"], r"output|-o", files={"r.jsonl": ""})
    for label, text in (("empty", ""), ("junk", "garbage\n"), ("binary", bytes(range(256))),
                        ("a record without kind", '{"x": 1}\n'), ("a negative rate", '{"kind": "gemm", "m": -1}\n')):
        cl(f"calibrate fit of {label} raw", ["calibrate", "fit", "{dir}/r.jsonl", "-o", "{dir}/p.yaml"], r"r\.jsonl",
           files={"r.jsonl": text}, short=label == "junk")
    cl("calibrate fit of a missing raw", ["calibrate", "fit", "{dir}/missing.jsonl", "-o", "{dir}/p.yaml"],
       r"missing\.jsonl")
    cl("calibrate fit -o into a missing folder", ["calibrate", "fit", "{dir}/r.jsonl", "-o", "{dir}/no/such/p.yaml"],
       r"p\.yaml|r\.jsonl", files={"r.jsonl": ""})
    cl("calibrate --check with a missing profile", ["calibrate", "--check", "{dir}/missing.yaml"], r"missing\.yaml")
    cl("calibrate --check of raw files that do not exist",
       ["calibrate", "--check", "h200x2", "--raw", "{dir}/missing.jsonl"], r"missing\.jsonl")
    cl("calibrate --budget-scale 0", ["calibrate", "--budget-scale", "0", "--out-dir", "{dir}/c"], r"budget")
    # The stage list is checked by the stage runner, after the harness is found: refused either way.
    cl("calibrate --only an unknown stage", ["calibrate", "--only", "bogus", "--out-dir", "{dir}/c"], None)
    return cases


# Sweep files: the scenario plus a `sweep:` section.
def sweep_cases():
    cases = []
    def sw(name, sweep_yaml, where, expect="refuse", short=False, extra_argv=()):
        text = scenario() + sweep_yaml
        cases.append(Case(name, ["sweep", "{dir}/w.yaml", "--out", "{dir}/out", "-q", "--no-progress", *extra_argv],
                          expect, {"w.yaml": text}, where=where, short=short))
    sw("sweep of two points", "sweep:\n  grid:\n    training.micro_batch: [1, 2]\n", None, expect="run", short=True)
    sw("sweep: a scalar", "sweep: 5\n", r"w\.yaml:\d+: sweep")
    sw("sweep: empty", "sweep: {}\n", r"w\.yaml:\d+: sweep")
    sw("sweep: unknown key", "sweep:\n  gird:\n    training.micro_batch: [1]\n", r"w\.yaml:\d+: sweep\.gird", short=True)
    sw("sweep: grid values not a list", "sweep:\n  grid:\n    training.micro_batch: 4\n",
       r"w\.yaml:\d+: sweep\.grid")
    sw("sweep: grid of an unknown key", "sweep:\n  grid:\n    model.hiden: [1, 2]\n", r"w\.yaml:\d+: sweep\.grid")
    sw("sweep: an empty value list", "sweep:\n  grid:\n    training.micro_batch: []\n", r"w\.yaml:\d+: sweep\.grid")
    sw("sweep: a value of the wrong type", "sweep:\n  grid:\n    training.micro_batch: [abc]\n", r"w\.yaml")
    sw("sweep: a repeated value", "sweep:\n  grid:\n    training.micro_batch: [1, 1]\n", r"w\.yaml:\d+: sweep\.grid")
    sw("sweep: a huge grid", "sweep:\n  grid:\n" + "".join(
        f"    {k}: [{', '.join(str(i) for i in range(1, 101))}]\n" for k in
        ("training.micro_batch", "training.grad_accum", "sim.seed", "ddp.bucket_cap_mb", "ddp.first_bucket_mb")),
       r"w\.yaml:\d+: sweep")
    sw("sweep: an unknown objective", "sweep:\n  grid:\n    training.micro_batch: [1]\n  objective: speed\n",
       r"w\.yaml:\d+: sweep\.objective")
    sw("sweep: an unknown constraint",
       "sweep:\n  grid:\n    training.micro_batch: [1]\n  constraints: [fast]\n", r"w\.yaml:\d+: sweep\.constraints")
    sw("sweep: a negative global batch",
       "sweep:\n  grid:\n    training.micro_batch: [1]\n  global_batch: -4\n", r"w\.yaml:\d+: sweep")
    sw("sweep: --max-points 0", "sweep:\n  grid:\n    training.micro_batch: [1]\n", r"max-points",
       extra_argv=("--max-points", "0"))
    sw("sweep: the scenario section in the grid", "sweep:\n  grid:\n    model: [1, 2]\n", r"w\.yaml:\d+: sweep\.grid")
    cases.append(Case("sweep of a file without a sweep section", ["sweep", "{dir}/s.yaml", "--out", "{dir}/o", "-q"],
                      "refuse", {"s.yaml": scenario()}, where=r"s\.yaml", short=True))
    cases.append(Case("sweep --out onto a file", ["sweep", "{dir}/w.yaml", "--out", "{dir}/w.yaml", "-q"], "refuse",
                      {"w.yaml": scenario() + "sweep:\n  grid:\n    training.micro_batch: [1]\n"}, where=r"w\.yaml"))
    cases.append(Case("sweep with a journal of junk", ["sweep", "{dir}/w.yaml", "--out", "{dir}/o", "-q",
                                                        "--no-progress"], "refuse",
                      {"w.yaml": scenario() + "sweep:\n  grid:\n    training.micro_batch: [1]\n",
                       "o/points.jsonl": "junk\njunk\n"}, where=r"points\.jsonl"))
    # A journal whose last line is cut off (a killed sweep) is resumed without it.
    cases.append(Case("sweep with a journal cut off in its first line", ["sweep", "{dir}/w.yaml", "--out", "{dir}/o",
                                                                        "-q", "--no-progress"], "run",
                      {"w.yaml": scenario() + "sweep:\n  grid:\n    training.micro_batch: [1]\n",
                       "o/points.jsonl": '{"swee'}))
    return cases


# Topology files (cluster.node: FILE, and `stepsim topo FILE`).
TOPO = """stepsim_topology: 1
name: pair
vertices:
  - {name: gpu0, kind: gpu}
  - {name: gpu1, kind: gpu}
  - {name: pcie0, kind: pcie_switch}
  - {name: cpu0, kind: cpu}
  - {name: nvme, kind: storage}
links:
  - {from: gpu0, to: gpu1, kind: nvlink, bandwidth_GBps: 300, latency_us: 0.35}
  - {from: gpu0, to: pcie0, kind: pcie, bandwidth_GBps: 55, latency_us: 0.3}
  - {from: gpu1, to: pcie0, kind: pcie, bandwidth_GBps: 55, latency_us: 0.3}
  - {from: pcie0, to: cpu0, kind: pcie, bandwidth_GBps: 55, latency_us: 0.5}
  - {from: cpu0, to: nvme, kind: storage, bandwidth_GBps: 5, latency_us: 10}
"""


def topology_cases():
    cases = []
    def tp(name, text, where, expect="refuse", short=False):
        files = {"t.yaml": text, "s.yaml": scenario({"cluster.node": "t.yaml", "cluster.profile": "h200x2"})}
        cases.append(Case("topo: " + name, ["topo", "{dir}/t.yaml"], expect, files, where=where, short=short))
        cases.append(Case("run on topology: " + name, ["run", "{dir}/s.yaml", "--json", "{dir}/out.json", "-q"], expect,
                          files, where=where, short=short))
    tp("valid", TOPO, None, expect="run", short=True)
    link = "  - {from: gpu0, to: gpu1, kind: nvlink, bandwidth_GBps: 300, latency_us: 0.35}\n"
    for label, repl in (("negative bandwidth", "bandwidth_GBps: -300"), ("zero bandwidth", "bandwidth_GBps: 0"),
                        ("NaN bandwidth", "bandwidth_GBps: .nan"), ("absurd bandwidth", "bandwidth_GBps: 1e30"),
                        ("negative latency", "latency_us: -1"), ("NaN latency", "latency_us: .nan"),
                        ("absurd latency", "latency_us: 1e30"), ("bandwidth a word", "bandwidth_GBps: fast"),
                        ("unknown link kind", "kind: warp"), ("zero count", "count: 0"),
                        ("negative count", "count: -2"), ("huge count", "count: 1000000000")):
        key, value = repl.split(": ")
        line = re.sub(key + r": [^,}]+", repl, link) if key in link else link.replace("}", ", " + repl + "}")
        tp(f"a link with {label}", TOPO.replace(link, line), r"t\.yaml:\d+", short=label == "negative bandwidth")
    tp("a link to an unknown vertex", TOPO.replace("to: gpu1, kind: nvlink", "to: gpu9, kind: nvlink"), r"t\.yaml:\d+")
    tp("a link to itself", TOPO.replace("to: gpu1, kind: nvlink", "to: gpu0, kind: nvlink"), r"t\.yaml:\d+")
    tp("a duplicate vertex", TOPO.replace("  - {name: gpu1, kind: gpu}\n", "  - {name: gpu0, kind: gpu}\n"),
       r"t\.yaml:\d+")
    tp("an unknown vertex kind", TOPO.replace("kind: cpu}", "kind: toaster}"), r"t\.yaml:\d+")
    tp("no GPUs", TOPO.replace("kind: gpu}", "kind: cpu}"), r"t\.yaml")
    tp("a GPU with no link", TOPO + "  - {from: cpu0, to: pcie0, kind: pcie, bandwidth_GBps: 55, latency_us: 0.5}\n"
       if False else TOPO.replace("vertices:\n", "vertices:\n  - {name: gpu9, kind: gpu}\n"), r"t\.yaml")
    tp("no storage", TOPO.replace("  - {name: nvme, kind: storage}\n", "").replace(
        "  - {from: cpu0, to: nvme, kind: storage, bandwidth_GBps: 5, latency_us: 10}\n", ""), None, expect="run")
    tp("unknown key", TOPO + "colour: blue\n", r"t\.yaml:\d+: colour")
    tp("wrong schema version", TOPO.replace("stepsim_topology: 1", "stepsim_topology: 7"), r"t\.yaml:\d+")
    tp("empty", "", r"t\.yaml")
    tp("binary", bytes(range(256)) * 4, r"t\.yaml")
    tp("links a mapping", TOPO.split("links:")[0] + "links: {a: 1}\n", r"t\.yaml:\d+: links")
    tp("a scenario instead", scenario(), r"t\.yaml")
    return cases


# Profiles (cluster.profile: FILE and `profile show FILE`): the built-in one's file with one value spoiled.
def profile_cases():
    cases = []
    path = os.path.join(SRC, "calibration/profiles/h200-sxm.yaml")
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return cases
    lines = text.splitlines(keepends=True)
    numeric = [i for i, l in enumerate(lines) if re.match(r"^\s*[a-z_0-9]+: -?[0-9.]+(e[-+]?[0-9]+)?\s*(#.*)?$", l)]
    picked = numeric[:: max(1, len(numeric) // 24)][:24]
    for i in picked:
        key = lines[i].split(":")[0].strip()
        for label, value, expect in (("negative", "-5", "refuse"), ("NaN", ".nan", "refuse"), ("a word", "fast", "refuse"),
                                     ("absurd", "1e30", "refuse")):
            spoiled = lines[:i] + [re.sub(r": .*", ": " + value, lines[i].rstrip("\n")) + "\n"] + lines[i + 1:]
            files = {"p.yaml": "".join(spoiled), "s.yaml": scenario({"cluster.profile": "p.yaml"})}
            cases.append(Case(f"profile {key} (line {i + 1}) {label}", ["profile", "show", "{dir}/p.yaml"], expect, files,
                              where=r"p\.yaml:\d+", short=label == "negative" and i == picked[0]))
            if label in ("negative", "absurd"):
                cases.append(Case(f"run on profile {key} (line {i + 1}) {label}",
                                  ["run", "{dir}/s.yaml", "--json", "{dir}/out.json", "-q"], expect, files,
                                  where=r"p\.yaml:\d+"))
    for label, body in (("empty", ""), ("binary", bytes(range(256))), ("a list", "- 1\n"), ("a scenario", scenario()),
                        ("unknown key", text + "no_such_section: {a: 1}\n")):
        cases.append(Case(f"profile {label}", ["profile", "show", "{dir}/p.yaml"], "refuse", {"p.yaml": body},
                          where=r"p\.yaml", short=label == "empty"))
    return cases


# Traces (model.type: trace).
def trace_cases():
    cases = []
    def tr(name, data, where=r"t\.json", expect="refuse", fname="t.json", short=False, timeout=TIMEOUT_S):
        files = {fname: data, "s.yaml": scenario({"model": f"{{type: trace, trace: {fname}}}",
                                                  "cluster.gpus_per_node": "1"}).replace("  layers: 2\n", "")}
        files["s.yaml"] = yaml_text({k: v for k, v in merged(BASE, {"cluster.gpus_per_node": "1"}).items()
                                     if k != "model"})[0] + f"model: {{type: trace, trace: {fname}}}\n"
        cases.append(Case("trace: " + name, ["run", "{dir}/s.yaml", "--json", "{dir}/out.json", "-q"], expect, files,
                          where=where, short=short, timeout=timeout))
    tr("empty", b"", short=True)
    tr("junk", b"this is not json")
    tr("binary", bytes(range(256)) * 16)
    tr("a JSON list", b"[1, 2, 3]")
    tr("no traceEvents", b'{"a": 1}')
    tr("traceEvents not a list", b'{"traceEvents": 5}')
    tr("events without kernels", b'{"traceEvents": [{"ph": "X", "name": "x", "ts": 0, "dur": 1, "pid": 0, "tid": 0}]}')
    tr("an event with a negative duration",
       b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": -5, "pid": 0, "tid": 7}]}')
    tr("an event with a NaN time",
       b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": NaN, "dur": 5, "pid": 0, "tid": 7}]}')
    tr("truncated JSON", b'{"traceEvents": [{"ph": "X", "cat": "kernel"')
    tr("deep nesting", b'{"traceEvents": ' + b"[" * 100000 + b"]" * 100000 + b"}")
    tr("gzip of junk", gzip.compress(b"junk" * 100), fname="t.json.gz")
    tr("a truncated gzip", gzip.compress(b'{"traceEvents": []}' * 100)[:40], fname="t.json.gz")
    tr("not gzip behind .gz", b'{"traceEvents": []}', fname="t.json.gz")
    # A gzip bomb: a few MiB that inflate to 4 GiB of spaces (a valid JSON prefix): refused within the memory limit.
    bomb = gzip.compress(b" " * (64 << 20), 9)
    tr("a gzip bomb", bomb * 64, fname="t.json.gz", short=True, timeout=60)
    return cases


def determinism_cases():
    cases = []
    for i, extra in enumerate(({}, {"jitter.enabled": "false"}, {"sim.samples": "3"}, {"parallel.data": "fsdp2"},
                               {"data_loader.num_workers": "2"}, {"checkpoint.interval_steps": "1",
                                                                  "checkpoint.mode": "async"})):
        cases.append(Case(f"determinism {i}: {extra or 'base'}", ["run", "{dir}/s.yaml", "--json", "{dir}/out.json",
                                                                  "-q"], "run", {"s.yaml": scenario(extra)},
                          short=i == 0))
        cases[-1].twice = True
    return cases


def all_cases():
    return (key_cases() + no_effect_cases() + structure_cases() + set_syntax_cases() + cli_cases() + sweep_cases() +
            topology_cases() + profile_cases() + trace_cases() + determinism_cases())


# ---------------------------------------------------------------------------------------------------------------

def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def execute(binary, case, workdir):
    d = tempfile.mkdtemp(dir=workdir)
    for name, data in case.files.items():
        p = os.path.join(d, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data)
    argv = [binary] + [a.replace("{dir}", d) for a in case.argv]
    try:
        p = subprocess.run(argv, capture_output=True, timeout=case.timeout, preexec_fn=limit_memory, cwd=d)
        rc, out, err = p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "hang", f"no end within {case.timeout} s", d
    except ValueError as e:  # an argument with a NUL byte
        return "ok", f"not runnable here: {e}", d
    except OSError as e:
        return "not started", str(e), d
    result = None
    if os.path.exists(os.path.join(d, "out.json")):
        try:
            with open(os.path.join(d, "out.json")) as f:
                result = json.load(f)
        except (OSError, ValueError):
            result = None
    verdict, why = judge(case, rc, out, err, result, d)
    if verdict == "ok" and getattr(case, "twice", False):
        first = open(os.path.join(d, "out.json"), "rb").read() if os.path.exists(os.path.join(d, "out.json")) else b""
        p2 = subprocess.run(argv, capture_output=True, timeout=case.timeout, preexec_fn=limit_memory, cwd=d)
        second = open(os.path.join(d, "out.json"), "rb").read() if os.path.exists(os.path.join(d, "out.json")) else b""
        if p2.returncode != rc or first != second:
            verdict, why = "nondeterministic", "a second run of the same input gave another result"
    return verdict, why, d


def no_effect_warnings(result):
    if not isinstance(result, dict):
        return []
    return [w for w in result.get("warnings", []) if "has no effect" in w]


def judge(case, rc, out, err, result, d):
    text = (out + err).replace(d, "{dir}")
    memory = re.search(r"bad_alloc|std::length_error|cannot allocate|out of memory", text, re.I)
    if rc < 0:
        return ("over 2 GiB" if memory else "crash"), f"signal {-rc}: {err.strip()[-300:]}"
    if "internal error" in text:
        return ("over 2 GiB" if memory else "internal error"), err.strip()[-400:]
    if rc not in (0, 2, 4):
        return "bad status", f"exit status {rc}: {err.strip()[-300:]}"
    if case.expect == "refuse":
        if rc == 0:
            return "exit-0 wrong result", "accepted: " + ("; ".join(no_effect_warnings(result)) or "no warning")
        if rc != 2:
            return "bad status", f"exit status {rc}"
        where = case.where.replace("{dir}", re.escape("{dir}")) if case.where else None
        if where and not re.search(where, text):
            return "unnamed refusal", f"the message does not match /{case.where}/: {err.strip()[:300]}"
        return "ok", err.strip()[:200]
    if rc != 0:
        return "refused", err.strip()[:300]
    if case.expect == "warn":
        named = [w for w in no_effect_warnings(result) if case.key in w]
        return ("ok", named[0]) if named else ("exit-0 wrong result", "no warning names " + str(case.key))
    if case.key and any(case.key in w for w in no_effect_warnings(result)):
        return "exit-0 wrong result", "a valid key said to have no effect: " + no_effect_warnings(result)[0]
    return "ok", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stepsim")
    ap.add_argument("--short", action="store_true", help="the short run (about 100 cases, CI)")
    ap.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    ap.add_argument("--filter", default="", help="only cases whose name contains this")
    ap.add_argument("--list", action="store_true", help="list the cases and their expected class")
    ap.add_argument("--verbose", action="store_true", help="print every case")
    args = ap.parse_args()
    cases = [c for c in all_cases() if (c.short or not args.short) and args.filter in c.name]
    if args.list:
        for c in cases:
            print(f"{c.expect:7} {c.name}")
        print(f"{len(cases)} cases")
        return 0
    workdir = tempfile.mkdtemp(prefix="stepsim-battery-")
    # A copy of the binary, so that a rebuild during the run does not change or remove it.
    binary = os.path.join(workdir, "stepsim")
    shutil.copy2(os.path.abspath(args.stepsim), binary)
    counts, failures = {}, []
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(execute, binary, c, workdir): c for c in cases}
            for fut in concurrent.futures.as_completed(futures):
                c = futures[fut]
                verdict, why, d = fut.result()
                shutil.rmtree(d, ignore_errors=True)
                counts[verdict] = counts.get(verdict, 0) + 1
                if verdict != "ok":
                    failures.append((c, verdict, why))
                if args.verbose or verdict != "ok":
                    print(f"{verdict:20} [{c.expect}] {c.name}: {why}", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    by_class = {}
    for c in cases:
        by_class[c.expect] = by_class.get(c.expect, 0) + 1
    print(f"\n{len(cases)} cases ({', '.join(f'{n} {k}' for k, n in sorted(by_class.items()))}): " +
          ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
