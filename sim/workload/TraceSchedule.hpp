#pragma once
// A step imported from a PyTorch profiler trace (TraceStep.hpp, model.type: trace; docs/trace.md) as the Program of
// every rank, `sim.steps` times:
//   host: the trace's host sequence: a host_work op for the time from the step's start to its first launch, then each
//     GPU activity issued at its launch's host cost (the CPU time since the previous launch began), each host
//     synchronization as a host_sync on every stream's last work, and the time from the last launch to the step's
//     end as host_work (the profiler's own overhead is in these: docs/trace.md states it);
//   GPU: each activity on its stream with its measured duration plus its device gap (the period the engine prices:
//     GpuCompute.hpp), the gap itself as the op's gap_s; rescaled by class when the scenario's profile is another
//     GPU's than the trace's: GEMM and attention by the ratio of the two profiles' bf16 peaks, memory-bound,
//     optimizer and copy kernels by their HBM bandwidths' (source: the built-in profile of the trace's GPU);
//     unknown kernels and NCCL kernels are never rescaled;
//   communication: a data-parallel world (cluster.worldSize() > 1) re-simulates collectives on the topology. A trace
//     with NCCL kernels keeps its own (each a collective of its recorded size over every rank, on its stream, after
//     the compute stream's work issued before it; the compute stream waits for them before the optimizer). A trace
//     without any is wrapped in DDP (DdpSchedule.hpp: hooks, buckets by ddp.bucket_cap_mb, all-reduces, copies back)
//     with one gradient per backward weight-gradient GEMM (m·n parameters, ready when that GEMM is issued) and, with
//     model.trace_params, one more for the parameters the GEMMs do not account for (ready at the backward's end);
//     at one rank NCCL kernels run as kernels of their measured duration;
//   FSDP2 (parallel.data: fsdp2, a trace without NCCL kernels): Fsdp2Schedule.hpp's schedule over the trace's repeated
//     blocks (TraceImportUnits.hpp: one FSDP unit each, its parameters those whose gradients its backward makes) and
//     the root (the rest, with model.trace_params' remainder): its hooks act at each block's first and last activity
//     in forward and in backward, the root's pre-forward before the forward's first activity and its pre-backward
//     before the backward's first; its all-gathers, reduce-scatters and copy-in/copy-out kernels on its own streams;
//     the optimizer's kernels take 1/N of their traced time (the local shard);
//   host costs: as traced, or with model.trace_host: profile the profile's per launch (TraceHostCost.hpp), with no
//     host time outside the launches;
//   the step ends when every stream's work has finished.
// Refused with a located error (sim/base/TraceSupport.hpp, at the key's line by the loader): FSDP1, HSDP, ZeRO,
// tensor or pipeline parallelism, torch.compile, FP8, an FSDP2 param_dtype other than the parameters', gradient
// accumulation, checkpoint I/O, a data_loader section, PowerSGD; here: a profile of another GPU with no built-in
// profile of the trace's to rescale from, a data-parallel world over a trace with no gradients found, or over a trace
// whose collectives ran no NCCL kernel (a DDP step traced at world size 1), FSDP2 over a trace with no repeated blocks
// found or with NCCL kernels of its own.
#include "sim/base/Scenario.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/workload/Expand.hpp"

namespace stepsim {

Expansion expandTrace(const Scenario& sc, const CostModel& cost);

}  // namespace stepsim
