#pragma once
// The consistency rules of a hardware profile (ProfileYaml.hpp lists them), one check per section of the file, run in
// the file's order: the header (stepsim_profile, name), gpu, memory, gemm, attention, power, launch, nccl,
// collectives, links, interference, jitter. The first value that breaks a rule fails through the YamlReader at its
// key's line: an InputError naming the file, the line, the key path, what was expected and what was found.
#include <array>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

class YamlReader;

// The dtypes the `gemm` section may map.
inline constexpr std::array<std::string_view, 8> kGemmDtypes = {
    "bf16", "fp16", "fp8", "fp32", "fp8_tensorwise", "fp8_tensorwise_fast_accum", "fp8_rowwise",
    "fp8_rowwise_fast_accum"};

// `version`: the file's stepsim_profile.
void checkProfile(const YamlReader& r, int version, const HardwareProfile& p);

// Magnitudes, by the unit a key's name ends in, over every number of the file (`root`, its YAML tree): finite, a
// rate (_gbps, _GBps, tflops, bw), a clock (_mhz) at most 1e5, a time per kernel or call (_us) at most 1e7 µs, one in
// ms at most 1e6, a coefficient of variation (_cv) at most 10, a ratio, factor or slowdown from 0 to 1000, any number
// within ±1e15. Each bound is orders of magnitude past any GPU's; a value beyond it is a typo, not a machine.
void checkProfileMagnitudes(const YamlReader& r, const YAML::Node& root);

}  // namespace stepsim
