"""An op's signature: what its cost depends on (name, overload, each input's shape, stride, dtype and device, the
non-tensor arguments), evaluated at the capture's B and S. Ops of one signature are timed once (time_ops.py) and
share a row of the launch table (kernel_table.py). Standard library only."""
from __future__ import annotations

import json

from scaling import evaluate


def _tensor_key(ref, tensors, symbols):
    if ref is None:
        return None
    if isinstance(ref, list):
        return [_tensor_key(r, tensors, symbols) for r in ref]
    return [[evaluate(d, symbols) for d in ref["shape"]], [evaluate(d, symbols) for d in ref["stride"]],
            ref["dtype"], tensors[ref["t"]].get("device", "cuda")]


def _arg_value(v, symbols):
    if isinstance(v, list):
        return [_arg_value(x, symbols) for x in v]
    if isinstance(v, str):
        try:
            return evaluate(v, symbols)
        except ValueError:
            return v
    return v


def op_signature(op: dict, tensors: list, symbols: dict) -> str:
    key = {"op": op["op"], "overload": op["overload"],
           "in": [_tensor_key(r, tensors, symbols) for r in op["in"]],
           "args": {k: _arg_value(v, symbols) for k, v in op["args"].items()}}
    return json.dumps(key, sort_keys=True, separators=(",", ":"))


def distinct_signatures(graph: dict, symbols: dict | None = None) -> list[tuple[str, list[int]]]:
    """(signature, indices of the non-view ops that have it), in order of first appearance."""
    symbols = graph["symbols"] if symbols is None else symbols
    groups: dict[str, list[int]] = {}
    for i, op in enumerate(graph["ops"]):
        if op["view"]:
            continue
        groups.setdefault(op_signature(op, graph["tensors"], symbols), []).append(i)
    return list(groups.items())


def first_dtype(op: dict) -> str:
    """The dtype a launch-table row is keyed by: the first input tensor's, else the first output's, else 'none'."""
    for refs in (op["in"], op["out"]):
        for r in refs:
            while isinstance(r, list):
                r = next((x for x in r if x is not None), None)
            if r is not None:
                return r["dtype"]
    return "none"


def tensor_count(op: dict) -> int:
    """The length of the first list-of-tensors input (a `_foreach_*` op's tensor count); 0 if there is none."""
    for r in op["in"]:
        if isinstance(r, list):
            return len(r)
    return 0


def list_elements(op: dict, symbols: dict) -> int:
    """The total elements of the first list-of-tensors input (a `_foreach_*` op's work); 0 if there is none."""
    for r in op["in"]:
        if isinstance(r, list):
            total = 0
            for x in r:
                if x is not None:
                    n = 1
                    for d in x["shape"]:
                        n *= evaluate(d, symbols)
                    total += n
            return total
    return 0
