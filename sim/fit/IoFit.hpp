#pragma once
// The profile's io section (IoRates) from calibration/pytorch/io_transfer.py's records:
//   copies: an α-β line (RateLine.hpp) per direction and memory kind through the device times of PyTorch's copies
//     (h2d/d2h × pinned/pageable); copy_alpha_us is the pinned H2D line's α;
//   storage_write_gbps: bytes over seconds of the fsync'd disk writes, their median;
//   dcp.save (sync): the line through (bytes, blocking − bytes / d2h_pageable): α = dcp_sync_overhead_ms, the rate
//     dcp_sync_write_gbps (the write after the device-to-host copy, DCP's serialization included);
//   async_save: its staging, the line through (bytes, blocking) for the default stager and the pinned one; its write,
//     the line through (bytes, total − blocking).
// A save's first repetition of each size (rep 0: first allocations and file creation) is left out; the report says
// how many points each line had and keeps the host's launch cost beside an async write against after it.
// Without io records every io figure stays the base's (kept).
#include "sim/fit/FitState.hpp"

namespace stepsim {

void fitIo(FitState& s);

}  // namespace stepsim
