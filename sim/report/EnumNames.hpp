#pragma once
// The names reports print for the workload's enums; they are the spellings of the scenario and trace files
// (snake_case, as PyTorch and NCCL name the collectives).
#include <string_view>

#include "sim/workload/Program.hpp"

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

constexpr std::string_view collectiveKindName(CollectiveKind k) {
    switch (k) {
        case CollectiveKind::all_reduce: return "all_reduce";
        case CollectiveKind::all_gather: return "all_gather";
        case CollectiveKind::reduce_scatter: return "reduce_scatter";
        case CollectiveKind::alltoall: return "alltoall";
        case CollectiveKind::broadcast: return "broadcast";
        case CollectiveKind::sendrecv: return "sendrecv";
    }
    return "all_reduce";
}

}  // namespace stepsim
