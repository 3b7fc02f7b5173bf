#pragma once
// `stepsim profile show`: a hardware profile as a readable table. Each rate beside its datasheet peak (GEMMs by dtype,
// attention, HBM streaming, the memory-bound kernel kinds, NVLink and PCIe), the norms' grids, the launch costs and
// gaps, the interference factors, the GPUs' and hosts' speed spreads, and the collectives' α-β segments.
#include <string>

#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

std::string profileTable(const HardwareProfile& p);

}  // namespace stepsim
