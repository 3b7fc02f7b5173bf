#include "sim/workload/Fp8Linear.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace stepsim {

Fp8Linear::Fp8Linear(StepContext& c, ProgramBuilder& b, bool weights_in_fp8)
    : c_(c), b_(b), rowwise_(c.sc.fp8.recipe == Fp8Recipe::rowwise), weights_in_fp8_(weights_in_fp8) {
    const Fp8LinearHost& h = c.cost.profile().launch.fp8_linear_host_per_kernel;
    const double fwd = rowwise_ ? h.rowwise_forward_us : h.tensorwise_forward_us;
    const double bwd = rowwise_ ? h.rowwise_backward_us : h.tensorwise_backward_us;
    forward_s_ = fwd > 0 ? fwd * 1e-6 : c.forward_s;
    backward_s_ = bwd > 0 ? bwd * 1e-6 : c.backward_s;
}

void Fp8Linear::kernel(const std::string& name, double bytes, MemKind kind) {
    b_.mem(name, bytes, kind);
    b_.last().host_s = b_.phase == Phase::backward ? backward_s_ : forward_s_;
}

// torchao's amax_to_scale on `values` amaxes: to(float64), clamp, reciprocal and multiply (a Python float over a
// tensor), to(float32), and rowwise's power-of-two rounding (log2, floor, exp2); or the reciprocals and fills before
// a _scaled_mm.
void Fp8Linear::scaleMath(const std::string& name, long values, int kernels) {
    for (int i = 0; i < kernels; ++i) kernel(name, 12.0 * double(values), MemKind::fp8_scale_math);
}

void Fp8Linear::cast(const std::string& name, long rows, long cols, double elem_bytes, Reduce reduce,
                     bool transposed) {
    const double n = double(rows) * double(cols), e = elem_bytes;
    kernel(name + " abs", 2 * e * n, MemKind::fp8_abs);
    // torch.max over a transposed view first copies it contiguous (the profiled Float8Linear, fp8_bench.py): PyTorch's
    // strided copy, priced at the measured fp8 transpose's pace per element (its bytes as if one per element), the
    // pace of a strided copy being set by its elements, not their width.
    if (transposed && reduce == Reduce::tensor) kernel(name + " amax input contiguous", 2 * n, MemKind::fp8_transpose);
    long values = 1;
    switch (reduce) {
        case Reduce::tensor: kernel(name + " amax", e * n, MemKind::fp8_amax); break;
        case Reduce::rows:
            kernel(name + " amax", e * n + e * double(rows), MemKind::fp8_amax_rows);
            values = rows;
            break;
        case Reduce::cols:
            kernel(name + " amax", e * n + e * double(cols), MemKind::fp8_amax_cols);
            values = cols;
            break;
    }
    scaleMath(name + " scale", values, rowwise_ ? 8 : 5);
    if (e != 4) kernel(name + " to fp32", (e + 4) * n, MemKind::fp8_upcast);
    kernel(name + " scale mul", 8 * n, MemKind::fp8_scale_mul);
    kernel(name + " clamp", 8 * n, MemKind::fp8_clamp);
    kernel(name + " to fp8", 5 * n, MemKind::fp8_quantize);
}

void Fp8Linear::scaledMm(const std::string& name, long m, long n, long k, bool fast, bool transpose_a,
                         bool transpose_b) {
    if (transpose_a) kernel(name + " fp8 a transpose", 2 * double(m) * double(k), MemKind::fp8_transpose);
    if (transpose_b) kernel(name + " fp8 b transpose", 2 * double(k) * double(n), MemKind::fp8_transpose);
    scaleMath(name + " scale reciprocal", rowwise_ ? std::max(m, n) : 1, 2);
    const bool post_scale = rowwise_ && !fast;
    if (post_scale) {
        kernel(name + " post scale", 4 * double(m) * double(n), MemKind::fp8_post_scale);
        scaleMath(name + " unit scales", 1, 2);
    }
    b_.gemm(name, m, n, k);
    Op& op = b_.last();
    const std::string variant =
        std::string(rowwise_ && !post_scale ? "fp8_rowwise" : "fp8_tensorwise") + (fast ? "_fast_accum" : "");
    bool in_domain = true;
    op.work_s = c_.cost.scaledMmSeconds(op.gemm, variant, &in_domain);
    if (!in_domain) ++c_.out_of_domain;
    op.bytes = double(m) * double(k) + double(k) * double(n) + 2 * double(m) * double(n);
    op.host_s = b_.phase == Phase::backward ? backward_s_ : forward_s_;
    if (post_scale) kernel(name + " post scale mul", 8 * double(m) * double(n), MemKind::fp8_post_scale_mul);
}

void Fp8Linear::castInput(const std::string& name, long rows, long in) {
    cast(name + " input fp8", rows, in, c_.ce, rowwise(Reduce::rows));
}

// The weight as Linear stores it (out × in), transposed logically: rowwise scales each output column, a row of the
// stored weight.
void Fp8Linear::castWeight(const std::string& name, long out, long in) {
    if (!weights_in_fp8_) cast(name + " weight fp8", out, in, c_.pe, rowwise(Reduce::rows), /*transposed=*/true);
}

void Fp8Linear::gemm(const std::string& name, long rows, long out, long in) {
    scaledMm(name, rows, out, in, /*fast=*/true, false, false);
}

void Fp8Linear::forward(const std::string& name, long out, long in, bool cast_input) {
    if (cast_input) castInput(name, c_.t.T, in);
    castWeight(name, out, in);
    gemm(name, c_.t.T, out, in);
}

void Fp8Linear::backward(const std::string& name, long out, long in) {
    const long T = c_.t.T;
    cast(name + " grad_output fp8", T, out, c_.ce, rowwise(Reduce::rows));
    if (!weights_in_fp8_)
        cast(name + " weight fp8 (grad_input)", out, in, c_.pe, rowwise(Reduce::cols), /*transposed=*/true);
    scaledMm(name + " dgrad", T, in, out, /*fast=*/false, false, /*transpose_b=*/true);
    cast(name + " grad_output fp8 (grad_weight)", T, out, c_.ce, rowwise(Reduce::cols));
    cast(name + " input fp8 (grad_weight)", T, in, c_.ce, rowwise(Reduce::cols));
    scaledMm(name + " wgrad", out, in, T, /*fast=*/false, /*transpose_a=*/true, /*transpose_b=*/true);
}

std::vector<std::string> fp8SlowerWarnings(const StepContext& step) {
    StepContext c = step;  // the comparison's kernels are priced apart from the step's (out_of_domain untouched)
    struct Shape {
        const char* what;
        long out, in;
    };
    const TransformerShape& t = c.t;
    std::vector<Shape> shapes = {{"attn.qkv", t.qkvOut(), t.h}, {"attn.proj", t.h, t.attnOut()}};
    if (t.mlp == MlpKind::gelu) shapes.insert(shapes.end(), {{"mlp.fc", t.f, t.h}, {"mlp.proj", t.h, t.f}});
    else if (t.fused_gate_up) shapes.insert(shapes.end(), {{"mlp.gate_up", 2 * t.f, t.h}, {"mlp.down", t.h, t.f}});
    else shapes.insert(shapes.end(), {{"mlp.gate/up", t.f, t.h}, {"mlp.down", t.h, t.f}});
    shapes.push_back({"lm_head", t.V, t.h});
    std::vector<std::string> out;
    for (const Shape& s : shapes) {
        if (!Fp8Linear::converts(s.out, s.in)) continue;
        Program fp8_prog, bf16_prog;
        ProgramBuilder fb(c, fp8_prog), bb(c, bf16_prog);
        Fp8Linear f(c, fb, c.sc.parallel.data == DataParallel::fsdp2 && c.sc.fp8.fp8_all_gather);
        f.forward(s.what, s.out, s.in);
        fb.phase = Phase::backward;
        f.backward(s.what, s.out, s.in);
        if (c.autocast) bb.mem("weight cast", (c.pe + c.ce) * double(s.out) * double(s.in), MemKind::cast_down);
        bb.gemm("fwd", t.T, s.out, s.in);
        bb.gemm("dgrad", t.T, s.in, s.out);
        bb.gemm("wgrad", s.out, s.in, t.T);
        auto device = [](const Program& p) {
            double sum = 0;
            for (const Op& op : p.ops) sum += op.work_s;
            return sum;
        };
        const double f_s = device(fp8_prog), b_s = device(bf16_prog);
        if (f_s >= b_s)
            out.push_back(fmt::format(
                "FP8 slower than BF16 at {} ({} tokens, {} -> {}): {:.0f} us of device time per micro-step in FP8 "
                "({} kernels: casts and transposes {:.0f} us) against {:.0f} us in BF16; eager FP8's casts dominate "
                "this shape (fp8.enabled)",
                s.what, t.T, s.in, s.out, f_s * 1e6, fp8_prog.ops.size(),
                (f_s - [&] {
                    double g = 0;
                    for (const Op& op : fp8_prog.ops)
                        if (op.cls == KernelClass::gemm) g += op.work_s;
                    return g;
                }()) * 1e6,
                b_s * 1e6));
    }
    return out;
}

}  // namespace stepsim
