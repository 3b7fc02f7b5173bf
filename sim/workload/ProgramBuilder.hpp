#pragma once
// Appends the ops of a rank's Program: kernels priced by the cost model as they are added (a kernel outside the
// profile's measured grid counts in StepContext::out_of_domain), host work, events and waits across streams,
// collectives. Every op carries the builder's current step and phase; a kernel's host cost is the launch cost of its
// phase (the autograd engine's in backward, the forward's otherwise), which the caller may overwrite through last().
// Model FLOPs (GEMM and attention) are summed while count_flops is set.
#include <cstdint>
#include <string>

#include "sim/base/Program.hpp"
#include "sim/workload/StepContext.hpp"

namespace stepsim {

// The two streams of a data-parallel rank: the compute stream and the NCCL stream.
constexpr std::uint8_t kComputeStream = 0;
constexpr std::uint8_t kCommStream = 1;

class ProgramBuilder {
public:
    ProgramBuilder(StepContext& c, Program& p) : c_(c), p_(p) {}

    int step = 0;
    Phase phase = Phase::forward;
    bool count_flops = true;
    double model_flops = 0.0;

    // C[m×n] = A[m×k]·B[k×n]: 2mnk FLOPs, the three operands read or written once in the compute dtype.
    void gemm(const std::string& name, long m, long n, long k);
    // `shape`: {batch·heads, seq, head_dim}, for the calibrated attention rates.
    void attention(const std::string& name, double flops, double bytes, GemmShape shape);
    void mem(const std::string& name, double bytes, MemKind kind = MemKind::elementwise,
             KernelClass cls = KernelClass::memory, GemmShape shape = {});
    void host(const std::string& name, double seconds);
    std::uint32_t record(std::uint8_t stream);
    // The host blocks until `event` has completed (a .item() on a tensor the stream has just written).
    void hostSync(std::uint32_t event);
    void wait(std::uint8_t stream, std::uint32_t event);
    // On `stream` (default the NCCL stream, kCommStream), in process group `group` (Workload::groups).
    void collective(const std::string& name, CollectiveKind kind, double bytes, const std::string& dtype,
                    std::uint8_t stream = kCommStream, int group = 0);
    // A transfer op (Transfers.hpp) on `stream`; its host cost is a launch's.
    void transfer(const std::string& name, const TransferCall& t, std::uint8_t stream);
    Op& last() { return p_.ops.back(); }
    void stepEnd();

private:
    Op base(const std::string& name, KernelClass cls);
    void push(Op& op);
    StepContext& c_;
    Program& p_;
};

}  // namespace stepsim
