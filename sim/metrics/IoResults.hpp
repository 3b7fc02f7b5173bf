#pragma once
// Results of the input pipeline, checkpoints and link utilization (IoMetrics.hpp, LinkUtilization.hpp).
#include <string>
#include <vector>

namespace stepsim {

// The classes of a step: H2D-bound when one of its host-to-device copies takes over 50 µs at under
// 8 GB/s, compute-idle when the compute stream leaves a gap over 200 µs between two kernels; either, both or none.
inline constexpr double kH2dBoundCopyUs = 50.0;
inline constexpr double kH2dBoundGBps = 8.0;
inline constexpr double kComputeIdleGapUs = 200.0;

struct StepIoClass {
    int step = 0;
    bool h2d_bound = false;
    bool compute_idle = false;
    double max_h2d_us = 0.0;       // its longest host-to-device copy (any rank)
    double max_kernel_gap_us = 0.0;  // its longest gap between compute-stream kernels (any rank)
};

struct InputResults {
    double h2d_ms = 0.0;           // host-to-device copy time per step per GPU (measured steps)
    double h2d_GBps = 0.0;         // their bytes over their time
    std::vector<StepIoClass> steps;  // every step, the first included
};

struct CheckpointResults {
    int count = 0;                  // checkpoints in the simulated steps (per rank)
    double blocking_ms = 0.0;       // per checkpoint: the training loop blocked (mean over checkpoints and ranks)
    double ms_per_step = 0.0;       // blocking_ms / interval_steps
    double write_ms = 0.0;          // per checkpoint: the write to storage, start to end (async: beside the steps)
    double staged_bytes = 0.0;      // per rank per checkpoint
    double written_bytes = 0.0;
};

// Utilization of the flow network's links over time (LinkUtilization.hpp): bins of bin_ms from 0, each the
// time-weighted mean of load / capacity over the bin.
struct LinkSeries {
    std::string name, kind;
    double capacity_GBps = 0.0;
    double peak = 0.0;              // its highest bin
    std::vector<double> util;       // [bin], 0..1
};

struct LinkUtilization {
    double bin_ms = 0.0;
    int bins = 0;
    int links_total = 0;            // NVLink, PCIe, NIC, network and storage links of the fabric
    std::vector<LinkSeries> links;  // those that carried traffic, in link order
};

}  // namespace stepsim
