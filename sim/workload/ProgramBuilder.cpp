#include "sim/workload/ProgramBuilder.hpp"

namespace stepsim {

void ProgramBuilder::gemm(const std::string& name, long m, long n, long k) {
    Op op = base(name, KernelClass::gemm);
    op.gemm = {m, n, k};
    op.flops = 2.0 * double(m) * double(n) * double(k);
    op.bytes = (double(m) * k + double(k) * n + double(m) * n) * c_.ce;
    push(op);
}

void ProgramBuilder::attention(const std::string& name, double flops, double bytes, GemmShape shape) {
    Op op = base(name, KernelClass::attention);
    op.gemm = shape;
    op.flops = flops;
    op.bytes = bytes;
    push(op);
}

void ProgramBuilder::mem(const std::string& name, double bytes, MemKind kind, KernelClass cls, GemmShape shape) {
    Op op = base(name, cls);
    op.mem = kind;
    op.bytes = bytes;
    op.gemm = shape;
    push(op);
}

void ProgramBuilder::host(const std::string& name, double seconds) {
    Op op = base(name, KernelClass::other);
    op.kind = OpKind::host_work;
    op.host_s = seconds;
    p_.ops.push_back(op);
}

std::uint32_t ProgramBuilder::record(std::uint8_t stream) {
    Op op = base("record", KernelClass::other);
    op.kind = OpKind::record_event;
    op.stream = stream;
    op.host_s = 0;
    op.event = p_.events++;
    p_.ops.push_back(op);
    return op.event;
}

void ProgramBuilder::hostSync(std::uint32_t event) {
    Op op = base("host sync", KernelClass::other);
    op.kind = OpKind::host_sync;
    op.host_s = 0;
    op.event = event;
    p_.ops.push_back(op);
}

void ProgramBuilder::wait(std::uint8_t stream, std::uint32_t event) {
    Op op = base("wait", KernelClass::other);
    op.kind = OpKind::wait_event;
    op.stream = stream;
    op.host_s = 0;
    op.event = event;
    p_.ops.push_back(op);
}

void ProgramBuilder::collective(const std::string& name, CollectiveKind kind, double bytes, const std::string& dtype,
                                std::uint8_t stream, int group) {
    Op op = base(name, KernelClass::comm);
    op.kind = OpKind::collective;
    op.stream = stream;
    op.bytes = bytes;
    op.collective = static_cast<std::uint32_t>(p_.collectives.size());
    p_.collectives.push_back(CollectiveCall{kind, group, bytes, dtype});
    p_.ops.push_back(op);
}

void ProgramBuilder::transfer(const std::string& name, const TransferCall& t, std::uint8_t stream) {
    Op op = base(name, KernelClass::copy);
    op.kind = OpKind::transfer;
    op.stream = stream;
    op.bytes = t.bytes;
    op.collective = static_cast<std::uint32_t>(p_.transfers.size());
    p_.transfers.push_back(t);
    p_.ops.push_back(op);
}

void ProgramBuilder::stepEnd() {
    Op op = base("step end", KernelClass::other);
    op.kind = OpKind::step_end;
    op.host_s = 0;
    p_.ops.push_back(op);
}

Op ProgramBuilder::base(const std::string& name, KernelClass cls) {
    Op op;
    op.kind = OpKind::kernel;
    op.cls = cls;
    op.phase = phase;
    op.stream = kComputeStream;
    op.name = p_.intern(name);
    op.step = step;
    op.host_s = phase == Phase::backward ? c_.backward_s : c_.forward_s;
    return op;
}

void ProgramBuilder::push(Op& op) {
    if (!c_.cost.price(op, c_.cdt)) ++c_.out_of_domain;
    if (count_flops && (op.cls == KernelClass::gemm || op.cls == KernelClass::attention)) model_flops += op.flops;
    p_.ops.push_back(op);
}

}  // namespace stepsim
