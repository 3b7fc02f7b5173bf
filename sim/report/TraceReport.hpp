#pragma once
// Timeline → a Chrome trace-event JSON file that opens in ui.perfetto.dev (and chrome://tracing), next to
// a real PyTorch profiler trace. Format: the Trace Event Format document (Google, "JSON Object Format"),
// as Perfetto's JSON importer reads it.
//
//   {"displayTimeUnit":"ns","traceEvents":[ ... ]}
//   - metadata ("ph":"M"): process_name "rank N" and process_sort_index per rank (pid = rank);
//     thread_name = Program::streams[i].name and thread_sort_index per stream (tid = stream index);
//   - one complete event ("ph":"X") per Timeline span, named Program::names[op.name], cat = kernel class,
//     ts and dur in µs written exactly from integer picoseconds (6 decimals), args {op, class, step, flops,
//     bytes} and for a collective also {collective, group, group_name, seq, algo, proto, barrier_wait_us};
//   - one instant event ("ph":"i", process scope) per rank and step end, named "step N end";
//   - flow events linking each collective instance across its member ranks: "s" on the first member's
//     span, "t" on the middle ones, "f" on the last (ranks in group order), sharing cat "collective", the
//     collective's name and id = its index in Timeline::collectives; each at the middle of its span with
//     "bp":"e", so it binds to that (enclosing) slice.
//
// A collective span is matched to its CollectiveRecord by order: the k-th collective op (by op index) of
// group g on a rank is the k-th record of group g by seq, as NCCL requires every member to issue a group's
// collectives in the same order. A span without a matching record (kind differs, or no record) is written
// without seq and without flow.
//
//   - a host track per rank (tid = the rank's stream count, "host (Python thread)", sorted first): a slice for every
//     op its host spent time on (Timeline::host_op_end), named as the PyTorch profiler's CPU track names the runtime call
//     (cudaLaunchKernel, cudaMemcpyAsync, cudaEventRecord, cudaStreamWaitEvent, cudaEventSynchronize for a host_sync's
//     wait, the host work's own name), args {op, name, step}, each launch linked to its kernel by an "ac2g" flow;
//   - a "breakdown (not compute)" track per rank (the next tid): the step breakdown's attribution of every step window
//     (Breakdown.hpp), its parts other than compute.* as slices named by part (comm.dp, host_bound, idle, ...);
//   - with `memory_phases` (Results::memory_phases_gib, four phases): a counter "memory (GiB)" per rank, one series per
//     term, set at each step's phases as the spans place them: loss_backward at the first backward kernel's start,
//     blocks_backward_start at the first backward GEMM's end (the LM head's), backward_end at the last backward
//     kernel's end, optimizer_step at the first optimizer kernel's start (the memory model's per-GPU estimate, the
//     same on every rank).
//
// Events are written one by one to the stream (no document is built in memory); equal inputs give
// byte-identical output. A span whose rank or op does not exist in the Workload is std::invalid_argument.
#include <ostream>

#include <vector>

#include "sim/engine/Timeline.hpp"
#include "sim/metrics/Results.hpp"
#include "sim/base/Program.hpp"

namespace stepsim {

void writeTrace(std::ostream& os, const Timeline& timeline, const Workload& workload,
                const std::vector<MemoryBreakdown>& memory_phases = {});

}  // namespace stepsim
