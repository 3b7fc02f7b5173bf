#pragma once
// The profile's power section (PowerModel): the clock under the power limit and attention's sensitivity to it, from
// power_duty.py's power_duty and power_loaded records. Without such records the profile has no power model
// (power.modelled = false).
//   clock_max_mhz       the highest rested clock read beside a record's rested time
//   the clock line      clock = intercept + slope · (load + memory_busy_tflops · memory_fraction) / busy
//                       + idle_headroom · (1 − busy) / busy, by least squares over the loads held at the limit
//                       (≥ 97% of the highest power, > 20 MHz under the rested clock) for each whole
//                       memory_busy_tflops in 0..400, the one of least error kept; without a held load idle for at
//                       least 3% of its cycle, idle_headroom is 0 and the idle mixes are left out
//   attention exponents by head_dim: the slope through the origin of ln(loaded time / burst time) on
//                       ln(burst clock / loaded clock), over the records ≥ 30 MHz under their burst clock; the backward
//                       from forward_backward less forward; attention_reference_mhz = the median burst clock
#include "sim/fit/FitState.hpp"

namespace stepsim {

void fitPower(FitState& s);

}  // namespace stepsim
