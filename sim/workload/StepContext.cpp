#include "sim/workload/StepContext.hpp"

#include "sim/base/ParallelDims.hpp"

namespace stepsim {

double elementBytes(DType d) {
    switch (d) {
        case DType::fp32: return 4;
        case DType::bf16:
        case DType::fp16: return 2;
        case DType::fp8: return 1;
    }
    return 4;
}

StepContext makeStepContext(const Scenario& sc, const CostModel& cost) {
    const LaunchRates& launch = cost.profile().launch;
    const ParallelSpec& par = sc.parallel;
    StepContext c{sc, cost, transformerShape(sc.model, sc.training.micro_batch, par.tp, par.sequence_parallel), {},
                  sc.training.compute_dtype,
                  elementBytes(sc.training.param_dtype), elementBytes(sc.training.compute_dtype),
                  sc.training.param_dtype != sc.training.compute_dtype,
                  sc.training.compute_dtype == DType::fp16 && sc.training.param_dtype != DType::fp16,
                  (sc.cluster.worldSize() > 1 ? launch.forward_host_ddp : launch.forward_host).median_us * 1e-6,
                  launch.backward_host.median_us * 1e-6, launch.grad_accumulate_host_us * 1e-6,
                  parallelDims(sc).dp};
    c.params = transformerParams(c.t);
    c.tp = par.tp;
    c.sp = par.sequence_parallel && par.tp > 1;
    c.async_tp = par.async_tp && c.sp;
    c.nccl_s = launch.nccl_host.median_us * 1e-6;
    return c;
}

}  // namespace stepsim
