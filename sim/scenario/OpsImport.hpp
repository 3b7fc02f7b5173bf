#pragma once
// Reads a captured op graph (`.ops.json.gz`, version 1: docs/ops-format.md) into an OpGraph (sim/base/OpGraph.hpp),
// and the table of its ops measured on a GPU (model.op_times; docs/ops.md):
//   - the file is gzip-compressed JSON (a plain JSON file reads too); its SHA-256 over the file's bytes is kept, for
//     the op_times table to name;
//   - every dimension and tensor size is an integer, or with `scaled: true` a string, a sum of monomials `k*B^a*S^b`,
//     evaluated
//     at `b` and `s` (the scenario's training.micro_batch and model.seq_len); with `scaled: false` they must be the
//     capture's own symbols;
//   - every required field is checked: a missing or mistyped one is an InputError naming the file and the field's
//     path (`ops[118].in[0].shape[0]: ...`); a version other than 1 is refused naming both.
// op_times: {"format": "stepsim.op_times", "version": 1, "capture_sha256": the graph file's SHA-256,
//   "symbols": {"B", "S"}: the dimensions it was timed at, "ops": [[op_index, kernels, device_us, host_us], ...]}
//   for every op that is not a view; a table of another file, or of other symbols than the scenario's, is refused.
#include <string>

#include "sim/base/OpGraph.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

// b, s <= 0: the capture's own symbols.
OpGraph readOpGraph(const std::string& file, long long b = 0, long long s = 0);

// Fills g.times from `file`; throws InputError naming the file and what does not match.
void readOpTimes(OpGraph& g, const std::string& file);

// What was read, as `stepsim explain` prints it: comment lines ("# ..."): the capture, and its ops by family (count,
// kernels, bytes, FLOPs and device time at `profile`; none: without times).
std::string opsSummary(const OpGraph& g, const HardwareProfile* profile, const NcclSpec& nccl);

// A dimension as the format writes it: an integer, or a sum of monomials of B and S ("2*B*S", "B*S^2", "S+1",
// "8*B*S+8*B": a storage holding several tensors). Throws
// std::invalid_argument with what is wrong.
long long evalDimension(const std::string& text, long long b, long long s);

}  // namespace stepsim
