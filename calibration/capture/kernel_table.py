#!/usr/bin/env python3
"""The launch table: how many GPU activities (kernels, memsets, copies) one call of an aten op launches, from
time_ops.py's counts over captures. Read by the importer when a scenario names no op_times file.

Keyed "aten::op.overload|dtype" (the first input tensor's dtype, signature.first_dtype). Each row: `kernels`, the
count seen most often (ties: the smaller), `seen` {count: calls}, and `signatures`, the distinct signatures timed.
A `_foreach_*` op's count grows with its tensors and their size (PyTorch's multi_tensor_apply launches a kernel
each time its block or tensor-list limits fill): its row adds `measured`, [[tensors, elements, kernels], ...] (the
first tensor list's length and total elements), one entry per distinct pair seen, sorted.

usage: python3 calibration/capture/kernel_table.py A.ops.json.gz A.op_times.json [B.ops.json.gz B.op_times.json ...]
           -o calibration/capture/data/kernel_counts.json
Standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import opsfile  # noqa: E402
import signature  # noqa: E402


class TableError(ValueError):
    pass


def _mode(counter: dict) -> int:
    return min(counter, key=lambda k: (-counter[k], k))


def accumulate(table: dict, graph: dict, times: dict, name: str) -> None:
    """Adds one capture's measured counts (each distinct signature once) to the raw table."""
    if times.get("format") != "stepsim.op_times":
        raise TableError(f"{name}: not an op_times file (format {times.get('format')!r})")
    by_index = {row[0]: row for row in times["ops"]}
    for _sig, idxs in signature.distinct_signatures(graph):
        row = by_index.get(idxs[0])
        if row is None or row[1] is None:
            continue
        op = graph["ops"][idxs[0]]
        key = f"{op['op']}.{op['overload']}|{signature.first_dtype(op)}"
        entry = table.setdefault(key, {"seen": {}, "signatures": 0, "measured": set()})
        entry["seen"][row[1]] = entry["seen"].get(row[1], 0) + len(idxs)
        entry["signatures"] += 1
        if op["op"].startswith("aten::_foreach_"):
            entry["measured"].add((signature.tensor_count(op), signature.list_elements(op, graph["symbols"]), row[1]))


def finish(table: dict) -> dict:
    out = {}
    for key in sorted(table):
        e = table[key]
        row = {"kernels": _mode(e["seen"]), "seen": {str(k): v for k, v in sorted(e["seen"].items())},
               "signatures": e["signatures"]}
        if e["measured"]:
            row["measured"] = [list(m) for m in sorted(e["measured"])]
        out[key] = row
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pairs", nargs="+", help="capture and op_times files, alternating")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    if len(args.pairs) % 2:
        print("kernel_table: give capture and op_times files in pairs", file=sys.stderr)
        return 2
    table, sources = {}, []
    for cap, tim in zip(args.pairs[::2], args.pairs[1::2]):
        try:
            graph = opsfile.read(cap)
            with open(tim) as f:
                times = json.load(f)
            if times.get("capture_sha256") != opsfile.sha256(cap):
                raise TableError(f"{tim}: capture_sha256 does not match {cap}")
            accumulate(table, graph, times, tim)
        except (opsfile.OpsFileError, TableError, json.JSONDecodeError, OSError) as e:
            print(f"kernel_table: {e}", file=sys.stderr)
            return 1
        sources.append({"capture": os.path.basename(cap), "op_times": os.path.basename(tim),
                        "device": times.get("device", {}).get("name"), "torch": times.get("torch")})
    out = {"format": "stepsim.kernel_counts", "version": 1, "sources": sources, "ops": finish(table)}
    with open(args.output, "w") as f:
        json.dump(out, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"kernel_table: {len(out['ops'])} rows from {len(sources)} captures -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
