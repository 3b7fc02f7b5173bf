#pragma once
// What a scenario over a traced step (model.type: trace; docs/trace.md) cannot ask, each refused at its key: the
// loader at the key's line (sim/scenario/ScenarioLoader.cpp), the trace's expansion again for a Scenario built in
// code (sim/workload/TraceSchedule.cpp).
#include <optional>
#include <string>
#include <utility>

#include "sim/base/Scenario.hpp"

namespace stepsim {

// The first key a trace scenario cannot ask and why (a sentence), or none.
inline std::optional<std::pair<std::string, std::string>> traceUnsupported(const Scenario& sc) {
    const auto no = [](const char* key, const std::string& what, const std::string& why = "") {
        return std::optional<std::pair<std::string, std::string>>(std::pair<std::string, std::string>{
            key, what + " is not modelled from a trace (model.type: trace)" + (why.empty() ? "" : ": " + why)});
    };
    const DataParallel d = sc.parallel.data;
    if (d != DataParallel::ddp && d != DataParallel::fsdp2)
        return no("parallel.data", "a data-parallel mode other than ddp and fsdp2");
    if (d == DataParallel::fsdp2 && sc.fsdp.param_dtype && *sc.fsdp.param_dtype != sc.training.param_dtype)
        return no("fsdp.param_dtype", "a MixedPrecisionPolicy param_dtype other than the parameters' own",
                  "the trace's kernels include autocast's casts of the weights, which it would remove");
    if (sc.parallel.tp > 1) return no("parallel.tp", "tensor parallelism");
    if (sc.parallel.pp > 1) return no("parallel.pp", "pipeline parallelism");
    if (sc.compile.enabled)
        return no("compile.enabled", "torch.compile",
                  "the trace's kernels are eager PyTorch's, and which of them Inductor fuses is decided by the model's "
                  "graph, which a kernel trace does not record; profile the compiled step (the torch.compile'd model "
                  "under torch.profiler) and replay that trace without this key");
    if (fp8Training(sc))
        return no(sc.fp8.enabled ? "fp8.enabled" : "training.compute_dtype", "FP8 training",
                  "which Linears become FP8, and the scaling kernels that come with them, are not in a bf16 trace's "
                  "kernels; profile the FP8 step (torchao's Float8Linear under torch.profiler) and replay that trace "
                  "without this key");
    if (sc.training.grad_accum != 1)
        return no("training.grad_accum", "gradient accumulation over the traced step");
    if (sc.checkpoint.interval_steps > 0) return no("checkpoint.interval_steps", "checkpoint I/O");
    if (sc.data_loader.modelled) return no("data_loader", "an input pipeline");
    if (sc.ddp.comm_hook == CommHook::powersgd) return no("ddp.comm_hook", "PowerSGD");
    return std::nullopt;
}

}  // namespace stepsim
