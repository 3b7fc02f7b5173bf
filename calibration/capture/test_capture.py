"""Checks of the capture's Python that need no torch: the scaled-dimension fit (scaling.py), the flags
(options.py), signature dedup (signature.py), the file's reading and writing (opsfile.py), the launch table
(kernel_table.py), and the committed captures' consistency. Standard library only: python3 -m unittest -v
test_capture (from calibration/capture)."""
import copy
import glob
import gzip
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

import kernel_table  # noqa: E402
import options  # noqa: E402
import opsfile  # noqa: E402
import scaling  # noqa: E402
import signature  # noqa: E402

S1, S2 = {"B": 2, "S": 1024}, {"B": 6, "S": 2048}


def ref(t, shape, stride, dtype="bfloat16", offset=0):
    return {"t": t, "shape": shape, "stride": stride, "dtype": dtype, "offset": offset}


def op(name, ins, outs, args=None, view=False, phase="forward", module=1, alloc=(), free=()):
    return {"op": name, "overload": "default", "phase": phase, "module": module, "in": ins, "out": outs,
            "args": args or {}, "view": view, "seq_nr": None, "fwd_op": None, "recompute": False,
            "alloc": list(alloc), "free": list(free)}


def graph(B, S, extra_op=False):
    """A two-op forward at (B, S): a view of the input, an mm into a new storage, an int64 [B, S+1] cat."""
    ops = [op("aten::view", [ref(0, [B, S, 64], [S * 64, 64, 1])], [ref(0, [B * S, 64], [64, 1])],
              args={"1": [B * S, 64]}, view=True),
           op("aten::mm", [ref(0, [B * S, 64], [64, 1]), ref(1, [64, 128], [1, 64])],
              [ref(2, [B * S, 128], [128, 1])], alloc=[2], free=[0]),
           op("aten::cat", [[ref(3, [B, 1], [1, 1], "int64"), ref(4, [B, S], [S, 1], "int64")]],
              [ref(5, [B, S + 1], [S + 1, 1], "int64")], args={"1": -1}, alloc=[5]),
           op("aten::_foreach_mul_", [[ref(1, [64, 128], [128, 1], "float32")]], [], args={"1": 0.9 + B / 100},
              phase="optimizer", module=None)]
    if extra_op:
        ops.insert(1, op("aten::relu", [ref(0, [B * S, 64], [64, 1])], [ref(0, [B * S, 64], [64, 1])]))
    return {"symbols": {"B": B, "S": S},
            "modules": [{"path": "", "class": "M", "parent": None, "calls": 1},
                        {"path": "layer", "class": "L", "parent": 0, "calls": 1}],
            "params": [{"name": "w", "shape": [64, 128], "dtype": "bfloat16", "module": 1, "tensor": 1,
                        "grad_ready_op": 1}],
            "tensors": [{"bytes": B * S * 64 * 2, "kind": "input", "device": "cuda"},
                        {"bytes": 64 * 128 * 2, "kind": "param", "device": "cuda"},
                        {"bytes": B * S * 128 * 2, "kind": "activation", "device": "cuda"},
                        {"bytes": B * 8, "kind": "temp", "device": "cuda"},
                        {"bytes": B * S * 8, "kind": "temp", "device": "cuda"},
                        {"bytes": B * (S + 1) * 8, "kind": "temp", "device": "cuda"}],
            "ops": ops}


class Fit(unittest.TestCase):
    def setUp(self):
        self.changed = scaling.check_identifiable(S1, S2)

    def fit(self, d1, d2):
        return scaling.fit(d1, d2, S1, S2, self.changed)

    def test_monomials_of_batch_and_sequence(self):
        self.assertEqual(self.fit(2048, 2048), 2048)
        self.assertEqual(self.fit(2, 6), "B")
        self.assertEqual(self.fit(1024, 2048), "S")
        self.assertEqual(self.fit(2 * 1024 * 2048, 6 * 2048 * 2048), "2048*B*S")
        self.assertEqual(self.fit(2 * 1024 ** 2, 6 * 2048 ** 2), "B*S^2")

    def test_a_small_offset_is_kept_and_a_large_one_refused(self):
        self.assertEqual(self.fit(1025, 2049), "S+1")
        self.assertEqual(self.fit(1023, 2047), "S-1")
        with self.assertRaises(scaling.ScaleError):
            self.fit(1024 + 100, 2048 + 100)

    def test_ratios_that_confuse_exponents_are_refused(self):
        with self.assertRaisesRegex(scaling.ScaleError, "powers of different primes"):
            scaling.check_identifiable({"B": 2, "S": 1024}, {"B": 4, "S": 2048})
        with self.assertRaisesRegex(scaling.ScaleError, "same micro-batch"):
            scaling.check_identifiable(S1, dict(S1))

    def test_polynomials_parse_evaluate_and_print_back(self):
        for text in ("8*B*S+8*B", "S+1", "B*S^2", "2*B*S-3", "B"):
            self.assertEqual(scaling.format_poly(scaling.parse_poly(text)), text)
        self.assertEqual(scaling.evaluate("8*B*S+8*B", S1), 8 * 2 * 1024 + 16)
        self.assertEqual(scaling.evaluate(17, S1), 17)
        for bad in ("3", "B*T", "B^x", "S++1"):
            with self.assertRaises(ValueError):
                scaling.parse_poly(bad)

    def test_extent_bytes_of_a_padded_int64_tensor(self):
        r = ref(0, ["B", "S+1"], ["S+1", 1], "int64")
        self.assertEqual(scaling.format_poly(scaling.extent_bytes(r)), "8*B*S+8*B")


class Merge(unittest.TestCase):
    def test_two_captures_mark_every_scaled_dimension(self):
        merged, warnings = scaling.merge(graph(2, 1024), graph(6, 2048))
        self.assertEqual(warnings, [])
        self.assertTrue(merged["scaled"])
        view, mm, cat, opt = merged["ops"]
        self.assertEqual(view["in"][0]["stride"], ["64*S", 64, 1])
        self.assertEqual(view["args"]["1"], ["B*S", 64])
        self.assertEqual(mm["out"][0]["shape"], ["B*S", 128])
        self.assertEqual(cat["out"][0]["shape"], ["B", "S+1"])
        self.assertEqual(opt["args"]["1"], 0.92)  # a float argument: the first capture's
        self.assertEqual([t["bytes"] for t in merged["tensors"]],
                         ["128*B*S", 16384, "256*B*S", "8*B", "8*B*S", "8*B*S+8*B"])
        self.assertEqual(merged["second_symbols"], {"B": 6, "S": 2048})

    def test_different_op_sequences_name_the_op_and_module(self):
        with self.assertRaisesRegex(scaling.ScaleError,
                                    r"op 1 \(aten::mm.default, phase forward, module 'layer'\)"):
            scaling.merge(graph(2, 1024), graph(6, 2048, extra_op=True))

    def test_a_dimension_that_is_no_polynomial_names_its_field(self):
        g2 = graph(6, 2048)
        g2["ops"][1]["out"][0]["shape"][1] = 129
        with self.assertRaisesRegex(scaling.ScaleError,
                                    r"module .layer.\) out\[0\]\.shape\[1\]: 128 -> 129 is not a monomial"):
            scaling.merge(graph(2, 1024), g2)

    def test_differing_frees_are_a_warning(self):
        g2 = graph(6, 2048)
        g2["ops"][1]["free"] = []
        _, warnings = scaling.merge(graph(2, 1024), g2)
        self.assertEqual(len(warnings), 1)


class Signatures(unittest.TestCase):
    def test_views_are_left_out_and_equal_ops_share_one(self):
        g = graph(2, 1024)
        g["ops"].append(copy.deepcopy(g["ops"][1]))
        sigs = signature.distinct_signatures(g)
        self.assertEqual([idx for _, idx in sigs], [[1, 4], [2], [3]])

    def test_the_shape_is_part_of_the_signature(self):
        g = graph(2, 1024)
        other = copy.deepcopy(g["ops"][1])
        other["in"][0]["shape"] = [4096, 64]
        g["ops"].append(other)
        self.assertEqual(len(signature.distinct_signatures(g)), 4)

    def test_scaled_dimensions_are_evaluated_at_the_capture_shape(self):
        merged, _ = scaling.merge(graph(2, 1024), graph(6, 2048))
        plain = graph(2, 1024)
        self.assertEqual([k for k, _ in signature.distinct_signatures(merged)],
                         [k for k, _ in signature.distinct_signatures(plain)])

    def test_launch_table_keys_and_foreach_points(self):
        g = graph(2, 1024)
        self.assertEqual(signature.first_dtype(g["ops"][2]), "int64")
        self.assertEqual(signature.tensor_count(g["ops"][3]), 1)
        self.assertEqual(signature.list_elements(g["ops"][3], g["symbols"]), 64 * 128)


class Files(unittest.TestCase):
    def test_write_is_deterministic_and_reads_back(self):
        d = tempfile.mkdtemp()
        g = dict(graph(2, 1024), format=opsfile.FORMAT, version=opsfile.VERSION)
        a, b = os.path.join(d, "a.ops.json.gz"), os.path.join(d, "b.ops.json.gz")
        opsfile.write(a, g)
        opsfile.write(b, g)
        self.assertEqual(opsfile.sha256(a), opsfile.sha256(b))
        self.assertEqual(opsfile.read(a)["ops"], g["ops"])

    def test_an_unknown_version_is_refused_with_both_numbers(self):
        p = os.path.join(tempfile.mkdtemp(), "v2.ops.json.gz")
        with gzip.open(p, "wt") as f:
            json.dump({"format": opsfile.FORMAT, "version": 2}, f)
        with self.assertRaisesRegex(opsfile.OpsFileError, "reads version 1, found 2"):
            opsfile.read(p)

    def test_flags(self):
        self.assertEqual(options.parse_model("transformers:LlamaForCausalLM"), ("transformers", "LlamaForCausalLM"))
        self.assertEqual(options.parse_model("calibration.x:build"), ("callable", "calibration.x:build"))
        for bad in ("LlamaForCausalLM", "pkg-1.mod:fn", "timm:"):
            with self.assertRaises(options.OptionError):
                options.parse_model(bad)
        self.assertEqual(options.parse_second("6,2048", True), (6, 2048))
        self.assertEqual(options.parse_second("96", False), (96, None))
        with self.assertRaisesRegex(options.OptionError, "B2,S2"):
            options.parse_second("6", True)
        p = os.path.join(tempfile.mkdtemp(), "c.json")
        with open(p, "w") as f:
            f.write('{"a": 1,\n "b": }\n')
        with self.assertRaisesRegex(options.OptionError, "c.json: line 2"):
            options.load_config(p)
        self.assertEqual(options.load_config('{"depth": 4}'), {"depth": 4})
        with self.assertRaisesRegex(options.OptionError, "no such file"):
            options.load_config("missing.json")

    def test_launch_table_takes_the_most_frequent_count(self):
        g = graph(2, 1024)
        times = {"format": "stepsim.op_times", "ops": [[1, 2, 5.0, 9.0], [2, 1, 3.0, 8.0], [3, 4, 7.0, 20.0]]}
        table = {}
        kernel_table.accumulate(table, g, times, "t")
        out = kernel_table.finish(table)
        self.assertEqual(out["aten::mm.default|bfloat16"]["kernels"], 2)
        self.assertEqual(out["aten::_foreach_mul_.default|float32"]["measured"], [[1, 8192, 4]])
        with self.assertRaises(kernel_table.TableError):
            kernel_table.accumulate(table, g, {"format": "other"}, "t")


class CommittedCaptures(unittest.TestCase):
    """Every committed capture reads, its references are in range, every storage is made before it is freed, and
    its dimensions evaluate to sizes at its own shape (and at the second capture's, when scaled)."""

    FILES = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "ops", "*.ops.json.gz"))
                   + glob.glob(os.path.join(ROOT, "results", "validation", "ops-round1", "captures",
                                            "*.ops.json.gz")))

    def test_there_are_captures(self):
        self.assertGreaterEqual(len(self.FILES), 5)

    def test_each_capture_is_consistent(self):
        for path in self.FILES:
            with self.subTest(path=os.path.basename(path)):
                g = opsfile.read(path)
                n_t, n_ops = len(g["tensors"]), len(g["ops"])
                shapes = [g["symbols"]] + ([g["second_symbols"]] if g.get("scaled") else [])
                made, freed = set(), set()
                for i, o in enumerate(g["ops"]):
                    self.assertIn(o["phase"], ("forward", "backward", "optimizer"))
                    for r in _refs(o):
                        self.assertLess(r["t"], n_t)
                        for sym in shapes:
                            self.assertTrue(all(scaling.evaluate(d, sym) >= 0 for d in r["shape"]))
                    self.assertTrue(o["fwd_op"] is None or o["fwd_op"] < i)
                    for s in o["alloc"]:
                        self.assertNotIn(s, made)
                        made.add(s)
                    for s in o["free"]:
                        self.assertNotIn(s, freed)
                        freed.add(s)
                self.assertTrue(all(p["grad_ready_op"] is None or p["grad_ready_op"] < n_ops for p in g["params"]))
                for t in g["tensors"]:
                    for sym in shapes:
                        self.assertGreater(scaling.evaluate(t["bytes"], sym), -1)

    def test_op_times_belong_to_their_capture(self):
        for path in self.FILES:
            times = path.replace(".ops.json.gz", ".op_times.json")
            if os.path.exists(times):
                with self.subTest(path=os.path.basename(times)):
                    with open(times) as f:
                        t = json.load(f)
                    self.assertEqual(t["capture_sha256"], opsfile.sha256(path))
                    g = opsfile.read(path)
                    self.assertEqual([r[0] for r in t["ops"]], [i for i, o in enumerate(g["ops"]) if not o["view"]])


def _refs(o):
    for group in (o["in"], o["out"]):
        for r in group:
            if isinstance(r, list):
                yield from (x for x in r if x is not None)
            elif r is not None:
                yield r


if __name__ == "__main__":
    unittest.main()
