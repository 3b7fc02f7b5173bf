#pragma once
// A captured op graph (OpGraph.hpp, model.type: ops; docs/ops.md) as the Program of every rank, `sim.steps` times:
//   zero_grad (one eager op's host cost), then each op in dispatch order: a view nothing; any other op its kernels
//     (sim/cost/OpCost.hpp: family rules, each kernel priced by the profile) on the compute stream, each launched at
//     the host cost of its phase's kernel (launch.forward_host, forward_host_ddp with more than one rank,
//     backward_host; optimizer kernels the forward's, as the built-in step prices them), optimizer.step()'s own host
//     time once before its first op (launch.optimizer_host_per_tensor_us per parameter tensor); a .item() blocks the
//     host until the compute stream reaches it;
//   with model.op_times each op's measured kernels and device time (split evenly over its kernels, in the class of
//     the model's first kernel, less the launch gap the engine adds before each) and its measured host time replace
//     the model's, and the host time the table leaves out (the profile's ops_host: per module call and autograd
//     node, OpsHost.hpp) comes before the next kernel launched;
//   DDP (parallel.data: ddp, DdpSchedule.hpp): each parameter's gradient is ready after its grad_ready_op; buckets
//     in the gradient-ready order with bucket_cap_mb and the first bucket's size as the reducer rebuilds them (the
//     first step one bucket), each all-reduced on the NCCL stream once its last gradient is ready; at one GPU none,
//     unless the scenario names parallel.data: ddp (the model wrapped at world size 1: the reducer's hooks, bucket
//     copies and one-rank all-reduces, its buckets in memory, the forward at launch.forward_host_ddp);
//   FSDP2 (parallel.data: fsdp2, Fsdp2Schedule.hpp): one parameter group per unit (OpsUnits.hpp) and the root; the
//     unit's pre-forward (all-gather and copy-out) before its first forward op, its post-forward after its last; the
//     root's pre-backward before the backward's first op, each unit's pre-backward before its first op in the
//     backward (activation checkpointing's recompute included), its post-backward (reduce-scatter) after its last
//     gradient is ready; the optimizer's ops over the local shard (1/N of their bytes); each of those hooks (and the
//     root's post-backward) first costs the host the profile's ops_host.fsdp2_hook_us;
//   the step ends when every stream's work has finished.
// Memory: OpsMemory.hpp. Refused with a located error (sim/base/OpsSupport.hpp, at the key's line by the loader).
#include "sim/base/Scenario.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/workload/Expand.hpp"

namespace stepsim {

Expansion expandOps(const Scenario& sc, const CostModel& cost);

}  // namespace stepsim
