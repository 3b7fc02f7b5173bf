// The memory breakdown (result key memory_gib) and the out-of-memory warning, from simulate() to the JSON report.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/report/JsonReport.hpp"
#include "sim/run/Simulate.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "tests/workload/ExpandScenarios.hpp"

namespace stepsim {
namespace {

// memory_gib's five terms add up to peak_memory_gib, under DDP, FSDP2, PowerSGD and each optimizer.
TEST(MemoryReport, BreakdownSumsToThePeak) {
    const HardwareProfile prof = builtinProfile("h200-sxm");
    std::vector<Scenario> cases;
    cases.push_back(tiny(1));
    cases.push_back(tiny(2));
    Scenario fsdp = tiny(2);
    fsdp.parallel.data = DataParallel::fsdp2;
    cases.push_back(fsdp);
    Scenario psgd = tiny(2);
    psgd.ddp.comm_hook = CommHook::powersgd;
    psgd.ddp.powersgd_start_iter = 2;
    cases.push_back(psgd);
    Scenario sgd = tiny(2);
    sgd.training.optimizer = Optimizer::sgd;
    sgd.training.sgd_momentum = 0.9;
    cases.push_back(sgd);
    for (const Scenario& sc : cases) {
        const Simulation sim = simulate(sc, prof);
        ASSERT_TRUE(sim.results.memory_gib && sim.results.peak_memory_gib);
        EXPECT_NEAR(sim.results.memory_gib->sum(), *sim.results.peak_memory_gib, 1e-9);
        const auto j = toJson(sim.results, sc.name, prof.gpu.memory_gib);
        double sum = 0;
        for (const char* k : {"params", "grads", "optimizer", "activations", "buffers"}) sum += j["memory_gib"][k].get<double>();
        EXPECT_NEAR(sum, j["peak_memory_gib"].get<double>(), 1e-9);
    }
}

// The warning names the largest term, its size and what shrinks it; fits_memory is unchanged by it.
TEST(MemoryReport, OutOfMemoryWarningNamesTheLargestTerm) {
    MemoryBreakdown b{2.0, 2.0, 4.0, 61.2, 2.0};
    std::string w = outOfMemoryWarning(b.sum(), b, 60.0);
    EXPECT_NE(w.find("out of memory: the estimated peak, 71.20 GiB, exceeds the GPU's 60.00 GiB by 11.20 GiB"),
              std::string::npos) << w;
    EXPECT_NE(w.find("the largest term is activations, 61.2 GiB; to shrink it, set training.activation_checkpointing"),
              std::string::npos) << w;
    b.activations = 1.0;
    w = outOfMemoryWarning(b.sum(), b, 5.0);
    EXPECT_NE(w.find("the largest term is optimizer, 4.0 GiB; to shrink it, shard"), std::string::npos) << w;
}

// A simulation over a GPU too small for it warns, naming the term its breakdown makes largest.
TEST(MemoryReport, SimulationOverTheGpuWarns) {
    HardwareProfile prof = builtinProfile("h200-sxm");
    prof.gpu.memory_gib = 0.01;
    const Simulation sim = simulate(tiny(2), prof);
    const MemoryBreakdown& b = *sim.results.memory_gib;
    std::string largest = "params";
    double most = b.params;
    for (const auto& [name, v] : {std::pair{"grads", b.grads}, std::pair{"optimizer", b.optimizer},
                                  std::pair{"activations", b.activations}, std::pair{"buffers", b.buffers}})
        if (v > most) largest = name, most = v;
    bool found = false;
    for (const std::string& w : sim.results.warnings)
        found = found || (w.rfind("out of memory:", 0) == 0 && w.find("the largest term is " + largest + ",") !=
                                                                    std::string::npos);
    EXPECT_TRUE(found);
    const auto j = toJson(sim.results, "tiny", prof.gpu.memory_gib);
    EXPECT_FALSE(j["fits_memory"].get<bool>());
}

}  // namespace
}  // namespace stepsim
