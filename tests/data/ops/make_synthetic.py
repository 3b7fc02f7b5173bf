#!/usr/bin/env python3
"""Writes the hand-built op graph of tests/workload/OpsScheduleTest.cpp and tests/scenario/OpsImportTest.cpp
(docs/ops-format.md, version 1; no torch ran it: every count, size and lifetime the tests expect follows from this
file):

  synthetic-step.ops.json.gz  one training step of a made-up model in bf16 autocast over fp32 parameters, scaled
                              (B = 2, S = 64 captured; token dimensions written "B*S"): an embedding (V = 512, h = 256),
                              two blocks `layers.0`, `layers.1` of class Block, each one Linear `fc` (addmm with bias,
                              its weight and the activation cast to bf16, then a residual add in fp32), a head Linear
                              (mm) and cross-entropy (the logits cast to fp32, _log_softmax, nll_loss_forward);
                              the backward in reverse (nll_loss_backward, _log_softmax_backward_data, the head's two mms,
                              per block the input- and weight-gradient mms and the bias sum, the embedding's
                              embedding_dense_backward); each parameter's gradient ready after the op that makes it;
                              AdamW foreach (8 _foreach ops over the 6 parameters). Storages: each op's outputs are new
                              storages, freed after their last use (saved activations in the backward).
usage: python3 make_synthetic.py  (writes beside itself)
"""
import gzip
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
B, S, V, H = 2, 64, 512, 256
T = "B*S"
SIZE = {"float32": 4, "bfloat16": 2, "int64": 8}


class Graph:
    def __init__(self):
        self.modules = [{"path": "", "class": "Toy", "parent": None}]
        self.params, self.tensors, self.ops = [], [], []

    def module(self, path, cls, parent):
        self.modules.append({"path": path, "class": cls, "parent": parent})
        return len(self.modules) - 1

    def storage(self, shape, dtype, kind):
        fixed = SIZE[dtype]
        for d in shape:
            fixed *= d if isinstance(d, int) else 1
        scaled = T in shape
        self.tensors.append({"bytes": f"{fixed}*B*S" if scaled else fixed, "kind": kind})
        return len(self.tensors) - 1

    @staticmethod
    def ref(t, shape, dtype):
        # token dimensions ("B*S") lead, so every stride is an integer
        stride, acc = [0] * len(shape), 1
        for i in range(len(shape) - 1, -1, -1):
            stride[i] = acc
            acc *= shape[i] if isinstance(shape[i], int) else 1
        return {"t": t, "shape": shape, "stride": stride, "dtype": dtype, "offset": 0}

    def op(self, name, phase, module, ins, outs, args=None, view=False, fwd=None, alloc=None):
        self.ops.append({"op": name, "overload": "default", "phase": phase, "module": module, "in": ins, "out": outs,
                         "args": args or {}, "view": view, "seq_nr": None, "fwd_op": fwd, "recompute": False,
                         "alloc": alloc if alloc is not None else [o["t"] for o in outs if not isinstance(o, list)],
                         "free": []})
        return len(self.ops) - 1


def build():
    g = Graph()
    emb_m = g.module("embed", "Embedding", 0)
    layers_m = g.module("layers", "ModuleList", 0)
    blocks = []
    for i in range(2):
        b = g.module(f"layers.{i}", "Block", layers_m)
        fc = g.module(f"layers.{i}.fc", "Linear", b)
        blocks.append((b, fc))
    head_m = g.module("head", "Linear", 0)

    def param(name, shape, module):
        t = g.storage(shape, "float32", "param")
        g.params.append({"name": name, "shape": shape, "dtype": "float32", "module": module, "tensor": t,
                         "grad_ready_op": None})
        return t, len(g.params) - 1

    emb_w, emb_p = param("embed.weight", [V, H], emb_m)
    fcs = []
    for i, (b, fc) in enumerate(blocks):
        w = param(f"layers.{i}.fc.weight", [H, H], fc)
        bias = param(f"layers.{i}.fc.bias", [H], fc)
        fcs.append((w, bias))
    head_w, head_p = param("head.weight", [V, H], head_m)
    ids = g.storage([T], "int64", "input")
    tgt = g.storage([T], "int64", "input")
    R = g.ref
    # forward
    x = g.storage([T, H], "float32", "activation")
    g.op("aten::embedding", "forward", emb_m, [R(emb_w, [V, H], "float32"), R(ids, [T], "int64")], [R(x, [T, H], "float32")])
    saved = []
    for i, (b, fc) in enumerate(blocks):
        (w, _), (bias, _) = fcs[i]
        wc = g.storage([H, H], "bfloat16", "activation")
        g.op("aten::_to_copy", "forward", fc, [R(w, [H, H], "float32")], [R(wc, [H, H], "bfloat16")])
        bc = g.storage([H], "bfloat16", "temp")
        g.op("aten::_to_copy", "forward", fc, [R(bias, [H], "float32")], [R(bc, [H], "bfloat16")])
        xc = g.storage([T, H], "bfloat16", "activation")
        g.op("aten::_to_copy", "forward", fc, [R(x, [T, H], "float32")], [R(xc, [T, H], "bfloat16")])
        wt = {"t": wc, "shape": [H, H], "stride": [1, H], "dtype": "bfloat16", "offset": 0}
        g.op("aten::t", "forward", fc, [R(wc, [H, H], "bfloat16")], [wt], view=True, alloc=[])
        y = g.storage([T, H], "bfloat16", "temp")
        addmm = g.op("aten::addmm", "forward", fc, [R(bc, [H], "bfloat16"), R(xc, [T, H], "bfloat16"), wt], [R(y, [T, H], "bfloat16")])
        x2 = g.storage([T, H], "float32", "activation")
        g.op("aten::add", "forward", b, [R(x, [T, H], "float32"), R(y, [T, H], "bfloat16")], [R(x2, [T, H], "float32")])
        saved.append((xc, wc, addmm))
        x = x2
    hw = g.storage([V, H], "bfloat16", "activation")
    g.op("aten::_to_copy", "forward", head_m, [R(head_w, [V, H], "float32")], [R(hw, [V, H], "bfloat16")])
    xh = g.storage([T, H], "bfloat16", "activation")
    g.op("aten::_to_copy", "forward", head_m, [R(x, [T, H], "float32")], [R(xh, [T, H], "bfloat16")])
    hwt = {"t": hw, "shape": [H, V], "stride": [1, H], "dtype": "bfloat16", "offset": 0}
    g.op("aten::t", "forward", head_m, [R(hw, [V, H], "bfloat16")], [hwt], view=True, alloc=[])
    logits = g.storage([T, V], "bfloat16", "temp")
    g.op("aten::mm", "forward", head_m, [R(xh, [T, H], "bfloat16"), hwt], [R(logits, [T, V], "bfloat16")])
    lf = g.storage([T, V], "float32", "temp")
    g.op("aten::_to_copy", "forward", None, [R(logits, [T, V], "bfloat16")], [R(lf, [T, V], "float32")])
    lsm = g.storage([T, V], "float32", "activation")
    g.op("aten::_log_softmax", "forward", None, [R(lf, [T, V], "float32")], [R(lsm, [T, V], "float32")], args={"1": 1, "2": False})
    loss = g.storage([], "float32", "temp")
    g.op("aten::nll_loss_forward", "forward", None, [R(lsm, [T, V], "float32"), R(tgt, [T], "int64")],
         [R(loss, [], "float32")])
    # backward
    dl = g.storage([T, V], "float32", "temp")
    g.op("aten::nll_loss_backward", "backward", None, [R(loss, [], "float32"), R(lsm, [T, V], "float32"), R(tgt, [T], "int64")],
         [R(dl, [T, V], "float32")])
    dls = g.storage([T, V], "float32", "temp")
    g.op("aten::_log_softmax_backward_data", "backward", None, [R(dl, [T, V], "float32"), R(lsm, [T, V], "float32")],
         [R(dls, [T, V], "float32")])
    dlb = g.storage([T, V], "bfloat16", "temp")
    g.op("aten::_to_copy", "backward", None, [R(dls, [T, V], "float32")], [R(dlb, [T, V], "bfloat16")])
    dxh = g.storage([T, H], "bfloat16", "temp")
    g.op("aten::mm", "backward", None, [R(dlb, [T, V], "bfloat16"), R(hw, [V, H], "bfloat16")], [R(dxh, [T, H], "bfloat16")])
    ghw = g.storage([V, H], "float32", "grad")
    dlbt = {"t": dlb, "shape": [V, T], "stride": [1, V], "dtype": "bfloat16", "offset": 0}
    k = g.op("aten::mm", "backward", None, [dlbt, R(xh, [T, H], "bfloat16")], [R(ghw, [V, H], "float32")])
    g.params[head_p]["grad_ready_op"] = k
    dx = g.storage([T, H], "float32", "temp")
    g.op("aten::_to_copy", "backward", None, [R(dxh, [T, H], "bfloat16")], [R(dx, [T, H], "float32")])
    for i in reversed(range(2)):
        (w, wp), (bias, bp) = fcs[i]
        xc, wc, addmm = saved[i]
        dy = g.storage([T, H], "bfloat16", "temp")
        g.op("aten::_to_copy", "backward", None, [R(dx, [T, H], "float32")], [R(dy, [T, H], "bfloat16")])
        dxc = g.storage([T, H], "bfloat16", "temp")
        g.op("aten::mm", "backward", None, [R(dy, [T, H], "bfloat16"), R(wc, [H, H], "bfloat16")], [R(dxc, [T, H], "bfloat16")], fwd=addmm)
        gw = g.storage([H, H], "float32", "grad")
        dyt = {"t": dy, "shape": [H, T], "stride": [1, H], "dtype": "bfloat16", "offset": 0}
        k = g.op("aten::mm", "backward", None, [dyt, R(xc, [T, H], "bfloat16")], [R(gw, [H, H], "float32")], fwd=addmm)
        g.params[wp]["grad_ready_op"] = k
        gb = g.storage([H], "float32", "grad")
        k = g.op("aten::sum", "backward", None, [R(dy, [T, H], "bfloat16")], [R(gb, [H], "float32")], args={"1": [0]},
                 fwd=addmm)
        g.params[bp]["grad_ready_op"] = k
        dx2 = g.storage([T, H], "float32", "temp")
        g.op("aten::add", "backward", None, [R(dx, [T, H], "float32"), R(dxc, [T, H], "bfloat16")], [R(dx2, [T, H], "float32")])
        dx = dx2
    ge = g.storage([V, H], "float32", "grad")
    k = g.op("aten::embedding_dense_backward", "backward", None, [R(dx, [T, H], "float32"), R(ids, [T], "int64")],
             [R(ge, [V, H], "float32")], args={"2": V, "3": -1, "4": False})
    g.params[emb_p]["grad_ready_op"] = k
    # optimizer: AdamW foreach over the 6 parameters, states made before the step (exp_avg, exp_avg_sq)
    plist = [(p["tensor"], p["shape"]) for p in g.params]
    grad_t = []
    for p in g.params:
        gop = g.ops[p["grad_ready_op"]]
        grad_t.append(gop["out"][0]["t"])
    m_t = [g.storage(s, "float32", "optimizer_state") for _, s in plist]
    v_t = [g.storage(s, "float32", "optimizer_state") for _, s in plist]
    L = lambda ts: [R(t, s, "float32") for t, (_, s) in zip(ts, plist)]
    P = [t for t, _ in plist]
    def fe(name, lists, args=None):
        g.op(name, "optimizer", None, lists, [], args=args, alloc=[])
    fe("aten::_foreach_mul_", [L(P)], {"1": 0.99})
    fe("aten::_foreach_lerp_", [L(m_t), L(grad_t)], {"2": 0.1})
    fe("aten::_foreach_mul_", [L(v_t)], {"1": 0.999})
    fe("aten::_foreach_addcmul_", [L(v_t), L(grad_t), L(grad_t)], {"3": 0.001})
    tmp = [g.storage(s, "float32", "temp") for _, s in plist]
    g.op("aten::_foreach_sqrt", "optimizer", None, [L(v_t)], [L(tmp)], alloc=tmp)
    fe("aten::_foreach_div_", [L(tmp)], {"1": 1.0})
    fe("aten::_foreach_add_", [L(tmp)], {"1": 1e-8})
    fe("aten::_foreach_addcdiv_", [L(P), L(m_t), L(tmp)], {"3": -0.001})
    # frees: each non-resident storage after its last use; gradients stay to the step's end (zero_grad frees them)
    last = {}
    for i, op in enumerate(g.ops):
        for side in ("in", "out"):
            for a in op[side]:
                for r in (a if isinstance(a, list) else [a]):
                    last[r["t"]] = i
    for t, i in last.items():
        if g.tensors[t]["kind"] in ("temp", "activation", "input"):
            g.ops[i]["free"].append(t)
    return {"format": "stepsim.ops", "version": 1, "torch": "2.11.0", "python": "3.12.3",
            "device": {"type": "cuda", "name": "NVIDIA H200", "capability": [9, 0]},
            "model": {"source": "hand-built (tests/data/ops/make_synthetic.py)", "config": {},
                      "parameters": sum(p["shape"][0] * (p["shape"][1] if len(p["shape"]) > 1 else 1) for p in g.params)},
            "step": {"micro_batch": B, "seq_len": S, "dtype_policy": "fp32_autocast_bf16", "optimizer": "adamw",
                     "optimizer_impl": "foreach", "loss": "cross_entropy", "activation_checkpointing": "none"},
            "symbols": {"B": B, "S": S}, "scaled": True, "second_symbols": {"B": 3 * B, "S": 2 * S},
            "modules": g.modules, "params": g.params, "tensors": g.tensors, "ops": g.ops}


if __name__ == "__main__":
    graph = build()
    with gzip.GzipFile(os.path.join(HERE, "synthetic-step.ops.json.gz"), "wb", mtime=0) as f:
        f.write(json.dumps(graph, separators=(",", ":")).encode())
