#pragma once
// One NCCL collective predicted over a range of sizes (`stepsim collective`), in nccl-tests' columns (size,
// count, type, redop, root, time, algbw, busbw), so a prediction can be laid beside a real nccl-tests run line by
// line.
//
//   one node:     t = α + S·F / busbw      (CostModel::collective: the calibrated α-β segments) — what the engine
//                                           reproduces for a collective alone, since its flows are bounded to end
//                                           together at S·F/busbw and no NVLink/NVSwitch link is slower than that;
//   several nodes: the engine runs the collective alone (workload/LoneCollective.hpp) on the cluster's fabric,
//                 built as `simulate` builds it, so NIC, leaf and spine limits and the rail layout apply; t runs
//                 from the collective's start (every rank present) to its end.
// Sizes go from min_bytes by `factor` up to max_bytes, each rounded down to whole elements.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/Program.hpp"
#include "sim/base/Scenario.hpp"
#include "sim/cost/CostModel.hpp"

namespace stepsim {

struct CollectiveQuery {
    CollectiveKind kind = CollectiveKind::all_reduce;
    ClusterSpec cluster;          // its gpus_per_node GPUs of each of its nodes take part
    NcclSpec nccl;
    std::string dtype = "bf16";   // bf16 | fp16 | fp32 | fp8
    double min_bytes = 8, max_bytes = 8.0 * 1024 * 1024 * 1024, factor = 2;
};

struct CollectiveRow {
    double bytes = 0, seconds = 0;
    CollectiveEstimate estimate;  // α, busbw, algorithm and protocol, measured or extrapolated
};

struct CollectivePrediction {
    CollectiveQuery query;
    std::string profile;          // the profile's name
    int ranks = 0;
    bool on_topology = false;     // several nodes: simulated on the cluster's fabric
    std::vector<CollectiveRow> rows;
};

// Throws InputError for an unknown dtype, max_bytes < min_bytes, or a bad cluster or profile.
CollectivePrediction predictCollective(const CollectiveQuery& q);

// The table as nccl-tests prints it, with a header naming the cluster and profile.
std::string toNcclTestsTable(const CollectivePrediction& p);
nlohmann::ordered_json toJson(const CollectivePrediction& p);

}  // namespace stepsim
