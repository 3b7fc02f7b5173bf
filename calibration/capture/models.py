"""The user's model as its library builds it, with random weights, and the batch and loss of its training step.

--model transformers:CLASS   transformers' CLASS(CLASS.config_class.from_dict(config.json)), use_cache off, train
                             mode; input_ids of (B, S) random tokens; the loss is the model's own
                             (model(input_ids=x, labels=x).loss: HF shifts the labels and takes cross-entropy);
                             activation checkpointing: model.gradient_checkpointing_enable().
--model timm:NAME            timm.create_model(NAME, pretrained=False, **config); images (B, C, H, W) of the model's
                             pretrained_cfg input size, random labels; F.cross_entropy(model(x), y);
                             activation checkpointing: model.set_grad_checkpointing(True).
--model package.module:fn    fn(**config) returns an nn.Module mapping (B, S) token ids to (B, S, V) logits (V: the
                             first nn.Embedding's num_embeddings), the loss F.cross_entropy over next tokens (logits
                             cast to fp32 under the bf16 policy); or a dict with keys model, make_batch(B, S, device,
                             dtype) and loss(model, batch) (and optionally units: class names of FSDP units). With
                             --activation-checkpointing full, fn is called with activation_checkpointing="full".
The FSDP2 units (measure_step.py --wrap fsdp2): transformers' _no_split_modules (its decoder layer classes), timm's
block class, or the callable's units; else the children of the model's longest ModuleList.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any, Callable

import torch
import torch.nn as nn
import torch.nn.functional as F


class BuildError(RuntimeError):
    """The model could not be built; the message names the model source and why."""


@dataclasses.dataclass
class Built:
    model: nn.Module
    make_batch: Callable[[int, int | None, Any, torch.dtype], dict]
    loss: Callable[[nn.Module, dict], torch.Tensor]
    units: list[str]
    has_seq: bool
    info: dict


def _token_batch(vocab: int):
    def make(B, S, device, _dtype):
        return {"input_ids": torch.randint(0, vocab, (B, S), device=device),
                "labels": torch.randint(0, vocab, (B, S), device=device)}
    return make


def _build_transformers(name, config, ac, policy):
    import transformers
    cls = getattr(transformers, name, None)
    if cls is None or not isinstance(cls, type) or not issubclass(cls, nn.Module):
        raise BuildError(f"transformers:{name}: transformers {transformers.__version__} has no model class {name!r}")
    if config is None:
        raise BuildError(f"transformers:{name}: --config config.json is required")
    cfg = cls.config_class.from_dict(dict(config))
    cfg.use_cache = False
    model = cls(cfg)
    model.train()
    if ac == "full":
        model.gradient_checkpointing_enable()

    def loss(m, b):
        return m(input_ids=b["input_ids"], labels=b["input_ids"]).loss

    info = {"library": "transformers", "library_version": transformers.__version__,
            "attn_implementation": getattr(cfg, "_attn_implementation", None)}
    return Built(model, _token_batch(cfg.vocab_size), loss, list(getattr(model, "_no_split_modules", None) or []),
                 True, info)


def _build_timm(name, config, ac, policy):
    import timm
    try:
        model = timm.create_model(name, pretrained=False, **(config or {}))
    except RuntimeError as e:
        if "Unknown model" in str(e):
            raise BuildError(f"timm:{name}: timm {timm.__version__} has no model {name!r}") from None
        raise
    model.train()
    if ac == "full":
        model.set_grad_checkpointing(True)
    c, h, w = model.pretrained_cfg.get("input_size", (3, 224, 224))
    classes = model.num_classes

    def make(B, _S, device, dtype):
        return {"pixels": torch.randn(B, c, h, w, device=device, dtype=dtype),
                "labels": torch.randint(0, classes, (B,), device=device)}

    def loss(m, b):
        return F.cross_entropy(m(b["pixels"]), b["labels"])

    blocks = getattr(model, "blocks", None)
    units = [type(blocks[0]).__name__] if isinstance(blocks, (nn.ModuleList, nn.Sequential)) and len(blocks) else []
    info = {"library": "timm", "library_version": timm.__version__, "input_size": [c, h, w]}
    return Built(model, make, loss, units, False, info)


def _build_callable(path, config, ac, policy):
    modname, _, fname = path.rpartition(":")
    try:
        fn = getattr(importlib.import_module(modname), fname)
    except (ImportError, AttributeError) as e:
        raise BuildError(f"{path}: cannot import: {e}") from None
    kwargs = dict(config or {})
    if ac != "none":
        if "activation_checkpointing" not in inspect.signature(fn).parameters:
            raise BuildError(f"{path}: --activation-checkpointing {ac} needs the function to take an "
                             "activation_checkpointing argument")
        kwargs["activation_checkpointing"] = ac
    made = fn(**kwargs)
    if isinstance(made, dict):
        missing = [k for k in ("model", "make_batch", "loss") if k not in made]
        if missing:
            raise BuildError(f"{path}: the returned dict lacks {missing}")
        made["model"].train()
        return Built(made["model"], made["make_batch"], made["loss"], list(made.get("units", [])),
                     made.get("has_seq", True), {"library": "callable"})
    if not isinstance(made, nn.Module):
        raise BuildError(f"{path}: returned {type(made).__name__}, expected an nn.Module or a dict")
    emb = next((m for m in made.modules() if isinstance(m, nn.Embedding)), None)
    if emb is None:
        raise BuildError(f"{path}: the module has no nn.Embedding to take the vocabulary from; return a dict "
                         "with make_batch and loss instead")
    made.train()

    def loss(m, b):
        logits = m(b["input_ids"])
        logits = logits.float() if policy == "bf16" else logits
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), b["labels"].reshape(-1))

    return Built(made, _token_batch(emb.num_embeddings), loss, [], True, {"library": "callable"})


BUILDERS = {"transformers": _build_transformers, "timm": _build_timm, "callable": _build_callable}


def build(source: str, name: str, config: dict | None, activation_checkpointing: str, policy: str) -> Built:
    built = BUILDERS[source](name, config, activation_checkpointing, policy)
    if not built.units:
        built.units = _longest_modulelist_classes(built.model)
    return built


def _longest_modulelist_classes(model: nn.Module) -> list[str]:
    lists = [m for m in model.modules() if isinstance(m, nn.ModuleList) and len(m)]
    if not lists:
        return []
    longest = max(lists, key=len)
    return sorted({type(m).__name__ for m in longest})


def batch_dtype(policy: str) -> torch.dtype:
    """Float inputs (images) in the parameters' dtype."""
    return torch.bfloat16 if policy == "bf16" else torch.float32


def fsdp_units(model: nn.Module, unit_classes: list[str]) -> list[nn.Module]:
    return [m for m in model.modules() if type(m).__name__ in unit_classes and m is not model]
