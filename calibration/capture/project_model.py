"""The project's own training script's model (calibration/validation/train_gpt.py's GPT, from a configs.py
configuration) as a capture.py callable: --model project_model:build --config '{"layers": 4, ...}'
(run from calibration/capture, or with it on PYTHONPATH). Arguments: configs._cfg's (layers, hidden, heads,
seq_len, kv_heads, mlp, norm, ffn_hidden, tied_embeddings); micro_batch is the capture's own flag."""
from __future__ import annotations

import os
import sys

VALIDATION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation")


def build(layers=4, hidden=768, heads=12, seq_len=1024, activation_checkpointing="none", **kw):
    if VALIDATION not in sys.path:
        sys.path.insert(0, VALIDATION)
    import configs
    from train_gpt import GPT
    c = configs._cfg("capture", 1, layers, hidden, heads, seq_len, 1,
                     activation_checkpointing=activation_checkpointing, **kw)
    return GPT(c)
