// Fuzzes the scenario reader (run's and explain's reading): any bytes are a scenario or an InputError; a scenario
// read explains to text that reads back.
#include "sim/scenario/ScenarioLoader.hpp"
#include "tests/fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    stepsim::fuzz::expectReadOrInputError([&] {
        const stepsim::Scenario s = stepsim::parseScenario(stepsim::fuzz::text(data, size), "fuzz.yaml");
        stepsim::parseScenario(stepsim::explainScenario(s), "fuzz.yaml");
    });
    return 0;
}
