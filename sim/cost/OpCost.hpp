#pragma once
// The kernels one captured aten op launches (model.type: ops; docs/ops.md), each priced by the profile's cost models
// (sim/cost/CostModel.hpp). An op's family comes from its name; each family's kernels and their sizes:
//   view        `view: true`, and ops that only allocate or change metadata (empty*, resize_, set_, detach, alias,
//               lift_fresh): no kernel, no cost;
//   gemm        mm, addmm, bmm, baddbmm, linear, matmul, convolution (as its implicit GEMM) and convolution_backward
//               (the input- and weight-gradient GEMMs its output_mask asks, the bias gradient a reduction): one GEMM
//               kernel of C[m×n] = A[m×k]·B[k×n] (bmm: m = batch·M), 2mnk FLOPs, priced by the GEMM model
//               (GemmModel.hpp: shape, dtype, alignment) in its inputs' dtype; the layout (transposed operands) does
//               not enter the profile's model;
//   attention   SDPA's flash, efficient and cuDNN ops and their backward (math SDPA dispatches as bmm and softmax):
//               FLOPs 4·B·H·Sq·Sk·D (causal: half), backward 2.5x, by the attention rates at {B·H, Sq, D}; GQA's
//               fewer KV heads change no FLOPs (they are the query heads'). Kernels: cuDNN a statistics memset
//               (4·B·H·Sq bytes) then the kernel, and in backward the dO·O preprocess (over 2·B·H·Sq·D
//               elements) and dQ's fp32 accumulator converted (four: as calibration/capture's launch table counts
//               them on H200);
//               flash forward one, backward three (preprocess, kernel, convert); efficient one forward, two backward
//               (preprocess, kernel);
//   memory-bound, priced by bytes read and written (memorySeconds: the profile's rate for the kernel's kind), each
//               input counted by its distinct elements (a broadcast dimension, stride 0, reads once):
//     elementwise  one kernel, kind elementwise (gelu: gelu_forward; an add of fp32 and bf16: residual_add);
//     cast         _to_copy / copy_ to another dtype: cast_up or cast_down;
//     copy         copy_ / clone / contiguous / _to_copy in one dtype: a memcpy (class copy) when both sides are
//                  contiguous, else an elementwise kernel (a strided read);
//     cat_split    cat, stack, split_with_sizes_copy, _chunk_cat: one kernel;
//     reduction    sum, mean, amax, norms, ...: elementwise's rate; a sum of a matrix over its rows into a vector of
//                  its last dimension (a Linear's bias gradient) at bias_grad's;
//     index        embedding, index, index_select, gather (read and write the gathered elements, read the indices),
//                  index_put_, index_add_, scatter* (the values read and written once, the indices read);
//     embedding_backward  embedding_dense_backward: the gradient table zeroed, the indices sorted (a radix sort over
//                  them, 4 passes of reading and writing), the gradient rows reduced into the table: three kernels;
//     softmax      _softmax, _log_softmax and their backward at the log-softmax kinds (16-bit or fp32);
//     loss         nll_loss_forward (the picked log-probabilities and the targets); nll_loss_backward the gradient
//                  zeroed, then the targets' entries written: two kernels;
//     norm         native_layer_norm and _fused_rms_norm forward; their backward the input-gradient kernel and, when
//                  the weight's gradient is an output, the weight-gradient kernel: the profile's norm grids by rows ×
//                  hidden and dtype;
//     dropout      native_dropout, native_dropout_backward;
//     foreach      _foreach_* and _fused_adam(w)_, _amp_foreach_non_finite_check_and_unscale_: the bytes of every
//                  tensor list, kernels as multi_tensor_apply launches them (MultiTensorApply.cuh: at most
//                  110/64/48/36/30 tensors for 1-5 lists, 320 blocks of 65536 elements per launch; _foreach_norm one
//                  more, its cleanup reduction), the pass priced whole at the optimizer_foreach rates (fused:
//                  optimizer) by dtype and shared by its launches;
//     pad_scatter  slice_backward, select_backward, constant_pad_nd, new_zeros-and-copy ops: the output filled, then
//                  the input copied into its slice: two kernels;
//     sync         _local_scalar_dense (.item()): a 8-byte copy to the host, the host waits for it;
//     other        any other op: one elementwise kernel over its bytes (listed as unknown in the warnings).
// With model.op_times each op's kernel count and measured device time replace these (OpsSchedule.hpp).
#include <array>
#include <string>
#include <vector>

#include "sim/base/OpGraph.hpp"
#include "sim/base/Program.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/cost/CostModel.hpp"

namespace stepsim {

enum class OpFamily : std::uint8_t {
    view,
    gemm,
    attention,
    elementwise,
    cast,
    copy,
    cat_split,
    pad_scatter,
    reduction,
    index,
    embedding_backward,
    softmax,
    loss,
    norm,
    dropout,
    foreach,
    sync,
    other
};
inline constexpr std::size_t kOpFamilies = 18;
const char* opFamilyName(OpFamily f);

// Bytes per element of torch's dtype name (float32 4, bfloat16 2, float8_e4m3fn 1, int64 8, bool 1, ...); 0 when
// the name is not one torch has.
double dtypeBytes(const std::string& dtype);

// The family of an op by its aten name (and `view`).
OpFamily opFamily(const OpNode& n);

// One kernel an op launches, unpriced: its class, memory kind, shape ({m, n, k} for GEMMs and attention as
// ProgramBuilder names them; {rows, hidden, element bytes} for norms), FLOPs, bytes and the dtype it computes in.
struct OpKernel {
    std::string name;
    KernelClass cls = KernelClass::memory;
    MemKind mem = MemKind::elementwise;
    GemmShape shape;
    double flops = 0.0, bytes = 0.0;
    DType dtype = DType::bf16;
    // One of `split` launches of one pass (a foreach op's multi_tensor_apply chunks): priced as the whole pass
    // (bytes·split at the kind's rate, one fixed cost, as the profile's optimizer rates were fitted per pass), each
    // launch 1/split of its time.
    int split = 1;
};

// What `n` launches (empty for views); `causal`: an SDPA op's, read from its arguments (the forward's for a backward
// op, through fwd_op).
std::vector<OpKernel> opKernels(const OpGraph& g, const OpNode& n);

// The kernel priced as an engine op (work_s, and a GEMM's gaps by shape); `in_domain` false when the query fell
// outside the profile's measurements.
Op priceKernel(const CostModel& cost, const OpKernel& k, Phase phase, bool& in_domain);

// Per family, what the graph's ops launch and cost at the profile (`stepsim explain`): ops, kernels, bytes, FLOPs and
// device time (with model.op_times: the table's kernels and times).
struct OpFamilyTotals {
    std::size_t ops = 0, kernels = 0;
    double bytes = 0.0, flops = 0.0, seconds = 0.0;
};
std::array<OpFamilyTotals, kOpFamilies> opFamilyTotals(const OpGraph& g, const CostModel& cost);

}  // namespace stepsim
