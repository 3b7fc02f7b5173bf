// A sweep's claims (sim/sweep/Claims.hpp) on hand-built records: the verdict from the median relative change over
// matched pairs, the pairs' range, keys linked with the claim's knob left out of the match, max/min values, and the
// reasons a claim cannot be tested; and how `sweep.claims` is read (sim/scenario/SweepYaml.hpp).
#include "sim/sweep/Claims.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"
#include "sim/scenario/SweepYaml.hpp"

namespace stepsim {
namespace {

using ::testing::HasSubstr;

PointRecord point(std::vector<SweepSetting> settings, double step_ms, bool feasible = true) {
    PointRecord r;
    r.settings = std::move(settings);
    r.feasible = feasible;
    if (feasible) r.results["step_time_ms"] = step_ms;
    else r.reason = "out of memory with compile.enabled";
    return r;
}

SweepSpec specWith(SweepClaim c, std::vector<SweepDimension> dims = {}) {
    SweepSpec s;
    s.dimensions = std::move(dims);
    s.claims.push_back(std::move(c));
    return s;
}

SweepClaim compileClaim(std::optional<double> by_pct, int direction = 0) {
    return {"compile shortens the step", "compile.enabled", "false", "true", "step_time_ms", by_pct, direction, 1};
}

// records[0] is the scenario as given and is never paired.
std::vector<PointRecord> compileRecords() {
    return {point({}, 1000.0),
            point({{"compile.enabled", "false"}, {"ddp.bucket_cap_mb", "25"}}, 100.0),
            point({{"compile.enabled", "true"}, {"ddp.bucket_cap_mb", "25"}}, 80.0),
            point({{"compile.enabled", "false"}, {"ddp.bucket_cap_mb", "100"}}, 200.0),
            point({{"compile.enabled", "true"}, {"ddp.bucket_cap_mb", "100"}}, 140.0),
            point({{"compile.enabled", "false"}, {"ddp.bucket_cap_mb", "5"}}, 50.0),
            point({{"compile.enabled", "true"}, {"ddp.bucket_cap_mb", "5"}}, 45.0)};
}

// Expectations: pairs (25) −20%, (100) −30%, (5) −10%: median −20%, range −30% to −10%. Claimed −34%: −20% is more
// than half of it, so it holds; claimed −50%: under half, partly; claimed +10%: the other sign, fails.
TEST(Claims, VerdictFollowsTheMedianOfMatchedPairs) {
    const auto records = compileRecords();
    const ClaimVerdict v = checkClaims(records, specWith(compileClaim(-34.0)))[0];
    EXPECT_EQ(v.pairs, 3);
    EXPECT_NEAR(*v.predicted_change, -0.20, 1e-12);
    EXPECT_NEAR(*v.low_change, -0.30, 1e-12);
    EXPECT_NEAR(*v.high_change, -0.10, 1e-12);
    EXPECT_NEAR(*v.claimed_change, -0.34, 1e-12);
    EXPECT_EQ(v.verdict, "holds");
    EXPECT_EQ(v.change, "compile.enabled false -> true");
    EXPECT_THAT(v.detail, HasSubstr("-20.0% (one sample per point: no noise band; sim.samples > 1 gives one) (median "
                                    "of 3 pairs, -30.0% to -10.0%), claimed -34.0%"));
    EXPECT_EQ(checkClaims(records, specWith(compileClaim(-50.0)))[0].verdict, "partly");
    EXPECT_EQ(checkClaims(records, specWith(compileClaim(10.0)))[0].verdict, "fails");
    EXPECT_EQ(checkClaims(records, specWith(compileClaim(std::nullopt, -1)))[0].verdict, "holds");
    EXPECT_EQ(checkClaims(records, specWith(compileClaim(std::nullopt, 1)))[0].verdict, "fails");
}

// Expectations: with each point's noise band (noise_band_ms: 3 and 4 ms), a pair's band is their quadrature sum over
// the first point's step: 5 ms over 100 ms, ±5.0%.
TEST(Claims, StepChangesCarryTheirNoiseBand) {
    std::vector<PointRecord> r = {point({}, 1.0), point({{"compile.enabled", "false"}}, 100.0),
                                  point({{"compile.enabled", "true"}}, 80.0)};
    r[1].results["noise_band_ms"] = 3.0;
    r[2].results["noise_band_ms"] = 4.0;
    EXPECT_THAT(checkClaims(r, specWith(compileClaim(-34.0)))[0].detail, HasSubstr("-20.0% ± 5.0% (the noise band, 95%)"));
}

// Expectations: a change under 1% either way is no change: the claim fails.
TEST(Claims, UnderOnePercentFails) {
    std::vector<PointRecord> r = {point({}, 1.0), point({{"compile.enabled", "false"}}, 100.0),
                                  point({{"compile.enabled", "true"}}, 99.5)};
    EXPECT_EQ(checkClaims(r, specWith(compileClaim(std::nullopt, -1)))[0].verdict, "fails");
}

// Expectations: max/min are the largest and smallest numeric values the sweep ran (100 and 5); from 100 to 5 the
// pairs go 200 -> 50 (−75%) and 140 -> 45 (−67.9%).
TEST(Claims, MaxAndMinAreTheSweepsExtremes) {
    SweepClaim c{"small buckets expose less", "ddp.bucket_cap_mb", "max", "min", "step_time_ms", std::nullopt, -1, 1};
    const ClaimVerdict v = checkClaims(compileRecords(), specWith(c))[0];
    EXPECT_EQ(v.change, "ddp.bucket_cap_mb 100 -> 5");
    EXPECT_EQ(v.pairs, 2);
    EXPECT_NEAR(*v.predicted_change, (-0.75 + (45.0 / 140.0 - 1.0)) / 2, 1e-12);
}

// Expectations: micro_batch and grad_accum vary together on a linked axis, so a pair may differ in both: with the
// bucket size held, (mb 1, ga 4) -> (mb 4, ga 1) pairs up.
TEST(Claims, KeysLinkedWithTheKnobAreLeftOutOfTheMatch) {
    SweepDimension linked{{"training.micro_batch", "training.grad_accum"}, {{"1", "4"}, {"4", "1"}}, 1};
    std::vector<PointRecord> r = {
        point({}, 1.0),
        point({{"ddp.bucket_cap_mb", "25"}, {"training.grad_accum", "4"}, {"training.micro_batch", "1"}}, 100.0),
        point({{"ddp.bucket_cap_mb", "25"}, {"training.grad_accum", "1"}, {"training.micro_batch", "4"}}, 60.0)};
    SweepClaim c{"larger micro-batches", "training.micro_batch", "1", "4", "step_time_ms", -30.0, 0, 1};
    const ClaimVerdict v = checkClaims(r, specWith(c, {linked}))[0];
    EXPECT_EQ(v.pairs, 1);
    EXPECT_EQ(v.verdict, "holds");
}

// Expectations: untestable, with the reason: the knob never run at one of its values; every "to" point infeasible
// (the reason of the infeasible point shown).
TEST(Claims, UntestableSaysWhy) {
    std::vector<PointRecord> only_false = {point({}, 1.0), point({{"compile.enabled", "false"}}, 100.0)};
    const ClaimVerdict a = checkClaims(only_false, specWith(compileClaim(-34.0)))[0];
    EXPECT_EQ(a.verdict, "untestable");
    EXPECT_THAT(a.detail, HasSubstr("did not run compile.enabled at both values"));
    std::vector<PointRecord> infeasible = {point({}, 1.0), point({{"compile.enabled", "false"}}, 100.0),
                                           point({{"compile.enabled", "true"}}, 0.0, false)};
    const ClaimVerdict b = checkClaims(infeasible, specWith(compileClaim(-34.0)))[0];
    EXPECT_EQ(b.verdict, "untestable");
    EXPECT_THAT(b.detail, HasSubstr("no pair of feasible points: out of memory with compile.enabled"));
}

const char* kBase = "stepsim: 1\nsweep:\n  grid: {compile.enabled: [false, true]}\n";

TEST(ClaimsYaml, ReadsAClaim) {
    const SweepSpec s = parseSweepSpec(std::string(kBase) +
                                           "  claims:\n"
                                           "    - {name: compile shortens the step, change: {compile.enabled: [false, "
                                           "true]}, metric: step_time_ms, by_pct: -34}\n",
                                       "x.yaml", {});
    ASSERT_EQ(s.claims.size(), 1u);
    EXPECT_EQ(s.claims[0].name, "compile shortens the step");
    EXPECT_EQ(s.claims[0].key, "compile.enabled");
    EXPECT_EQ(s.claims[0].from, "false");
    EXPECT_EQ(s.claims[0].to, "true");
    EXPECT_EQ(*s.claims[0].by_pct, -34.0);
    EXPECT_EQ(s.claims[0].line, 5);
}

std::string refusal(const std::string& claim) {
    try {
        parseSweepSpec(std::string(kBase) + "  claims:\n    - " + claim + "\n", "x.yaml", {});
    } catch (const InputError& e) {
        return e.what();
    }
    return "accepted";
}

TEST(ClaimsYaml, RefusesAMalformedClaimAtItsKey) {
    EXPECT_THAT(refusal("{name: a, change: {compile.enabled: [false, true]}, metric: step_time_ms}"),
                HasSubstr("x.yaml:5: sweep.claims[0]: expected exactly one of by_pct"));
    EXPECT_THAT(refusal("{name: a, change: {compile.enabled: [false]}, metric: step_time_ms, by_pct: 5}"),
                HasSubstr("sweep.claims[0].change.compile.enabled: expected [FROM, TO]"));
    EXPECT_THAT(refusal("{name: a, change: {compile.enabled: [false, true]}, metric: m, direction: up}"),
                HasSubstr("sweep.claims[0].direction: expected less or more"));
    EXPECT_THAT(refusal("{change: {compile.enabled: [false, true]}, metric: m, by_pct: 5}"),
                HasSubstr("sweep.claims[0].name: missing"));
    EXPECT_THAT(refusal("{name: a, change: {compile.enabled: [false, true]}, metric: m, by_pct: 5, why: x}"),
                HasSubstr("sweep.claims[0].why: unknown key"));
    EXPECT_THAT(refusal("{name: a, change: {compile.enabld: [false, true]}, metric: m, by_pct: 5}"),
                HasSubstr("compile.enabld"));
}

}  // namespace
}  // namespace stepsim
