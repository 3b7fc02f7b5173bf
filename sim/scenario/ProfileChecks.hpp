#pragma once
// The consistency rules of a hardware profile (ProfileYaml.hpp lists them), one check per section of the file, run in
// the file's order: the header (stepsim_profile, name), gpu, memory, gemm, attention, power, launch, nccl,
// collectives, links, interference, jitter. The first value that breaks a rule fails through the YamlReader at its
// key's line: an InputError naming the file, the line, the key path, what was expected and what was found.
#include <array>
#include <string_view>

#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

class YamlReader;

// The dtypes the `gemm` section may map.
inline constexpr std::array<std::string_view, 8> kGemmDtypes = {
    "bf16", "fp16", "fp8", "fp32", "fp8_tensorwise", "fp8_tensorwise_fast_accum", "fp8_rowwise",
    "fp8_rowwise_fast_accum"};

// `version`: the file's stepsim_profile.
void checkProfile(const YamlReader& r, int version, const HardwareProfile& p);

}  // namespace stepsim
