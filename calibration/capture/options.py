"""The command line that capture.py and measure_step.py share: which model, built how, and which training step.
Parsing only (standard library), so the same flags mean the same step in both scripts."""
from __future__ import annotations

import argparse
import json
import os

DTYPE_POLICIES = ("fp32_autocast_bf16", "bf16", "fp32")
OPTIMIZERS = ("adamw", "adam", "sgd")
OPTIMIZER_IMPLS = ("foreach", "fused", "for_loop")
CHECKPOINTING = ("none", "full")
LOSSES = ("cross_entropy",)


class OptionError(ValueError):
    """A flag's value is malformed; the message names the flag."""


def add_step_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--model", required=True,
                    help="transformers:CLASS (with --config config.json), timm:NAME, or package.module:function")
    ap.add_argument("--config", help="transformers: the config.json; timm and a callable: a JSON object of keyword "
                                     "arguments (a file, or the object inline)")
    ap.add_argument("--micro-batch", type=int, required=True, help="B")
    ap.add_argument("--seq-len", type=int, help="S (token models; an image model has none)")
    ap.add_argument("--dtype-policy", choices=DTYPE_POLICIES, default="fp32_autocast_bf16")
    ap.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw")
    ap.add_argument("--optimizer-impl", choices=OPTIMIZER_IMPLS, default="foreach")
    ap.add_argument("--activation-checkpointing", choices=CHECKPOINTING, default="none",
                    help="full: as the model's library applies it (transformers' gradient_checkpointing_enable(), "
                         "timm's set_grad_checkpointing(), a callable's activation_checkpointing argument)")
    ap.add_argument("--loss", choices=LOSSES, default="cross_entropy")


def parse_model(text: str) -> tuple[str, str]:
    """'transformers:LlamaForCausalLM' -> ('transformers', 'LlamaForCausalLM'); 'pkg.mod:fn' -> ('callable', ...)."""
    source, sep, name = text.partition(":")
    if not sep or not source or not name:
        raise OptionError(f"--model {text!r}: expected transformers:CLASS, timm:NAME or package.module:function")
    if source in ("transformers", "timm"):
        return source, name
    if not all(part.isidentifier() for part in source.split(".")) or not name.isidentifier():
        raise OptionError(f"--model {text!r}: {source!r} is not a module path or {name!r} not a function name")
    return "callable", text


def load_config(text: str | None, flag: str = "--config") -> dict | None:
    """A JSON object from a file, or given inline; None when the flag is absent."""
    if text is None:
        return None
    if os.path.exists(text):
        try:
            with open(text) as f:
                value = json.load(f)
        except json.JSONDecodeError as e:
            raise OptionError(f"{flag} {text}: line {e.lineno}: not JSON: {e.msg}") from None
    elif text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise OptionError(f"{flag}: not a JSON object: {e.msg} at column {e.colno}") from None
    else:
        raise OptionError(f"{flag} {text}: no such file (and not an inline JSON object)")
    if not isinstance(value, dict):
        raise OptionError(f"{flag} {text}: expected a JSON object, found {type(value).__name__}")
    return value


def parse_second(text: str | None, has_seq: bool) -> tuple[int, int | None] | None:
    """--second B2,S2 (token models) or B2 (image models)."""
    if text is None:
        return None
    parts = text.split(",")
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise OptionError(f"--second {text!r}: expected integers B2,S2 (or B2 for a model with no sequence)") from None
    if has_seq and len(values) != 2:
        raise OptionError(f"--second {text!r}: a token model needs B2,S2")
    if not has_seq and len(values) != 1:
        raise OptionError(f"--second {text!r}: this model has no sequence length; give B2 only")
    if any(v <= 0 for v in values):
        raise OptionError(f"--second {text!r}: values must be positive")
    return values[0], (values[1] if has_seq else None)


def step_spec(args) -> dict:
    """The 'step' object of the op graph (docs/ops-format.md), from the parsed flags."""
    return {"micro_batch": args.micro_batch, "seq_len": args.seq_len, "dtype_policy": args.dtype_policy,
            "optimizer": args.optimizer, "optimizer_impl": args.optimizer_impl, "loss": args.loss,
            "activation_checkpointing": args.activation_checkpointing}
