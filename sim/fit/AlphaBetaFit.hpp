#pragma once
// Piecewise α-β fit of a collective's time against its size, by relative-error least squares.
//
// Model on a segment [lo, hi):  t(S) = α + c·S,  c = busbw_factor / (busbw · 1e3)   (t in µs, S in bytes,
// busbw in GB/s = 1e3 B/µs; nccl-tests' bus bandwidth, so one busbw holds for any rank count).
// Fit: minimise Σ ((α + c·S_i − t_i) / t_i)² — weighted least squares with weights 1/t_i², solved in closed
// form (Eigen); α ≥ 0 and c ≥ c_min (busbw ≤ 10 TB/s) are enforced by refitting the other parameter alone
// when the unconstrained solution leaves them.
// Segments: NCCL switches protocol (LL → LL128 → Simple) and channel count with size, so one line does not
// fit all sizes. Dynamic programming finds, for each K = 1..max_segments, the K contiguous segments (each
// with ≥ min_points points) with the least total squared relative residual; K is chosen by BIC,
// n·ln(RSS/n) + (3K − 1)·ln n (α, c and a boundary per segment), so a boundary appears where the residual
// says the protocol changes and not for noise. Segment j covers [first size of j, first size of j+1); the
// last ends at the largest measured size.
#include <vector>

#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

struct SizeTime {
    double bytes = 0;
    double us = 0;
};

struct AlphaBetaLine {
    double alpha_us = 0;
    double us_per_byte = 0;
    double rss = 0;  // Σ squared relative residuals on the points it was fitted to
    double predict(double bytes) const { return alpha_us + us_per_byte * bytes; }
};

struct SegmentFitOptions {
    int max_segments = 6;
    int min_points = 3;
    double max_busbw_gbps = 1e4;
};

// One α-β line through the points (relative-error least squares, α ≥ 0, c ≥ c_min).
AlphaBetaLine fitLine(const std::vector<SizeTime>& pts, double bus_factor, const SegmentFitOptions& opt = {});

// Piecewise fit of points sorted by size (at least min_points of them). Sets segments and rel_error
// (median |relative residual|) on `fit`; each segment gets its own median |relative residual|.
void fitSegments(const std::vector<SizeTime>& pts, double bus_factor, CollectiveFit& fit,
                 const SegmentFitOptions& opt = {});

// Time predicted by a fit's segments (the segment whose lo_bytes is the last ≤ bytes, as CostModel does).
double predictMicros(const CollectiveFit& fit, double bus_factor, double bytes);

// nccl-tests' bus factor for op ∈ all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv.
double ncclBusFactor(const std::string& op, int ranks);

}  // namespace stepsim
