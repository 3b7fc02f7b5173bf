"""The shipped stage lists (stages.txt, check.txt) against what they run, without a GPU or PyTorch: every stage's
command resolves to a script that exists and whose own argument parser accepts the stage's arguments (the script run
under a stand-in torch, stopped at parse_args), the harness stages' flags and groups are the harness's (main.cu),
and each stage's raw file is one the fit can take. Standard library only."""
import argparse
import os
import re
import runpy
import shlex
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CAL = os.path.dirname(HERE)
REPO = os.path.dirname(CAL)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(CAL, "pytorch"))
import stages  # noqa: E402
from test_support import parse_with_script, stub_torch  # noqa: E402

LISTS = ("stages.txt", "check.txt")
HARNESS = "/stub/stepsim-bench"


def substituted(template, gpus=2):
    a = argparse.Namespace(python="/stub/python", harness=HARNESS, out_dir="/stub/out",
                           gemm_shapes=os.path.join(CAL, "validation", "gemm_shapes.txt"))
    return stages.command(template, a, gpus, "/stub/out/raw.jsonl", 20.0)


def invocations(cmd):
    """[(program, [args])] of a stage's command: the script (or the harness) each `&&`-joined part runs."""
    out = []
    for part in cmd.split("&&"):
        w = shlex.split(part)
        if w[0] == HARNESS:
            out.append((HARNESS, w[1:]))
            continue
        assert w[0] == "/stub/python", part
        i = 1
        if w[1:3] == ["-m", "torch.distributed.run"]:
            i = 3
            while w[i].startswith("--"):
                i += 1 if w[i] == "--standalone" else 2
        out.append((w[i], w[i + 1:]))
    return out


def harness_flags():
    """(flags taking a value, flags without one, groups) from calibration/bench/src/main.cu's parser."""
    with open(os.path.join(HERE, "src", "main.cu")) as f:
        src = f.read()
    flags = set(re.findall(r'a == "(--[a-z0-9-]+)"', src))
    plain = {f for f in flags if re.search(r'a == "%s"\) o\.\w+ = (true|false);' % re.escape(f), src)}
    plain |= {"--help"}
    groups = set(re.findall(r'"([a-z-]+)"', re.search(r"kGroups = \{([^}]*)\}", src).group(1)))
    return flags - plain, plain, groups


class StageLists(unittest.TestCase):
    def each_stage(self):
        for name in LISTS:
            for st in stages.parse_stages(os.path.join(HERE, name)):
                yield name, st

    def test_stage_names_and_raw_files_are_unique_per_list(self):
        for name in LISTS:
            st = stages.parse_stages(os.path.join(HERE, name))
            self.assertEqual(len({s[0] for s in st}), len(st), name)
            self.assertEqual(len({s[3] for s in st}), len(st), name)  # two stages into one file: one overwrites
            for s in st:
                self.assertTrue(s[3].endswith(".jsonl") and "/" not in s[3], f"{name}: {s[3]}")

    def test_every_placeholder_is_one_the_runner_fills(self):
        for name, (stage, _, _, _, tmpl) in self.each_stage():
            left = re.findall(r"\{[a-z_0-9]+\}", substituted(tmpl))
            self.assertEqual(left, [], f"{name}: stage {stage}")

    def test_every_stage_writes_its_raw_file(self):
        # the runner lists {out} in inputs.txt; a command that never names {out} writes nothing it can list
        for name, (stage, _, _, _, tmpl) in self.each_stage():
            self.assertIn("--out {out}", tmpl, f"{name}: stage {stage}")

    def test_every_script_a_stage_runs_exists(self):
        for name, (stage, _, _, _, tmpl) in self.each_stage():
            for prog, args in invocations(substituted(tmpl)):
                if prog != HARNESS:
                    self.assertTrue(os.path.isfile(prog), f"{name}: stage {stage} runs {prog}")
                for a in args:  # files the stage reads: they must be in the repository
                    if a.startswith(CAL) and not a.startswith("/stub") and a.endswith(".txt"):
                        self.assertTrue(os.path.isfile(a), f"{name}: stage {stage} reads {a}")

    def test_every_script_accepts_its_stage_arguments(self):
        checked = 0
        for name, (stage, _, _, _, tmpl) in self.each_stage():
            for prog, args in invocations(substituted(tmpl)):
                if prog == HARNESS:
                    continue
                with self.subTest(list=name, stage=stage):
                    ns = parse_with_script(prog, args)
                    if "--out" in args:  # the runner's {out}, not a default, is where the records go
                        self.assertIn(vars(ns).get("out"), ("/stub/out/raw.jsonl", "/stub/out/model_variants.jsonl"))
                    checked += 1
        self.assertGreaterEqual(checked, 30)

    def test_a_flag_a_script_lacks_is_caught(self):
        # the check above can fail: an unknown flag to a shipped script is argparse's error
        script = os.path.join(CAL, "pytorch", "kernel_gaps.py")
        with self.assertRaisesRegex(AssertionError, "unrecognized arguments: --no-such-flag"):
            parse_with_script(script, ["--out", "x.jsonl", "--no-such-flag"])
        with self.assertRaisesRegex(AssertionError, "unrecognized arguments: --bucket"):  # --bucket-mib, abbreviated
            parse_with_script(script, ["--out", "x.jsonl", "--bucket", "25"])

    def test_numeric_arguments_parse_as_numbers(self):
        tmpl = dict((s[0], s[4]) for s in stages.parse_stages(os.path.join(HERE, "stages.txt")))
        ns = parse_with_script(*invocations(substituted(tmpl["power"]))[0])
        self.assertEqual((ns.seconds, ns.sustained_from, ns.rest), (2.2, 1.2, 0.5))
        ns = parse_with_script(*invocations(substituted(tmpl["ddp_host"]))[0])
        self.assertEqual(ns.rounds, 6)

    def test_names_a_stage_passes_are_names_its_script_knows(self):
        # lists the scripts look up by name after parsing, where a typo fails on the GPU machine only
        st = {s[0]: s[4] for s in stages.parse_stages(os.path.join(HERE, "stages.txt"))}
        st.update({"check_" + s[0]: s[4] for s in stages.parse_stages(os.path.join(HERE, "check.txt"))})
        sys.path.insert(0, os.path.join(CAL, "validation"))
        import configs
        with open(os.path.join(CAL, "pytorch", "stepsim_torch_bench.py")) as f:
            groups = set(re.findall(r'g == "(\w+)"', f.read()))
        seen = set()
        for stage, tmpl in st.items():
            for prog, args in invocations(substituted(tmpl)):
                ns = parse_with_script(prog, args) if prog != HARNESS else None
                script = os.path.basename(prog)
                if script == "ddp_host.py":
                    for cid in ns.ids.split(","):
                        self.assertEqual(configs.by_id(cid)["world"], 2, f"{stage}: {cid}")
                    seen.add(script)
                elif script == "stepsim_torch_bench.py":
                    self.assertLessEqual(set(ns.groups.split(",")), groups, stage)
                    seen.add(script)
                elif script == "model_variants.py":
                    with stub_torch():
                        sys.path.insert(0, os.path.dirname(prog))
                        mv = runpy.run_path(prog)
                    self.assertLessEqual(set(ns.shapes.split(",")), set(mv["SHAPES"]), stage)
                    self.assertLessEqual(set(ns.variants.split(",")), set(mv["VARIANTS"]), stage)
                    seen.add(script)
        self.assertEqual(seen, {"ddp_host.py", "stepsim_torch_bench.py", "model_variants.py"})

    def test_harness_stages_use_the_harness_flags_and_groups(self):
        valued, plain, groups = harness_flags()
        self.assertIn("--out", valued)
        self.assertIn("nccl", groups)
        seen = 0
        for name, (stage, _, _, _, tmpl) in self.each_stage():
            for prog, args in invocations(substituted(tmpl)):
                if prog != HARNESS:
                    continue
                seen += 1
                i = 0
                while i < len(args):
                    f = args[i]
                    self.assertIn(f, valued | plain, f"{name}: stage {stage}: stepsim-bench has no {f}")
                    if f in valued:
                        self.assertLess(i + 1, len(args), f"{name}: stage {stage}: {f} needs a value")
                        if f == "--groups":
                            self.assertLessEqual(set(args[i + 1].split(",")), groups, f"{name}: stage {stage}")
                        if f == "--gemm-shapes":
                            self.assertTrue(os.path.isfile(args[i + 1]), args[i + 1])
                        i += 1
                    i += 1
        self.assertGreaterEqual(seen, 2)

    def test_the_shipped_gemm_shapes_files_parse_with_their_readers(self):
        # the harness's file: m n k a line (GemmBench.cu); the PyTorch stages' (--gemm-shapes {gemm_shapes}):
        # interference_training.read_shapes, its header's count the distinct shapes it lists
        with open(os.path.join(HERE, "shapes", "pytorch-micro.txt")) as f:
            rows = [r for r in (l.split("#")[0].split() for l in f) if r]
        self.assertGreater(len(rows), 0)
        for r in rows:
            self.assertTrue(len(r) == 3 and all(int(x) > 0 for x in r), r)
        with stub_torch():
            import interference_training as it
            listed = {}
            for name in ("gemm_shapes.txt", "gemm_shapes_heldout.txt"):
                listed[name] = it.read_shapes(os.path.join(CAL, "validation", name))
                self.assertEqual(len(set(listed[name])), len(listed[name]), name)
            with open(os.path.join(CAL, "validation", "gemm_shapes.txt")) as f:
                m = re.search(r"\((\d+) distinct\)", f.readline())
            self.assertEqual(int(m.group(1)), len(listed["gemm_shapes.txt"]))
            # the held-out file lists the GEMMs the first one lacks
            self.assertEqual(set(listed["gemm_shapes.txt"]) & set(listed["gemm_shapes_heldout.txt"]), set())

    def test_placeholders_are_filled_from_the_run(self):
        a = argparse.Namespace(python="py", harness="", out_dir="o", gemm_shapes="g.txt")
        cmd = stages.command("{torchrunall} x --deadline {deadline} --budget {budget} {harness}", a, 4, "o/r", 20.0)
        self.assertEqual(cmd, "py -m torch.distributed.run --standalone --nproc-per-node 4 x --deadline 14 "
                              "--budget 20 stepsim-bench")
        self.assertIn("--deadline 3", stages.command("--deadline {deadline}", a, 1, "o/r", 5.0))  # never below 3 s

    def test_one_gpu_stages_come_before_two_gpu_stages(self):
        # stages.txt's order is its run order; the two-GPU stages last, so a one-GPU run's budget is the prefix
        g = [s[1] for s in stages.parse_stages(os.path.join(HERE, "stages.txt"))]
        self.assertEqual(g, sorted(g))


if __name__ == "__main__":
    unittest.main()
