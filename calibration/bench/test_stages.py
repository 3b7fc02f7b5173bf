"""Checks of stages.py (the stage runner of `stepsim calibrate`) without a GPU: the stage file's format and its
errors, the budgets it plans, and a run of stand-in stages into a manifest. Standard library only."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "stages.py")


def run(*args):
    return subprocess.run([sys.executable, RUNNER, *args], capture_output=True, text=True)


class Stages(unittest.TestCase):
    def test_shipped_list_fits_five_minutes_on_one_gpu(self):
        out = run("--out-dir", tempfile.mkdtemp(), "--list", "--gpus", "1").stdout
        total = float(out.strip().splitlines()[-1].split()[1])
        self.assertLessEqual(total, 300)  # the budgets; the run itself is timed in docs/calibration.md
        self.assertIn("harness", out)
        self.assertNotIn("device_speed", out)  # two GPUs only

    def test_a_malformed_line_names_its_file_and_line(self):
        d = tempfile.mkdtemp()
        bad = os.path.join(d, "bad.txt")
        with open(bad, "w") as f:
            f.write("# comment\nok 1 5 a.jsonl true\nbroken 3 5 b.jsonl true\n")
        r = run("--out-dir", d, "--stages", bad, "--list")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("bad.txt:3", r.stderr)

    def test_stages_write_a_manifest_of_what_they_wrote(self):
        d = tempfile.mkdtemp()
        st = os.path.join(d, "st.txt")
        with open(st, "w") as f:
            f.write("one 1 5 one.jsonl echo '{\"kind\": \"x\"}' > {out}\n"
                    "empty 1 5 empty.jsonl true\n"
                    "fails 1 5 fails.jsonl exit 1\n"
                    "two 2 5 two.jsonl echo '{}' > {out}\n")
        r = run("--out-dir", d, "--stages", st, "--gpus", "1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("[1/3] one:", r.stdout)
        self.assertIn("s left", r.stdout)
        listed = [l.strip() for l in open(os.path.join(d, "inputs.txt")) if l.strip() and not l.startswith("#")]
        self.assertEqual(listed, ["one.jsonl"])
        recs = [json.loads(l) for l in open(os.path.join(d, "stages.jsonl"))]
        self.assertEqual([r["exit"] for r in recs], [0, 0, 1])

    def test_an_unknown_stage_name_is_an_error(self):
        r = run("--out-dir", tempfile.mkdtemp(), "--only", "nope", "--list")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no stage 'nope'", r.stderr)


if __name__ == "__main__":
    unittest.main()
