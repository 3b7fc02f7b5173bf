"""One training step as capture.py records it and measure_step.py times it: forward with the loss (under bf16
autocast for fp32_autocast_bf16), backward, optimizer step, zero_grad(set_to_none=True). The one definition both
scripts run, so a capture and a measurement are of the same code."""
from __future__ import annotations

import contextlib

import torch

# The optimizers' settings (the values do not change the ops, only the arithmetic).
ADAM_BETAS = (0.9, 0.95)
LEARNING_RATE = 1e-4
WEIGHT_DECAY = 0.1
SGD_MOMENTUM = 0.9


def make_optimizer(params, name: str, impl: str) -> torch.optim.Optimizer:
    kw = {"foreach": {"foreach": True}, "fused": {"fused": True}, "for_loop": {"foreach": False}}[impl]
    if name == "adamw":
        return torch.optim.AdamW(params, lr=LEARNING_RATE, betas=ADAM_BETAS, weight_decay=WEIGHT_DECAY, **kw)
    if name == "adam":
        return torch.optim.Adam(params, lr=LEARNING_RATE, betas=ADAM_BETAS, **kw)
    if name == "sgd":
        return torch.optim.SGD(params, lr=LEARNING_RATE, momentum=SGD_MOMENTUM, **kw)
    raise ValueError(f"unknown optimizer {name!r}")


def apply_dtype_policy(model: torch.nn.Module, policy: str) -> torch.nn.Module:
    """bf16: floating parameters and buffers cast to bf16, what model.to(torch.bfloat16) does, tied parameters
    staying tied; done parameter by parameter because Module.to cannot swap a fake tensor's tied parameter
    ("_apply(): Couldn't swap Embedding.weight"). The fp32 policies leave the model as built."""
    if policy != "bf16":
        return model
    memo = {}
    with torch.no_grad():
        for m in model.modules():
            for key, p in list(m._parameters.items()):
                if p is None or not p.is_floating_point():
                    continue
                if id(p) not in memo:
                    memo[id(p)] = torch.nn.Parameter(p.detach().to(torch.bfloat16), requires_grad=p.requires_grad)
                m._parameters[key] = memo[id(p)]
            for key, b in list(m._buffers.items()):
                if b is not None and b.is_floating_point():
                    m._buffers[key] = b.to(torch.bfloat16)
    return model


def autocast(policy: str, device_type: str):
    if policy == "fp32_autocast_bf16":
        return torch.autocast(device_type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train_step(model, optimizer, batch, loss_fn, policy: str, device_type: str, on_phase=None):
    """Forward (and loss), backward, optimizer; on_phase(name) is told as each phase starts and when it is done."""
    mark = on_phase or (lambda _phase: None)
    mark("forward")
    with autocast(policy, device_type):
        loss = loss_fn(model, batch)
    mark("backward")
    loss.backward()
    mark("optimizer")
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    mark("done")
    return loss


def warm_optimizer(model, optimizer) -> None:
    """One optimizer step on zero gradients, so the captured step finds its state made (as every step but the first
    does), then zero_grad(set_to_none=True)."""
    for p in model.parameters():
        if p.requires_grad:
            p.grad = torch.zeros_like(p)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
