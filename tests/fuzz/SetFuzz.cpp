// Fuzzes `--set key.path=value`: any override of a valid scenario is applied or refused with an InputError.
#include "sim/scenario/ScenarioLoader.hpp"
#include "tests/fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string kBase = "stepsim: 1\ncluster: {gpus_per_node: 2}\nmodel: {layers: 2, hidden: 1024}\n";
    stepsim::fuzz::expectReadOrInputError(
        [&] { stepsim::parseScenario(kBase, "fuzz.yaml", {stepsim::fuzz::text(data, size)}); });
    return 0;
}
