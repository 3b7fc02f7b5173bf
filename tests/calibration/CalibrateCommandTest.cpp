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
// measurements, and a "python" that answers each PyTorch script with its committed output (the DDP host run,
// under torch.distributed.run, with the DDP records). Every script beside stepsim_torch_bench.py runs, and the
// profile takes its fields from their files: attention points, PyTorch's GEMM grid, host costs, checkpointing's,
// the step gaps and, as the harness's run had two GPUs, the gaps and the kernels' slowdown beside NCCL, and with
// --gemm-shapes each listed GEMM's.
TEST(CalibrateCommand, RunsEveryPyTorchScriptAndFitsTheirFiles) {
    const fs::path dir = fs::temp_directory_path() / "stepsim_cal_scripts", out = dir / "out";
    fs::remove_all(dir);
    fs::create_directories(dir / "pytorch");
    for (const char* f : {"stepsim_torch_bench.py", "attention_default.py", "gemm_training_shapes.py", "host_overhead.py",
                          "kernel_gaps.py", "interference_training.py", "device_speed.py", "host_spread.py",
                          "gemm_gaps.py"})
        std::ofstream(dir / "pytorch" / f) << "# stand-in\n";
    const std::string x1 = std::string(STEPSIM_SOURCE_DIR) + "/calibration/profiles/h200x1/raw/";
    const std::string gaps = x1 + "kernel_gaps_run12.jsonl", gemms = x1 + "gemm_training_shapes_step_run20.jsonl";
    const std::string fp16 = std::string(kRaw) + "gemm_training_shapes_fp16_run83.jsonl";
    const fs::path harness = dir / "bench.sh", python = dir / "python.sh";
    const std::string shapes = std::string(STEPSIM_SOURCE_DIR) + "/calibration/validation/gemm_shapes.txt";
    std::ofstream(harness) << "#!/bin/sh\ncp '" << kRaw << "bench.jsonl' \"$2\"\n";
    std::ofstream(python)
        << "#!/bin/sh\n"
           "if [ \"$1\" = -m ]; then shift 5; case $(basename \"$1\") in\n"
           "  host_overhead.py) grep '\"ddp\": true' '" << kRaw << "host_overhead_run7.jsonl' >> \"$3\";;\n"
           "  interference_training.py) if [ \"$4 $5\" = '--bucket-mib 4,25,64,128' ]; then\n"
           "    cp '" << kRaw << "interference_training_run21.jsonl' \"$3\"; exit 0; fi\n"
           "    [ \"$4 $5 $6 $7 $8 $9\" = '--modes waiting --bucket-mib 25 --gemm-shapes " << shapes << "' ] || exit 1;\n"
           "    cp '" << kRaw << "interference_training_shapes_waiting_run42.jsonl' \"$3\";;\n"
           "  device_speed.py) cp '" << kRaw << "device_speed_run36.jsonl' \"$3\";;\n"
           "  gemm_gaps.py) [ \"$4 $5 $6 $7\" = '--beside transfer,waiting --gemm-shapes " << shapes << "' ] || exit 1;\n"
           "    cp '" << kRaw << "gemm_gaps_beside_run61.jsonl' \"$3\";;\n"
           "  *) exit 1;; esac; exit 0; fi\n"
           "case $(basename \"$1\") in\n"
           "  stepsim_torch_bench.py) cp '" << kRaw << "torch.jsonl' \"$3\";;\n"
           "  attention_default.py) cp '" << kRaw << "attention_default.jsonl' \"$3\";;\n"
           "  gemm_training_shapes.py) [ \"$4\" = --step ] || exit 1;\n"
           "    if [ \"$5 $6\" = '--dtype fp16' ]; then cp '" << fp16 << "' \"$3\"; else cp '" << gemms << "' \"$3\"; fi;;\n"
           "  host_overhead.py) cat '" << kRaw << "host_overhead_run16_1gpu.jsonl' '" << kRaw
        << "checkpoint_host_run16.jsonl' > \"$3\";;\n"
           "  kernel_gaps.py) cp '" << gaps << "' \"$3\";;\n"
           "  host_spread.py) cp '" << kRaw << "host_spread_run26.jsonl' \"$3\";;\n"
           "  gemm_gaps.py) [ \"$4 $5\" = '--gemm-shapes " << shapes << "' ] || exit 1; cp '" << x1 << "gemm_gaps_run46.jsonl' \"$3\";;\n"
           "esac\n";
    for (const fs::path& f : {harness, python}) fs::permissions(f, fs::perms::owner_all);
    captureStdout([&] {
        parse({"calibrate", "--harness", harness.string(), "--python", python.string(), "--torch-script",
               (dir / "pytorch" / "stepsim_torch_bench.py").string(), "--out-dir", out.string(), "--gemm-shapes", shapes});
    });
    for (const char* f : {"attention_default.jsonl", "gemm_training_shapes.jsonl", "gemm_training_shapes_fp16.jsonl",
                          "host_overhead.jsonl", "kernel_gaps.jsonl",
                          "interference_training.jsonl", "device_speed.jsonl", "host_spread.jsonl",
                          "interference_training_shapes.jsonl",
                          "gemm_gaps_shapes.jsonl", "gemm_gaps_beside_nccl.jsonl"})
        EXPECT_TRUE(fs::exists(out / f)) << f;
    const HardwareProfile p = loadProfile(out / "profile.yaml");
    const HardwareProfile base = builtinProfile("h200-sxm");
    EXPECT_FALSE(p.attention.points.empty());
    EXPECT_NE(p.launch.checkpoint_host_us.full_backward_us, base.launch.checkpoint_host_us.full_backward_us);
    EXPECT_NE(p.launch.step_gap_us.gemm_us, base.launch.step_gap_us.gemm_us);
    EXPECT_NE(p.launch.forward_host.median_us, base.launch.forward_host.median_us);
    EXPECT_NE(p.launch.nccl_host.median_us, base.launch.nccl_host.median_us);  // from the DDP run
    EXPECT_NEAR(p.interference.beside_waiting.gemm, 1.565, 0.001);             // two GPUs: beside NCCL by class
    EXPECT_GT(p.jitter.device_compute_cv, 0.005);                              // and the GPUs' spread
    EXPECT_NEAR(p.jitter.host_rank_cv, 0.127, 0.001);                          // and the hosts' (host_spread_run26)
    EXPECT_EQ(p.interference.gemm_by_shape.size(), 152u);                      // --gemm-shapes: each GEMM's own
    EXPECT_EQ(p.launch.gemm_gap_by_shape.size(), 152u);                        // slowdown beside NCCL and gap
    // two GPUs: gaps beside an all-reduce, longer while it moves data than while it waits (x1.33, x1.00 in
    // gemm_gaps_beside_run61.jsonl)
    EXPECT_GT(p.launch.step_gap_beside_transfer_us.gemm_us, 1.2 * p.launch.step_gap_us.gemm_us);
    EXPECT_NEAR(p.launch.step_gap_beside_waiting_us.gemm_us, p.launch.step_gap_us.gemm_us, 0.05 * p.launch.step_gap_us.gemm_us);
    EXPECT_EQ(p.launch.gemm_gap_beside_transfer_by_shape.size(), 152u);
    const nlohmann::json report = nlohmann::json::parse(std::ifstream(out / "profile.yaml.fit.json"));
    EXPECT_EQ(report.at("gemm").at("bf16").at("source"), "pytorch-step");       // gemm_training_shapes.py --step
    EXPECT_EQ(report.at("gemm").at("fp16").at("source"), "pytorch-step");       // ... --step --dtype fp16
    EXPECT_EQ(p.gemm.count("fp16"), 1u);
}

TEST(CalibrateCommand, ProfileShowPutsRatesBesideDatasheetPeaks) {
    const std::string text = captureStdout([] { parse({"profile", "show", "h200-sxm"}); });
    EXPECT_NE(text.find("datasheet"), std::string::npos) << text;
    EXPECT_NE(text.find("989"), std::string::npos) << text;   // BF16 dense peak
    EXPECT_NE(text.find("4800"), std::string::npos) << text;  // HBM
    // each memory-bound kernel kind's rate: the foreach AdamW step's over bf16 states (a pass's fixed cost)
    EXPECT_NE(text.find("optimizer_foreach_bf16 (GB/s)"), std::string::npos) << text;
    EXPECT_NE(text.find("64% of HBM, +21.5 us a launch"), std::string::npos) << text;
    // the norms' grid (torch_norms_run91/92.jsonl): LayerNorm fp32 kernels at 8192 rows of 2048
    const auto norms = text.find("LayerNorm fp32 kernels: 28 sizes, 2048-16384 rows x 768-8192; at 8192 x 2048 forward");
    EXPECT_NE(norms, std::string::npos) << text;
    EXPECT_GT(norms, text.find("optimizer_foreach_bf16 (GB/s)")) << text;  // in the table, after the kernel kinds
    // the slowdowns beside NCCL by class and state, moving by size, and the GPUs' spread
    EXPECT_NE(text.find("beside an NCCL kernel waiting for its peers: GEMM x1.42, attention x1.15, memory-bound x1.14"),
              std::string::npos) << text;
    EXPECT_NE(text.find("moving   128 MiB: GEMM x1.40, attention x1.17, memory-bound x1.26"), std::string::npos) << text;
    EXPECT_NE(text.find("moving     4 MiB: GEMM x1.02, attention -, memory-bound x1.05"), std::string::npos) << text;
    EXPECT_NE(text.find("speed spread at the power limit (cv): compute 0.98%"), std::string::npos) << text;
    EXPECT_NE(text.find("host-to-host speed spread between training processes (cv): 12.7%"), std::string::npos) << text;
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
