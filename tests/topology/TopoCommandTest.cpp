// `stepsim topo` (sim/cli/TopoCommand.hpp): the summary and the files it writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/cli/TopoCommand.hpp"
#include "sim/topology/Builders.hpp"

namespace stepsim {
namespace {

// Expectations: one HGX H200 node: 8 GPUs, 4 NVSwitch, 8 NICs; 450 GB/s NVLink, 50 GB/s NIC, 55 GB/s host
// PCIe per GPU; 1928 GB/s bisection.
TEST(TopoCommand, SummaryOfHgxH200) {
    const nlohmann::json s = topoSummary(hgxH200());
    EXPECT_EQ(s["gpus"], 8);
    EXPECT_EQ(s["vertices"]["nvswitch"], 4);
    EXPECT_EQ(s["vertices"]["nic"], 8);
    EXPECT_EQ(s["links"]["nvlink"], 64);
    EXPECT_EQ(s["link_count"], 116);
    EXPECT_DOUBLE_EQ(s["nvlink_GBps_per_gpu"].get<double>(), 450.0);
    EXPECT_DOUBLE_EQ(s["nic_GBps_per_gpu"].get<double>(), 50.0);
    EXPECT_DOUBLE_EQ(s["host_pcie_GBps_per_gpu"].get<double>(), 55.0);
    EXPECT_NEAR(s["bisection_GBps"].get<double>(), 1928.0, 1e-6);
}

// Expectations: runTopo prints the text summary and writes the JSON and DOT files it was asked for.
TEST(TopoCommand, WritesJsonAndDot) {
    const auto dir = std::filesystem::temp_directory_path() / "stepsim_topo_test";
    std::filesystem::create_directories(dir);
    TopoOptions o;
    o.node = "hgx-b200";
    o.nodes = 2;
    o.json_out = (dir / "t.json").string();
    o.dot_out = (dir / "t.dot").string();
    std::ostringstream out;
    runTopo(o, out);
    EXPECT_NE(out.str().find("topology: hgx-b200 x 2 (2 nodes, 16 GPUs)"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("NVLink 900.0 GB/s"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("bisection bandwidth: 400.0 GB/s"), std::string::npos) << out.str();
    std::ifstream json(o.json_out);
    const nlohmann::json j = nlohmann::json::parse(json);
    EXPECT_EQ(j["nodes"], 2);
    EXPECT_EQ(j["vertices"]["spine"], 8);
    std::ifstream dot(o.dot_out);
    std::string first;
    std::getline(dot, first);
    EXPECT_EQ(first.rfind("digraph", 0), 0u);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stepsim
