"""Reading and writing the op graph file (`.ops.json.gz`, docs/ops-format.md): gzip-compressed JSON, version 1.
Standard library only; written byte-for-byte the same for the same graph (gzip's time stamp is 0)."""
from __future__ import annotations

import gzip
import hashlib
import json

FORMAT = "stepsim.ops"
VERSION = 1


class OpsFileError(ValueError):
    pass


def write(path: str, graph: dict) -> None:
    text = json.dumps(graph, separators=(",", ":"), allow_nan=False)
    with open(path, "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9, mtime=0, filename="") as g:
            g.write(text.encode())


def read(path: str) -> dict:
    try:
        with gzip.open(path, "rt") as f:
            graph = json.load(f)
    except (OSError, EOFError) as e:
        raise OpsFileError(f"{path}: not a readable gzip file: {e}") from None
    except json.JSONDecodeError as e:
        raise OpsFileError(f"{path}: line {e.lineno}: not JSON: {e.msg}") from None
    if not isinstance(graph, dict) or graph.get("format") != FORMAT:
        raise OpsFileError(f"{path}: key 'format': expected {FORMAT!r}, found {graph.get('format')!r}"
                           if isinstance(graph, dict) else f"{path}: expected a JSON object")
    if graph.get("version") != VERSION:
        raise OpsFileError(f"{path}: key 'version': this reader reads version {VERSION}, "
                           f"found {graph.get('version')!r}")
    for key in ("symbols", "modules", "params", "tensors", "ops"):
        if key not in graph:
            raise OpsFileError(f"{path}: key {key!r} missing")
    return graph


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
