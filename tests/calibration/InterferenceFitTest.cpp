// A training step's kernels beside NCCL (interference_training.py): the raw records and the fit's median
// slowdown by kernel class and by what the NCCL kernel is doing.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "calibration/fit/ProfileFit.hpp"
#include "calibration/fit/RawData.hpp"
#include "sim/core/InputError.hpp"

namespace stepsim {
namespace {

std::filesystem::path writeTemp(const std::string& name, const std::string& text) {
    const auto p = std::filesystem::temp_directory_path() / name;
    std::ofstream(p) << text;
    return p;
}

// Records without with_comm_us (the all-reduce chain did not cover the calls) carry nothing to fit.
TEST(InterferenceFit, UncoveredRecordsAreSkipped) {
    const auto p = writeTemp("stepsim_raw_itrain.jsonl",
        R"({"kind":"interference_training","mode":"waiting","class":"gemm","op":"a","rank":0,"alone_us":100,"with_comm_us":142})" "\n"
        R"({"kind":"interference_training","mode":"waiting","class":"gemm","op":"a","rank":1,"alone_us":100,"covered_reps":5})" "\n");
    const RawData d = readRaw({p});
    ASSERT_EQ(d.step_interference.size(), 1u);
    EXPECT_EQ(d.step_interference[0].mode, "waiting");
    EXPECT_DOUBLE_EQ(d.step_interference[0].with_comm_us, 142.0);
}

TEST(InterferenceFit, UnknownModeNamesTheKey) {
    const auto p = writeTemp("stepsim_raw_itrain_bad.jsonl",
        R"({"kind":"interference_training","mode":"idle","class":"gemm","op":"a","alone_us":100,"with_comm_us":142})" "\n");
    try {
        readRaw({p});
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("stepsim_raw_itrain_bad.jsonl:1: mode"), std::string::npos) << e.what();
    }
}

RawStepInterference rec(const std::string& mode, const std::string& cls, double slowdown) {
    return {mode, cls, "op", 100.0, 100.0 * slowdown};
}

// The median per (mode, class); a class measured in neither mode keeps 0 and the report lists what was kept.
TEST(InterferenceFit, MedianByModeAndClass) {
    RawData raw;
    raw.step_interference = {rec("transfer", "gemm", 1.1), rec("transfer", "gemm", 1.3), rec("transfer", "gemm", 1.2),
                             rec("waiting", "gemm", 1.5),  rec("waiting", "gemm", 1.4),  rec("transfer", "memory", 1.18),
                             rec("waiting", "memory", 0.98)};
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const Interference& i = r.profile.interference;
    EXPECT_DOUBLE_EQ(i.beside_transfer.gemm, 1.2);
    EXPECT_DOUBLE_EQ(i.beside_waiting.gemm, 1.45);
    EXPECT_DOUBLE_EQ(i.beside_transfer.memory, 1.18);
    EXPECT_DOUBLE_EQ(i.beside_waiting.memory, 1.0);  // never faster than alone
    EXPECT_DOUBLE_EQ(i.beside_transfer.attention, 0.0);
    const ProfileFitResult none = fitProfile(RawData{}, HardwareProfile{}, "t", "test");
    const auto& kept = none.report.at("kept_from_base");
    EXPECT_NE(std::find(kept.begin(), kept.end(), "interference.beside_waiting"), kept.end());
}

}  // namespace
}  // namespace stepsim
