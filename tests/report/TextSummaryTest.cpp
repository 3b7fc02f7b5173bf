// textSummary: a short, aligned human summary.
#include "sim/report/TextSummary.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/scenario/ProfileYaml.hpp"

namespace stepsim {
namespace {

Results someResults() {
    Results r;
    r.step_time_ms = 123.4567;
    r.tokens_per_s = 265000;
    r.tokens_per_s_per_gpu = 33125;
    r.samples_per_s = 64.7;
    r.mfu = 0.412;
    r.compute_busy_ms = 110.0;
    r.comm_busy_ms = 30.0;
    r.overlap_ms = 25.0;
    r.overlap_ratio = 25.0 / 110.0;
    r.exposed_comm_ms = 5.0;
    r.idle_ms = 8.4567;
    r.collectives.count = 7;
    r.collectives.busbw_GBps = 412.5;
    r.peak_memory_gib = 41.5;
    r.warnings = {"profile queried outside its measured domain"};
    return r;
}

std::vector<std::string> lines(const std::string& s) {
    std::vector<std::string> v;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
}

// The summary names the scenario and shows the key numbers and the warnings.
TEST(TextSummary, ShowsTheKeyNumbers) {
    const std::string s = textSummary(someResults(), "gpt-demo");
    EXPECT_EQ(lines(s).front(), "gpt-demo");
    for (const char* part : {"step time", "123.457", "265000", "41.2", "exposed comm", "5.000", "busbw", "412.5",
                             "41.50", "GiB", "profile queried outside its measured domain"})
        EXPECT_NE(s.find(part), std::string::npos) << part;
}

// Values end in one column: every line with a unit "ms" has it at the same position.
TEST(TextSummary, ValuesAreAligned) {
    std::vector<std::size_t> at;
    for (const std::string& l : lines(textSummary(someResults(), "x"))) {
        const auto p = l.find(" ms");
        if (p != std::string::npos && l.rfind("  ", 0) == 0) at.push_back(p);
    }
    ASSERT_GE(at.size(), 5u);
    for (std::size_t p : at) EXPECT_EQ(p, at.front());
}

// No line ends in whitespace.
TEST(TextSummary, NoTrailingWhitespace) {
    for (const std::string& l : lines(textSummary(someResults(), "x"))) {
        if (l.empty()) continue;
        EXPECT_NE(l.back(), ' ') << l;
    }
}

// The profile line names the profile, its GPU and where it came from in one line: a fitted profile's manifest
// beside its file, or the count of raw files its fit command lists; another's source as written.
TEST(TextSummary, ProfileLineSaysWhereTheProfileCameFrom) {
    EXPECT_EQ(profileLine(builtinProfile("h200x2")),
              "profile: h200x2 (NVIDIA H200), fitted by stepsim calibrate fit from "
              "calibration/profiles/h200x2/inputs.txt, built in\n");
    EXPECT_EQ(profileLine(builtinProfile("h100-sxm")), "profile: h100-sxm (NVIDIA H100 80GB HBM3), datasheet, built in\n");
    HardwareProfile p = builtinProfile("h200x2");
    p.source = "stepsim calibrate fit raw/a.jsonl raw/b.jsonl ../x/c.jsonl -o profile.yaml";
    p.file = "mine/profile.yaml";
    p.builtin = false;
    EXPECT_EQ(profileLine(p), "profile: h200x2 (NVIDIA H200), fitted by stepsim calibrate fit from 3 raw files, "
                              "mine/profile.yaml\n");
}

}  // namespace
}  // namespace stepsim
