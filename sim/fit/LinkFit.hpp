#pragma once
// The profile's links section (LinkRates): α-β lines (RateLine.hpp) through the harness's transfers, at least 2
// sizes each: nvlink_gbps ← peer copy engine (peer_ce), pcie_h2d_gbps ← pinned H2D, pcie_pageable_gbps ← pageable
// H2D. nvlink_latency_us, nic_gbps and storage_gbps stay the base's. The report holds a line per transfer op.
#include "sim/fit/FitState.hpp"

namespace stepsim {

void fitLinks(FitState& s);

}  // namespace stepsim
