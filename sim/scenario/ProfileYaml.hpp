#pragma once
// Hardware profiles as YAML (schema `stepsim_profile: 1`), and the built-in profiles compiled into the binary.
//
// Keys are exactly the C++ member names of HardwareProfile (sim/cost/HardwareProfile.hpp) and its parts;
// `gemm` maps a dtype name (bf16, fp16, fp8, fp32) to its GemmEfficiency; a GemmPoint is the list
// [m, n, k, tflops] and a GemmShapeValue [m, n, k, value]; NcclModel's three-element arrays are lists
// [LL, LL128, Simple]. Every key is required (a profile is data that a calibration run wrote in full), and values
// must be consistent:
//   rates, bandwidths, peaks, sizes > 0; latencies, overheads, errors, CVs >= 0;
//   efficiencies and protocol bandwidth fractions in (0, 1]; interference slowdowns >= 1;
//   each Distribution has p99_us >= median_us >= 0; a measured GEMM point is below its dtype's peak;
//   each collective's segments are non-empty, ordered and contiguous (hi_bytes of one = lo_bytes of the next).
// (ProfileChecks.hpp checks them, one function per section.)
// writeProfile prints every field, numbers in their shortest round-trip form: parseProfile(writeProfile(p))
// equals p field for field.
//
// Built-ins (calibration/profiles/*.yaml, embedded at configure time into BuiltinProfiles.inc):
//   h200x2             measured on two H200s (calibration/profiles/h200x2): the profile of node hgx-h200, pcie-8gpu
//                      and node files
//   h200-sxm           datasheet and microbenchmarks, the base the calibration fit starts from
//   h100-sxm           datasheet figures for the H100 SXM5
//   h100-sxm-derived   h200x2 carried to the H100 SXM5 (`stepsim profile derive`): the profile of node hgx-h100
//   b200-extrapolated  h200x2 carried to a B200, extrapolated: named by a scenario, never a node's default
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cost/HardwareProfile.hpp"
#include "sim/cost/ProfileDerive.hpp"
#include "sim/base/Scenario.hpp"

namespace stepsim {

// Reads profile YAML text; `source` names it in errors.
HardwareProfile parseProfile(std::string_view yaml, const std::string& source);

// Reads a profile file; a missing or unreadable file is an InputError.
HardwareProfile loadProfile(const std::filesystem::path& file);

// The profile as YAML that parseProfile reads back to an equal profile.
std::string writeProfile(const HardwareProfile& p);

// A datasheet delta file (schema `stepsim_profile_delta: 1`): the measured profile to start from (`from`), the
// measured GPU's facts its profile does not record (`measured`: its power limit, its load-independent draw and that
// draw's range) and the target's datasheet (`target`; 0: the measured GPU's). Every key is required.
DatasheetDelta parseDatasheetDelta(std::string_view yaml, const std::string& source);

// `stepsim profile derive DELTA`: the delta's `from` profile (a built-in name, or a path relative to the delta's
// folder) carried to its target (sim/cost/ProfileDerive.hpp).
HardwareProfile deriveProfileFromFile(const std::filesystem::path& delta_file);

// The names of the built-in profiles, in the order calibration/CMakeLists.txt lists them.
std::vector<std::string> builtinProfileNames();

// A built-in profile by name; an unknown name is an InputError that lists the built-ins.
HardwareProfile builtinProfile(const std::string& name);

// The profile a scenario asks for with cluster.profile: "builtin" picks the node's default (its NodeTemplate's
// default_profile; h200x2 for a node file), a built-in name picks that one, anything else is a profile YAML path,
// relative to the folder of `scenario_file` (or to the working directory when `scenario_file` is empty); then
// carried to the cluster's hosts by cluster.power_limit_w, hbm_gib and hbm_tbps (ProfileDerive.hpp), each step in
// the profile's derivation.
HardwareProfile resolveProfile(const ClusterSpec& cluster, const std::string& scenario_file);

}  // namespace stepsim
