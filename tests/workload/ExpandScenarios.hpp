#pragma once
// What the workload's tests expand: a tiny model, and one step's kernels by name.
#include <map>
#include <string>

#include "sim/base/Program.hpp"
#include "sim/base/Scenario.hpp"

namespace stepsim {

// Two layers, hidden 256, 4 heads, vocabulary 1024, sequence 128, micro-batch 2, two steps, on `gpus` GPUs of a node.
inline Scenario tiny(int gpus) {
    Scenario sc;
    sc.name = "tiny";
    sc.cluster.gpus_per_node = gpus;
    sc.model.layers = 2;
    sc.model.hidden = 256;
    sc.model.heads = 4;
    sc.model.vocab = 1024;
    sc.model.seq_len = 128;
    sc.training.micro_batch = 2;
    sc.sim.steps = 2;
    return sc;
}

// One step's ops by name (step 1, after the first step's single bucket).
inline std::map<std::string, const Op*> stepOps(const Program& p) {
    std::map<std::string, const Op*> ops;
    for (const Op& op : p.ops)
        if (op.step == 1 && op.kind == OpKind::kernel) ops[p.names[op.name]] = &op;
    return ops;
}

}  // namespace stepsim
