#pragma once
// What a scenario over a captured op graph (model.type: ops; docs/ops.md) cannot ask, each refused at its key: the
// loader at the key's line (sim/scenario/ScenarioLoader.cpp), the graph's expansion again for a Scenario built in code
// (sim/workload/OpsSchedule.cpp).
#include <optional>
#include <string>
#include <utility>

#include "sim/base/Scenario.hpp"

namespace stepsim {

// The first key an ops scenario cannot ask and why (a sentence), or none.
inline std::optional<std::pair<std::string, std::string>> opsUnsupported(const Scenario& sc) {
    const auto no = [](const char* key, const std::string& what, const std::string& why = "") {
        return std::optional<std::pair<std::string, std::string>>(std::pair<std::string, std::string>{
            key,
            what + " is not modelled over a captured op graph (model.type: ops)" + (why.empty() ? "" : ": " + why)});
    };
    const DataParallel d = sc.parallel.data;
    if (d != DataParallel::ddp && d != DataParallel::fsdp2)
        return no("parallel.data", "a data-parallel mode other than ddp and fsdp2");
    if (d == DataParallel::fsdp2 && sc.fsdp.param_dtype && *sc.fsdp.param_dtype != sc.training.param_dtype)
        return no("fsdp.param_dtype", "a MixedPrecisionPolicy param_dtype other than the parameters' own",
                  "the graph's ops include autocast's casts of the weights, which it would remove; capture the step "
                  "with the parameters in that dtype");
    if (sc.parallel.tp > 1) return no("parallel.tp", "tensor parallelism");
    if (sc.parallel.pp > 1) return no("parallel.pp", "pipeline parallelism");
    if (sc.compile.enabled)
        return no(
            "compile.enabled", "torch.compile",
            "Inductor's fusion of the graph's ops is not modelled yet; the graph is priced as eager PyTorch runs it");
    if (fp8Training(sc))
        return no(sc.fp8.enabled ? "fp8.enabled" : "training.compute_dtype", "FP8 training",
                  "the swap of the Linears' GEMMs for scaled ones with their casts is not modelled yet");
    if (sc.training.grad_accum != 1) return no("training.grad_accum", "gradient accumulation over the captured step");
    if (sc.training.grad_clip_norm > 0)
        return no("training.grad_clip_norm", "gradient clipping added to the captured step",
                  "the graph is the step as captured: capture it with clip_grad_norm_");
    if (sc.checkpoint.interval_steps > 0) return no("checkpoint.interval_steps", "checkpoint I/O");
    if (sc.data_loader.modelled) return no("data_loader", "an input pipeline");
    if (sc.ddp.comm_hook == CommHook::powersgd) return no("ddp.comm_hook", "PowerSGD");
    if (sc.ddp.find_unused_parameters && !sc.ddp.static_graph)
        return no("ddp.find_unused_parameters", "DDP's unused-parameter search");
    return std::nullopt;
}

}  // namespace stepsim
