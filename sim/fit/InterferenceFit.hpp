#pragma once
// The profile's interference section (Interference): how much compute and collectives slow each other.
#include "sim/fit/FitState.hpp"

namespace stepsim {

// compute_slowdown, comm_slowdown from the harness's GEMM beside one all-reduce: the median slowdowns over the
// sizes whose all-reduce alone lasts at least half the GEMM. Shorter collectives mostly wait for SMs the GEMM holds
// (their "slowdown" is a start delay of up to one GEMM), which a rate factor cannot represent; the report keeps every
// size. Where interference_training.py timed the all-reduce's own rate with its kernel resident before the compute
// (mode resident), comm_slowdown is their median instead.
void fitInterference(FitState& s);

// A training step's kernels beside bucket-sized all-reduces (interference_training.py): beside_transfer and
// beside_waiting, the median slowdown by class (GEMM, attention, memory-bound) beside an NCCL kernel moving data or
// waiting for its peer (classes not measured keep 0: the engine then takes compute_slowdown); beside_transfer_by_size,
// the same per all-reduce size, with records at two sizes or more; gemm_by_shape, the median per GEMM shape beside a
// waiting NCCL kernel. linger_tile_m/n stay the base's.
void fitTrainingInterference(FitState& s);

}  // namespace stepsim
