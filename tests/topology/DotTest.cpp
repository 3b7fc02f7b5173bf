// DOT export (ClusterGraph::toDot, boost::write_graphviz).
#include <gtest/gtest.h>

#include "sim/topology/Builders.hpp"

namespace stepsim {
namespace {

// Expectations: the DOT text is a digraph that labels every vertex with its name and has one edge line
// per directed link.
TEST(Dot, NamesEveryVertex) {
    const ClusterGraph g = cluster(hgxH100Node(), 2);
    const std::string dot = g.toDot();
    EXPECT_EQ(dot.rfind("digraph", 0), 0u);
    for (VertexId v = 0; v < g.vertexCount(); ++v)
        EXPECT_NE(dot.find("label=\"" + g.vertex(v).name + "\""), std::string::npos) << g.vertex(v).name;
    std::size_t edges = 0;
    for (std::size_t p = dot.find("->"); p != std::string::npos; p = dot.find("->", p + 2)) ++edges;
    EXPECT_EQ(edges, g.links().size());
}

}  // namespace
}  // namespace stepsim
