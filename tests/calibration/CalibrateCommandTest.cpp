// `stepsim calibrate`, `stepsim calibrate fit` and `stepsim profile show` (sim/cli/CalibrateCommand.hpp),
// driven through CLI11 in-process.
#include "sim/cli/CalibrateCommand.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/core/InputError.hpp"
#include "sim/scenario/ProfileYaml.hpp"

namespace stepsim {
namespace {

namespace fs = std::filesystem;
const std::string kRaw = std::string(STEPSIM_SOURCE_DIR) + "/calibration/profiles/h200x2/raw/";

void parse(std::vector<std::string> args) {
    CLI::App app{"test"};
    app.require_subcommand(1);
    addCalibrateCommands(app);
    std::vector<const char*> argv = {"stepsim"};
    for (auto& a : args) argv.push_back(a.c_str());
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
}

std::string captureStdout(const std::function<void()>& f) {
    std::ostringstream s;
    auto* old = std::cout.rdbuf(s.rdbuf());
    try {
        f();
    } catch (...) {
        std::cout.rdbuf(old);
        throw;
    }
    std::cout.rdbuf(old);
    return s.str();
}

TEST(CalibrateCommand, FitWritesAReadableProfileAndReport) {
    const fs::path out = fs::temp_directory_path() / "stepsim_calibrate_fit_test.yaml";
    fs::remove(out);
    const std::string text = captureStdout(
        [&] { parse({"calibrate", "fit", kRaw + "bench.jsonl", kRaw + "torch.jsonl", "-o", out.string(), "--name", "t"}); });
    const HardwareProfile p = loadProfile(out);
    EXPECT_EQ(p.name, "t");
    EXPECT_FALSE(p.collectives.empty());
    EXPECT_TRUE(fs::exists(out.string() + ".fit.json"));
    EXPECT_NE(text.find("held-out check"), std::string::npos) << text;
}

TEST(CalibrateCommand, MissingHarnessIsAClearError) {
    try {
        captureStdout([] { parse({"calibrate", "--harness", "/nonexistent/stepsim-bench", "--out-dir",
                                  (fs::temp_directory_path() / "stepsim_cal_none").string()}); });
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("was not found"), std::string::npos) << e.what();
    }
}

TEST(CalibrateCommand, NoGpuIsAClearError) {
    // A harness that behaves as stepsim-bench does on a machine without a GPU: message, exit status 2.
    const fs::path fake = fs::temp_directory_path() / "stepsim_fake_bench.sh";
    std::ofstream(fake) << "#!/bin/sh\necho 'stepsim-bench: no CUDA GPU is visible here' >&2\nexit 2\n";
    fs::permissions(fake, fs::perms::owner_all);
    try {
        captureStdout([&] { parse({"calibrate", "--harness", fake.string(), "--no-pytorch", "--out-dir",
                                   (fs::temp_directory_path() / "stepsim_cal_nogpu").string()}); });
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("no GPU"), std::string::npos) << e.what();
    }
}

TEST(CalibrateCommand, ProfileShowPutsRatesBesideDatasheetPeaks) {
    const std::string text = captureStdout([] { parse({"profile", "show", "h200-sxm"}); });
    EXPECT_NE(text.find("datasheet"), std::string::npos) << text;
    EXPECT_NE(text.find("989"), std::string::npos) << text;   // BF16 dense peak
    EXPECT_NE(text.find("4800"), std::string::npos) << text;  // HBM
}

TEST(CalibrateCommand, ProfileShowOfAnUnknownNameIsAnInputError) {
    EXPECT_THROW(captureStdout([] { parse({"profile", "show", "no-such-profile"}); }), InputError);
}

}  // namespace
}  // namespace stepsim
