// Reading raw calibration JSON Lines (sim/fit/RawData.hpp): typed records, and errors that name the
// file, the line and the key.
#include "sim/fit/RawData.hpp"

#include <filesystem>
#include <fstream>

#include <tuple>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"

namespace stepsim {
namespace {

std::filesystem::path writeTemp(const std::string& name, const std::string& text) {
    const auto p = std::filesystem::temp_directory_path() / name;
    std::ofstream(p) << text;
    return p;
}

// The InputError readRaw throws on `p`, or a note that it threw none.
std::string readError(const std::filesystem::path& p) {
    try {
        readRaw({p});
    } catch (const InputError& e) {
        return e.what();
    }
    return "no InputError";
}

TEST(RawData, ReadsEachKind) {
    const auto p = writeTemp("stepsim_raw_ok.jsonl",
        R"({"kind":"metadata","gpus":[{"name":"NVIDIA H200","sms":132,"memory_gib":139.8},{"name":"NVIDIA H200"}]})" "\n"
        R"({"kind":"collective","op":"all_reduce","dtype":"bf16","bytes":1024,"ranks":2,"algo":"Ring","proto":"LL","time_us":{"median":9.5,"p99":12}})" "\n"
        R"({"kind":"gemm","dtype":"fp8_e4m3","fast_accum":true,"m":4096,"n":4096,"k":4096,"time_us":{"median":100}})" "\n"
        R"({"kind":"launch","op":"device_gap","time_us":{"median":1.5,"p99":1.6}})" "\n"
        R"({"kind":"skipped","group":"gemm","what":"x"})" "\n"
        R"({"kind":"error","group":"gemm","message":"boom"})" "\n");
    const RawData d = readRaw({p});
    EXPECT_EQ(d.gpu_model, "NVIDIA H200");
    EXPECT_EQ(d.sms, 132);
    EXPECT_EQ(d.gpu_count, 2);
    ASSERT_EQ(d.collectives.size(), 1u);
    EXPECT_EQ(d.collectives[0].algo, "ring");  // profiles spell NCCL's names in lower case
    EXPECT_EQ(d.collectives[0].proto, "ll");
    EXPECT_DOUBLE_EQ(d.collectives[0].time.p99, 12.0);
    ASSERT_EQ(d.gemms.size(), 1u);
    EXPECT_NEAR(d.gemms[0].tflops, 2.0 * 4096.0 * 4096 * 4096 / 100e6, 1e-9);
    EXPECT_EQ(d.gemms[0].fast_accum, true);
    EXPECT_EQ(d.skipped, 1);
    ASSERT_EQ(d.errors.size(), 1u);
}

TEST(RawData, ReadsHostOverheadRecords) {
    const auto p = writeTemp("stepsim_raw_host.jsonl",
        R"({"kind":"host_overhead","ddp":true,"per_layer":{"backward_us":1655.3,"param_tensors":8},)"
        R"("forward_us_per_kernel":34.4,"backward_us_per_kernel":37.5,"optimizer_us_per_param_tensor":11.7})" "\n");
    const RawData d = readRaw({p});
    ASSERT_EQ(d.host.size(), 1u);
    EXPECT_TRUE(d.host[0].ddp);
    EXPECT_DOUBLE_EQ(d.host[0].forward_us_per_kernel, 34.4);
    EXPECT_DOUBLE_EQ(d.host[0].backward_us_per_layer, 1655.3);
    EXPECT_DOUBLE_EQ(d.host[0].param_tensors_per_layer, 8.0);
}

TEST(RawData, HostOverheadWithABadPerLayerFieldNamesTheKey) {
    const auto p = writeTemp("stepsim_raw_host_bad.jsonl",
        R"({"kind":"host_overhead","per_layer":{"backward_us":"x"},"forward_us_per_kernel":1,)"
        R"("backward_us_per_kernel":1,"optimizer_us_per_param_tensor":1})" "\n");
    const std::string error = readError(p);
    EXPECT_NE(error.find(":1: per_layer.backward_us"), std::string::npos) << error;
}

// The simulator sums a training step's gaps, so the fit needs their mean; a record without one is an error, not
// a silent median.
TEST(RawData, StepGapWithoutItsMeanNamesTheKey) {
    const auto p = writeTemp("stepsim_raw_gap.jsonl",
        R"({"kind":"launch","op":"step_gap_gemm","time_us":{"median":2.2,"mean":2.3}})" "\n"
        R"({"kind":"launch","op":"step_gap_memory","time_us":{"median":1.7}})" "\n");
    const std::string error = readError(p);
    EXPECT_NE(error.find("stepsim_raw_gap.jsonl:2: time_us.mean"), std::string::npos) << error;
}

// gemm_training_shapes.py --step keeps two times per shape; the fit takes the back-to-back one (it matched the
// GEMMs of real training steps), not time_us (alternated with memory-bound adds).
TEST(RawData, StepModeGemmTakesTheBackToBackTime) {
    const auto p = writeTemp("stepsim_raw_step.jsonl",
        R"({"kind":"gemm","source":"pytorch-step","dtype":"bf16","m":8192,"n":8192,"k":2048,"time_us":{"median":395.7},"back_to_back_us":367.6})" "\n");
    const RawData d = readRaw({p});
    ASSERT_EQ(d.gemms.size(), 1u);
    EXPECT_EQ(d.gemms[0].source, "pytorch-step");
    EXPECT_DOUBLE_EQ(d.gemms[0].time.median, 367.6);
    EXPECT_NEAR(d.gemms[0].tflops, 2.0 * 8192.0 * 8192 * 2048 / 367.6e6, 1e-9);
}

TEST(RawData, StepModeGemmWithoutItsBackToBackTimeNamesTheKey) {
    const auto p = writeTemp("stepsim_raw_step_bad.jsonl",
        R"({"kind":"gemm","source":"pytorch-step","dtype":"bf16","m":8192,"n":8192,"k":2048,"time_us":{"median":395.7}})" "\n");
    const std::string error = readError(p);
    EXPECT_NE(error.find("stepsim_raw_step_bad.jsonl:1: back_to_back_us"), std::string::npos) << error;
}

// Records without with_comm_us (the all-reduce chain did not cover the calls) carry nothing to fit.
TEST(RawData, UncoveredInterferenceTrainingRecordsAreSkipped) {
    const auto p = writeTemp("stepsim_raw_itrain.jsonl",
        R"({"kind":"interference_training","mode":"waiting","class":"gemm","op":"a","rank":0,"alone_us":100,"with_comm_us":142,"comm_bytes":26214400})" "\n"
        R"({"kind":"interference_training","mode":"waiting","class":"gemm","op":"a","rank":1,"alone_us":100,"covered_reps":5})" "\n");
    const RawData d = readRaw({p});
    ASSERT_EQ(d.step_interference.size(), 1u);
    EXPECT_EQ(d.step_interference[0].mode, "waiting");
    EXPECT_DOUBLE_EQ(d.step_interference[0].with_comm_us, 142.0);
    EXPECT_DOUBLE_EQ(d.step_interference[0].comm_bytes, 26214400.0);
}

TEST(RawData, InterferenceTrainingKeepsAGemmsShape) {
    const auto p = writeTemp("stepsim_raw_itrain_shape.jsonl",
        R"({"kind":"interference_training","mode":"waiting","class":"gemm","op":"wgrad 2048x2048x8192","rank":0,"alone_us":86.5,"with_comm_us":160.9,"m":2048,"n":2048,"k":8192})" "\n"
        R"({"kind":"interference_training","mode":"waiting","class":"gemm","op":"b","rank":0,"alone_us":100,"with_comm_us":142})" "\n");
    const RawData d = readRaw({p});
    ASSERT_EQ(d.step_interference.size(), 2u);
    EXPECT_EQ(d.step_interference[0].m, 2048);
    EXPECT_EQ(d.step_interference[0].n, 2048);
    EXPECT_EQ(d.step_interference[0].k, 8192);
    EXPECT_EQ(d.step_interference[1].m, 0);
}

TEST(RawData, GemmGapRecordsKeepTheirShape) {
    const auto p = writeTemp("stepsim_raw_gemm_gap.jsonl",
        R"({"kind":"launch","op":"step_gap_gemm_shape","form":"wgrad","m":2048,"n":2048,"k":8192,"time_us":{"mean":3.31,"median":3.25,"n":11}})" "\n");
    const RawData d = readRaw({p});
    ASSERT_EQ(d.launches.size(), 1u);
    EXPECT_EQ(std::tie(d.launches[0].m, d.launches[0].n, d.launches[0].k), std::tuple(2048L, 2048L, 8192L));
    EXPECT_DOUBLE_EQ(d.launches[0].time.mean, 3.31);
    const auto bad = writeTemp("stepsim_raw_gemm_gap_bad.jsonl",
        R"({"kind":"launch","op":"step_gap_gemm_shape","m":2048,"n":2048,"time_us":{"mean":3.31,"median":3.25}})" "\n");
    const std::string error = readError(bad);
    EXPECT_NE(error.find("stepsim_raw_gemm_gap_bad.jsonl:1: k: missing"), std::string::npos) << error;
}

TEST(RawData, AShapeOnAKernelOtherThanAGemmNamesTheKey) {
    const auto p = writeTemp("stepsim_raw_itrain_shape_bad.jsonl",
        R"({"kind":"interference_training","mode":"waiting","class":"memory","op":"add","alone_us":10,"with_comm_us":12,"m":8192,"n":2048,"k":1})" "\n");
    const std::string error = readError(p);
    EXPECT_NE(error.find("stepsim_raw_itrain_shape_bad.jsonl:1: m: a shape (m, n, k) is a GEMM's; class is memory"),
              std::string::npos) << error;
}

TEST(RawData, InterferenceTrainingWithAnUnknownModeNamesTheKey) {
    const auto p = writeTemp("stepsim_raw_itrain_bad.jsonl",
        R"({"kind":"interference_training","mode":"idle","class":"gemm","op":"a","alone_us":100,"with_comm_us":142})" "\n");
    const std::string error = readError(p);
    EXPECT_NE(error.find("stepsim_raw_itrain_bad.jsonl:1: mode"), std::string::npos) << error;
}

// A resident record (interference_training.py --modes resident) holds the all-reduce's own slowdown beside the
// calls, not the calls' times; it is read apart, and a missing or non-positive ratio is an error naming its key.
TEST(RawData, ResidentAllReduceRecordsAreRead) {
    const auto p = writeTemp("stepsim_raw_itrain_resident.jsonl",
        R"({"kind":"interference_training","mode":"resident","class":"gemm","op":"forward 8192x8192x2048","rank":0,"alone_us":480.2,"calls":20,"comm_bytes":67108864,"comm_alone_us":251.3,"comm_lead_us":24.0,"comm_beside_us":250.1,"comm_slowdown":1.098,"covered_reps":5})" "\n");
    const RawData d = readRaw({p});
    EXPECT_TRUE(d.step_interference.empty());
    ASSERT_EQ(d.comm_beside.size(), 1u);
    EXPECT_EQ(d.comm_beside[0].cls, "gemm");
    EXPECT_DOUBLE_EQ(d.comm_beside[0].comm_bytes, 67108864);
    EXPECT_DOUBLE_EQ(d.comm_beside[0].comm_alone_us, 251.3);
    EXPECT_DOUBLE_EQ(d.comm_beside[0].slowdown, 1.098);
    const auto bad = writeTemp("stepsim_raw_itrain_resident_bad.jsonl",
        R"({"kind":"interference_training","mode":"resident","class":"gemm","op":"a","comm_bytes":67108864,"comm_alone_us":251.3,"comm_slowdown":0})" "\n");
    const std::string error = readError(bad);
    EXPECT_NE(error.find("stepsim_raw_itrain_resident_bad.jsonl:1: comm_slowdown"), std::string::npos) << error;
    const auto missing = writeTemp("stepsim_raw_itrain_resident_missing.jsonl",
        R"({"kind":"interference_training","mode":"resident","class":"gemm","op":"a","comm_bytes":67108864,"comm_alone_us":251.3})" "\n");
    EXPECT_NE(readError(missing).find("comm_slowdown"), std::string::npos) << readError(missing);
}

TEST(RawData, DeviceSpeedRecordsAreRead) {
    const auto p = writeTemp("stepsim_raw_dspeed.jsonl",
        R"({"kind":"device_speed","set":"s#0","rank":1,"gpu":"NVIDIA H200","gemm_tflops":657.5,"memory_gbps":4390.3})" "\n");
    const RawData d = readRaw({p});
    ASSERT_EQ(d.device_speed.size(), 1u);
    EXPECT_EQ(d.device_speed[0].set, "s#0");
    EXPECT_EQ(d.device_speed[0].rank, 1);
    EXPECT_DOUBLE_EQ(d.device_speed[0].gemm_tflops, 657.5);
}

TEST(RawData, DeviceSpeedWithoutARateNamesTheKey) {
    const auto p = writeTemp("stepsim_raw_dspeed_bad.jsonl",
        R"({"kind":"device_speed","set":"s#0","rank":0,"memory_gbps":4390.3})" "\n");
    const std::string error = readError(p);
    EXPECT_NE(error.find("stepsim_raw_dspeed_bad.jsonl:1: gemm_tflops"), std::string::npos) << error;
}

TEST(RawData, HostSpreadWindowsAreRead) {
    const auto p = writeTemp("stepsim_raw_hspread.jsonl",
        R"({"kind":"host_spread","procs":2,"window_s":0.5,"windows":[[13.8,14.1],[14.9,12.5]]})" "\n");
    const RawData d = readRaw({p});
    ASSERT_EQ(d.host_spread.size(), 1u);
    EXPECT_DOUBLE_EQ(d.host_spread[0].window_s, 0.5);
    ASSERT_EQ(d.host_spread[0].windows.size(), 2u);
    EXPECT_EQ(d.host_spread[0].windows[1], (std::vector<double>{14.9, 12.5}));
}

// A window needs one positive step time per process: a short window or a zero names the record's line and key.
TEST(RawData, HostSpreadWindowOfTheWrongSizeNamesTheKey) {
    for (const char* windows : {"[[13.8,14.1],[14.9]]", "[[13.8,0]]", "[]"}) {
        const auto p = writeTemp("stepsim_raw_hspread_bad.jsonl",
            std::string(R"({"kind":"host_spread","procs":2,"window_s":0.5,"windows":)") + windows + "}\n");
        const std::string error = readError(p);
        EXPECT_NE(error.find("stepsim_raw_hspread_bad.jsonl:1: windows: expected"), std::string::npos) << error;
    }
}

TEST(RawData, DdpHostRecordsAreRead) {
    const auto p = writeTemp("stepsim_raw_ddphost.jsonl",
        R"({"kind":"ddp_host","id":"d2-x","param_tensors":101,"buckets":14,"gradient_as_bucket_view":true,)"
        R"("plain":{"forward_us":5236,"backward_us":13101,"forward_launches":214,"backward_launches":354},)"
        R"("ddp":{"forward_us":5426,"backward_us":17750,"forward_launches":214,"backward_launches":556}})" "\n");
    const RawData d = readRaw({p});
    ASSERT_EQ(d.ddp_host.size(), 1u);
    EXPECT_EQ(d.ddp_host[0].id, "d2-x");
    EXPECT_TRUE(d.ddp_host[0].gradient_as_bucket_view);
    EXPECT_DOUBLE_EQ(d.ddp_host[0].ddp.backward_us, 17750);
    EXPECT_DOUBLE_EQ(d.ddp_host[0].plain.backward_launches, 354);
}

TEST(RawData, DdpHostWithoutAPhaseNamesTheKey) {
    const auto p = writeTemp("stepsim_raw_ddphost_bad.jsonl",
        R"({"kind":"ddp_host","id":"d2-x","param_tensors":101,"buckets":14,)"
        R"("plain":{"forward_us":5236,"backward_us":13101,"forward_launches":214,"backward_launches":354},)"
        R"("ddp":{"forward_us":5426,"forward_launches":214,"backward_launches":556}})" "\n");
    const std::string error = readError(p);
    EXPECT_NE(error.find("stepsim_raw_ddphost_bad.jsonl:1: ddp.backward_us"), std::string::npos) << error;
}

TEST(RawData, CheckpointHostWithoutAModeNamesTheKey) {
    const auto p = writeTemp("stepsim_raw_ckpt.jsonl",
        R"({"kind":"checkpoint_host","plain_forward_us_per_kernel":25,)"
        R"("selective":{"forward_extra_us_per_layer":300,"backward_extra_us_per_layer":400,"recomputed_kernels_per_layer":2}})" "\n");
    const std::string error = readError(p);
    EXPECT_NE(error.find("stepsim_raw_ckpt.jsonl:1: full"), std::string::npos) << error;
}

TEST(RawData, NotJsonNamesFileAndLine) {
    const auto p = writeTemp("stepsim_raw_bad.jsonl", "{\"kind\":\"run_done\"}\nnot json\n");
    const std::string error = readError(p);
    EXPECT_NE(error.find("stepsim_raw_bad.jsonl:2"), std::string::npos) << error;
}

TEST(RawData, MissingFieldNamesKey) {
    const auto p = writeTemp("stepsim_raw_missing.jsonl", R"({"kind":"gemm","dtype":"bf16","m":1,"n":2,"time_us":{"median":1}})" "\n");
    const std::string error = readError(p);
    EXPECT_NE(error.find(":1: k: missing"), std::string::npos) << error;
}

TEST(RawData, NonPositiveTimeIsRejected) {
    const auto p = writeTemp("stepsim_raw_zero.jsonl", R"({"kind":"launch","op":"x","time_us":{"median":0}})" "\n");
    EXPECT_THROW(readRaw({p}), InputError);
}

TEST(RawData, MissingFileIsAnInputError) {
    EXPECT_THROW(readRaw({std::filesystem::path("/nonexistent/raw.jsonl")}), InputError);
}

}  // namespace
}  // namespace stepsim
