"""A Linear trained in FP8 the way torchao's Float8Linear runs it in eager mode, written with torch._scaled_mm
directly (torchao is not installed on the measuring machines; this follows torchao/float8 at commit 36027d8,
2026-08-21: float8_linear.py, float8_scaling_utils.py, float8_utils.py, float8_ops.py).

Per cast (hp_tensor_to_float8_dynamic): amax = max(abs(x)) (tensorwise) or amax(abs(x), dim) (rowwise);
scale = (finfo.max / clamp(amax.double(), min=1e-12)).float() (rowwise: rounded down to a power of two,
exp2(floor(log2(scale)))); bits = clamp(x.float() * scale, ±finfo.max).to(fp8) (the explicit clamp of
to_fp8_saturated, which torchao keeps for PyTorch 2.11 and older).

Forward: input (autocast's dtype) and weight cast to e4m3, output = _scaled_mm(x8, w8.t()) with fast accumulation.
Backward: grad_output cast (tensorwise: e5m2; rowwise: e4m3), the weight cast again for the input gradient and
transposed to column-major (float8_ops.preprocess_addmm's b.t().contiguous().t()); grad_input = _scaled_mm without
fast accumulation; grad_output and the input cast again along the other dimension, each made contiguous in the
layout _scaled_mm needs, grad_weight = _scaled_mm without fast accumulation. Every _scaled_mm takes the reciprocal
of both scales; rowwise without fast accumulation runs the tensorwise kernel with unit scales and multiplies the
output by the outer product of the reciprocal scales afterwards (addmm_float8_unwrapped).

No tensor subclass: the host cost of torchao's Float8TrainingTensor dispatch is not part of this module.
"""
import torch

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
EPS = 1e-12


def amax(x, dim):
    if dim is None:
        return torch.max(torch.abs(x))
    return torch.amax(torch.abs(x), dim=dim, keepdim=True)


def to_scale(a, dtype, pow2):
    a = a.to(torch.float64)
    res = torch.finfo(dtype).max / torch.clamp(a, min=EPS)
    res = res.to(torch.float32)
    if pow2:
        res = torch.exp2(torch.floor(torch.log2(res)))
    return res


def to_float8(x, dtype, dim, pow2):
    """(bits, scale) of x: dim None for tensorwise, else the dimension reduced (keepdim)."""
    scale = to_scale(amax(x, dim), dtype, pow2)
    xs = x.to(torch.float32) * scale
    m = torch.finfo(dtype).max
    return xs.clamp(min=-m, max=m).to(dtype), scale


def is_row_major(t):
    return t.dim() == 2 and t.stride(1) == 1


def scaled_mm(a, sa, b, sb, fast, out_dtype):
    """float8_ops.float8_mm: layouts fixed (a row-major, b column-major), then addmm_float8_unwrapped."""
    if not is_row_major(a):
        a = a.contiguous()
    if is_row_major(b):
        b = b.t().contiguous().t()
    ia, ib = sa.reciprocal(), sb.reciprocal()
    rowwise = sa.dim() == 2 and sa.shape == (a.shape[0], 1)
    post = None
    if rowwise and not fast:
        post = ia * ib
        ia = ia.new_ones(())
        ib = ia.new_ones(())
    out = torch._scaled_mm(a, b, scale_a=ia, scale_b=ib, out_dtype=out_dtype, use_fast_accum=fast)
    if post is not None:
        out *= post
    return out


class Float8Matmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w_t, recipe):
        ctx.save_for_backward(x, w_t)
        ctx.recipe = recipe
        rw = recipe == "rowwise"
        x8, sx = to_float8(x, E4M3, -1 if rw else None, rw)
        w8, sw = to_float8(w_t, E4M3, 0 if rw else None, rw)
        return scaled_mm(x8, sx, w8, sw, True, x.dtype)

    @staticmethod
    def backward(ctx, go):
        x, w_t = ctx.saved_tensors
        rw = ctx.recipe == "rowwise"
        gdt = E4M3 if rw else E5M2
        g8, sg = to_float8(go, gdt, -1 if rw else None, rw)
        w8, sw = to_float8(w_t, E4M3, -1 if rw else None, rw)
        if rw:
            sw = sw.t()  # the scale of w8.t()'s columns
        grad_x = scaled_mm(g8, sg, w8.t(), sw, False, go.dtype)
        g8c, sgc = to_float8(go, gdt, 0 if rw else None, rw)
        x8c, sxc = to_float8(x, E4M3, 0 if rw else None, rw)
        a, sa = g8c.t(), (sgc.t() if rw else sgc)
        grad_w = scaled_mm(a, sa, x8c, sxc, False, go.dtype)
        return grad_x, grad_w.t(), None


class Float8Linear(torch.nn.Linear):
    """nn.Linear whose matmul runs in FP8 as above; under autocast its input is cast to autocast's dtype. A bias is
    added after the scaled GEMM in the output's dtype (torchao's Float8Linear.forward: output + bias.to(output.dtype))."""

    recipe = "tensorwise"

    def forward(self, x):
        if torch.is_autocast_enabled():
            x = x.to(torch.get_autocast_gpu_dtype())
        shape = x.shape
        y = Float8Matmul.apply(x.reshape(-1, shape[-1]), self.weight.t(), self.recipe)
        y = y.reshape(*shape[:-1], y.shape[-1])
        if self.bias is not None:
            y = y + self.bias.to(y.dtype)
        return y


def convert(module, recipe, with_bias=False):
    """Every nn.Linear whose dimensions are multiples of 16 becomes a Float8Linear (torchao's
    convert_to_float8_training with no filter), in place; returns how many. Biased ones only with `with_bias`
    (torchao converts them; the earlier measurements here converted bias-free Linears only)."""
    n = 0
    for name, child in module.named_children():
        if type(child) is torch.nn.Linear and (with_bias or child.bias is None) and child.in_features % 16 == 0 \
                and child.out_features % 16 == 0:
            child.__class__ = Float8Linear
            child.recipe = recipe
            n += 1
        else:
            n += convert(child, recipe, with_bias)
    return n
