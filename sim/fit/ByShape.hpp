#pragma once
// Values measured per GEMM shape (the gap before a GEMM, a GEMM's slowdown beside NCCL), gathered by (m, n, k) and
// reduced to the median per shape, the form HardwareProfile keeps them in (GemmShapeValue lists).
#include <array>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cost/HardwareProfile.hpp"

namespace stepsim {

using ByShape = std::map<std::array<long, 3>, std::vector<double>>;

// The median per shape, never below `floor`, in ascending shape order.
std::vector<GemmShapeValue> medianByShape(const ByShape& v, double floor);

// {shapes, median, range} of a list, as the report writes it.
nlohmann::json shapeReport(const std::vector<GemmShapeValue>& list);

}  // namespace stepsim
