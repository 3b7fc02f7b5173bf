"""Records one training step as an op graph (docs/ops-format.md), under FakeTensorMode: a TorchDispatchMode above
the fake mode sees every aten op that reaches the kernels' level (after autograd and autocast, so backward ops and
autocast's casts are there), with its tensors' metadata and no data.

- Storages: keyed by the StorageImpl (untyped_storage()._cdata); a new key among an op's outputs is an allocation
  by that op; a weakref finalizer on the storage object (PyTorch keeps one Python object per live StorageImpl)
  marks the op after which its last reference died, as torch.distributed._tools.mem_tracker does.
- Modules: forward pre- and post-hooks on every submodule keep a stack; an op runs under its top.
- Phase: told by the step (step.train_step's on_phase). A forward op re-run during the backward (activation
  checkpointing) runs under a module's forward inside the backward phase: recompute.
- Autograd links: VariableType creates an op's graph node (taking the thread's next sequence number) just before
  it redispatches below autograd, so an op that saw the counter move since the previous op on its thread, with
  grad mode on and an input that requires grad, made the node numbered counter - 1. In the backward,
  torch._C._current_autograd_node() is the node being run; its sequence number names the forward op. Sequence
  numbers are per thread: recomputed nodes (made on the backward's thread) are looked up among the recompute ops
  when the running graph task is a nested one (reentrant checkpointing's inner backward).
- Gradient ready: a post-accumulate-grad hook on each parameter notes the last op before it fired.
"""
from __future__ import annotations

import functools
import math
import threading
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode

try:
    from torch.autograd import _get_sequence_nr
except ImportError:  # older layouts
    from torch._C._autograd import _get_sequence_nr

ALLOCATOR_ROUND = 512  # the CUDA caching allocator's smallest block (its kMinBlockSize)
# Metadata queries (prim::device: a tensor's .device asked through the dispatcher) and the profiler's range
# markers: no kernel and no tensor made; not recorded.
SKIPPED_NAMESPACES = ("prim", "profiler")


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def jsonable(v):
    """A non-tensor argument as JSON: numbers, bools, strings, None, lists; dtypes, layouts and memory formats by
    name ('bfloat16', 'strided', 'contiguous_format'); devices as 'cuda:0'; non-finite floats as 'inf', '-inf',
    'nan'."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isfinite(v):
            return v
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, (list, tuple, torch.Size)):
        return [jsonable(x) for x in v]
    if isinstance(v, (torch.dtype, torch.layout, torch.memory_format)):
        return str(v).removeprefix("torch.")
    if isinstance(v, torch.device):
        return str(v)
    if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return jsonable({torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[type(v)](v))
    if isinstance(v, complex):
        return str(v)
    if isinstance(v, torch.Generator):
        return None
    return str(v)


def _is_tensor_type(arg) -> bool:
    return "Tensor" in str(arg.type)


class StepRecorder(TorchDispatchMode):
    """Enter under the fake mode, around one step.train_step; result() is the graph's modules, params, tensors,
    ops."""

    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: dict):
        super().__init__()
        self.model, self.optimizer = model, optimizer
        self.ops: list[dict] = []
        self.tensors: list[dict] = []
        self._live: dict[int, int] = {}  # StorageImpl address -> storage id
        self._refs: dict[int, weakref.ref] = {}
        self._alloc_op: dict[int, int] = {}
        self._free_op: dict[int, int] = {}
        self.phase = "forward"
        self.active = False
        self.failure: dict | None = None
        self._stack: list[int] = []
        self._last_seq: dict[int, int] = {}
        self._seq_ops: dict[int, list[int]] = {}
        self._outer_task = None
        self._handles = []
        self._grad_sids: set[int] = set()
        self.modules, self._module_index = self._list_modules(model)
        self.params = []
        self._register_existing(batch)

    # ---------------------------------------------------------------------------------------------- set-up
    @staticmethod
    def _list_modules(model):
        mods, index = [], {}
        for path, m in model.named_modules():
            parent = index.get(id(model.get_submodule(path.rpartition(".")[0]))) if path else None
            index[id(m)] = len(mods)
            mods.append({"path": path, "class": type(m).__name__, "parent": parent, "calls": 0})
        return mods, index

    def _register_existing(self, batch):
        owner = {}  # a tied parameter belongs to the first module that holds it, as named_parameters() names it
        for m in self.model.modules():
            for p in m.parameters(recurse=False):
                owner.setdefault(id(p), self._module_index[id(m)])
        for name, p in self.model.named_parameters():
            sid = self._storage_id(p, "param")
            self.params.append({"name": name, "shape": list(p.shape), "dtype": dtype_name(p.dtype),
                                "module": owner[id(p)], "tensor": sid, "grad_ready_op": None,
                                "requires_grad": p.requires_grad})
        for _, b in self.model.named_buffers():
            self._storage_id(b, "buffer")
        for state in self.optimizer.state.values():
            for v in state.values():
                if isinstance(v, torch.Tensor):
                    self._storage_id(v, "optimizer_state")
        for v in batch.values():
            if isinstance(v, torch.Tensor):
                self._storage_id(v, "input")

    def _storage_id(self, t: torch.Tensor, kind: str) -> int | None:
        try:
            st = t.untyped_storage()
        except (RuntimeError, NotImplementedError, TypeError):
            return None
        key = st._cdata
        sid = self._live.get(key)
        if sid is not None:
            return sid
        sid = len(self.tensors)
        self.tensors.append({"bytes": st.nbytes(), "kind": kind, "device": t.device.type})
        self._live[key] = sid
        self._refs[sid] = weakref.ref(st, functools.partial(self._on_free, sid, key))
        return sid

    def _on_free(self, sid, key, _ref):
        if self._live.get(key) == sid:
            del self._live[key]
        if self.active and self.ops and sid not in self._free_op:
            self._free_op[sid] = len(self.ops) - 1
            self.ops[-1]["free"].append(sid)

    # ------------------------------------------------------------------------------------------- hooks
    def _pre_hook(self, idx, _module, _args):
        self._stack.append(idx)
        if self.active:
            self.modules[idx]["calls"] += 1

    def _post_hook(self, idx, _module, _args, _out):
        if self._stack and self._stack[-1] == idx:
            self._stack.pop()
        elif idx in self._stack:  # an exception unwound the inner ones
            del self._stack[self._stack.index(idx):]

    def _grad_ready(self, pidx, _p):
        if self.active and self.ops:
            self.params[pidx]["grad_ready_op"] = len(self.ops) - 1

    def __enter__(self):
        for path, m in self.model.named_modules():
            idx = self._module_index[id(m)]
            self._handles.append(m.register_forward_pre_hook(functools.partial(self._pre_hook, idx)))
            self._handles.append(m.register_forward_hook(functools.partial(self._post_hook, idx), always_call=True))
        for pidx, (_, p) in enumerate(self.model.named_parameters()):
            if p.requires_grad:
                self._handles.append(p.register_post_accumulate_grad_hook(functools.partial(self._grad_ready, pidx)))
        self._last_seq[threading.get_ident()] = _get_sequence_nr()
        self.active = True
        return super().__enter__()

    def __exit__(self, *exc):
        self.active = False
        for h in self._handles:
            h.remove()
        self._handles.clear()
        return super().__exit__(*exc)

    def set_phase(self, phase: str) -> None:
        if phase == "optimizer":
            for p in self.model.parameters():
                if p.grad is not None:
                    sid = self._storage_id(p.grad, "grad")
                    if sid is not None:
                        self._grad_sids.add(sid)
        if phase == "done":
            self.active = False
        else:
            self.phase = phase

    # ----------------------------------------------------------------------------------------- the ops
    def _ref(self, t: torch.Tensor):
        sid = self._storage_id(t, "other")
        return {"t": sid, "shape": list(t.shape), "stride": list(t.stride()), "dtype": dtype_name(t.dtype),
                "offset": t.storage_offset()}

    def _inputs(self, func, args, kwargs):
        ins, extra, flat = [], {}, []
        for i, a in enumerate(func._schema.arguments):
            if i < len(args):
                v = args[i]
            elif a.name in kwargs:
                v = kwargs[a.name]
            else:
                if _is_tensor_type(a):
                    extra[str(i)] = None
                continue
            if isinstance(v, torch.Tensor):
                ins.append(self._ref(v))
                flat.append(v)
            elif isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v):
                ins.append([self._ref(x) if isinstance(x, torch.Tensor) else None for x in v])
                flat.extend(x for x in v if isinstance(x, torch.Tensor))
            else:
                extra[str(i)] = jsonable(v)
        return ins, extra, flat

    def _outputs(self, out):
        refs, alloc = [], []

        def one(t):
            before = len(self.tensors)
            r = self._ref(t)
            if r["t"] is not None and r["t"] >= before:
                self.tensors[r["t"]]["kind"] = "new"
                alloc.append(r["t"])
            return r

        items = out if isinstance(out, (tuple, list)) else [out]
        for x in items:
            if isinstance(x, torch.Tensor):
                refs.append(one(x))
            elif isinstance(x, (list, tuple)) and any(isinstance(y, torch.Tensor) for y in x):
                refs.append([one(y) if isinstance(y, torch.Tensor) else None for y in x])
        return refs, alloc

    def _forward_link(self, tid, seq_now, flat_in, recompute):
        last = self._last_seq.get(tid)
        self._last_seq[tid] = seq_now
        if self.phase != "forward" and not recompute:
            return None
        if last is None or seq_now <= last or not torch.is_grad_enabled():
            return None
        if not any(t.requires_grad for t in flat_in):
            return None
        return seq_now - 1

    def _backward_link(self, recompute):
        if self.phase != "backward" or recompute:
            return None
        node = torch._C._current_autograd_node()
        if node is None:
            return None
        task = torch._C._current_graph_task_id()
        if self._outer_task is None:
            self._outer_task = task
        nested = task != self._outer_task
        seq_of = getattr(node, "_sequence_nr", None)
        cands = self._seq_ops.get(seq_of(), []) if seq_of is not None else []
        pick = [c for c in cands if self.ops[c]["recompute"] == nested]
        return (pick or cands or [None])[-1]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not self.active or func._schema.name.partition("::")[0] in SKIPPED_NAMESPACES:
            return func(*args, **kwargs)
        tid = threading.get_ident()
        seq_now = _get_sequence_nr()
        recompute = self.phase == "backward" and bool(self._stack)
        module = self._stack[-1] if self._stack else None
        ins, extra, flat_in = self._inputs(func, args, kwargs)
        try:
            out = func(*args, **kwargs)
        except Exception as e:
            self.failure = {"op": f"{func._schema.name}.{func._overloadname}", "phase": self.phase,
                            "module": self.modules[module]["path"] if module is not None else None,
                            "module_class": self.modules[module]["class"] if module is not None else None,
                            "error": e}
            raise
        outs, alloc = self._outputs(out)
        seq = self._forward_link(tid, seq_now, flat_in, recompute)
        fwd = self._backward_link(recompute)
        if self.phase == "backward" and not recompute:
            module = self.ops[fwd]["module"] if fwd is not None else None
        writes = any(a.alias_info is not None and a.alias_info.is_write for a in func._schema.arguments)
        in_sids = {r["t"] for r in _flat_refs(ins)}
        out_sids = [r["t"] for r in _flat_refs(outs)]
        view = (not writes and not alloc and bool(out_sids) and all(s in in_sids for s in out_sids))
        idx = len(self.ops)
        for sid in alloc:
            self._alloc_op[sid] = idx
        self.ops.append({"op": func._schema.name, "overload": func._overloadname, "phase": self.phase,
                         "module": module, "in": ins, "out": outs, "args": extra, "view": view, "seq_nr": seq,
                         "fwd_op": fwd, "recompute": recompute, "alloc": alloc, "free": []})
        if seq is not None:
            self._seq_ops.setdefault(seq, []).append(idx)
        return out

    # -------------------------------------------------------------------------------------------- result
    def _classify(self):
        opt_sids = set()
        for state in self.optimizer.state.values():
            for v in state.values():
                if isinstance(v, torch.Tensor):
                    try:
                        key = v.untyped_storage()._cdata
                    except (RuntimeError, NotImplementedError):
                        continue
                    if key in self._live:
                        opt_sids.add(self._live[key])
        for sid, t in enumerate(self.tensors):
            if t["kind"] in ("param", "buffer", "input", "optimizer_state"):
                continue
            if sid in self._grad_sids:
                t["kind"] = "grad"
            elif sid in opt_sids:
                t["kind"] = "optimizer_state"
            elif sid not in self._alloc_op:
                t["kind"] = "other"
            else:
                a = self.ops[self._alloc_op[sid]]
                f = self._free_op.get(sid)
                fop = self.ops[f] if f is not None else None
                if a["phase"] == "forward":
                    t["kind"] = "activation" if fop is None or fop["phase"] != "forward" else "temp"
                elif a["recompute"]:
                    t["kind"] = "activation" if fop is None or not fop["recompute"] else "temp"
                else:
                    t["kind"] = "temp"

    def result(self) -> dict:
        self._classify()
        return {"modules": self.modules, "params": self.params, "tensors": self.tensors, "ops": self.ops}


def _flat_refs(refs):
    for r in refs:
        if isinstance(r, list):
            yield from (x for x in r if x is not None)
        elif r is not None:
            yield r


def peak_bytes(graph: dict, device: str = "cuda") -> dict:
    """Live bytes of the device's storages (each rounded up to the allocator's 512-byte blocks) after each op: the
    peak, the op it came at and the bytes held before the first op. A check for the capture's printout."""
    tensors = graph["tensors"]

    def size(sid):
        t = tensors[sid]
        return -(-t["bytes"] // ALLOCATOR_ROUND) * ALLOCATOR_ROUND if t.get("device") == device else 0

    allocated = {s for op in graph["ops"] for s in op["alloc"]}
    live = sum(size(s) for s in range(len(tensors)) if s not in allocated)
    start, peak, at = live, live, -1
    for i, op in enumerate(graph["ops"]):
        live += sum(size(s) for s in op["alloc"])
        if live > peak:
            peak, at = live, i
        live -= sum(size(s) for s in op["free"])
    return {"start_bytes": start, "peak_bytes": peak, "peak_op": at}
