// `stepsim validate --published` (sim/run/PublishedValidation.hpp): each row predicted from its own scenario, scored
// against the published number; a row that cannot be asked keeps its reason (given, or the loader's refusal); ratios
// of two rows; bad lines name their line and key.
#include "sim/run/PublishedValidation.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"

namespace stepsim {
namespace {

struct Folder {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / "stepsim-published-test";
    Folder() { std::filesystem::create_directories(dir); }
    ~Folder() { std::filesystem::remove_all(dir); }
    void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
};

const char* kScenario =
    "stepsim: 1\nname: small\ncluster: {node: hgx-h100, gpus_per_node: 2}\n"
    "model: {layers: 2, hidden: 512, heads: 8, vocab: 4096, seq_len: 512}\ntraining: {micro_batch: 2}\n"
    "sim: {steps: 2, seed: 1}\n";

std::string row(const std::string& id, const std::string& scenario, double tps, const std::string& more = "") {
    return "{\"id\": \"" + id + "\", \"source\": \"s\", \"table\": \"t\", \"row\": \"r\", \"hardware\": \"h\", "
           "\"configuration\": \"c\", \"tokens_per_s_per_gpu\": " + std::to_string(tps) + ", \"memory_gib\": 10, "
           "\"scenario\": " + scenario + more + "}\n";
}

TEST(PublishedValidation, ScoresAskedRowsAndKeepsWhyTheOthersCannotBe) {
    const Folder f;
    f.write("small.yaml", kScenario);
    f.write("small4.yaml", std::string(kScenario).replace(std::string(kScenario).find("micro_batch: 2"), 14,
                                                            "micro_batch: 4"));
    f.write("refused.yaml", std::string(kScenario) + "nccl: {algo: collnet}\n");
    f.write("rows.jsonl", row("a", "\"small.yaml\"", 1000) + row("b", "\"small4.yaml\"", 2000) +
                              row("cp", "null", 50, ", \"cannot_ask\": \"context parallelism\"") +
                              row("r", "\"refused.yaml\"", 10) +
                              "{\"ratio\": \"b over a\", \"numerator\": \"b\", \"denominator\": \"a\", \"published\": 2}\n");
    const PublishedTable t = validatePublished(f.dir / "rows.jsonl");
    ASSERT_EQ(t.rows.size(), 4u);
    EXPECT_EQ(t.asked, 2);
    EXPECT_EQ(t.cannot_ask, 2);
    const PublishedRow& a = t.rows[0];
    EXPECT_GT(a.predicted_tps, 0);
    EXPECT_DOUBLE_EQ(a.error_pct, 100.0 * (a.predicted_tps - 1000) / 1000);
    ASSERT_TRUE(a.memory_error_pct.has_value());
    EXPECT_EQ(t.rows[2].cannot_ask, "context parallelism");
    EXPECT_EQ(t.rows[3].cannot_ask.rfind("refused: ", 0), 0u) << t.rows[3].cannot_ask;
    ASSERT_EQ(t.ratios.size(), 1u);
    ASSERT_TRUE(t.ratios[0].predicted.has_value());
    EXPECT_DOUBLE_EQ(*t.ratios[0].predicted, t.rows[1].predicted_tps / a.predicted_tps);
    const std::string md = toMarkdown(t);
    EXPECT_NE(md.find("cannot ask: context parallelism"), std::string::npos) << md;
    EXPECT_NE(md.find("Rows asked: 2 of 4"), std::string::npos) << md;
}

TEST(PublishedValidation, ABadLineNamesItsLineAndKey) {
    const Folder f;
    f.write("rows.jsonl", row("a", "null", 1000) + "{\"id\": \"b\"}\n");
    try {
        validatePublished(f.dir / "rows.jsonl");
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(":1: cannot_ask"), std::string::npos) << e.what();
    }
    f.write("rows.jsonl", "{\"ratio\": \"x\", \"numerator\": \"nope\", \"denominator\": \"nope\", \"published\": 1}\n");
    EXPECT_THROW(validatePublished(f.dir / "rows.jsonl"), InputError);
}

}  // namespace
}  // namespace stepsim
