// Fuzzes the hardware-profile reader: any bytes are a profile or an InputError; a profile read writes text that
// reads back.
#include "sim/scenario/ProfileYaml.hpp"
#include "tests/fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    stepsim::fuzz::expectReadOrInputError([&] {
        const stepsim::HardwareProfile p = stepsim::parseProfile(stepsim::fuzz::text(data, size), "fuzz.yaml");
        stepsim::parseProfile(stepsim::writeProfile(p), "fuzz.yaml");
    });
    return 0;
}
