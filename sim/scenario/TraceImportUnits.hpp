#pragma once
// The repeated blocks of a traced step (FSDP2's units when a one-GPU trace is sharded; docs/trace.md), found from
// what any profiler trace records, without module annotations:
//   forward: the forward's activities as a sequence of kernel names; the blocks are its longest run of one pattern
//     repeated back to back (the most activities covered; among equals the shortest pattern, then the earliest
//     start). A block is one period of that run; the activities before and after it are the root's (embeddings,
//     final norm, head, loss). At least two repeats, else no blocks (units_note says why);
//   backward: each activity's autograd node (its evaluate_function's "Sequence number") is the one a forward op with
//     that number made; the op belongs to the block of the first forward activity launched at or after its start;
//   parameters: each backward op that makes a gradient (a weight-gradient GEMM: m·n; aten::native_layer_norm_backward:
//     its weight's and bias's dims; aten::embedding_dense_backward: num_weights × the gradient's last dim) gives a
//     parameter of its activity's block. A block's backward must be one contiguous span per block, the blocks in
//     reverse order, each with a parameter; else no blocks.
#include <map>
#include <vector>

#include "sim/base/TraceStep.hpp"

namespace stepsim {

// Fills t.units, t.unit_activities, t.units_note, each activity's unit and t.params. `node_seq`: each activity's
// autograd node in backward (−1: none); `node_made`: each node's forward op's start (µs).
void findTraceUnits(TraceStep& t, const std::vector<long long>& node_seq, const std::map<long long, double>& node_made);

}  // namespace stepsim
