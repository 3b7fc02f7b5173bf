// expand: the step composed of its parts, its model FLOPs, and what it refuses.
#include "sim/workload/Expand.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

// Model FLOPs = 6·N_linear·T + 7·b·s²·h·L (causal flash attention forward 2bs²h, backward 2.5x).
TEST(Expand, ModelFlopsAreSixNTPlusAttention) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const Scenario sc = tiny(2);
    const Expansion e = expand(sc, cost);
    const double h = 256, f = 1024, L = 2, V = 1024, T = 256, b = 2, s = 128;
    const double n_linear = L * (4 * h * h + 2 * h * f) + V * h;
    EXPECT_DOUBLE_EQ(e.workload.model_flops_per_step, 6 * n_linear * T + 7 * b * s * s * h * L);
}

// Features not modelled yet are refused with the key named, never silently ignored: ZeRO with tensor parallelism and
// torch.compile.
TEST(Expand, UnsupportedFeatureIsAnErrorNamingTheKey) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    CostModel cost(prof, NcclSpec{}, true);
    const std::vector<std::pair<std::string, std::function<void(Scenario&)>>> cases = {
        {"parallel.data", [](Scenario& sc) { sc.parallel.data = DataParallel::zero3, sc.parallel.tp = 2; }},
        {"compile.enabled", [](Scenario& sc) { sc.compile.enabled = true; }}};
    for (const auto& [key, set] : cases) {
        Scenario sc = tiny(2);
        sc.source = "x.yaml";
        set(sc);
        try {
            expand(sc, cost);
            ADD_FAILURE() << "expected an InputError naming " << key;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace stepsim
