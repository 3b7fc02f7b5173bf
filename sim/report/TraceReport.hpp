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
// Events are written one by one to the stream (no document is built in memory); equal inputs give
// byte-identical output. A span whose rank or op does not exist in the Workload is std::invalid_argument.
#include <ostream>

#include "sim/engine/Timeline.hpp"
#include "sim/base/Program.hpp"

namespace stepsim {

void writeTrace(std::ostream& os, const Timeline& timeline, const Workload& workload);

}  // namespace stepsim
