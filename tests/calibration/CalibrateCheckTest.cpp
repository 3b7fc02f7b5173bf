// `stepsim calibrate --check PROFILE` (sim/run/CalibrateCheck.hpp): the comparison of measured points with a
// profile's cost models, class by class, on committed raw files.
#include "sim/run/CalibrateCheck.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "sim/scenario/ProfileYaml.hpp"

namespace stepsim {
namespace {

const std::string kSrc = std::string(STEPSIM_SOURCE_DIR);
const std::string kX2 = kSrc + "/calibration/profiles/h200x2/raw/";
// The check's own measurement on a fresh one-GPU machine start (round variants2's, in
// results/validation/heldout-variants/fresh-calibration-1/check).
const std::string kCheck = kSrc + "/results/validation/heldout-variants/fresh-calibration-1/check/";

const CheckClass* find(const std::vector<CheckClass>& cs, const std::string& name) {
    for (const auto& c : cs)
        if (c.name == name) return &c;
    return nullptr;
}

}  // namespace

// The points a profile was fitted from read as that profile, class by class.
TEST(CalibrateCheck, AProfilesOwnMeasurementsNeedNoRecalibration) {
    const HardwareProfile p = loadProfile(kSrc + "/calibration/profiles/h200x1/profile.yaml");
    const RawData raw = readRaw({kSrc + "/calibration/profiles/h200x1/raw/gemm_training_shapes_step.jsonl",
                                 kX2 + "attention_default-2.jsonl", kX2 + "torch.jsonl",
                                 kX2 + "torch_log_softmax.jsonl"});
    const std::vector<CheckClass> cs = checkProfile(p, raw);
    for (const char* name : {"gemm", "attention", "memory", "host"}) {
        const CheckClass* c = find(cs, name);
        ASSERT_NE(c, nullptr) << name;
        EXPECT_GT(c->points, 0) << name;
        EXPECT_NEAR(c->median_ratio, 1.0, 0.02) << name;
        EXPECT_FALSE(c->recalibrate()) << name;
    }
    EXPECT_EQ(find(cs, "nccl"), nullptr);  // no collective in these files
    std::ostringstream out;
    EXPECT_FALSE(printCheck(cs, "h200x1", out));
    EXPECT_NE(out.str().find("no need to recalibrate"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("nccl       not measured"), std::string::npos) << out.str();
}

// Collectives of a two-GPU harness run against the profile fitted from it.
TEST(CalibrateCheck, CollectivesAreComparedWithTheMeasuredFits) {
    const std::vector<CheckClass> cs = checkProfile(builtinProfile("h200x2"), readRaw({kX2 + "bench.jsonl"}));
    const CheckClass* c = find(cs, "nccl");
    ASSERT_NE(c, nullptr);
    EXPECT_GT(c->points, 100);
    EXPECT_NEAR(c->median_ratio, 1.0, 0.02);
}

// A machine whose memory-bound kernels run twice as fast as the profile says: the memory class says to recalibrate.
TEST(CalibrateCheck, AClassFarFromTheProfileSaysRecalibrate) {
    HardwareProfile p = loadProfile(kSrc + "/calibration/profiles/h200x1/profile.yaml");
    for (auto& [kind, rate] : p.memory.kernels) rate.efficiency *= 0.5;
    const std::vector<CheckClass> cs = checkProfile(p, readRaw({kX2 + "torch.jsonl"}));
    const CheckClass* m = find(cs, "memory");
    ASSERT_NE(m, nullptr);
    EXPECT_LT(m->median_ratio, 0.8);
    EXPECT_TRUE(m->recalibrate());
    std::ostringstream out;
    EXPECT_TRUE(printCheck(cs, "halved", out));
    EXPECT_NE(out.str().find("faster than the profile: recalibrate"), std::string::npos) << out.str();
}

// The committed check of a fresh machine start against the shipped one-GPU profile: the kernel classes within their
// thresholds, the host's cost per eager op 31% below the profile's (outside its 30%), so the verdict is to
// recalibrate.
TEST(CalibrateCheck, TheCommittedFreshStartReadsAsTheProfileButForItsHost) {
    const HardwareProfile p = loadProfile(kSrc + "/calibration/profiles/h200x1/profile.yaml");
    const std::vector<CheckClass> cs = checkProfile(
        p, readRaw({kCheck + "check_gemm.jsonl", kCheck + "check_attention.jsonl", kCheck + "check_torch.jsonl"}));
    for (const char* name : {"gemm", "attention", "memory"}) {
        const CheckClass* c = find(cs, name);
        ASSERT_NE(c, nullptr) << name;
        EXPECT_FALSE(c->recalibrate()) << name;
    }
    const CheckClass* host = find(cs, "host");
    ASSERT_NE(host, nullptr);
    EXPECT_TRUE(host->recalibrate());
}

}  // namespace stepsim
