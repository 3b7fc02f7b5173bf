"""The validation configurations (configs.py) against what uses them, without torch or a GPU: each id spells its
configuration, the measured table's runs were of these configurations (their parameter counts the model's), the
committed scenarios are what make_scenarios.py and variant_scenarios.py generate, a scenario says what the worker
trains, check() refuses what the model cannot build, and collect.py's merge rule. Standard library only:
python3 -m unittest -v test_configs (in calibration/validation)."""
import contextlib
import copy
import io
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pytorch"))
import collect  # noqa: E402
import configs  # noqa: E402
import make_scenarios  # noqa: E402
import sweep  # noqa: E402
from test_support import parse_with_script  # noqa: E402
import variant_scenarios  # noqa: E402

MEASURED = os.path.join(REPO, "results", "validation", "measured", "measured.jsonl")
# The one id whose gqaN is its query heads per key/value head (12 heads, 3 kv heads); every other gqaN is kv_heads.
GQA_AS_GROUP = {"d2-l16-h1536-s4096-mb1-b25-swiglu-gqa4"}

DEFAULTS = {"grad_accum": 1, "gradient_as_bucket_view": False, "mlp": "gelu", "norm": "layernorm",
            "activation_checkpointing": "none", "compute_dtype": "bf16", "param_dtype": "fp32",
            "tied_embeddings": False, "fp8": "none", "optimizer_impl": "fused", "grad_clip": 0.0, "compile": None}
FLAGS = {"view": {"gradient_as_bucket_view": True}, "swiglu": {"mlp": "swiglu", "norm": "rmsnorm"},
         "acfull": {"activation_checkpointing": "full"}, "acsel": {"activation_checkpointing": "selective"},
         "fp16": {"compute_dtype": "fp16"}, "pbf16": {"param_dtype": "bf16", "compute_dtype": "bf16"},
         "tied": {"tied_embeddings": True}, "fp8tw": {"fp8": "tensorwise"}, "fp8rw": {"fp8": "rowwise"},
         "foreach": {"optimizer_impl": "foreach"}, "clip1": {"grad_clip": 1.0}, "cdefault": {"compile": "default"},
         "cro": {"compile": "reduce-overhead"}}
NUMBERS = {"l": "layers", "h": "hidden", "s": "seq_len", "mb": "micro_batch", "b": "bucket_cap_mb", "ga": "grad_accum",
           "gqa": "gqa"}


def spelled(cid):
    """The fields an id names: d2|s1, l, h, s, mb, [b], then flags; an unknown part is an error."""
    parts = cid.removeprefix("smoke-").split("-")
    out = dict(DEFAULTS, world=int(parts[0][1:]))
    assert parts[0] in ("d2", "s1"), cid
    for p in parts[1:]:
        m = re.fullmatch(r"([a-z]+?)(\d+)", p)
        if p in FLAGS:
            out.update(FLAGS[p])
        elif m and m.group(1) in NUMBERS:
            out[NUMBERS[m.group(1)]] = int(m.group(2))
        else:
            raise AssertionError(f"{cid}: part {p!r} names nothing")
    return out


class Ids(unittest.TestCase):
    def test_each_id_spells_its_configuration(self):
        for c in configs.all_configs():
            with self.subTest(id=c["id"]):
                s = spelled(c["id"])
                for k in ("world", "layers", "hidden", "seq_len", "micro_batch", *DEFAULTS):
                    self.assertEqual(s[k], c[k], k)
                if c["world"] > 1:
                    self.assertEqual(s.get("bucket_cap_mb"), c["bucket_cap_mb"])
                else:
                    self.assertNotIn("bucket_cap_mb", s)  # no DDP, no buckets
                gqa = s.get("gqa")
                if gqa is None:
                    self.assertEqual(c["kv_heads"], c["heads"])
                elif c["id"] in GQA_AS_GROUP:
                    self.assertEqual(c["heads"] // c["kv_heads"], gqa)
                else:
                    self.assertEqual(c["kv_heads"], gqa)

    def test_an_id_that_disagrees_is_caught(self):
        c = configs.by_id("s1-l24-h2048-s2048-mb4")
        self.assertEqual(spelled(c["id"])["layers"], 24)
        self.assertNotEqual(spelled("s1-l24-h2048-s2048-mb4-fp16")["compute_dtype"], c["compute_dtype"])
        with self.assertRaises(AssertionError):
            spelled("s1-l24-h2048-s2048-mb4-bogus")

    def test_ids_are_unique_and_by_id_finds_each(self):
        ids = [c["id"] for c in configs.all_configs()]
        self.assertEqual(len(ids), len(set(ids)))
        for cid in ids:
            self.assertEqual(configs.by_id(cid)["id"], cid)
        with self.assertRaises(KeyError):
            configs.by_id("s1-l1-h1-s1-mb1")

    def test_all_configs_gives_copies(self):
        a = configs.all_configs()
        a[0]["layers"] = -1
        self.assertNotEqual(configs.all_configs()[0]["layers"], -1)
        self.assertEqual(len(configs.all_configs(include_smoke=False)), len(configs.CONFIGS))


class Model(unittest.TestCase):
    def test_gpt2_small_parameter_count(self):
        # 12 x 768, vocab 50304, 1024 positions, bias-free linears, LayerNorm weight and bias:
        # embeddings 50304·768 + 1024·768, per layer 4·768² + 8·768² + 4·768, final norm 2·768, head 50304·768
        c = configs.by_id("s1-l12-h768-s1024-mb8")
        per_layer = 12 * 768 * 768 + 4 * 768
        self.assertEqual(configs.param_count(c), 50304 * 768 * 2 + 1024 * 768 + 12 * per_layer + 2 * 768)
        tied = configs.by_id("s1-l12-h768-s1024-mb8-tied")
        self.assertEqual(configs.param_count(c) - configs.param_count(tied), 50304 * 768)

    def test_measured_runs_were_of_these_configurations(self):
        # each measured record's config is the current one, and its parameter count (train_gpt's model, counted on
        # the GPU machine) is param_count's
        with open(MEASURED) as f:
            recs = [json.loads(l) for l in f if l.strip()]
        self.assertEqual({r["id"] for r in recs}, {c["id"] for c in configs.CONFIGS})
        for r in recs:
            c = configs.by_id(r["id"])
            with self.subTest(id=r["id"]):
                self.assertEqual({k: v for k, v in r["config"].items() if c.get(k) != v}, {})
                if "n_params" in r:
                    self.assertEqual(r["n_params"], configs.param_count(c))

    def test_swiglu_width_is_the_same_in_both_generators(self):
        # configs.py's and variant_scenarios.py's 8/3·h rounded up to 256: the measured model and the scenario
        for h in range(256, 8193, 64):
            c = variant_scenarios.complete({"id": "x", "hidden": h, "mlp": "swiglu"})
            self.assertEqual(configs._swiglu_ffn(h), c["ffn_hidden"], h)
            self.assertEqual(configs._swiglu_ffn(h) % 256, 0)
            self.assertGreaterEqual(configs._swiglu_ffn(h), 8 * h / 3)
        self.assertEqual(configs._swiglu_ffn(2048), 5632)

    def test_model_flops_count_six_per_matmul_parameter_token(self):
        c = configs.by_id("s1-l12-h768-s1024-mb8")
        h, L, T = 768, 12, 1024
        n_matmul = L * 12 * h * h + 50304 * h
        tokens = 8 * T
        self.assertAlmostEqual(configs.model_flops_per_step(c), 6 * n_matmul * tokens + 3 * 4 * L * T * h * tokens / 2)
        c2 = dict(c, world=2, grad_accum=2)
        self.assertAlmostEqual(configs.model_flops_per_step(c2), 4 * configs.model_flops_per_step(c))


class Check(unittest.TestCase):
    def test_check_refuses_what_the_model_cannot_build(self):
        good = configs.by_id("s1-l12-h768-s1024-mb8")
        configs.check(good)
        for change, word in ((dict(heads=7), "divisible"), (dict(kv_heads=5), "kv_heads"), (dict(world=4), "world"),
                             (dict(mlp="relu"), "mlp"), (dict(micro_batch=0), "micro_batch"),
                             (dict(activation_checkpointing="some"), "activation_checkpointing"),
                             (dict(compile="fast"), "compile"), (dict(param_dtype="bf16", compute_dtype="fp16"),
                                                                 "param_dtype"),
                             (dict(fp8="blockwise"), "fp8"), (dict(fp8="rowwise", compute_dtype="fp16"), "fp8"),
                             (dict(optimizer_impl="sgd"), "optimizer_impl"), (dict(grad_clip=-1.0), "grad_clip")):
            with self.subTest(change=change):
                with self.assertRaisesRegex(ValueError, word):
                    configs.check(dict(copy.deepcopy(good), **change))


class Scenarios(unittest.TestCase):
    def test_committed_validation_scenarios_are_generated(self):
        d = os.path.join(REPO, "scenarios", "validation")
        r = subprocess.run([sys.executable, os.path.join(HERE, "make_scenarios.py"), "--check", "--dir", d],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        on_disk = {os.path.basename(p)[:-5] for p in glob.glob(os.path.join(d, "*.yaml"))}
        self.assertEqual(on_disk, {c["id"] for c in configs.CONFIGS})  # no scenario left of a removed config

    def test_check_finds_a_changed_file(self):
        d = tempfile.mkdtemp()
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(make_scenarios.main(["--dir", d]), 0)
        c = configs.CONFIGS[0]
        path = os.path.join(d, c["id"] + ".yaml")
        with open(path, "a") as f:
            f.write("# edited\n")
        with contextlib.redirect_stdout(io.StringIO()) as said:
            self.assertEqual(make_scenarios.main(["--dir", d, "--check"]), 1)
        self.assertEqual(said.getvalue(), f"differs or missing: {path}\n")

    def test_a_scenario_says_what_the_worker_trains(self):
        for c in configs.all_configs():
            s = configs.scenario(c)
            with self.subTest(id=c["id"]):
                self.assertEqual(s["name"], c["id"])
                self.assertEqual(s["cluster"]["gpus_per_node"], c["world"])
                for k in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len", "mlp", "norm",
                          "tied_embeddings"):
                    self.assertEqual(s["model"][k], c[k], k)
                for k in ("micro_batch", "grad_accum", "param_dtype", "compute_dtype", "optimizer_impl",
                          "activation_checkpointing"):
                    self.assertEqual(s["training"][k], c[k], k)
                self.assertEqual(s["training"]["grad_clip_norm"], c["grad_clip"])
                self.assertEqual(s["ddp"]["bucket_cap_mb"], c["bucket_cap_mb"])
                self.assertEqual(s["ddp"]["gradient_as_bucket_view"], c["gradient_as_bucket_view"])
                self.assertEqual("compile" in s, c["compile"] is not None)
                if c["compile"]:
                    self.assertEqual(s["compile"]["mode"], c["compile"])
                self.assertEqual("fp8" in s, c["fp8"] != "none")
                if c["fp8"] != "none":
                    self.assertEqual(s["fp8"]["recipe"], c["fp8"])

    def test_rendered_values_are_yaml_scalars(self):
        text = make_scenarios.render(configs.by_id("d2-l12-h768-s1024-mb8-b25-view"))
        self.assertIn("  gradient_as_bucket_view: true\n", text)
        self.assertIn("  bucket_cap_mb: 25.0\n", text)
        self.assertIn("  tied_embeddings: false\n", text)
        self.assertNotIn("None", text)
        self.assertNotIn("True", text)

    def test_committed_variant_scenarios_are_generated(self):
        out = tempfile.mkdtemp()
        ids = set()
        for cfg in glob.glob(os.path.join(HERE, "heldout_variants*.json")):
            r = subprocess.run([sys.executable, os.path.join(HERE, "variant_scenarios.py"), cfg, "--out-dir", out],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(cfg) as f:
                ids |= {c["id"] for c in json.load(f)}
        committed = os.path.join(REPO, "scenarios", "validation-variants")
        self.assertGreater(len(ids), 5)
        for cid in sorted(ids):
            with open(os.path.join(out, cid + ".yaml")) as a, open(os.path.join(committed, cid + ".yaml")) as b:
                self.assertEqual(a.read(), b.read(), cid)

    def test_variant_scenarios_refuse_what_the_model_does_not_price(self):
        for change in ({"qkv": "fused"}, {"dropout": 0.1}, {"pos": "alibi"}, {"loss": "fp32"}):
            with self.assertRaises(SystemExit):
                variant_scenarios.scenario(variant_scenarios.complete(dict({"id": "x"}, **change)))
        s = variant_scenarios.scenario(variant_scenarios.complete({"id": "x", "pos": "rope", "bias": True}))
        self.assertIn("position_embedding: rope\n", s)
        self.assertIn("linear_bias: true\n", s)


class Sweep(unittest.TestCase):
    def plan(self, *flags):
        r = subprocess.run([sys.executable, os.path.join(HERE, "sweep.py"), "--out", tempfile.mkdtemp(), "--dry-run",
                            *flags], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [l.split()[:2] for l in r.stdout.splitlines() if l.startswith("w")]

    def test_the_plan_is_every_configuration_ddp_first(self):
        plan = self.plan()
        self.assertEqual([cid for _, cid in plan], [c["id"] for c in configs.CONFIGS if c["world"] == 2] +
                         [c["id"] for c in configs.CONFIGS if c["world"] == 1])
        self.assertTrue(all(w == f"w{configs.by_id(cid)['world']}" for w, cid in plan))
        self.assertEqual([cid for _, cid in self.plan("--smoke")],
                         [c["id"] for c in configs.SMOKE if c["world"] == 2] +
                         [c["id"] for c in configs.SMOKE if c["world"] == 1])

    def test_the_worker_accepts_the_sweeps_command(self):
        # sweep.py's flags to train_gpt.py, with every option it forwards set: train_gpt's own parser takes them
        for world in (1, 2):
            args = type("A", (), dict(worker=os.path.join(HERE, "train_gpt.py"), gqa="repeat", profile_cpu="off",
                                      steady_steps=3, host_probe=50, timed_seconds=0.5, max_steps=12,
                                      trace_dir="/tmp/t"))()
            cmd = sweep.worker_cmd(world, ["s1-l12-h768-s1024-mb8"], "o.jsonl", "p.jsonl", args)
            i = cmd.index(args.worker)
            ns = parse_with_script(cmd[i], cmd[i + 1:])
            self.assertEqual((ns.ids, ns.gqa, ns.profile_cpu, ns.steady_steps, ns.host_probe, ns.max_steps,
                              ns.trace_dir), ("s1-l12-h768-s1024-mb8", "repeat", "off", 3, 50, 12, "/tmp/t"))
            self.assertEqual(ns.timed_seconds, 0.5)
            self.assertEqual(world == 2, "torch.distributed.run" in cmd)


def run_record(cid, status="ok", median=10.0, exposed=1.0):
    r = {"id": cid, "status": status, "config": configs.by_id(cid) if not cid.startswith("x") else {}}
    if status == "ok":
        r.update(step_time_ms={"median": median},
                 profile={"primary": {"exposed_comm_ms": exposed, "comm_ms": 2.0}})
    else:
        r["error"] = "OOM\nat ..."
    return r


class Collect(unittest.TestCase):
    def write(self, d, name, recs):
        p = os.path.join(d, name)
        with open(p, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in recs))
        return p

    def test_first_ok_record_wins_later_ones_are_repeats(self):
        d = tempfile.mkdtemp()
        a = self.write(d, "run2-sweep-w1.jsonl", [run_record("s1-l12-h768-s1024-mb8", "failed"),
                                                  run_record("s1-l6-h768-s1024-mb1", median=5.0),
                                                  run_record("smoke-s1-l4-h768-s1024-mb4")])
        b = self.write(d, "run10-sweep-w1.jsonl", [run_record("s1-l12-h768-s1024-mb8", median=20.0),
                                                   run_record("s1-l6-h768-s1024-mb1", median=6.0),
                                                   run_record("s1-l6-h768-s1024-mb1", "timeout")])
        table = {}
        for p in sorted([b, a], key=collect.run_order):  # run10 after run2, not before
            collect.merge(table, p)
        self.assertNotIn("smoke-s1-l4-h768-s1024-mb4", table)
        first = table["s1-l6-h768-s1024-mb1"]
        self.assertEqual((first["step_time_ms"]["median"], first["source"]), (5.0, "raw/run2-sweep-w1.jsonl"))
        self.assertEqual([(v["run"], v["median"]) for v in first["step_time_ms_repeats"]], [("run10", 6.0)])
        self.assertEqual(first["earlier_failure"]["status"], "timeout")
        healed = table["s1-l12-h768-s1024-mb8"]
        self.assertEqual((healed["status"], healed["earlier_failure"]["source"]), ("ok", "raw/run2-sweep-w1.jsonl"))
        out = collect.ordered(table)
        order = [c["id"] for c in configs.CONFIGS]
        self.assertEqual([r["id"] for r in out], sorted(table, key=order.index))

    def test_run_order_reads_the_run_number(self):
        names = ["run10-a-w1.jsonl", "run2-a-w1.jsonl", "run107-b-w2.jsonl", "other.jsonl"]
        self.assertEqual(sorted(names, key=collect.run_order),
                         ["other.jsonl", "run2-a-w1.jsonl", "run10-a-w1.jsonl", "run107-b-w2.jsonl"])


if __name__ == "__main__":
    unittest.main()
