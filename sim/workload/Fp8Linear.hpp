#pragma once
// FP8 linears as torchao's Float8Linear runs them in eager mode (torchao/float8: float8_linear.py,
// float8_scaling_utils.py, float8_utils.py, float8_ops.py): a transformation of the transformer step's Linear layers
// (TransformerStep.hpp calls it in place of autocast's weight cast and the three BF16 GEMMs). Every Linear whose
// dimensions are multiples of 16 is converted (convert_to_float8_training without a filter), the LM head included
// (torchtitan filters it out: not expressible yet). Under tensor parallelism TensorParallel.hpp says what changes.
//
// A cast to FP8 of an R×C tensor of e-byte elements (hp_tensor_to_float8_dynamic), n = R·C, one eager kernel each:
//   abs (2e·n bytes), the amax: a max over the tensor (tensorwise; the weight's transposed view is first copied
//   contiguous, at the fp8 transpose's pace per element) or its rows or columns (rowwise) (e·n),
//   the scale's math on the amax: to(float64), clamp, reciprocal, multiply, to(float32); rowwise rounds the scale
//   down to a power of two (log2, floor, exp2),
//   x.to(float32) (e ≠ 4: (e + 4)·n), x·scale (8n), clamp to ±max (8n: to_fp8_saturated's explicit clamp, kept by
//   torchao for PyTorch ≤ 2.11), .to(float8) (5n).
// _scaled_mm(a, b) (float8_mm, addmm_float8_unwrapped): a transposed fp8 operand is first copied into the layout the
//   kernel needs (a row-major, b column-major: 2 bytes per element), both scales are inverted (two kernels), the GEMM
//   runs at the profile's torch._scaled_mm rate for its variant (gemm.fp8_tensorwise[_fast_accum],
//   gemm.fp8_rowwise[_fast_accum]); rowwise without fast accumulation runs the tensorwise kernel with unit scales
//   (two fills), then multiplies its M×N bf16 output by the outer product of the inverted scales (M×N fp32).
// Forward: cast the input (the activation, in autocast's dtype) and the weight (its parameter dtype), output GEMM
//   (T, out, in) with fast accumulation. Backward: cast grad_output (tensorwise e5m2, rowwise e4m3) and the weight
//   again, the weight's fp8 copy transposed, grad_input GEMM (T, in, out); grad_output and the input cast again along
//   the other dimension, both transposed, grad_weight GEMM (out, in, T); neither with fast accumulation.
// Under FSDP2 with fp8.fp8_all_gather the weights arrive in fp8 with their precomputed scales: no weight casts.
// Host cost: launch.fp8_linear_host_per_kernel for each kernel (the step's forward or backward cost per kernel when
// the profile has none).
#include <string>
#include <vector>

#include "sim/workload/ProgramBuilder.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

class Fp8Linear {
public:
    // `weights_in_fp8`: the weights come gathered in fp8 (FSDP2's FP8 all-gather).
    Fp8Linear(StepContext& c, ProgramBuilder& b, bool weights_in_fp8);

    // Whether Float8Linear converts a Linear of these dimensions.
    static bool converts(long out, long in) { return out % 16 == 0 && in % 16 == 0; }

    // The forward of Linear `name` (out × in) on the step's T tokens: the casts and the output GEMM. Without
    // `cast_input` the input arrives in FP8 already (under TP: cast and gathered once for the linears that share it).
    void forward(const std::string& name, long out, long in, bool cast_input = true);
    // The forward's parts, for a linear split over TP ranks (TensorParallel.hpp): the input's cast on `rows` rows,
    // the weight's (none when gathered in FP8), and the output GEMM on `rows` rows (a chunk of it under async TP).
    void castInput(const std::string& name, long rows, long in);
    void castWeight(const std::string& name, long out, long in);
    void gemm(const std::string& name, long rows, long out, long in);
    // Its backward: the casts, transposes and the two gradient GEMMs.
    void backward(const std::string& name, long out, long in);

private:
    enum class Reduce { tensor, rows, cols };  // the amax: over the whole tensor, each row, each column
    // `transposed`: the tensor is the weight's transposed view (w.t()), which a tensorwise amax copies first.
    void cast(const std::string& name, long rows, long cols, double elem_bytes, Reduce reduce, bool transposed = false);
    void scaleMath(const std::string& name, long values, int kernels);
    // _scaled_mm of (m × k)·(k × n); `transpose_a`, `transpose_b`: the operand is copied into layout first.
    void scaledMm(const std::string& name, long m, long n, long k, bool fast, bool transpose_a, bool transpose_b);
    void kernel(const std::string& name, double bytes, MemKind kind);
    Reduce rowwise(Reduce r) const { return rowwise_ ? r : Reduce::tensor; }

    StepContext& c_;
    ProgramBuilder& b_;
    bool rowwise_;
    bool weights_in_fp8_;
    double forward_s_, backward_s_;  // host cost per kernel
};

// The Linear shapes (out × in, with a layer name) where the step's FP8 linear costs more device time than the BF16
// one it replaces (casts, transposes and FP8 GEMMs against autocast's weight cast and three BF16 GEMMs, forward and
// backward), one line each, for the results' warnings: eager FP8 loses on small shapes because its casts dominate.
std::vector<std::string> fp8SlowerWarnings(const StepContext& c);

}  // namespace stepsim
