// Custom node topologies from YAML (sim/scenario/TopologyYaml.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/base/InputError.hpp"
#include "sim/scenario/TopologyYaml.hpp"
#include "sim/topology/Builders.hpp"
#include "sim/scenario/ClusterBuild.hpp"

namespace stepsim {
namespace {

const std::string kExample = std::string(STEPSIM_SOURCE_DIR) + "/topology/examples/quad-nvlink-pairs.yaml";

std::string errorOf(const std::string& text) {
    try {
        parseTopologyYaml(text, "bad.yaml");
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

// Expectations: the example reads as 4 GPUs, 9 vertices, 10 links; GPU pairs 0–1 and 2–3 are one NVLink
// hop apart (300 GB/s), 0→2 crosses both sockets.
TEST(TopologyYaml, ExampleLoads) {
    const NodeTemplate t = readTopologyYaml(kExample);
    EXPECT_EQ(t.name, "quad-nvlink-pairs");
    EXPECT_EQ(t.gpuCount(), 4);
    EXPECT_EQ(t.vertices.size(), 9u);
    EXPECT_EQ(t.links.size(), 10u);
    const ClusterGraph g = cluster(t, 1, NetworkSpec{.nics_per_node = 4});
    ASSERT_EQ(g.route(0, 1).size(), 1u);
    EXPECT_DOUBLE_EQ(g.bottleneck_Bps(g.route(0, 1)), 300e9);
    EXPECT_EQ(g.route(0, 2).size(), 5u);
    EXPECT_DOUBLE_EQ(g.nvlinkBandwidth(3), 300e9);
}

// Expectations: a bad value names the file, its line and the key path, and what was expected.
TEST(TopologyYaml, ErrorNamesFileLineKey) {
    const std::string msg = errorOf(R"(stepsim_topology: 1
name: two
vertices:
  - {name: gpu0, kind: gpu}
  - {name: gpu1, kind: gpu}
links:
  - {from: gpu0, to: gpu1, kind: nvlink, bandwidth_GBps: -3, latency_us: 0.35}
)");
    EXPECT_EQ(msg.rfind("bad.yaml:7: links[0].bandwidth_GBps: expected a positive number", 0), 0u) << msg;
}

// Expectations: a link to a vertex that does not exist names the line and key links[1].to.
TEST(TopologyYaml, UnknownVertexNamesTheKey) {
    const std::string msg = errorOf(R"(stepsim_topology: 1
name: two
vertices:
  - {name: gpu0, kind: gpu}
  - {name: gpu1, kind: gpu}
links:
  - {from: gpu0, to: gpu1, kind: nvlink, bandwidth_GBps: 3, latency_us: 0.35}
  - {from: gpu0, to: gpu9, kind: nvlink, bandwidth_GBps: 3, latency_us: 0.35}
)");
    EXPECT_EQ(msg.rfind("bad.yaml:8: links[1].to: no vertex named \"gpu9\"", 0), 0u) << msg;
}

// Expectations: an unknown key is an error at its line.
TEST(TopologyYaml, UnknownKeyIsAnError) {
    const std::string msg = errorOf(R"(stepsim_topology: 1
name: two
vertices:
  - {name: gpu0, kind: gpu, speed: 3}
links: []
)");
    EXPECT_EQ(msg.rfind("bad.yaml:4: vertices[0].speed: unknown key", 0), 0u) << msg;
}

// Expectations: a missing required key is named.
TEST(TopologyYaml, MissingKeyIsAnError) {
    const std::string msg = errorOf(R"(stepsim_topology: 1
name: two
vertices:
  - {name: gpu0, kind: gpu}
  - {name: gpu1, kind: gpu}
links:
  - {from: gpu0, to: gpu1, kind: nvlink, bandwidth_GBps: 3}
)");
    EXPECT_EQ(msg.rfind("bad.yaml:7: links[0].latency_us: missing", 0), 0u) << msg;
}

// Expectations: NICs belong to cluster.network, not to a node file.
TEST(TopologyYaml, NicVertexIsRejected) {
    const std::string msg = errorOf(R"(stepsim_topology: 1
name: two
vertices:
  - {name: gpu0, kind: gpu}
  - {name: nic0, kind: nic}
links: []
)");
    EXPECT_EQ(msg.rfind("bad.yaml:5: vertices[1].kind: expected one of", 0), 0u) << msg;
}

// Expectations: a missing file is an InputError naming it.
TEST(TopologyYaml, MissingFileIsAnError) {
    try {
        readTopologyYaml("/nonexistent/topo.yaml");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/topo.yaml: cannot open", 0), 0u) << e.what();
    }
}

// Expectations: a scenario's `cluster.node: FILE` is read relative to the scenario's folder and can be
// joined into a 2-node cluster (NICs attach to each GPU's PCIe switch).
TEST(TopologyYaml, ClusterOfYamlNodes) {
    ClusterSpec spec;
    spec.node = "examples/quad-nvlink-pairs.yaml";
    spec.nodes = 2;
    spec.gpus_per_node = 4;
    spec.network.nics_per_node = 4;
    const ClusterGraph g = buildCluster(spec, std::string(STEPSIM_SOURCE_DIR) + "/topology");
    EXPECT_EQ(g.gpuCount(), 8);
    EXPECT_EQ(g.countOf(VertexKind::nic), 8u);
    EXPECT_EQ(g.countOf(VertexKind::leaf), 4u);
    EXPECT_EQ(g.linkTarget(g.route(1, 5)[1]), *g.nicOf(1));
}

// Expectations: a topology with no links is refused at its `links` line (it used to pass `topo` and fail `run`
// with an internal error).
TEST(TopologyYaml, NoLinksIsAnError) {
    const std::string msg = errorOf("stepsim_topology: 1\nname: x\nvertices:\n  - {name: gpu0, kind: gpu}\n"
                                    "  - {name: gpu1, kind: gpu}\nlinks: []\n");
    EXPECT_EQ(msg.rfind("bad.yaml:6: links: expected at least one link", 0), 0u) << msg;
}

// Expectations: a GPU no link touches is refused at its vertex's line.
TEST(TopologyYaml, UnlinkedGpuIsAnError) {
    const std::string msg = errorOf("stepsim_topology: 1\nname: x\nvertices:\n  - {name: gpu0, kind: gpu}\n"
                                    "  - {name: gpu1, kind: gpu}\n  - {name: cpu0, kind: cpu}\nlinks:\n"
                                    "  - {from: gpu0, to: cpu0, kind: pcie, bandwidth_GBps: 55, latency_us: 0.3}\n");
    EXPECT_EQ(msg.rfind("bad.yaml:5: vertices[1]: GPU \"gpu1\" has no link", 0), 0u) << msg;
}

// Expectations: GPUs in two islands that no link joins are refused at the second island's GPU.
TEST(TopologyYaml, DisconnectedGpusAreAnError) {
    const std::string msg = errorOf("stepsim_topology: 1\nname: x\nvertices:\n  - {name: gpu0, kind: gpu}\n"
                                    "  - {name: gpu1, kind: gpu}\n  - {name: cpu0, kind: cpu}\n  - {name: cpu1, kind: cpu}\n"
                                    "links:\n  - {from: gpu0, to: cpu0, kind: pcie, bandwidth_GBps: 55, latency_us: 0.3}\n"
                                    "  - {from: gpu1, to: cpu1, kind: pcie, bandwidth_GBps: 55, latency_us: 0.3}\n");
    EXPECT_EQ(msg.rfind("bad.yaml:5: vertices[1]: GPU \"gpu1\" has no path to GPU \"gpu0\"", 0), 0u) << msg;
}

// Expectations: the shipped example builds as a lone node under the default cluster.network (8 NICs per node, more
// than its 4 GPUs): a lone node needs no NIC, so it gets none.
TEST(TopologyYaml, ExampleRunsAsALoneNodeWithTheDefaultNetwork) {
    ClusterSpec spec;
    spec.node = "examples/quad-nvlink-pairs.yaml";
    spec.gpus_per_node = 4;
    const ClusterGraph g = buildCluster(spec, std::string(STEPSIM_SOURCE_DIR) + "/topology");
    EXPECT_EQ(g.gpuCount(), 4);
    EXPECT_EQ(g.countOf(VertexKind::nic), 0u);
}

}  // namespace
}  // namespace stepsim
