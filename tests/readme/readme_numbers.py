#!/usr/bin/env python3
"""The README's numbers against the runs that print them.

Usage: readme_numbers.py STEPSIM [--slow]

Each check runs one command the README shows (no GPU needed) and requires that every text it names appears both in
README.md and in the command's output, whitespace collapsed: a README number that no run prints, or a run whose
number moved while the README kept the old one, fails. `block` checks take the README's output block that starts
with the given line and require each of its lines in the output (the README may cut lines, never change them);
lines of a block that print a wall time are named in `skip`. --slow adds the sweep (about two minutes on 2 cores).
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMO = "scenarios/gpt-1p3b-ddp-8xh200.yaml"

# (command arguments, [texts in README and output], README output block's first line or None, [block lines to skip])
FAST = [
    (["run", DEMO], [], "gpt-1p3b-ddp-8xh200", []),
    (["run", DEMO, "--set", "training.optimizer_impl=fused"], ["164.939 ms"], None, []),
    (["run", DEMO, "--set", "ddp.bucket_cap_mb=100", "--set", "training.grad_accum=4"], ["618.581 ms"], None, []),
    (["compare", DEMO, "--set", "compile.enabled=true"], [], "$ build/stepsim compare", ["$ build/stepsim compare"]),
    (["run", "scenarios/sharding/gpt-1p3b-fsdp2-8xh200.yaml"], ["148.593 ms", "18.98"], None, []),
    (["run", "scenarios/sharding/gpt-1p3b-fsdp1-8xh200.yaml"], ["149.763 ms"], None, []),
    (["run", "scenarios/sharding/gpt-1p3b-zero3-8xh200.yaml"], ["175.090 ms", "28.17"], None, []),
    (["run", "scenarios/sharding/gpt-13b-ddp-8xh200.yaml"], ["293.02"], None, []),
    (["run", "scenarios/sharding/gpt-13b-fsdp2-8xh200.yaml"], ["46.60"], None, []),
    (["run", "scenarios/ops/hf-llama-4l-1xh200.yaml", "--set", "model.op_times=../../tests/data/ops/hf-llama-4l.op_times.json"],
     ["17.008 ms", "host_bound 8.636 ms 50.8%"], None, []),
    (["run", "scenarios/ops/hf-llama-4l-fsdp2-8x8xh200.yaml", "--set",
      "model.op_times=../../tests/data/ops/hf-llama-4l.op_times.json"], ["18.331 ms", "8.062 ms", "1.72 GiB"], None, []),
]
SLOW = [
    (["sweep", "scenarios/sweeps/gpt-1p3b-8xh200-tuning.yaml", "--out", "{tmp}"], [],
     "sweep scenarios/sweeps/gpt-1p3b-8xh200-tuning.yaml:", ["sweep scenarios/sweeps/gpt-1p3b-8xh200-tuning.yaml:"]),
]


def collapse(text):
    return re.sub(r"\s+", " ", text).strip()


def readme_block(readme, first):
    """The fenced block of README.md whose first line starts with `first`, as its lines."""
    block = None
    for line in readme.split("\n"):
        if line.startswith("```"):
            if block is not None and block and collapse(block[0]).startswith(collapse(first)):
                return block
            block = [] if block is None else None
        elif block is not None:
            block.append(line)
    return None


def check(stepsim, args, texts, block, skip, readme, tmp):
    args = [a.replace("{tmp}", tmp) for a in args]
    shown = "stepsim " + " ".join(args)
    run = subprocess.run([stepsim] + args, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        return [f"{shown}: exit {run.returncode}: {run.stderr.strip()[:400]}"]
    out = collapse(run.stdout)
    failures = []
    wanted = list(texts)
    if block is not None:
        lines = readme_block(readme, block)
        if lines is None:
            return [f"{shown}: README.md has no output block starting with {block!r}"]
        wanted += [l for l in lines if collapse(l) and not any(collapse(l).startswith(collapse(s)) for s in skip)]
    for text in wanted:
        t = collapse(text)
        if t not in collapse(readme):
            failures.append(f"{shown}: README.md does not say {t!r}")
        # "..." and "(...)" in the README mark a cut: the pieces between them must appear in the output, in order.
        at = 0
        for piece in (p.strip() for p in re.split(r"\(\.\.\.\)|\.\.\.", t)):
            found = out.find(piece, at) if piece else at
            if found < 0:
                failures.append(f"{shown}: the output does not contain {piece!r}")
                break
            at = found + len(piece)
    return failures


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    stepsim = sys.argv[1]
    checks = FAST + (SLOW if "--slow" in sys.argv[2:] else [])
    readme = (ROOT / "README.md").read_text()
    import tempfile
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for args, texts, block, skip in checks:
            failures += check(stepsim, args, texts, block, skip, readme, tmp)
    for f in failures:
        print("FAIL", f)
    print(f"{len(checks)} commands, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
