// Fuzzes the topology reader: any bytes are a node template or an InputError; a template read builds a cluster.
#include "sim/scenario/TopologyYaml.hpp"
#include "tests/fuzz/FuzzInput.hpp"
#include "sim/topology/Builders.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    stepsim::fuzz::expectReadOrInputError([&] {
        const stepsim::NodeTemplate t = stepsim::parseTopologyYaml(stepsim::fuzz::text(data, size), "fuzz.yaml");
        stepsim::cluster(t, 2, stepsim::NetworkSpec{.nics_per_node = t.gpuCount()}, std::nullopt);
    });
    return 0;
}
