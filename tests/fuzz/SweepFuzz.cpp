// Fuzzes the sweep section's reader: any bytes are a sweep specification or an InputError.
#include "sim/scenario/SweepYaml.hpp"
#include "tests/fuzz/FuzzInput.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    stepsim::fuzz::expectReadOrInputError(
        [&] { stepsim::parseSweepSpec(stepsim::fuzz::text(data, size), "fuzz.yaml"); });
    return 0;
}
