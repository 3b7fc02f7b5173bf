// `run --report` and `sweep --report` (HtmlReport.hpp): the page renders in headless Chromium with every section, every
// chart has data marks, and no script error or console error shows. Skipped, saying so, where Debian's chromium is
// not installed (scripts/setup.sh installs it).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/report/HtmlReport.hpp"

namespace stepsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string chromium() {
    for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
        if (std::filesystem::exists(c)) return c;
    return {};
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

int sh(const std::string& cmd) {
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Rendered {
    std::string dom, log;
};

// The page's DOM after its script ran, and Chromium's log (console messages included).
Rendered render(const std::filesystem::path& html) {
    const std::filesystem::path dir = html.parent_path();
    const std::string cmd = chromium() +
                            " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" + (dir / "profile").string() +
                            " --enable-logging=stderr --v=0 --virtual-time-budget=3000 --dump-dom file://" +
                            std::filesystem::absolute(html).string() + " >" + (dir / "dom.html").string() + " 2>" +
                            (dir / "chromium.log").string();
    EXPECT_EQ(sh(cmd), 0) << cmd;
    return {slurp(dir / "dom.html"), slurp(dir / "chromium.log")};
}

void expectRenderedWithData(const Rendered& r, int charts) {
    EXPECT_THAT(r.dom, HasSubstr("id=\"render-check\" data-ok=\"true\" data-charts=\"" + std::to_string(charts) +
                                 "\" data-errors=\"0\""));
    // Chromium logs every console message and uncaught error as ":INFO:CONSOLE" (the page logs nothing when all is well).
    EXPECT_THAT(r.log, Not(HasSubstr(":CONSOLE")));
    EXPECT_THAT(r.log, Not(HasSubstr("Uncaught")));
}

std::filesystem::path freshDir(const std::string& name) {
    const auto d = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

TEST(HtmlReport, TheDemosRunReportRendersEverySectionWithData) {
    if (chromium().empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium; scripts/setup.sh)";
    const auto dir = freshDir("stepsim-html-report-run");
    ASSERT_EQ(sh(std::string(STEPSIM_BINARY) + " run " + STEPSIM_SOURCE_DIR +
                 "/scenarios/gpt-1p3b-ddp-8xh200.yaml -q --report " + dir.string()),
              0);
    const std::string html = slurp(dir / "report.html");
    for (const char* section : {"Configuration", "Where the step goes", "Timeline per stream", "Link heat map",
                                "Memory by phase", "What to change", "Warnings"})
        EXPECT_THAT(html, HasSubstr(std::string(">") + section + "</h2>")) << section;
    EXPECT_THAT(html, Not(HasSubstr("http://")));  // self-contained: nothing to fetch
    EXPECT_THAT(html, Not(HasSubstr("https://")));
    expectRenderedWithData(render(dir / "report.html"), 5);
}

TEST(HtmlReport, ASweepsReportRendersTheObjectiveGridAndTheParetoFront) {
    if (chromium().empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium; scripts/setup.sh)";
    const auto dir = freshDir("stepsim-html-report-sweep");
    const std::string scenario = slurp(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/io/gpt2-small-checkpoint-1xh200.yaml");
    std::ofstream(dir / "sweep.yaml") << scenario
                                      << "\nsweep:\n  grid:\n    training.micro_batch: [4, 8]\n"
                                         "    training.activation_checkpointing: [none, full]\n  objective: tokens_per_s\n";
    ASSERT_EQ(sh(std::string(STEPSIM_BINARY) + " sweep " + (dir / "sweep.yaml").string() + " -q --no-progress --out " +
                 (dir / "out").string() + " --report " + dir.string()),
              0);
    const std::string html = slurp(dir / "report.html");
    EXPECT_THAT(html, HasSubstr("The objective against the two most influential knobs"));
    EXPECT_THAT(html, HasSubstr("Pareto front of step time and memory"));
    expectRenderedWithData(render(dir / "report.html"), 2);
}

TEST(HtmlReport, TheParetoFrontKeepsThePointsNoOtherBeatsOnBoth) {
    HtmlSweep s;
    s.objective = "tokens_per_s";
    s.knobs = {"a"};
    const auto point = [](double t, double m) {
        HtmlSweepPoint p;
        p.feasible = true;
        p.step_time_ms = t;
        p.peak_memory_gib = m;
        p.objective = 1.0 / t;
        p.knobs["a"] = std::to_string(t);
        return p;
    };
    s.points = {point(10, 50), point(12, 40), point(11, 60), point(20, 10), point(15, 45)};
    EXPECT_EQ(paretoFront(s), (std::vector<std::size_t>{0, 1, 3}));
}

}  // namespace
}  // namespace stepsim
