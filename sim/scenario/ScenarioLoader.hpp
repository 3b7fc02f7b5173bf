#pragma once
// Reads a scenario YAML file (schema: docs/scenario.md, version 1) into a Scenario, and prints one back with every
// default and derived value filled in (`stepsim explain`).
//
// Overrides: each `key.path=value` string (from `--set`) is applied to the YAML tree before conversion, the
// value parsed as a YAML scalar or flow node, so it is checked exactly like a value in the file; an error in
// an override names `--set key.path` instead of a line. Every error is a stepsim::InputError naming the file,
// the line and the key, and saying what was expected: unknown keys (with the allowed ones and the closest),
// wrong types, bad enum values, non-positive sizes, heads not dividing hidden, kv_heads not dividing heads,
// tp·pp not dividing the world size, a missing file, YAML syntax errors, an unsupported `stepsim:` version.
//
// Derived values are kept unset in the Scenario so they follow the values they derive from: kvHeads and
// ffnHidden (sim/base/Scenario.hpp) give them.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/Scenario.hpp"

namespace stepsim {

// What a read accepts. `runnable` (what `run` and `explain` read): the schema, plus what a simulation needs and
// models, each refused with its line: the `model:` section and its layers and hidden (nothing defaults to a built-in
// model); no setting this version does not model (a key read but not modelled takes only its default; explain marks
// those keys); a B200-class node (hgx-b200, nvl72) only with a profile the user names; sizes and counts within the
// limits the simulator holds (kLimits in ScenarioLoader.cpp), checked before anything is built. `schema`: types,
// ranges and cross-field rules only, every value the schema can spell (for tools and tests of the schema).
enum class Reading { runnable, schema };

// Three of those limits, which a run that simulates more steps than the scenario asks for (sim/run/Simulate.hpp: until
// the host's head start has decayed) keeps to as well: the steps, the kernels and collectives held for a run (ranks ×
// steps × ops per step; ~2 GB at 96 bytes each) and the simulated seconds (12 days, a ninth of what the time type
// holds).
inline constexpr int kMaxSteps = 1000;
inline constexpr double kMaxHeldOps = 2e7;
inline constexpr double kMaxRunSeconds = 1e6;

// Reads `file`; a missing or unreadable file is an InputError.
Scenario loadScenario(const std::filesystem::path& file, const std::vector<std::string>& overrides = {},
                      Reading reading = Reading::runnable);

// Reads YAML text; `source` names it in errors and becomes Scenario::source. An absent `name` is the stem of
// `source`.
Scenario parseScenario(std::string_view yaml, const std::string& source,
                       const std::vector<std::string>& overrides = {}, Reading reading = Reading::runnable);

// The whole scenario as YAML, every default and derived value filled in; parseScenario reads it back to an
// equal Scenario (with kv_heads and ffn_hidden set to their resolved values).
std::string explainScenario(const Scenario& s);

// The parallel.data strategies that read the setting `key` (a key path such as "ddp.bucket_cap_mb"), or none when
// every strategy reads it: the ddp section ddp alone; the fsdp section fsdp1, fsdp2 and hsdp (fsdp.limit_all_gathers
// fsdp1 alone); the zero section zero1, zero2 and zero3 (its stage3_* keys zero3 alone). The loader refuses such a
// setting away from its default under a strategy that does not read it; a sweep marks it n/a there (SweepSpace.hpp).
std::vector<std::string_view> strategiesReading(std::string_view key);
// The sections of those strategies: ddp, fsdp, zero.
inline constexpr std::string_view kStrategySections[] = {"ddp", "fsdp", "zero"};

// The scenario's settings as `explainScenario` writes them, every default and derived value filled in: key path
// ("ddp.bucket_cap_mb", a list's items "key[i]") to its value as written there; `name` left out. Two scenarios that
// differ in one setting differ in one entry.
std::map<std::string, std::string> scenarioSettings(const Scenario& s);

}  // namespace stepsim
