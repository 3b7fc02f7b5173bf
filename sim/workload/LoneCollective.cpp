#include "sim/workload/LoneCollective.hpp"

#include <utility>

namespace stepsim {

Workload loneCollective(CollectiveKind kind, int ranks, double bytes) {
    Workload w;
    w.groups.push_back({"world", {}});
    for (int r = 0; r < ranks; ++r) {
        Program p;
        p.streams = {{StreamKind::comm, "nccl"}};
        Op op;
        op.kind = OpKind::collective;
        op.cls = KernelClass::comm;
        op.stream = 0;
        op.collective = 0;
        p.collectives.push_back({kind, 0, bytes, "bf16"});
        p.ops.push_back(op);
        Op end;
        end.kind = OpKind::step_end;
        end.stream = 0;
        p.ops.push_back(end);
        w.programs.push_back(std::move(p));
        w.groups[0].ranks.push_back(r);
    }
    return w;
}

}  // namespace stepsim
