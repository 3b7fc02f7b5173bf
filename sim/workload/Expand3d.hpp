#pragma once
// expand() for tensor and pipeline parallelism (parallel.tp > 1 or parallel.pp > 1), composed with data parallelism
// (DDP or FSDP2) over the remaining dp ranks (ParallelDims::dataParallel): the process groups laid out by ParallelLayout.hpp, one
// Program per pipeline stage (one stage without PP: the data-parallel schedule's step with TensorParallel.hpp's
// collectives; with PP: PipelineStage.hpp), copied to every rank of the stage with its own groups.
// Per GPU: model FLOPs the mean over stages; tokens T·m/(tp·pp); the memory of the stage with the largest peak.
#include "sim/workload/Expand.hpp"

namespace stepsim {

Expansion expandParallel3d(const Scenario& sc, const CostModel& cost);

}  // namespace stepsim
