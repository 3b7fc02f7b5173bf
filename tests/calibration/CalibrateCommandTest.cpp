// `stepsim calibrate`, `stepsim calibrate fit` and `stepsim profile show` (sim/cli/CalibrateCommand.hpp),
// driven through CLI11 in-process.
#include "sim/cli/CalibrateCommand.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/base/InputError.hpp"
#include "sim/scenario/ProfileYaml.hpp"

namespace stepsim {
namespace {

namespace fs = std::filesystem;
const std::string kRaw = std::string(STEPSIM_SOURCE_DIR) + "/calibration/profiles/h200x2/raw/";

void parse(std::vector<std::string> args) {
    CLI::App app{"test"};
    app.require_subcommand(1);
    addCalibrateCommands(app);
    std::vector<const char*> argv = {"stepsim"};
    for (auto& a : args) argv.push_back(a.c_str());
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
}

std::string captureStdout(const std::function<void()>& f) {
    std::ostringstream s;
    auto* old = std::cout.rdbuf(s.rdbuf());
    try {
        f();
    } catch (...) {
        std::cout.rdbuf(old);
        throw;
    }
    std::cout.rdbuf(old);
    return s.str();
}

TEST(CalibrateCommand, FitWritesAReadableProfileAndReport) {
    const fs::path out = fs::temp_directory_path() / "stepsim_calibrate_fit_test.yaml";
    fs::remove(out);
    const std::string text = captureStdout(
        [&] { parse({"calibrate", "fit", kRaw + "bench.jsonl", kRaw + "torch.jsonl", "-o", out.string(), "--name", "t"}); });
    const HardwareProfile p = loadProfile(out);
    EXPECT_EQ(p.name, "t");
    EXPECT_FALSE(p.collectives.empty());
    EXPECT_TRUE(fs::exists(out.string() + ".fit.json"));
    EXPECT_NE(text.find("held-out check"), std::string::npos) << text;
}

// `calibrate fit --manifest`: the raw files come from the manifest (paths relative to its folder, '#' lines skipped),
// and the profile says so in its source and first line.
TEST(CalibrateCommand, FitReadsTheRawFilesOfAManifest) {
    const fs::path dir = fs::temp_directory_path() / "stepsim_calibrate_manifest";
    fs::remove_all(dir);
    fs::create_directories(dir / "raw");
    fs::copy_file(kRaw + "bench.jsonl", dir / "raw" / "bench.jsonl");
    fs::copy_file(kRaw + "torch.jsonl", dir / "raw" / "torch.jsonl");
    std::ofstream(dir / "inputs.txt") << "# the harness, then PyTorch's kernels\nraw/bench.jsonl\n\nraw/torch.jsonl\n";
    const fs::path out = dir / "profile.yaml";
    const std::string manifest = (dir / "inputs.txt").string();
    captureStdout([&] { parse({"calibrate", "fit", "--manifest", manifest, "-o", out.string(), "--name", "t"}); });
    const HardwareProfile p = loadProfile(out);
    EXPECT_EQ(p.name, "t");
    EXPECT_FALSE(p.collectives.empty());
    EXPECT_EQ(p.source, "stepsim calibrate fit --manifest " + manifest + " --name t -o " + out.string());
    std::string first;
    std::getline(std::ifstream(out), first);
    EXPECT_EQ(first, "# Fitted by stepsim calibrate fit from the 2 raw files listed in " + manifest);
    const nlohmann::json report = nlohmann::json::parse(std::ifstream(out.string() + ".fit.json"));
    EXPECT_EQ(report.at("inputs"), nlohmann::json({(dir / "raw/bench.jsonl").string(), (dir / "raw/torch.jsonl").string()}));
}

// A manifest that lists a file that is not there: an InputError naming the manifest's line; nothing is written.
TEST(CalibrateCommand, FitOfAManifestWithAMissingFileIsAnInputError) {
    const fs::path dir = fs::temp_directory_path() / "stepsim_calibrate_manifest_missing";
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "inputs.txt") << kRaw << "bench.jsonl\n# comment\nraw/gone.jsonl\n";
    const fs::path out = dir / "profile.yaml";
    try {
        captureStdout([&] { parse({"calibrate", "fit", "--manifest", (dir / "inputs.txt").string(), "-o", out.string()}); });
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("inputs.txt:3: raw/gone.jsonl"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(out));
}

// The raw files are listed or in a manifest: one of the two, not both.
TEST(CalibrateCommand, FitTakesRawFilesOrAManifest) {
    const std::string out = (fs::temp_directory_path() / "stepsim_calibrate_neither.yaml").string();
    EXPECT_THROW(parse({"calibrate", "fit", "-o", out}), CLI::RequiredError);
    EXPECT_THROW(parse({"calibrate", "fit", kRaw + "bench.jsonl", "--manifest", "inputs.txt", "-o", out}),
                 CLI::ExcludesError);
}

TEST(CalibrateCommand, MissingHarnessIsAClearError) {
    try {
        captureStdout([] { parse({"calibrate", "--harness", "/nonexistent/stepsim-bench", "--out-dir",
                                  (fs::temp_directory_path() / "stepsim_cal_none").string()}); });
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("was not found"), std::string::npos) << e.what();
    }
}

TEST(CalibrateCommand, NoGpuIsAClearError) {
    // A harness that behaves as stepsim-bench does on a machine without a GPU: message, exit status 2.
    const fs::path fake = fs::temp_directory_path() / "stepsim_fake_bench.sh";
    std::ofstream(fake) << "#!/bin/sh\necho 'stepsim-bench: no CUDA GPU is visible here' >&2\nexit 2\n";
    fs::permissions(fake, fs::perms::owner_all);
    try {
        captureStdout([&] { parse({"calibrate", "--harness", fake.string(), "--no-pytorch", "--out-dir",
                                   (fs::temp_directory_path() / "stepsim_cal_nogpu").string()}); });
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("no GPU"), std::string::npos) << e.what();
    }
}

// The whole calibration with stand-ins on a machine without a GPU: a harness that writes the committed H200
// measurements, and a "python" that runs the stage runner (calibration/bench/stages.py) with the real interpreter,
// says there are two GPUs, and answers each stage with the committed file the shipped profiles were fitted from (by
// the raw file the stage writes). Every stage of calibration/bench/stages.txt runs, the manifest lists each file, and
// the profile takes its sections from them: the power state, DDP's host cost, the optimizer-state rates, the norms,
// log-softmax, checkpointing's and accumulation's host costs, the model-variant kernels, the I/O rates, compile and
// FP8, and with two GPUs the kernels and gaps beside NCCL and the GPUs' and hosts' spread.
TEST(CalibrateCommand, RunsEveryStageAndFitsTheManifestItWrote) {
    const fs::path dir = fs::temp_directory_path() / "stepsim_cal_stages", out = dir / "out";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string x1 = std::string(STEPSIM_SOURCE_DIR) + "/calibration/profiles/h200x1/raw/";
    const fs::path harness = dir / "bench.sh", python = dir / "python.sh";
    std::ofstream(harness) << "#!/bin/sh\ncp '" << kRaw << "bench.jsonl' \"$2\"\n";
    std::ofstream py(python);
    py << "#!/bin/sh\n"
          "case $(basename \"$1\") in stages.py) exec python3 \"$@\";; esac\n"
          "if [ \"$1\" = -c ]; then echo 2; exit 0; fi\n"
          "if [ \"$1\" = -m ]; then shift 5; fi\n"
          "if [ \"$(basename \"$1\")\" = variant_raw.py ]; then cp '" << kRaw << "model_variants_kernels.jsonl' \"$4\"; exit 0; fi\n"
          "R='" << kRaw << "'; X='" << x1 << "'\n"
          "case $(basename \"$3\") in\n"
          "  torch.jsonl) cp $R/torch.jsonl \"$3\";;\n"
          "  torch_norms.jsonl) cp $R/torch_norms-1.jsonl \"$3\";;\n"
          "  torch_log_softmax.jsonl) cp $R/torch_log_softmax.jsonl \"$3\";;\n"
          "  torch_adamw_gpt.jsonl) cp $R/torch_adamw_gpt.jsonl \"$3\";;\n"
          "  attention_default.jsonl) cp $R/attention_default-2.jsonl \"$3\";;\n"
          "  gemm_training_shapes.jsonl) cp $X/gemm_training_shapes_step.jsonl \"$3\";;\n"
          "  gemm_training_shapes_fp16.jsonl) cp $R/gemm_training_shapes_fp16.jsonl \"$3\";;\n"
          "  host_overhead.jsonl) cat $R/host_overhead_1gpu.jsonl $R/checkpoint_host-1.jsonl "
          "$R/accumulate_host-1.jsonl > \"$3\";;\n"
          "  ddp_host.jsonl) cp $R/ddp_host.jsonl \"$3\";;\n"
          "  ddp_find_unused.jsonl) cp $R/ddp_find_unused_memory_check.jsonl \"$3\";;\n"
          "  kernel_gaps.jsonl) cp $X/kernel_gaps-2.jsonl \"$3\";;\n"
          "  gemm_gaps_shapes.jsonl) cp $X/gemm_gaps-1.jsonl \"$3\";;\n"
          "  power_duty.jsonl) cat $R/power_duty-2.jsonl $R/power_loaded.jsonl > \"$3\";;\n"
          "  compile_kernels.jsonl) cat $R/compile_kernels-1.jsonl $R/compile_kernels-2.jsonl > \"$3\";;\n"
          "  compile_parts.jsonl) cp $R/compile_parts.jsonl \"$3\";;\n"
          "  io_transfer.jsonl) cp $R/io_transfer.jsonl \"$3\";;\n"
          "  fp8_bench.jsonl) cat $R/fp8_bench.jsonl $R/fp8_host.jsonl > \"$3\";;\n"
          "  gemm_alignment.jsonl) cp $R/gemm_alignment.jsonl \"$3\";;\n"
          "  model_variants.jsonl) :;;\n"
          "  host_overhead_ddp.jsonl) grep '\"ddp\": true' $R/host_overhead-3.jsonl > \"$3\";;\n"
          "  kernel_gaps_ddp25mib.jsonl) cp $R/kernel_gaps_ddp25mib.jsonl \"$3\";;\n"
          "  gemm_gaps_beside_nccl.jsonl) cp $R/gemm_gaps_beside.jsonl \"$3\";;\n"
          "  interference_training.jsonl) cp $R/interference_training.jsonl \"$3\";;\n"
          "  interference_training_resident.jsonl) cp $R/interference_training_resident.jsonl \"$3\";;\n"
          "  interference_training_shapes.jsonl) cp $R/interference_training_shapes_waiting.jsonl \"$3\";;\n"
          "  device_speed.jsonl) cp $R/device_speed-1.jsonl \"$3\";;\n"
          "  host_spread.jsonl) cp $R/host_spread.jsonl \"$3\";;\n"
          "  *) exit 1;;\n"
          "esac\n";
    py.close();
    for (const fs::path& f : {harness, python}) fs::permissions(f, fs::perms::owner_all);
    const std::string runner = std::string(STEPSIM_SOURCE_DIR) + "/calibration/bench/stages.py";
    const std::string log = captureStdout([&] {
        parse({"calibrate", "--harness", harness.string(), "--python", python.string(), "--stage-runner", runner,
               "--out-dir", out.string()});
    });
    // every stage of stages.txt wrote its file, and the manifest lists them all
    std::vector<std::string> listed;
    std::ifstream manifest(out / "inputs.txt");
    for (std::string line; std::getline(manifest, line);)
        if (!line.empty() && line[0] != '#') listed.push_back(line);
    EXPECT_EQ(listed.size(), 28u) << log;
    for (const std::string& f : listed) EXPECT_TRUE(fs::exists(out / f)) << f;
    std::ifstream stages(out / "stages.jsonl");  // each stage's command, exit status and seconds
    int ran = 0;
    for (std::string line; std::getline(stages, line);) ran += nlohmann::json::parse(line).at("exit") == 0;
    EXPECT_EQ(ran, 28);
    const HardwareProfile p = loadProfile(out / "profile.yaml");
    const HardwareProfile base = builtinProfile("h200-sxm");
    EXPECT_FALSE(p.attention.points.empty());
    EXPECT_TRUE(p.power.modelled);                                              // power_duty.py
    EXPECT_EQ(p.gemm.at("bf16").unaligned.alignment, 8);                        // gemm_alignment.py
    EXPECT_NE(p.launch.ddp_hook_host_us, base.launch.ddp_hook_host_us);         // ddp_host.py
    EXPECT_NE(p.launch.checkpoint_host_us.full_backward_us, base.launch.checkpoint_host_us.full_backward_us);
    EXPECT_NE(p.launch.step_gap_us.gemm_us, base.launch.step_gap_us.gemm_us);
    EXPECT_NE(p.launch.forward_host.median_us, base.launch.forward_host.median_us);
    EXPECT_NE(p.launch.nccl_host.median_us, base.launch.nccl_host.median_us);  // from the DDP run
    for (const char* k : {"optimizer", "optimizer_foreach", "log_softmax_forward", "bias_grad", "rope"})
        EXPECT_EQ(p.memory.kernels.count(k), 1u) << k;
    EXPECT_TRUE(p.io.measured());                                               // io_transfer.py
    EXPECT_TRUE(p.compile.measured);                                            // compile_kernels.py
    EXPECT_NEAR(p.interference.beside_waiting.gemm, 1.565, 0.001);             // two GPUs: beside NCCL by class
    EXPECT_GT(p.jitter.device_compute_cv, 0.005);                              // and the GPUs' spread
    EXPECT_EQ(p.jitter.host_rank_cv, 0.0);                                    // and the hosts' lasting spread (raw/host_spread.jsonl)
    EXPECT_EQ(p.interference.gemm_by_shape.size(), 152u);                      // each listed GEMM's slowdown
    EXPECT_EQ(p.launch.gemm_gap_by_shape.size(), 152u);                        // and gap
    EXPECT_GT(p.launch.step_gap_beside_transfer_us.gemm_us, 1.2 * p.launch.step_gap_us.gemm_us);
    EXPECT_EQ(p.launch.gemm_gap_beside_transfer_by_shape.size(), 152u);
    const nlohmann::json report = nlohmann::json::parse(std::ifstream(out / "profile.yaml.fit.json"));
    EXPECT_EQ(report.at("gemm").at("bf16").at("source"), "pytorch-step");       // gemm_training_shapes.py --step
    EXPECT_EQ(report.at("gemm").at("fp16").at("source"), "pytorch-step");       // ... --step --dtype fp16
    // `stepsim calibrate fit --manifest OUT_DIR/inputs.txt` reproduces the profile
    const fs::path refit = dir / "refit.yaml";
    captureStdout([&] { parse({"calibrate", "fit", "--manifest", (out / "inputs.txt").string(), "--name", "calibrated",
                               "-o", refit.string()}); });
    HardwareProfile again = loadProfile(refit), first = p;
    again.source = first.source = "";  // the command that made each
    EXPECT_EQ(writeProfile(again), writeProfile(first));
}

// --only picks stages by name; an unknown name is the runner's error (nothing fitted).
TEST(CalibrateCommand, OnlyRunsTheNamedStages) {
    const fs::path dir = fs::temp_directory_path() / "stepsim_cal_only", out = dir / "out";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path harness = dir / "bench.sh";
    std::ofstream(harness) << "#!/bin/sh\ncp '" << kRaw << "bench.jsonl' \"$2\"\n";
    fs::permissions(harness, fs::perms::owner_all);
    const std::string runner = std::string(STEPSIM_SOURCE_DIR) + "/calibration/bench/stages.py";
    captureStdout([&] {
        parse({"calibrate", "--harness", harness.string(), "--python", "python3", "--stage-runner", runner, "--only",
               "harness", "--out-dir", out.string()});
    });
    std::ifstream manifest(out / "inputs.txt");
    std::string line, last;
    int n = 0;
    while (std::getline(manifest, line))
        if (!line.empty() && line[0] != '#') ++n, last = line;
    EXPECT_EQ(n, 1);
    EXPECT_EQ(last, "bench.jsonl");
    EXPECT_THROW(captureStdout([&] {
                     parse({"calibrate", "--harness", harness.string(), "--python", "python3", "--stage-runner", runner,
                            "--only", "no_such_stage", "--out-dir", (dir / "out2").string()});
                 }),
                 InputError);
}

TEST(CalibrateCommand, ProfileShowPutsRatesBesideDatasheetPeaks) {
    const std::string text = captureStdout([] { parse({"profile", "show", "h200-sxm"}); });
    EXPECT_NE(text.find("datasheet"), std::string::npos) << text;
    EXPECT_NE(text.find("989"), std::string::npos) << text;   // BF16 dense peak
    EXPECT_NE(text.find("4800"), std::string::npos) << text;  // HBM
    // each memory-bound kernel kind's rate: the foreach AdamW step's over bf16 states (a pass's fixed cost)
    EXPECT_NE(text.find("optimizer_foreach_bf16 (GB/s)"), std::string::npos) << text;
    EXPECT_NE(text.find("64% of HBM, +21.5 us a launch"), std::string::npos) << text;
    // the norms' grid (raw/torch_norms-1.jsonl, -2): LayerNorm fp32 kernels at 8192 rows of 2048
    const auto norms = text.find("LayerNorm fp32 kernels: 28 sizes, 2048-16384 rows x 768-8192; at 8192 x 2048 forward");
    EXPECT_NE(norms, std::string::npos) << text;
    EXPECT_GT(norms, text.find("optimizer_foreach_bf16 (GB/s)")) << text;  // in the table, after the kernel kinds
    // the slowdowns beside NCCL by class and state, moving by size, and the GPUs' spread
    EXPECT_NE(text.find("beside an NCCL kernel waiting for its peers: GEMM x1.42, attention x1.15, memory-bound x1.14"),
              std::string::npos) << text;
    EXPECT_NE(text.find("moving   128 MiB: GEMM x1.40, attention x1.17, memory-bound x1.26"), std::string::npos) << text;
    EXPECT_NE(text.find("moving     4 MiB: GEMM x1.02, attention -, memory-bound x1.05"), std::string::npos) << text;
    EXPECT_NE(text.find("speed spread at the power limit (cv): compute 0.98%"), std::string::npos) << text;
    EXPECT_NE(text.find("host-to-host speed spread between training processes (cv): 0.0%"), std::string::npos) << text;
    // the datasheet base has no GEMM measured by shape; the measured profile has the validation's 288
    EXPECT_EQ(text.find("GEMMs by shape"), std::string::npos) << text;
    const std::string measured = captureStdout([] { parse({"profile", "show", "h200x2"}); });
    EXPECT_NE(measured.find("GEMMs by shape, beside a resident NCCL kernel: 288 shapes, x1.01 (4096x50304x2560) to "
                            "x1.94 (1792x1792x8192)"),
              std::string::npos) << measured;
}

TEST(CalibrateCommand, ProfileShowOfAnUnknownNameIsAnInputError) {
    EXPECT_THROW(captureStdout([] { parse({"profile", "show", "no-such-profile"}); }), InputError);
}

}  // namespace
}  // namespace stepsim
