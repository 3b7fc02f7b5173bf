#pragma once
// A traced step's host costs against the profile's (model.trace_host; docs/trace.md). A trace's host costs are those
// of its run under the profiler; the profile's are those of an unprofiled eager step (launch section,
// calibration/pytorch/host_overhead.py), per launch by the phase that issued it:
//   forward: launch.forward_host (forward_host_ddp over more than one rank), backward: launch.backward_host,
//   optimizer: launch.optimizer_host_per_tensor_us × the parameter tensors found, spread over the optimizer's
//   launches (it includes zero_grad), an NCCL kernel: launch.nccl_host, any other launch: launch.eager_host.
// The profile's costs are per launch with the framework's Python included, so the host time a trace has outside its
// launches (before the first, after the last, before a synchronization) has no profile counterpart (0).
// The profiler's overhead per step is the trace's host time (its window less the time blocked in synchronizations)
// minus the profile's.
#include "sim/base/TraceStep.hpp"
#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

struct TraceHostCosts {
    double forward_us = 0, backward_us = 0, optimizer_us = 0, nccl_us = 0, eager_us = 0;

    TraceHostCosts(const TraceStep& t, const LaunchRates& l, bool data_parallel)
        : forward_us((data_parallel ? l.forward_host_ddp : l.forward_host).median_us),
          backward_us(l.backward_host.median_us),
          nccl_us(l.nccl_host.median_us),
          eager_us(l.eager_host.median_us) {
        int tensors = 0, launches = 0;
        for (const TraceParam& p : t.params) tensors += p.tensors;
        for (const TraceActivity& a : t.activities) launches += a.phase == Phase::optimizer;
        optimizer_us = launches > 0 ? l.optimizer_host_per_tensor_us * tensors / launches : 0.0;
    }

    // The profile's host cost of one launch (µs).
    double of(const TraceActivity& a) const {
        if (a.cls == KernelClass::comm) return nccl_us;
        switch (a.phase) {
            case Phase::forward: return forward_us;
            case Phase::backward: return backward_us;
            case Phase::optimizer: return optimizer_us;
            default: return eager_us;
        }
    }

    // The step's host time under the profile, and as traced (µs).
    double profileStep(const TraceStep& t) const {
        double s = 0;
        for (const TraceActivity& a : t.activities) s += of(a);
        return s;
    }
    static double tracedStep(const TraceStep& t) {
        double s = t.cpu_end_us - t.cpu_start_us;
        for (const TraceSync& y : t.syncs) s -= y.end_us - y.start_us;
        return s;
    }
};

}  // namespace stepsim
