#!/usr/bin/env python3
"""Lists the functions of sim/ (and optionally other folders) longer than a bound, longest first.

usage: scripts/function_lengths.py [--max 120] [DIR ...]   (default DIR: sim)

A function is a definition whose body opens with `{` at the end of its signature's last line and closes with `}` at
the signature's indentation (the project's format: clang-format, 4 spaces); lambdas and local classes count toward the
function that holds them. Exit status 1 when any function is over the bound.
"""
import argparse
import pathlib
import re
import sys

SIGNATURE_END = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(->\s*[\w:<>&*, ]+\s*)?(:\s*.*)?\{\s*$")
NOT_FUNCTION = re.compile(r"^\s*(if|for|while|switch|catch|else|do|return|namespace|struct|class|enum|union)\b|=\s*\[|\]\s*\(|^\s*\[")


def functions(path):
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if SIGNATURE_END.search(line) and not NOT_FUNCTION.search(line) and not line.lstrip().startswith("//"):
            # the signature's first line: walk back over continuation lines (no ; { } at their end)
            start = i
            while start > 0 and lines[start - 1].strip() and not re.search(
                    r"[;{}]\s*$|^\s*//|^\s*#|^\s*template|^\s*(public|private|protected):", lines[start - 1]):
                start -= 1
            indent = len(lines[start]) - len(lines[start].lstrip())
            name = re.search(r"([\w:~<>]+|operator\S+)\s*\(", " ".join(l.strip() for l in lines[start:i + 1]))
            j = i + 1
            while j < len(lines) and not (lines[j].startswith(" " * indent + "}") and
                                          len(lines[j]) - len(lines[j].lstrip()) == indent):
                j += 1
            if j < len(lines):
                yield (name.group(1) if name else "?"), start + 1, j - start + 1
                i = j
        i += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=120)
    ap.add_argument("dirs", nargs="*", default=["sim"])
    a = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    over = []
    for d in a.dirs:
        for p in sorted((root / d).rglob("*")):
            if p.suffix in (".cpp", ".hpp"):
                over += [(n, p.relative_to(root), line, name) for name, line, n in functions(p) if n > a.max]
    for n, p, line, name in sorted(over, reverse=True):
        print(f"{n:5d}  {p}:{line}  {name}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
