// The table of what is modelled (sim/base/Support.hpp): every row complete, docs/modelled.md its rendering, and the
// loader and `expand` refusing by the same rows with the same words.
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/base/Support.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/scenario/ProfileYaml.hpp"
#include "sim/scenario/ScenarioLoader.hpp"
#include "sim/workload/Expand.hpp"

namespace stepsim {
namespace {

std::string rendered() {
    std::ostringstream out;
    out << "| key | refused with | what is not modelled | what would lift it |\n|---|---|---|---|\n";
    for (const SupportRow& r : supportTable())
        out << "| `" << r.key << "` | " << r.context << " | " << supportMessage(r) << " | " << r.lift << " |\n";
    return out.str();
}

TEST(Support, EveryRowNamesItsKeyContextReasonAndWhatWouldLiftIt) {
    std::set<std::pair<std::string, std::string>> seen;
    for (const SupportRow& r : supportTable()) {
        EXPECT_FALSE(r.key.empty());
        EXPECT_FALSE(r.context.empty()) << r.key;
        EXPECT_FALSE(r.what.empty()) << r.key;
        EXPECT_FALSE(r.lift.empty()) << r.key;
        EXPECT_TRUE(r.applies) << r.key;
        EXPECT_TRUE(seen.insert({r.key, r.context}).second) << "two rows for " << r.key << " in " << r.context;
    }
}

// docs/modelled.md holds the table as rendered here (between its two marker lines); on a change, paste the expected
// text printed below.
TEST(Support, DocsTableIsTheTable) {
    std::ifstream in(std::string(STEPSIM_SOURCE_DIR) + "/docs/modelled.md");
    ASSERT_TRUE(in) << "docs/modelled.md is missing";
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string doc = ss.str(), begin = "<!-- support table -->\n", end = "<!-- end support table -->";
    const auto a = doc.find(begin), b = doc.find(end);
    ASSERT_NE(a, std::string::npos);
    ASSERT_NE(b, std::string::npos);
    EXPECT_EQ(doc.substr(a + begin.size(), b - a - begin.size()), rendered()) << "expected:\n" << rendered();
}

// A scenario built in code is refused by `expand` with the key and words the loader uses at the key's line.
TEST(Support, ExpandAndTheLoaderRefuseByTheSameRow) {
    const std::string yaml = "stepsim: 1\nparallel: {tp: 2}\nmodel: {layers: 4, hidden: 1024, dropout: 0.1}\n";
    std::string loader;
    try {
        parseScenario(yaml, "x.yaml");
    } catch (const InputError& e) {
        loader = e.what();
    }
    EXPECT_EQ(loader, "x.yaml:3: model.dropout: model.dropout with tensor parallelism (parallel.tp > 1) is not modelled "
                      "yet by this stepsim version");
    Scenario sc = parseScenario("stepsim: 1\nmodel: {layers: 4, hidden: 1024}\n", "x.yaml");
    sc.parallel.tp = 2;
    sc.model.dropout = 0.1;
    const HardwareProfile prof = builtinProfile("h200-sxm");
    const CostModel cost(prof, NcclSpec{}, true);
    try {
        expand(sc, cost);
        ADD_FAILURE() << "expected a refusal";
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "x.yaml: model.dropout: model.dropout with tensor parallelism (parallel.tp > 1) is not modelled yet "
                  "by this stepsim version");
    }
}

}  // namespace
}  // namespace stepsim
