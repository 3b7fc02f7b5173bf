#include "sim/fit/ProfileFit.hpp"

#include "sim/fit/AttentionFit.hpp"
#include "sim/fit/CollectiveFit.hpp"
#include "sim/fit/CompileFit.hpp"
#include "sim/fit/FitState.hpp"
#include "sim/fit/Fp8Fit.hpp"
#include "sim/fit/GemmAlignmentFit.hpp"
#include "sim/fit/GemmFit.hpp"
#include "sim/fit/InterferenceFit.hpp"
#include "sim/fit/JitterFit.hpp"
#include "sim/fit/LaunchFit.hpp"
#include "sim/fit/IoFit.hpp"
#include "sim/fit/LinkFit.hpp"
#include "sim/fit/MemoryFit.hpp"
#include "sim/fit/PowerFit.hpp"

namespace stepsim {
namespace {

// The GPU's model, SMs and memory from the metadata record; the peaks stay the base's (datasheet).
void fitGpu(FitState& s) {
    const RawData& raw = s.raw;
    GpuRates& gpu = s.profile.gpu;
    if (!raw.gpu_model.empty()) gpu.model = raw.gpu_model;
    if (raw.sms) gpu.sms = *raw.sms;
    if (raw.memory_gib) gpu.memory_gib = *raw.memory_gib;
    s.report["gpu"] = {{"model", gpu.model}, {"sms", gpu.sms}, {"memory_gib", gpu.memory_gib},
                       {"gpus_in_run", raw.gpu_count}, {"peaks", "datasheet (base profile)"}};
}

}  // namespace

ProfileFitResult fitProfile(const RawData& raw, const HardwareProfile& base, const std::string& name,
                            const std::string& source) {
    ProfileFitResult out;
    out.profile = base;
    out.profile.name = name;
    out.profile.source = source;
    out.report["profile"] = name;
    out.report["inputs"] = raw.files;
    out.report["run_errors"] = raw.errors;
    out.report["skipped_measurements"] = raw.skipped;
    // The sections in this order: a section may read what an earlier one fitted, and "kept_from_base" lists the
    // fields in the order the sections name them.
    FitState s{raw, out.profile, out.report, {}};
    fitGpu(s);
    out.heldout_collectives = fitCollectives(s);
    out.heldout_gemm = fitGemms(s);
    fitGemmAlignment(s);
    fitMemoryRates(s);
    fitLaunch(s);
    fitAttention(s);
    fitPower(s);
    fitMemoryKernels(s);
    fitNormGrids(s);
    fitFp8(s);
    reportPyTorchKernels(s);
    fitLinks(s);
    fitIo(s);
    fitInterference(s);
    fitTrainingInterference(s);
    fitKernelJitter(s);
    fitDeviceSpeedSpread(s);
    fitHostSpread(s);
    fitCompile(s);
    s.kept.push_back("nccl (NCCL tuning model constants)");
    s.kept.push_back("gpu peaks and hbm_gbps (datasheet)");
    out.report["kept_from_base"] = s.kept;
    return out;
}

}  // namespace stepsim
