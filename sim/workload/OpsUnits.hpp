#pragma once
// FSDP2's units over a captured op graph (model.type: ops, parallel.data: fsdp2; docs/ops.md): the modules
// fully_shard wraps, as torchtitan and transformers wrap their decoder layers.
//   fsdp.units: CLASS    every module of that class name;
//   fsdp.units: PATTERN  (a dotted path with `*` for one component, e.g. `model.layers.*`) every module whose path
//                        matches;
//   absent               the repeated block: among groups of two or more sibling modules of one class (one parent),
//                        the group whose modules hold the most parameters (a decoder's ModuleList of layers; a
//                        layer's q/k/v Linears hold one layer's attention only).
// A unit nested in another is the outer one's. Each op belongs to the unit of its module (a backward op without a
// module to its forward op's), each parameter to its owning module's; the rest is the root's (embeddings, final
// norm, head, loss, optimizer).
#include <string>
#include <vector>

#include "sim/base/OpGraph.hpp"

namespace stepsim {

struct OpUnits {
    std::vector<int> modules;     // each unit's module, in forward order
    std::string rule;             // how they were chosen (for warnings and explain)
    std::vector<int> op_unit;     // per op: its unit, -1 the root
    std::vector<int> param_unit;  // per parameter
};

// Throws InputError (naming fsdp.units and the scenario `source`) when the key matches no module, or when no
// repeated block is found.
OpUnits findOpUnits(const OpGraph& g, const std::string& units, const std::string& source);

}  // namespace stepsim
