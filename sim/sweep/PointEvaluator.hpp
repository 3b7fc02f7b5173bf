#pragma once
// Runs one point of a sweep: the base scenario with the point's overrides (as `--set` applies them), the sweep's
// constraints, one simulation, its results flattened into a PointRecord. A point the loader refuses (a value not
// modelled yet), one that breaks a constraint and one the simulation refuses are infeasible records with the reason,
// never errors: the sweep goes on.
//
// What does not change between points is built once and reused: the scenario file's text, the profile and the
// fabric (one per distinct set of `cluster.*` overrides), the cost model (one per `cluster.*`/`nccl.*` overrides and
// per thread, as it memoizes its GEMM queries). Every point is still expanded and simulated from scratch, so a
// point's record is the one `stepsim run FILE --set ...` gives, whichever thread runs it and whatever ran before.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/base/Scenario.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/cost/HardwareProfile.hpp"
#include "sim/net/Fabric.hpp"
#include "sim/scenario/SweepSpec.hpp"
#include "sim/sweep/PointRecord.hpp"
#include "sim/sweep/SweepSpace.hpp"

namespace stepsim {

class PointEvaluator {
public:
    // `overrides`: the command line's --set strings, applied before each point's own.
    PointEvaluator(const std::filesystem::path& file, std::vector<std::string> overrides, const SweepSpec& spec);

    PointRecord evaluate(const SweepPoint& point) const;  // safe to call from several threads at once
    const Scenario& base() const { return base_; }       // the scenario as given (with the --set overrides)

private:
    struct Shared {
        std::shared_ptr<const HardwareProfile> profile;
        std::shared_ptr<const Fabric> fabric;
        std::shared_ptr<const CostModel> cost;
    };
    Shared shared(const Scenario& sc, const SweepPoint& point) const;

    std::string source_, text_;
    std::vector<std::string> overrides_;
    const SweepSpec& spec_;
    Scenario base_;
    mutable std::mutex mutex_;
    mutable std::map<std::string, std::shared_ptr<const HardwareProfile>> profiles_;
    mutable std::map<std::string, std::shared_ptr<const Fabric>> fabrics_;
    mutable std::map<std::pair<std::thread::id, std::string>, std::shared_ptr<const CostModel>> costs_;
};

// The scenario's data-parallel ranks: nodes × gpus_per_node / (tp × pp).
long dataRanks(const Scenario& sc);

}  // namespace stepsim
