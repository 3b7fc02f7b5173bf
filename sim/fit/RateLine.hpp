#pragma once
// A rate through (size, time) points: the α-β line t = alpha_us + bytes / (GBps · 1e3) (fitLine, AlphaBetaFit.hpp,
// with a bus factor of 1: relative-error least squares), its median |relative residual| and the sizes it was
// fitted on. The memory streaming kernels, PyTorch's memory-bound kernels and the links are fitted with it.
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fit/AlphaBetaFit.hpp"

namespace stepsim {

struct RateLine {
    double alpha_us = 0, gbps = 0, rel_error = 0, lo = 0, hi = 0;
    int n = 0;
};

// The line through `pts` (any order); fewer than 2 points: all zero.
RateLine fitRate(std::vector<SizeTime> pts);

// {alpha_us, GBps, rel_error, domain_bytes, n}, as the report writes a line.
nlohmann::json lineJson(const RateLine& l);

}  // namespace stepsim
