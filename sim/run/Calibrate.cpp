#include "sim/run/Calibrate.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "calibration/fit/Manifest.hpp"
#include "calibration/fit/ProfileFit.hpp"
#include "calibration/fit/RawData.hpp"
#include "sim/base/InputError.hpp"
#include "sim/scenario/ProfileYaml.hpp"

#ifndef STEPSIM_SOURCE_DIR_FOR_CALIBRATE
#define STEPSIM_SOURCE_DIR_FOR_CALIBRATE ""
#endif

namespace stepsim {
namespace {

namespace fs = std::filesystem;

std::string shellQuote(const std::string& s) {
    std::string r = "'";
    for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return r + "'";
}

// Runs a command line through /bin/sh; returns its exit status (or 128+signal).
int runCommand(const std::string& cmd, std::ostream& out) {
    out << "+ " << cmd << std::endl;
    const int st = std::system(cmd.c_str());
    if (st == -1) return 127;
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return 1;
}

fs::path selfDir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::current_path() : exe.parent_path();
}

bool executable(const fs::path& p) { return !p.empty() && fs::is_regular_file(p) && ::access(p.c_str(), X_OK) == 0; }

std::optional<fs::path> findOnPath(const std::string& name) {
    const char* path = std::getenv("PATH");
    if (!path) return std::nullopt;
    std::string all = path;
    std::size_t b = 0;
    while (b <= all.size()) {
        const std::size_t e = all.find(':', b);
        const fs::path cand = fs::path(all.substr(b, e == std::string::npos ? std::string::npos : e - b)) / name;
        if (executable(cand)) return cand;
        if (e == std::string::npos) break;
        b = e + 1;
    }
    return std::nullopt;
}

struct HarnessSearch {
    std::optional<fs::path> found;
    std::vector<std::string> tried;
};
HarnessSearch findHarness(const std::string& given) {
    HarnessSearch s;
    std::vector<fs::path> cands;
    if (!given.empty()) cands.push_back(given);
    if (const char* env = std::getenv("STEPSIM_BENCH")) cands.push_back(env);
    const fs::path here = selfDir();
    cands.push_back(here / "calibration/bench/stepsim-bench");
    cands.push_back(here / "stepsim-bench");
    for (const auto& c : cands) {
        s.tried.push_back(c.string());
        if (executable(c)) {
            s.found = c;
            return s;
        }
        if (!given.empty()) return s;  // an explicit --harness that is not there is not silently replaced
    }
    s.tried.push_back("stepsim-bench on PATH");
    s.found = findOnPath("stepsim-bench");
    return s;
}

fs::path findTorchScript(const std::string& given) {
    if (!given.empty()) return given;
    for (const fs::path& c : {selfDir() / "../calibration/pytorch/stepsim_torch_bench.py",
                              fs::path(STEPSIM_SOURCE_DIR_FOR_CALIBRATE) / "calibration/pytorch/stepsim_torch_bench.py"})
        if (!c.empty() && fs::is_regular_file(c)) return c;
    return {};
}

// The PyTorch scripts beside stepsim_torch_bench.py that measure what a training step sees, each into its own raw
// file in the output folder (an earlier run's file is removed first): attention as SDPA runs it, PyTorch's own
// GEMMs over the transformer grid (BF16, then FP16 for fp16 autocast), the host's cost per kernel (one GPU, then DDP over two GPUs when there are two)
// with activation checkpointing's, the gaps inside a step, and, with two GPUs, the gaps before GEMMs, copies and
// memory-bound kernels beside an all-reduce moving data or waiting for its peer, the step's kernels beside
// bucket-sized all-reduces, every GPU's speed with all of them loaded at once and how far the hosts of host-bound
// processes, one per GPU, run apart; and, given a --gemm-shapes file
// (calibration/validation/gemm_shapes.py writes a scenario's), those GEMMs one by one beside a resident NCCL kernel
// and after a memory-bound kernel (and beside an all-reduce, with two GPUs), for the gap before each.
// A script that fails is noted and its fields keep the base's.
void runTrainingScripts(const std::string& python, const fs::path& dir, const fs::path& outDir, int gpus,
                        const std::string& gemmShapes, std::vector<std::string>& raws, std::ostream& log) {
    // one process; then again over two GPUs (--ddp); only over two; over every GPU (from two); one process that
    // starts one of its own per GPU (from two)
    enum class Ranks { one, then_two, two, all, own };
    struct Script {
        const char* file;
        const char* what;
        const char* args;
        Ranks ranks;
        const char* suffix = "";   // of its raw file's name, after the script's
        // a --gemm-shapes file: not taken; runs only with one, which it is given; given one when there is one
        enum class Shapes { none, required, optional } shapes = Shapes::none;
    };
    constexpr Script kScripts[] = {
        {"attention_default.py", "attention as training runs it", "", Ranks::one},
        {"gemm_training_shapes.py", "PyTorch's GEMMs over the transformer grid", " --step", Ranks::one},
        {"gemm_training_shapes.py", "PyTorch's FP16 GEMMs over the transformer grid", " --step --dtype fp16", Ranks::one,
         "_fp16"},
        {"host_overhead.py", "host cost per kernel and of checkpointing", "", Ranks::then_two},
        {"kernel_gaps.py", "gaps inside a training step", "", Ranks::one},
        {"gemm_gaps.py", "gaps beside an all-reduce moving data or waiting", " --beside transfer,waiting", Ranks::two,
         "_beside_nccl", Script::Shapes::optional},
        {"interference_training.py", "kernels beside NCCL by class and size", " --bucket-mib 4,25,64,128", Ranks::two},
        {"device_speed.py", "the GPUs' speed spread", "", Ranks::all},
        {"host_spread.py", "the hosts' speed spread between processes", "", Ranks::own},
        {"interference_training.py", "the listed GEMMs beside NCCL", " --modes waiting --bucket-mib 25", Ranks::two,
         "_shapes", Script::Shapes::required},
        {"gemm_gaps.py", "the listed GEMMs' launch gaps", "", Ranks::one, "_shapes", Script::Shapes::required}};
    const std::string twoRanks = " -m torch.distributed.run --standalone --nproc-per-node 2";
    const std::string allRanks = fmt::format(" -m torch.distributed.run --standalone --nproc-per-node {}", gpus);
    for (const Script& sc : kScripts) {
        if ((sc.ranks == Ranks::two || sc.ranks == Ranks::all || sc.ranks == Ranks::own) && gpus < 2) continue;
        if (sc.shapes == Script::Shapes::required && gemmShapes.empty()) continue;
        const bool shapes = sc.shapes != Script::Shapes::none && !gemmShapes.empty();
        const fs::path script = dir / sc.file, out = outDir / (fs::path(sc.file).stem().string() + sc.suffix + ".jsonl");
        if (!fs::is_regular_file(script)) {
            log << fmt::format("note: {} not found; {} keep the base profile's values\n", script.string(), sc.what);
            continue;
        }
        fs::remove(out);
        std::string args = fmt::format(" {} --out {}{}", shellQuote(script.string()), shellQuote(out.string()), sc.args);
        if (shapes) args += fmt::format(" --gemm-shapes {}", shellQuote(fs::absolute(gemmShapes).string()));
        const std::string& ranks = sc.ranks == Ranks::two ? twoRanks : sc.ranks == Ranks::all ? allRanks : "";
        int rc = runCommand(shellQuote(python) + ranks + args, log);
        if (rc == 0 && gpus >= 2 && sc.ranks == Ranks::then_two)
            rc = runCommand(shellQuote(python) + twoRanks + args + " --ddp", log);
        if (fs::exists(out)) raws.push_back(out.string());
        if (rc != 0)
            log << fmt::format("note: {} exited with {}; {}: fitting what it wrote\n", sc.file, rc, sc.what);
    }
}

// The harness: run it into OUT_DIR/bench.jsonl (an earlier run's files are removed first); returns the file.
fs::path runHarness(const CalibrateOptions& o, std::ostream& log) {
    const HarnessSearch h = findHarness(o.harness);
    if (!h.found)
        throw InputError(fmt::format(
            "stepsim calibrate: the calibration harness stepsim-bench was not found (looked at: {}). Build it on "
            "the GPU machine with `cmake -S calibration/bench -B build-bench && cmake --build build-bench` "
            "(needs the CUDA toolkit, NCCL and cuBLASLt) and pass --harness build-bench/stepsim-bench.",
            fmt::join(h.tried, ", ")));
    fs::create_directories(o.out_dir);
    const fs::path bench = fs::path(o.out_dir) / "bench.jsonl", torch = fs::path(o.out_dir) / "torch.jsonl";
    fs::remove(bench);  // never fit an earlier run's files by mistake
    fs::remove(torch);
    std::string cmd = shellQuote(h.found->string()) + " --out " + shellQuote(bench.string()) +
                      fmt::format(" --time-limit {}", o.time_limit) + (o.quick ? " --quick" : "");
    const int rc = runCommand(cmd, log);
    if (rc == 2)
        throw InputError("stepsim calibrate: no GPU is visible on this machine, so nothing was measured. Run "
                         "`stepsim calibrate` on the GPU machine (or run stepsim-bench there and fit its output here "
                         "with `stepsim calibrate fit`), or use a built-in profile (" +
                         fmt::format("{}", fmt::join(builtinProfileNames(), ", ")) + ").");
    if (rc != 0 && !fs::exists(bench))
        throw InputError(fmt::format("stepsim calibrate: stepsim-bench failed (exit status {}) and wrote nothing", rc));
    if (rc != 0) log << fmt::format("note: stepsim-bench exited with {}; fitting what it measured\n", rc);
    return bench;
}

// The PyTorch benchmarks into OUT_DIR/torch.jsonl, then the training-step scripts; each file written joins `raws`.
void runPyTorch(const CalibrateOptions& o, const fs::path& bench, std::vector<std::string>& raws, std::ostream& log) {
    const fs::path torch = fs::path(o.out_dir) / "torch.jsonl";
    const fs::path script = findTorchScript(o.torch_script);
    if (script.empty()) {
        log << "note: calibration/pytorch/stepsim_torch_bench.py not found; attention, eager dispatch and "
               "PyTorch kernels keep the base profile's values\n";
        return;
    }
    const int prc = runCommand(shellQuote(o.python) + " " + shellQuote(script.string()) + " --out " +
                                   shellQuote(torch.string()) + (o.quick ? " --quick" : ""),
                               log);
    if (prc == 0) raws.push_back(torch.string());
    else log << fmt::format("note: the PyTorch benchmarks exited with {}; fitting without them\n", prc);
    runTrainingScripts(o.python, script.parent_path(), o.out_dir, readRaw({bench}).gpu_count, o.gemm_shapes, raws, log);
}

}  // namespace

HardwareProfile profileByNameOrFile(const std::string& what) {
    for (const auto& n : builtinProfileNames())
        if (n == what) return builtinProfile(n);
    if (!fs::exists(what))
        throw inputError(what, 0, "", "neither a profile file nor a built-in profile (built-ins: " +
                                          fmt::format("{}", fmt::join(builtinProfileNames(), ", ")) + ")");
    return loadProfile(what);
}

FitSummary fitAndWrite(const FitRequest& r, std::ostream& log) {
    const std::vector<fs::path> files =
        r.manifest.empty() ? std::vector<fs::path>(r.raws.begin(), r.raws.end()) : readManifest(r.manifest);
    const RawData raw = readRaw(files);
    const ProfileFitResult fit = fitProfile(raw, profileByNameOrFile(r.base), r.name, r.source);
    const std::string report = r.report.empty() ? r.out + ".fit.json" : r.report;
    {
        std::ofstream o(r.out);
        if (!o) throw inputError(r.out, 0, "", "cannot write the profile");
        if (r.manifest.empty())
            o << "# Fitted by stepsim calibrate fit from: " << fmt::format("{}", fmt::join(r.raws, " ")) << "\n";
        else
            o << fmt::format("# Fitted by stepsim calibrate fit from the {} raw files listed in {}\n", files.size(),
                             r.manifest);
        o << "# Errors, domains and the held-out check: " << report << "\n";
        o << writeProfile(fit.profile);
    }
    {
        std::ofstream o(report);
        if (!o) throw inputError(report, 0, "", "cannot write the fit report");
        o << fit.report.dump(2) << "\n";
    }
    log << fmt::format("fitted {} from {} collective series, {} GEMM points, {} transfers, {} PyTorch kernels\n", r.out,
                       fit.profile.collectives.size(), raw.gemms.size(), raw.transfers.size(), raw.kernels.size());
    const std::string coll = fit.profile.collectives.empty()
                                 ? std::string("collectives none measured")
                                 : fmt::format("collectives median rel. error {:.2f}%", 100 * fit.heldout_collectives);
    log << fmt::format("held-out check (every 4th size/shape): {}, GEMMs {:.2f}%\n", coll, 100 * fit.heldout_gemm);
    if (!raw.errors.empty())
        for (const auto& e : raw.errors) log << "note: the run recorded an error: " << e << "\n";
    log << "report: " << report << "\n";
    return {fit.heldout_collectives, fit.heldout_gemm};
}

void calibrate(const CalibrateOptions& o, std::ostream& log) {
    const auto t0 = std::chrono::steady_clock::now();
    auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    const fs::path bench = runHarness(o, log);
    const double tHarness = since();
    std::vector<std::string> raws = {bench.string()};
    if (!o.no_pytorch) runPyTorch(o, bench, raws, log);
    const double tTorch = since();
    FitRequest fit;
    fit.raws = raws;
    fit.out = o.out.empty() ? (fs::path(o.out_dir) / "profile.yaml").string() : o.out;
    fit.name = o.name;
    fit.base = o.base;
    fit.source = "stepsim calibrate --out-dir " + o.out_dir;
    fitAndWrite(fit, log);
    log << fmt::format("calibration took {:.1f} s (harness {:.1f} s, PyTorch {:.1f} s, fit {:.1f} s)\n", since(),
                       tHarness, tTorch - tHarness, since() - tTorch);
}

}  // namespace stepsim
