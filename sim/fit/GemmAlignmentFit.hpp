#pragma once
// Fits gemm.bf16.unaligned (sim/cost/GemmModel.hpp, alignment) from calibration/pytorch/gemm_alignment.py's records
// (kind gemm, source "pytorch-alignment"): a Linear's three GEMMs with its output width unpadded and rounded up to
// multiples of 2, 4 and 8.
//
// Per record, its unaligned dimension is the one with the smallest power-of-two factor p (the other two are the
// training shape's). Records of one form (the same position and the same other two dimensions) are compared: a
// record under half its form's fastest rate is slow. alignment = 2 · the largest p of a slow record; per p below it,
// the rate of each position (m, n, k) is the median of its slow records' TFLOP/s. No record, or none slow: the
// section is kept as it was (not measured).
#include "sim/fit/FitState.hpp"

namespace stepsim {

void fitGemmAlignment(FitState& s);

}  // namespace stepsim
