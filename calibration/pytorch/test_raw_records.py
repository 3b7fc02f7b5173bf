"""The raw records the calibration scripts write against the ones `stepsim calibrate fit` reads (sim/fit/RawData.cpp),
without torch or a GPU: the keys each record kind needs (FIT below, checked against the C++ parser's own text), the
recorded raw files under calibration/profiles/ and the recorded calibration runs under results/ held to them, every
record literal the scripts write held to them (read from the scripts' source), variant_raw.py's records rebuilt from
their recorded inputs, and the statistics helpers that fill `time_us`. Standard library only:
python3 -m unittest -v test_raw_records (in calibration/pytorch)."""
import ast
import functools
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CAL = os.path.dirname(HERE)
REPO = os.path.dirname(CAL)
RAW_DATA_CPP = os.path.join(REPO, "sim", "fit", "RawData.cpp")
sys.path.insert(0, HERE)
from test_support import stub_torch  # noqa: E402
import variant_raw  # noqa: E402

# What RawData.cpp's parser of each kind reads without a default: top-level keys, and "a.b" for a key inside an object
# (a time object's median: "time_us.median"). Keys read only under a condition are in CONDITIONAL below.
FIT = {
    "metadata": [], "copy_pair": [], "env": [], "note": [], "compile_recompile": [], "fp8_compiled": [],
    "pinned_alloc": [], "skipped": [], "group_done": [], "run_done": [],
    "error": ["group", "message"],  # read with value(): without them the fit's warning says "?: "
    "collective": ["op", "dtype", "bytes", "ranks", "time_us.median"],
    "gemm": ["dtype", "m", "n", "k", "time_us.median"],
    "memory": ["op", "size_bytes", "bytes_moved", "time_us.median"],
    "transfer": ["op", "size_bytes", "bytes_moved", "time_us.median"],
    "copy": ["direction", "pinned", "bytes", "device_us", "host_us"],
    "disk": ["seconds", "bytes"],
    "dcp": ["mode", "bytes", "blocking_ms", "total_ms"],
    "launch": ["op", "time_us.median"],
    "interference": ["comm_bytes", "gemm_alone_us", "gemm_with_comm_us", "comm_alone_us", "comm_with_gemm_us"],
    "interference_training": ["mode"],
    "device_speed": ["set", "rank", "gemm_tflops", "memory_gbps"],
    "host_spread": ["window_s", "windows", "procs"],
    "ddp_host": ["id", "param_tensors", "buckets"] + [f"{s}.{k}" for s in ("plain", "ddp") for k in
                                                      ("forward_us", "backward_us", "forward_launches",
                                                       "backward_launches")],
    "ddp_find_unused": ["layers", "param_tensors", "forward_host_us.ddp", "forward_host_us.find_unused"],
    "kernel": ["op", "time_us.median"],
    "dispatch": ["op", "time_us.median"],
    "host_overhead": ["forward_us_per_kernel", "backward_us_per_kernel", "optimizer_us_per_param_tensor",
                      "per_layer.backward_us", "per_layer.param_tensors"],
    "checkpoint_host": ["plain_forward_us_per_kernel"] + [f"{m}.{k}" for m in ("selective", "full") for k in
                                                          ("forward_extra_us_per_layer", "backward_extra_us_per_layer",
                                                           "recomputed_kernels_per_layer")],
    "accumulate_host": ["accumulate_us_per_param_tensor", "accumulate_over_backward_kernel"],
    "fp8_linear_host": ["recipe", "forward_us.median", "backward_us.median", "forward_kernels", "backward_kernels"],
    "power_duty": ["sustained.load_tflops", "sustained.sm_clock_mhz", "sustained.power_w",
                   "sustained.compute_fraction", "reference_clock"],
    "power_loaded": ["class", "load_tflops", "memory_fraction", "sm_clock_mhz", "power_w", "burst_clock.sm_clock_mhz",
                     "time_us", "burst_us"],
    "compile_block": ["mode", "mlp", "norm", "dtype", "hidden", "compile_s"] + [
        f"{v}.{p}.{k}" for v in ("eager", "compiled") for p in ("forward", "backward")
        for k in ("other", "other_ms", "regions", "gemm_ms")],
    "compile_host": ["mode", "blocks", "kernels", "graphs", "host_us"],
    "compile_optimizer": ["impl", "tensors", "params", "kernels", "kernel_ms", "host_us"],
    "compile_loss": ["compiled", "tokens", "forward.kernels", "forward.ms", "backward.kernels", "backward.ms"],
    "fp8_compiled_linear": ["recipe", "bias", "version", "tokens", "in", "out", "forward.other.kernels",
                            "forward.other.us", "backward.other.kernels", "backward.other.us"],
}
# (kind, condition on the record, keys it then needs)
CONDITIONAL = [
    ("gemm", lambda r: r.get("source") == "pytorch-step", ["back_to_back_us"]),
    ("launch", lambda r: str(r.get("op", "")).startswith("step_gap"), ["time_us.mean"]),
    ("launch", lambda r: r.get("op") in ("step_gap_gemm_shape", "step_gap_gemm_shape_beside_nccl"), ["m", "n", "k"]),
    ("launch", lambda r: r.get("op") == "step_gap_gemm_shape_beside_nccl"
     or str(r.get("op", "")).startswith("step_gap_unit_"), ["mode"]),
    ("dcp", lambda r: "launch_us_during" in r, ["launch_us_after"]),
    ("interference_training", lambda r: r.get("mode") == "resident",
     ["class", "op", "comm_bytes", "comm_alone_us", "comm_slowdown"]),
    ("interference_training", lambda r: r.get("mode") != "resident" and "with_comm_us" in r,
     ["class", "op", "alone_us"]),
    ("power_duty", lambda r: "busy_fraction" not in r.get("sustained", {}), ["counts.idle_ms"]),
    ("power_loaded", lambda r: r.get("class") == "attention", ["head_dim", "batch", "heads", "kv_heads", "seq", "pass"]),
    ("compile_optimizer", lambda r: r.get("impl") == "compiled", ["compile_s"]),
]
# The values the fit accepts for a key that names a choice.
CHOICES = {
    ("copy", "direction"): {"h2d", "d2h"},
    ("dcp", "mode"): {"sync", "async_default", "async_pinned"},
    ("interference_training", "mode"): {"transfer", "waiting", "bucketed", "resident"},
    ("interference_training", "class"): {"gemm", "attention", "memory"},
    ("power_loaded", "class"): {"gemm", "attention"},
    ("power_loaded", "pass"): {"forward", "forward_backward"},
    ("compile_optimizer", "impl"): {"foreach", "fused", "compiled"},
    ("fp8_compiled_linear", "version"): {"eager", "compiled"},
}
STRINGS = {"op", "dtype", "mode", "recipe", "id", "set", "class", "mlp", "norm", "impl", "version", "direction",
           "group", "message", "pass"}
BOOLS = {"pinned", "compiled", "bias"}


def get(rec, path):
    v = rec
    for part in path.split("."):
        if not isinstance(v, dict) or v.get(part) is None:
            return None
        v = v[part]
    return v


def problems(rec):
    """What the fit would refuse in one record (or warn about, for an error record): a list of 'key: why'."""
    kind = rec.get("kind")
    if kind not in FIT:
        return [f"kind: unknown record kind {kind!r}"]
    need = list(FIT[kind]) + [k for kd, cond, keys in CONDITIONAL if kd == kind and cond(rec) for k in keys]
    out = []
    for path in need:
        v, last = get(rec, path), path.split(".")[-1]
        if v is None:
            out.append(f"{path}: missing")
        elif last in STRINGS and not isinstance(v, str):
            out.append(f"{path}: expected a string, got {v!r}")
        elif last in BOOLS and not isinstance(v, bool):
            out.append(f"{path}: expected true or false, got {v!r}")
        elif last not in STRINGS | BOOLS and path not in ("windows", "reference_clock") and (
                isinstance(v, bool) or not isinstance(v, (int, float))):
            out.append(f"{path}: expected a number, got {v!r}")
        elif path.endswith("time_us.median") and not v > 0:
            out.append(f"{path}: expected a positive time")
        if (kind, path) in CHOICES and v is not None and v not in CHOICES[(kind, path)]:
            out.append(f"{path}: {v!r} is none of {sorted(CHOICES[(kind, path)])}")
    return out


def read_jsonl(path):
    with open(path) as f:
        return [(n, json.loads(l)) for n, l in enumerate(f, 1) if l.strip()]


def cpp_parsers():
    """{kind: the C++ text of its parser function} from RawData.cpp's kParsers table."""
    with open(RAW_DATA_CPP) as f:
        src = f.read()
    table = dict(re.findall(r'\{"(\w+)", (parse\w+)\}', src))
    bodies = {}
    for m in re.finditer(r"\n(?:void|RawAttentionClock) (\w+)\(const Line& L[^)]*\) \{\n(.*?)\n\}\n", src, re.S):
        bodies[m.group(1)] = m.group(2)
    for m in re.finditer(r"\nvoid (\w+)\(const Line& L[^)]*\) \{ (.*) \}\n", src):
        bodies[m.group(1)] = m.group(2)  # a one-line parser
    bodies["parsePowerLoaded"] += bodies.get("attentionClock", "")  # its helper reads the attention shape
    bodies["parseInterferenceTraining"] += bodies.get("checkClass", "")
    return {kind: bodies.get(fn, "") for kind, fn in table.items()}, src


class FitSchema(unittest.TestCase):
    def test_the_kinds_are_the_fits_parsers(self):
        table, _ = cpp_parsers()
        self.assertEqual(set(FIT), set(table))

    def test_every_key_listed_is_read_by_its_kinds_parser(self):
        # a key renamed on the C++ side fails here, so FIT stays the fit's and not this file's
        table, src = cpp_parsers()
        for kind, keys in FIT.items():
            cond = [k for kd, _, ks in CONDITIONAL if kd == kind for k in ks]
            for path in keys + cond:
                for part in path.split("."):
                    if part in ("median", "mean"):  # the time object's, read by Line::times()
                        self.assertIn(f'"{part}"', src)
                    elif part == "time_us" and "L.times()" in table[kind]:
                        continue  # times()'s default key
                    elif part in ("m", "n", "k") and "L.shape()" in table[kind]:
                        self.assertIn(f'num("{part}")', src)  # Line::shape()
                    else:
                        self.assertIn(f'"{part}"', table[kind], f"{kind}: {path}")

    def test_a_record_missing_a_key_or_of_a_wrong_type_is_caught(self):
        good = {"kind": "copy", "direction": "h2d", "pinned": True, "bytes": 1e6, "device_us": 40.0, "host_us": 41.0}
        self.assertEqual(problems(good), [])
        self.assertEqual(problems({**good, "direction": "up"}), ["direction: 'up' is none of ['d2h', 'h2d']"])
        self.assertEqual(problems({k: v for k, v in good.items() if k != "host_us"}), ["host_us: missing"])
        self.assertEqual(problems({**good, "pinned": 1}), ["pinned: expected true or false, got 1"])
        self.assertEqual(problems({"kind": "launch", "op": "step_gap", "time_us": {"median": 3.0}}),
                         ["time_us.mean: missing"])
        self.assertEqual(problems({"kind": "gemmm"}), ["kind: unknown record kind 'gemmm'"])


def recorded_raw_files():
    files = glob.glob(os.path.join(CAL, "profiles", "*", "raw", "*.jsonl"))
    files += glob.glob(os.path.join(CAL, "profiles", "*", "*.jsonl"))
    for manifest in glob.glob(os.path.join(REPO, "results", "**", "inputs.txt"), recursive=True):
        d = os.path.dirname(manifest)
        with open(manifest) as f:
            files += [os.path.join(d, l.strip()) for l in f if l.strip() and not l.startswith("#")]
    return sorted(set(files))


class RecordedFiles(unittest.TestCase):
    def test_every_recorded_raw_file_meets_the_fit(self):
        files = recorded_raw_files()
        self.assertGreater(len(files), 60)
        kinds = set()
        for path in files:
            for n, rec in read_jsonl(path):
                kinds.add(rec.get("kind"))
                self.assertEqual(problems(rec), [], f"{os.path.relpath(path, REPO)}:{n}")
        # the recorded files cover the kinds the profiles are fitted from
        self.assertLessEqual({"gemm", "kernel", "launch", "collective", "interference_training", "power_duty",
                              "power_loaded", "compile_block", "ddp_host", "host_overhead", "dcp", "copy"}, kinds)

    def test_every_manifest_lists_files_that_exist(self):
        manifests = glob.glob(os.path.join(CAL, "profiles", "*", "inputs.txt"))
        manifests += glob.glob(os.path.join(REPO, "results", "**", "inputs.txt"), recursive=True)
        self.assertGreater(len(manifests), 1)
        for m in manifests:
            with open(m) as f:
                listed = [l.split("#")[0].strip() for l in f]
            listed = [l for l in listed if l]
            self.assertGreater(len(listed), 0, m)
            for l in listed:
                self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(m), l)), f"{m}: {l}")


# --- the record literals in the scripts' source ---------------------------------------------------------------------

class Record:
    def __init__(self, kind, keys, open_, where):
        self.kind, self.keys, self.open, self.where = kind, set(keys), open_, where


def _const(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def records_in(path):
    """Every record a script builds with a constant kind: a dict literal, dict(...) of one, or a dict() call, with the
    keys assigned to it later in the same function (rec["k"] = ..., rec.update(...)). `open` when some keys come from
    an expression the source does not spell (**stats(v), update(x))."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    out = []
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] + [tree]
    for scope in scopes:
        body = [n for n in ast.walk(scope) if not (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                                                    and n is not scope)]
        named = {}
        for n in body:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                named.setdefault(n.targets[0].id, n.value)

        def shape(node, depth=0):
            """(kind, keys, open) of a dict-building expression, or None."""
            if depth > 4:
                return None
            if isinstance(node, ast.Name) and node.id in named:
                return shape(named[node.id], depth + 1)
            if isinstance(node, ast.Dict):
                kind, keys, open_ = None, set(), False
                for k, v in zip(node.keys, node.values):
                    if k is None:
                        s = shape(v, depth + 1)
                        if s is None:
                            open_ = True
                        else:
                            kind, keys, open_ = kind or s[0], keys | s[1], open_ or s[2]
                    elif _const(k) is not None:
                        keys.add(k.value)
                        if k.value == "kind" and _const(v) is not None:
                            kind = v.value
                return kind, keys, open_
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
                kind, keys, open_ = None, set(), False
                for a in node.args:
                    s = shape(a, depth + 1)
                    if s is None:
                        open_ = True
                    else:
                        kind, keys, open_ = s[0], keys | s[1], open_ or s[2]
                for kw in node.keywords:
                    if kw.arg is None:
                        s = shape(kw.value, depth + 1)
                        open_ = open_ or s is None or s[2]
                        keys |= s[1] if s else set()
                    else:
                        keys.add(kw.arg)
                return kind, keys, open_
            return None

        # names whose dict is a template (spread into or extended by other records): not a record themselves
        templates = set()
        for n in body:
            if isinstance(n, ast.Dict):
                templates |= {v.id for k, v in zip(n.keys, n.values) if k is None and isinstance(v, ast.Name)}
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "dict" and n.args \
                    and isinstance(n.args[0], ast.Name):
                templates.add(n.args[0].id)
        later = {}
        for n in body:
            if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript) and \
                    isinstance(n.targets[0].value, ast.Name):
                entry = later.setdefault(n.targets[0].value.id, [set(), False])
                if _const(n.targets[0].slice) is None:
                    entry[1] = True  # rec[k] = ...: a key the source does not spell
                else:
                    entry[0].add(n.targets[0].slice.value)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "update" and \
                    isinstance(n.func.value, ast.Name):
                entry = later.setdefault(n.func.value.id, [set(), False])
                for a in n.args:
                    s = shape(a)
                    entry[0] |= s[1] if s else set()
                    entry[1] = entry[1] or s is None or s[2]
                for kw in n.keywords:
                    if kw.arg is None:
                        entry[1] = True
                    else:
                        entry[0].add(kw.arg)
        seen = set()
        for n in body:
            if not isinstance(n, (ast.Dict, ast.Call)) or id(n) in seen:
                continue
            s = shape(n)
            if s is None or s[0] is None:
                continue
            holder = next((name for name, v in named.items() if v is n), None)
            if holder in templates:
                continue
            if isinstance(n, ast.Call) or any(k is None for k in getattr(n, "keys", [])):
                pass
            keys, open_ = set(s[1]), s[2]
            if holder in later:
                keys |= later[holder][0]
                open_ = open_ or later[holder][1]
            out.append(Record(s[0], keys, open_, f"{os.path.relpath(path, REPO)}:{n.lineno}"))
        # an inner dict spread into a record is part of that record, not one of its own
    seen_where = {}
    for r in out:
        seen_where.setdefault(r.where, r)
    return list(seen_where.values())


@functools.lru_cache(maxsize=None)
def script_records():
    paths = sorted(glob.glob(os.path.join(CAL, "pytorch", "*.py")) + glob.glob(os.path.join(CAL, "validation", "*.py")))
    return tuple(r for p in paths if not os.path.basename(p).startswith("test_") for r in records_in(p))


def stage_scripts():
    sys.path.insert(0, os.path.join(CAL, "bench"))
    import stages
    out = set()
    for st in stages.parse_stages(os.path.join(CAL, "bench", "stages.txt")):
        out |= set(re.findall(r"\{pytorch\}/(\w+\.py)", st[4]))
    return out


# Kinds the stage scripts write that the fit has no parser for, and why the fit never meets them.
NOT_FIT_KINDS = {
    ("memory_check.py", "memory_check"): "written without --find-unused-only; the stage passes it",
    ("model_variants.py", "meta"): "model_variants.jsonl is variant_raw.py's input, not a raw file",
    ("model_variants.py", "variant_step"): "model_variants.jsonl is variant_raw.py's input, not a raw file",
    ("model_variants.py", "skipped"): None,
}


class ScriptRecords(unittest.TestCase):
    def test_the_source_reader_finds_the_writers(self):
        recs = script_records()
        kinds = {r.kind for r in recs}
        self.assertLessEqual({"kernel", "gemm", "launch", "interference_training", "power_duty", "power_loaded",
                              "compile_block", "compile_host", "dcp", "copy", "ddp_host", "host_overhead",
                              "checkpoint_host", "accumulate_host", "device_speed", "host_spread"}, kinds)
        self.assertGreater(sum(not r.open for r in recs if r.kind in FIT), 30)

    def test_every_record_a_script_writes_has_the_keys_its_kind_needs(self):
        for r in script_records():
            if r.kind not in FIT or r.kind == "error":  # errors: test_error_records_say_where_and_what
                continue
            missing = sorted({p.split(".")[0] for p in FIT[r.kind]} - r.keys)
            if r.open:  # keys from an expression (**stats(v), a helper's dict): only those spelled are checked
                continue
            with self.subTest(where=r.where):
                self.assertEqual(missing, [], f"{r.where}: a {r.kind!r} record without {missing}")

    def test_error_records_say_where_and_what(self):
        # the fit reports a raw file's error record as "group: message" (run_errors); any other keys print as "?: "
        for r in script_records():
            if r.kind == "error" and r.where.startswith("calibration/pytorch/"):
                with self.subTest(where=r.where):
                    self.assertLessEqual({"group", "message"}, r.keys, r.where)

    def test_stage_scripts_write_only_kinds_the_fit_reads(self):
        scripts = stage_scripts()
        self.assertGreater(len(scripts), 15)
        for r in script_records():
            name = r.where.split(":")[0].split("/")[-1]
            if name in scripts and r.kind not in FIT:
                self.assertIn((name, r.kind), NOT_FIT_KINDS, f"{r.where}: kind {r.kind!r} the fit refuses")

    def test_the_find_unused_stage_writes_no_memory_check_record(self):
        # memory_check.py's stage (ddp_find_unused) passes --find-unused-only; its file holds what the fit reads
        for path in glob.glob(os.path.join(CAL, "profiles", "*", "raw", "ddp_find_unused*.jsonl")) + \
                glob.glob(os.path.join(REPO, "results", "**", "ddp_find_unused.jsonl"), recursive=True):
            self.assertEqual({r["kind"] for _, r in read_jsonl(path)}, {"ddp_find_unused"}, path)


# --- the harness's records (calibration/bench/src, C++; read, not built) ----------------------------------------------

def harness_records():
    """[(kind, keys, where)] of every JsonObject record the harness writes: a chain from .str("kind", ...) to the end of
    its statement, or, for a named JsonObject, to the write of it."""
    out = []
    for path in sorted(glob.glob(os.path.join(CAL, "bench", "src", "*.cu"))):
        with open(path) as f:
            src = f.read()
        for m in re.finditer(r'(\w*)\.str\("kind", "(\w+)"\)', src):
            var, kind = m.group(1), m.group(2)
            rest = src[m.start():]
            end = rest.find(f"write({var})") if var and var != "JsonObject()" else -1
            text = rest[:end] if end >= 0 else rest[:rest.find(";")]
            keys = set(re.findall(r'\.(?:str|num|integer|boolean|raw|summary|samples)\("(\w+)"', text))
            out.append((kind, keys, f"{os.path.relpath(path, REPO)}:{src.count(chr(10), 0, m.start()) + 1}"))
    return out


class HarnessRecords(unittest.TestCase):
    def test_the_harness_writes_kinds_the_fit_reads_with_their_keys(self):
        recs = harness_records()
        self.assertLessEqual({"collective", "gemm", "memory", "transfer", "launch", "interference", "metadata"},
                             {r[0] for r in recs})
        for kind, keys, where in recs:
            with self.subTest(where=where):
                self.assertIn(kind, FIT)
                missing = {p.split(".")[0] for p in FIT[kind]} - keys
                self.assertEqual(missing, set(), f"{where}: a {kind!r} record without {sorted(missing)}")

    def test_the_harness_time_object_has_the_fields_the_fit_reads(self):
        with open(os.path.join(CAL, "bench", "src", "Kernels.cu")) as f:
            src = f.read()
        body = src[src.index("JsonObject& JsonObject::summary("):]
        body = body[:body.index("\n}\n")]
        self.assertLessEqual({"median", "mean", "p10", "p90", "p99", "n"}, set(re.findall(r'\("(\w+)"', body)))


# --- variant_raw.py (torch-free) -----------------------------------------------------------------------------------

def variant(vid, kernels, step_ms=10.0, **cfg):
    c = {"micro_batch": 2, "seq_len": 1024, "hidden": 1024, "layers": 2, "heads": 16, "kv_heads": 16,
         "ffn_hidden": 4096, "mlp": "gelu", **cfg}
    return {"kind": "variant_step", "status": "ok", "id": vid, "config": c, "step_ms": {"median": step_ms},
            "kernels": [{"name": n, "count": k, "total_us": us} for n, k, us in kernels]}


class VariantRaw(unittest.TestCase):
    def rebuilt(self, inp):
        out = os.path.join(tempfile.mkdtemp(), "raw.jsonl")
        r = subprocess.run([sys.executable, os.path.join(HERE, "variant_raw.py"), inp, "--out", out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            return f.read()

    def test_recorded_inputs_give_the_recorded_raw_files(self):
        pairs = [(os.path.join(REPO, "results", "validation", "variants", "variants_run1.jsonl"),
                  os.path.join(CAL, "profiles", "h200x2", "raw", "model_variants_kernels.jsonl"))]
        for d in glob.glob(os.path.join(REPO, "results", "**", "model_variants.jsonl"), recursive=True):
            pairs.append((d, os.path.join(os.path.dirname(d), "model_variants_kernels.jsonl")))
        pairs = [(i, o) for i, o in pairs if os.path.isfile(i) and os.path.isfile(o)]
        self.assertGreaterEqual(len(pairs), 2)
        for inp, expected in pairs:
            with open(expected) as f:
                self.assertEqual(self.rebuilt(inp), f.read(), os.path.relpath(inp, REPO))

    def test_its_records_meet_the_fit(self):
        with open(os.path.join(CAL, "profiles", "h200x2", "raw", "model_variants_kernels.jsonl")) as f:
            ops = {json.loads(l)["op"] for l in f}
        self.assertLessEqual({"bias_grad_reduce", "rope_kernel", "qkv_permute_cat", "dropout_fwd", "sdpa_plain_fwd"},
                             ops)

    def test_bias_record_is_the_added_reduce_time_per_linear(self):
        # 2 layers, GELU: qkv (3·1024), proj, fc1 (4096), fc2 per layer; 8 bias reductions added in all
        base = variant("x-base", [("gemm", 100, 5000.0)])
        bias = variant("x-bias", [("gemm", 100, 5000.0), ("reduce_kernel<512, 1>", 8, 80.0)])
        r = variant_raw.bias_record(base, bias)
        self.assertEqual(problems(r), [])
        T = 2 * 1024
        outs = [3 * 1024, 1024, 4096, 1024]
        self.assertEqual(r["shape"]["launches"], 8)
        self.assertAlmostEqual(r["time_us"]["median"], 10.0)
        self.assertAlmostEqual(r["bytes"], sum(2.0 * (T + 1) * o for o in outs) * 2 / 8)
        # a launch count that is not one per Linear gives no record
        short = variant("x-bias", [("gemm", 100, 5000.0), ("reduce_kernel<512, 1>", 7, 80.0)])
        self.assertIsNone(variant_raw.bias_record(base, short))

    def test_rope_record_is_the_step_difference_over_its_kernels(self):
        none = variant("x-pos_none", [], step_ms=10.0)
        rope = variant("x-pos_rope", [], step_ms=10.44)
        r = variant_raw.rope_record(none, rope)
        self.assertEqual(problems(r), [])
        self.assertEqual(r["shape"]["kernels"], 44)  # 22 a layer
        self.assertAlmostEqual(r["time_us"]["median"], 440.0 / 44)

    def test_a_written_file_holds_every_variant_with_its_base(self):
        d = tempfile.mkdtemp()
        inp = os.path.join(d, "v.jsonl")
        recs = [variant("x-base", [("flash_fprop", 2, 20.0), ("flash_bprop", 2, 60.0)]),
                variant("x-dropout", [("flash_fprop", 2, 30.0), ("flash_bprop", 2, 70.0),
                                      ("fused_dropout_kernel_vec<c10::BFloat16>", 4, 40.0)]),
                {"kind": "variant_step", "status": "failed", "id": "x-bias"}]
        with open(inp, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in recs))
        out = [json.loads(l) for l in self.rebuilt(inp).splitlines()]
        self.assertEqual([r["op"] for r in out], ["dropout_fwd", "sdpa_dropout_fwd", "sdpa_plain_fwd",
                                                  "sdpa_dropout_bwd", "sdpa_plain_bwd"])
        for r in out:
            self.assertEqual(problems(r), [], r["op"])
        self.assertAlmostEqual(out[1]["time_us"]["median"], 15.0)
        self.assertAlmostEqual(out[2]["time_us"]["median"], 10.0)


# --- statistics helpers ----------------------------------------------------------------------------------------------

class Statistics(unittest.TestCase):
    def test_summarize_gives_a_time_object_the_fit_reads(self):
        with stub_torch():
            import timing
            s = timing.summarize([5.0, 1.0, 3.0, 2.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0])
        self.assertEqual(s, {"median": 6.0, "p10": 2.0, "p90": 10.0, "n": 11})
        self.assertEqual(problems({"kind": "kernel", "op": "x", "time_us": s}), [])

    def test_kernel_gaps_stats_carry_the_mean_a_step_gap_needs(self):
        with stub_torch():
            import kernel_gaps
            s = kernel_gaps.stats([1.0, 1.0, 1.0, 9.0])
        self.assertEqual((s["median"], s["mean"], s["p10"], s["p99"], s["n"]), (1.0, 3.0, 1.0, 9.0, 4))
        self.assertEqual(problems({"kind": "launch", "op": "step_gap_gemm", "time_us": s}), [])

    def test_capture_trace_percentiles_are_nearest_rank(self):
        with stub_torch():
            import capture_trace
            self.assertEqual(capture_trace.pct(list(range(11)), 0.9), 9)
            s = capture_trace.summary([4.0, 2.0, 6.0])
        self.assertEqual((s["median_ms"], s["min_ms"], s["max_ms"], s["n"]), (4.0, 2.0, 6.0, 3))


if __name__ == "__main__":
    unittest.main()
