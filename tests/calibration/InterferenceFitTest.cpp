// A training step's kernels beside NCCL (interference_training.py): the fit's median slowdown by kernel class and
// by what the NCCL kernel is doing (the raw records' reading: RawDataTest.cpp).
#include <algorithm>

#include <gtest/gtest.h>

#include "sim/fit/ProfileFit.hpp"
#include "sim/fit/RawData.hpp"

namespace stepsim {
namespace {

RawStepInterference rec(const std::string& mode, const std::string& cls, double slowdown) {
    return {mode, cls, "op", 100.0, 100.0 * slowdown};
}

// The median per (mode, class); a class measured in neither mode keeps 0 and the report lists what was kept; the
// bucketed records only reach the report.
TEST(InterferenceFit, MedianByModeAndClass) {
    RawData raw;
    raw.step_interference = {rec("transfer", "gemm", 1.1), rec("transfer", "gemm", 1.3), rec("transfer", "gemm", 1.2),
                             rec("waiting", "gemm", 1.5),  rec("waiting", "gemm", 1.4),  rec("transfer", "memory", 1.18),
                             rec("waiting", "memory", 0.98), rec("bucketed", "gemm", 1.2)};
    raw.step_interference.back().comm_slowdown = 3.5;  // reported, not fitted
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const Interference& i = r.profile.interference;
    EXPECT_DOUBLE_EQ(i.beside_transfer.gemm, 1.2);
    EXPECT_DOUBLE_EQ(i.beside_waiting.gemm, 1.45);
    EXPECT_DOUBLE_EQ(i.beside_transfer.memory, 1.18);
    EXPECT_DOUBLE_EQ(i.beside_waiting.memory, 1.0);  // never faster than alone
    EXPECT_DOUBLE_EQ(i.beside_transfer.attention, 0.0);
    EXPECT_DOUBLE_EQ(r.profile.interference.comm_slowdown, HardwareProfile{}.interference.comm_slowdown);
    EXPECT_DOUBLE_EQ(r.report.at("interference_training").at("bucketed").at("gemm")[0].at("comm_slowdown"), 3.5);
    const ProfileFitResult none = fitProfile(RawData{}, HardwareProfile{}, "t", "test");
    const auto& kept = none.report.at("kept_from_base");
    EXPECT_NE(std::find(kept.begin(), kept.end(), "interference.beside_waiting"), kept.end());
}

// The all-reduce's own slowdown beside compute: the bench's records (an all-reduce beside a long GEMM, which waits
// for the GEMM's SMs as well: ×5.7 at 64 MiB) give it where nothing better was measured; resident records
// (interference_training.py --modes resident: its kernel in place before the compute starts) replace it with their
// median over every class, and the report keeps them by class.
TEST(InterferenceFit, ResidentAllReducesGiveTheCommSlowdown) {
    RawData raw;
    raw.interference = {{268435456, 0, 1450, 1620, 939, 1614}, {268435456, 1, 1450, 1600, 939, 1616},
                        {67108864, 0, 1420, 1470, 258, 1477}};
    const ProfileFitResult bench = fitProfile(raw, HardwareProfile{}, "t", "test");
    EXPECT_NEAR(bench.profile.interference.comm_slowdown, 1615.0 / 939, 1e-9);  // 64 MiB: shorter than half the GEMM
    raw.comm_beside = {{"gemm", "forward 8192x8192x2048", 67108864, 251, 1.12},
                       {"gemm", "wgrad 2048x8192x8192", 67108864, 251, 1.06},
                       {"memory", "add 8192x2048", 67108864, 251, 1.20},
                       {"attention", "sdpa_fwd", 134217728, 470, 0.98}};
    const ProfileFitResult resident = fitProfile(raw, HardwareProfile{}, "t", "test");
    EXPECT_DOUBLE_EQ(resident.profile.interference.comm_slowdown, (1.06 + 1.12) / 2);
    EXPECT_DOUBLE_EQ(resident.profile.interference.compute_slowdown, bench.profile.interference.compute_slowdown);
    const auto& rep = resident.report.at("interference");
    EXPECT_DOUBLE_EQ(rep.at("comm_slowdown").get<double>(), (1.06 + 1.12) / 2);
    EXPECT_EQ(rep.at("resident").at("by_class").at("gemm").at("records").get<int>(), 2);
    EXPECT_DOUBLE_EQ(rep.at("resident").at("by_class").at("memory").at("median").get<double>(), 1.20);
    // never faster than alone
    raw.comm_beside = {{"attention", "sdpa_fwd", 134217728, 470, 0.98}};
    EXPECT_DOUBLE_EQ(fitProfile(raw, HardwareProfile{}, "t", "test").profile.interference.comm_slowdown, 1.0);
}

// Transfer records at two sizes or more give a median per size and class (sizes ascending); at one size none
// (the base's list is kept).
TEST(InterferenceFit, TransferSlowdownBySize) {
    RawData raw;
    const auto at = [](double mib, const std::string& cls, double slowdown) {
        RawStepInterference r = rec("transfer", cls, slowdown);
        r.comm_bytes = mib * (1 << 20);
        return r;
    };
    raw.step_interference = {at(64, "gemm", 1.3), at(64, "gemm", 1.34), at(4, "gemm", 1.02), at(4, "memory", 1.05),
                             at(4, "gemm", 0.99), rec("transfer", "gemm", 1.6)};  // the last: size not recorded
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const auto& s = r.profile.interference.beside_transfer_by_size;
    ASSERT_EQ(s.size(), 2u);
    EXPECT_DOUBLE_EQ(s[0].bytes, 4.0 * (1 << 20));
    EXPECT_DOUBLE_EQ(s[0].gemm, 1.005);
    EXPECT_DOUBLE_EQ(s[0].memory, 1.05);
    EXPECT_DOUBLE_EQ(s[1].gemm, 1.32);
    EXPECT_DOUBLE_EQ(s[1].memory, 0.0);
    RawData one;
    one.step_interference = {at(64, "gemm", 1.3)};
    HardwareProfile base;
    SizedSlowdown kept;
    kept.bytes = 1e6;
    kept.gemm = 1.1;
    base.interference.beside_transfer_by_size = {kept};
    const ProfileFitResult r1 = fitProfile(one, base, "t", "test");
    ASSERT_EQ(r1.profile.interference.beside_transfer_by_size.size(), 1u);
    EXPECT_DOUBLE_EQ(r1.profile.interference.beside_transfer_by_size[0].gemm, 1.1);
}

// Waiting records that give a GEMM's shape: the median per shape (never below 1), in ascending shape order; the
// others still feed the class medians. Without any, the base's list is kept and the report says so.
TEST(InterferenceFit, GemmSlowdownByShape) {
    const auto shaped = [](long m, long n, long k, double slowdown, const std::string& mode = "waiting") {
        RawStepInterference r = rec(mode, "gemm", slowdown);
        r.m = m, r.n = n, r.k = k;
        return r;
    };
    RawData raw;
    raw.step_interference = {shaped(8192, 2048, 2048, 1.42), shaped(8192, 2048, 2048, 1.40),
                             shaped(8192, 2048, 2048, 1.44), shaped(2048, 2048, 8192, 1.86),
                             shaped(4096, 4096, 4096, 0.97), shaped(1024, 1024, 1024, 1.9, "transfer"),
                             rec("waiting", "gemm", 1.3)};
    const ProfileFitResult r = fitProfile(raw, HardwareProfile{}, "t", "test");
    const auto& by = r.profile.interference.gemm_by_shape;
    ASSERT_EQ(by.size(), 3u);  // the transfer record is not a shape's
    EXPECT_EQ(by[0].m, 2048);
    EXPECT_EQ(by[0].k, 8192);
    EXPECT_DOUBLE_EQ(by[0].value, 1.86);
    EXPECT_DOUBLE_EQ(by[1].value, 1.0);  // 4096³: never faster than alone
    EXPECT_EQ(by[2].m, 8192);
    EXPECT_DOUBLE_EQ(by[2].value, 1.42);
    EXPECT_DOUBLE_EQ(r.profile.interference.beside_waiting.gemm, 1.41);  // the median of all six waiting records
    EXPECT_EQ(r.report.at("interference_training").at("gemm_by_shape").at("shapes"), 3);

    HardwareProfile base;
    base.interference.gemm_by_shape = {{1, 2, 3, 1.5}};
    const ProfileFitResult none = fitProfile(RawData{}, base, "t", "test");
    ASSERT_EQ(none.profile.interference.gemm_by_shape.size(), 1u);
    const auto& kept = none.report.at("kept_from_base");
    EXPECT_NE(std::find(kept.begin(), kept.end(), "interference.gemm_by_shape"), kept.end());
}

}  // namespace
}  // namespace stepsim
