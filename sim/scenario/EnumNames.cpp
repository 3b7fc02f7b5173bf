#include "sim/scenario/EnumNames.hpp"

namespace stepsim {

#define STEPSIM_ENUM_NAMES(E, ...)                          \
    std::span<const EnumName<E>> enumNames(E) {             \
        static constexpr EnumName<E> names[] = {__VA_ARGS__}; \
        return names;                                       \
    }

STEPSIM_ENUM_NAMES(MlpKind, {MlpKind::gelu, "gelu"}, {MlpKind::swiglu, "swiglu"},
                   {MlpKind::geglu, "geglu"})
STEPSIM_ENUM_NAMES(NormKind, {NormKind::layernorm, "layernorm"}, {NormKind::rmsnorm, "rmsnorm"})
STEPSIM_ENUM_NAMES(PositionEmbedding, {PositionEmbedding::learned, "learned"}, {PositionEmbedding::rope, "rope"},
                   {PositionEmbedding::none, "none"})
STEPSIM_ENUM_NAMES(QkvLayout, {QkvLayout::fused, "fused"}, {QkvLayout::fused_permute, "fused_permute"},
                   {QkvLayout::separate, "separate"})
STEPSIM_ENUM_NAMES(ModelImplementation, {ModelImplementation::stepsim, "stepsim"}, {ModelImplementation::hf, "hf"},
                   {ModelImplementation::nanogpt, "nanogpt"}, {ModelImplementation::torchtitan, "torchtitan"})
STEPSIM_ENUM_NAMES(LossDtype, {LossDtype::compute, "compute"}, {LossDtype::fp32, "fp32"})
STEPSIM_ENUM_NAMES(DType, {DType::fp32, "fp32"}, {DType::bf16, "bf16"}, {DType::fp16, "fp16"}, {DType::fp8, "fp8"})
STEPSIM_ENUM_NAMES(Optimizer, {Optimizer::adamw, "adamw"}, {Optimizer::adam, "adam"}, {Optimizer::sgd, "sgd"})
STEPSIM_ENUM_NAMES(OptimizerImpl, {OptimizerImpl::foreach, "foreach"}, {OptimizerImpl::fused, "fused"})
STEPSIM_ENUM_NAMES(Checkpointing, {Checkpointing::none, "none"}, {Checkpointing::selective, "selective"},
                   {Checkpointing::full, "full"}, {Checkpointing::selective_op, "selective_op"})
STEPSIM_ENUM_NAMES(DataParallel, {DataParallel::ddp, "ddp"}, {DataParallel::fsdp1, "fsdp1"},
                   {DataParallel::fsdp2, "fsdp2"}, {DataParallel::hsdp, "hsdp"}, {DataParallel::zero1, "zero1"},
                   {DataParallel::zero2, "zero2"}, {DataParallel::zero3, "zero3"})
STEPSIM_ENUM_NAMES(PipelineSchedule, {PipelineSchedule::gpipe, "gpipe"}, {PipelineSchedule::one_f_one_b, "1f1b"},
                   {PipelineSchedule::interleaved, "interleaved"},
                   {PipelineSchedule::zero_bubble, "zero_bubble"})
STEPSIM_ENUM_NAMES(RankOrder, {RankOrder::tp_dp_pp, "tp-dp-pp"}, {RankOrder::tp_pp_dp, "tp-pp-dp"},
                   {RankOrder::dp_tp_pp, "dp-tp-pp"}, {RankOrder::dp_pp_tp, "dp-pp-tp"}, {RankOrder::pp_tp_dp, "pp-tp-dp"},
                   {RankOrder::pp_dp_tp, "pp-dp-tp"})
STEPSIM_ENUM_NAMES(CommHook, {CommHook::none, "none"}, {CommHook::fp16_compress, "fp16_compress"},
                   {CommHook::bf16_compress, "bf16_compress"}, {CommHook::powersgd, "powersgd"},
                   {CommHook::quantize_8bit, "quantize_8bit"}, {CommHook::quantize_4bit, "quantize_4bit"})
STEPSIM_ENUM_NAMES(BackwardPrefetch, {BackwardPrefetch::pre, "pre"}, {BackwardPrefetch::post, "post"},
                   {BackwardPrefetch::none, "none"})
STEPSIM_ENUM_NAMES(CompileMode, {CompileMode::default_, "default"}, {CompileMode::reduce_overhead, "reduce-overhead"},
                   {CompileMode::max_autotune, "max-autotune"},
                   {CompileMode::max_autotune_no_cudagraphs, "max-autotune-no-cudagraphs"})
STEPSIM_ENUM_NAMES(DdpCompileStrategy, {DdpCompileStrategy::ddp_optimizer, "ddp_optimizer"},
                   {DdpCompileStrategy::python_reducer, "python_reducer"},
                   {DdpCompileStrategy::no_optimization, "none"})
STEPSIM_ENUM_NAMES(Fp8Recipe, {Fp8Recipe::tensorwise, "tensorwise"}, {Fp8Recipe::rowwise, "rowwise"})
STEPSIM_ENUM_NAMES(CheckpointMode, {CheckpointMode::sync, "sync"}, {CheckpointMode::async, "async"})
STEPSIM_ENUM_NAMES(NcclAlgo, {NcclAlgo::auto_, "auto"}, {NcclAlgo::ring, "ring"}, {NcclAlgo::tree, "tree"},
                   {NcclAlgo::nvls, "nvls"}, {NcclAlgo::collnet, "collnet"})
STEPSIM_ENUM_NAMES(NcclProto, {NcclProto::auto_, "auto"}, {NcclProto::ll, "ll"}, {NcclProto::ll128, "ll128"},
                   {NcclProto::simple, "simple"})
STEPSIM_ENUM_NAMES(Switch, {Switch::auto_, "auto"}, {Switch::on, "on"}, {Switch::off, "off"})
STEPSIM_ENUM_NAMES(StragglerTarget, {StragglerTarget::gpu, "gpu"}, {StragglerTarget::host, "host"},
                   {StragglerTarget::rank, "rank"}, {StragglerTarget::link, "link"})

#undef STEPSIM_ENUM_NAMES

}  // namespace stepsim
