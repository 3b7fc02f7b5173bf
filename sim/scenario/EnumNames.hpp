#pragma once
// The YAML spelling of every Scenario enum (docs/scenario.md): the enumerator's name, except that `default_` and
// `auto_` are spelled `default` and `auto`, and PipelineSchedule::one_f_one_b is `1f1b`.
//
// The scenario loader reads and `stepsim explain` writes these strings; reports can print them with
// toString(). enumNames(E{}) lists the allowed spellings of E in declaration order.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/base/Scenario.hpp"

namespace stepsim {

template <class E>
struct EnumName {
    E value;
    std::string_view name;
};

std::span<const EnumName<MlpKind>> enumNames(MlpKind);
std::span<const EnumName<ModelImplementation>> enumNames(ModelImplementation);
std::span<const EnumName<NormKind>> enumNames(NormKind);
std::span<const EnumName<PositionEmbedding>> enumNames(PositionEmbedding);
std::span<const EnumName<QkvLayout>> enumNames(QkvLayout);
std::span<const EnumName<LossDtype>> enumNames(LossDtype);
std::span<const EnumName<DType>> enumNames(DType);
std::span<const EnumName<Optimizer>> enumNames(Optimizer);
std::span<const EnumName<OptimizerImpl>> enumNames(OptimizerImpl);
std::span<const EnumName<Checkpointing>> enumNames(Checkpointing);
std::span<const EnumName<DataParallel>> enumNames(DataParallel);
std::span<const EnumName<PipelineSchedule>> enumNames(PipelineSchedule);
std::span<const EnumName<RankOrder>> enumNames(RankOrder);
std::span<const EnumName<CommHook>> enumNames(CommHook);
std::span<const EnumName<BackwardPrefetch>> enumNames(BackwardPrefetch);
std::span<const EnumName<CompileMode>> enumNames(CompileMode);
std::span<const EnumName<DdpCompileStrategy>> enumNames(DdpCompileStrategy);
std::span<const EnumName<Fp8Recipe>> enumNames(Fp8Recipe);
std::span<const EnumName<CheckpointMode>> enumNames(CheckpointMode);
std::span<const EnumName<NcclAlgo>> enumNames(NcclAlgo);
std::span<const EnumName<NcclProto>> enumNames(NcclProto);
std::span<const EnumName<Switch>> enumNames(Switch);
std::span<const EnumName<StragglerTarget>> enumNames(StragglerTarget);

// The YAML spelling of `e` (every enumerator has one).
template <class E>
std::string_view toString(E e) {
    for (const auto& n : enumNames(E{}))
        if (n.value == e) return n.name;
    return "?";
}

// The enumerator spelled `s`, or nothing.
template <class E>
std::optional<E> enumFromString(std::string_view s) {
    for (const auto& n : enumNames(E{}))
        if (n.name == s) return n.value;
    return std::nullopt;
}

// "a, b, c": the allowed spellings, for error messages.
template <class E>
std::string allowedNames() {
    std::string out;
    for (const auto& n : enumNames(E{})) {
        if (!out.empty()) out += ", ";
        out += n.name;
    }
    return out;
}

}  // namespace stepsim
