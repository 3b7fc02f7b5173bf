#pragma once
// The names reports print for the workload's enums; they are the spellings of the scenario and trace files
// (snake_case, as PyTorch and NCCL name the collectives).
#include <string_view>

#include "sim/base/Program.hpp"

namespace stepsim {

constexpr std::string_view kernelClassName(KernelClass c) {
    switch (c) {
        case KernelClass::gemm: return "gemm";
        case KernelClass::attention: return "attention";
        case KernelClass::memory: return "memory";
        case KernelClass::optimizer: return "optimizer";
        case KernelClass::copy: return "copy";
        case KernelClass::comm: return "comm";
        case KernelClass::other: return "other";
    }
    return "other";
}

}  // namespace stepsim
