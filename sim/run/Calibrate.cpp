#include "sim/run/Calibrate.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "sim/fit/Manifest.hpp"
#include "sim/fit/ProfileFit.hpp"
#include "sim/fit/RawData.hpp"
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

fs::path findStageRunner(const std::string& given) {
    if (!given.empty()) return given;
    for (const fs::path& c : {selfDir() / "../calibration/bench/stages.py",
                              fs::path(STEPSIM_SOURCE_DIR_FOR_CALIBRATE) / "calibration/bench/stages.py"})
        if (!c.empty() && fs::is_regular_file(c)) return c;
    return {};
}

}  // namespace

void runStages(const StageRun& r, std::ostream& log) {
    const fs::path runner = findStageRunner(r.runner);
    if (runner.empty() || !fs::is_regular_file(runner))
        throw InputError("stepsim calibrate: calibration/bench/stages.py (the stage runner) was not found; pass "
                         "--stage-runner PATH (it lies in stepsim's source tree)");
    std::string harness;
    const HarnessSearch h = findHarness(r.harness);
    if (h.found)
        harness = h.found->string();
    else if (r.needs_harness)
        throw InputError(fmt::format(
            "stepsim calibrate: the calibration harness stepsim-bench was not found (looked at: {}). Build it on "
            "the GPU machine with `cmake -S calibration/bench -B build-bench && cmake --build build-bench` "
            "(needs the CUDA toolkit, NCCL and cuBLASLt) and pass --harness build-bench/stepsim-bench.",
            fmt::join(h.tried, ", ")));
    fs::create_directories(r.out_dir);
    fs::remove(fs::path(r.out_dir) / "inputs.txt");  // never fit an earlier run's manifest by mistake
    std::string cmd = shellQuote(r.python) + " " + shellQuote(runner.string()) + " --out-dir " +
                      shellQuote(r.out_dir) + " --python " + shellQuote(r.python);
    if (!harness.empty()) cmd += " --harness " + shellQuote(harness);
    if (!r.stages.empty())  // a bare name is a stage file beside the runner
        cmd += " --stages " + shellQuote(fs::path(r.stages).has_parent_path() ? fs::absolute(r.stages).string() : r.stages);
    if (!r.gemm_shapes.empty()) cmd += " --gemm-shapes " + shellQuote(fs::absolute(r.gemm_shapes).string());
    if (!r.only.empty()) cmd += " --only " + shellQuote(r.only);
    if (!r.skip.empty()) cmd += " --skip " + shellQuote(r.skip);
    if (r.budget_scale != 1.0) cmd += fmt::format(" --budget-scale {}", r.budget_scale);
    const int rc = runCommand(cmd, log);
    if (rc == 2)
        throw InputError("stepsim calibrate: no GPU is visible on this machine, so nothing was measured. Run "
                         "`stepsim calibrate` on the GPU machine (or calibration/bench/calibrate.sh there, and fit its "
                         "output here with `stepsim calibrate fit --manifest DIR/inputs.txt`), or use a built-in "
                         "profile (" + fmt::format("{}", fmt::join(builtinProfileNames(), ", ")) + ").");
    if (!fs::exists(fs::path(r.out_dir) / "inputs.txt"))
        throw InputError(fmt::format("stepsim calibrate: the stage runner failed (exit status {}) and wrote no "
                                     "manifest in {}", rc, r.out_dir));
    if (rc != 0) log << fmt::format("note: the stage runner exited with {}; fitting what it measured\n", rc);
}

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
    StageRun r;
    r.out_dir = o.out_dir;
    r.harness = o.harness;
    r.python = o.python;
    r.runner = o.runner;
    r.gemm_shapes = o.gemm_shapes;
    r.only = o.no_pytorch ? std::string("harness") : o.only;
    r.skip = o.skip;
    r.budget_scale = o.quick ? 0.25 : o.budget_scale;
    runStages(r, log);
    const double tStages = since();
    FitRequest fit;
    fit.manifest = (fs::path(o.out_dir) / "inputs.txt").string();
    fit.out = o.out.empty() ? (fs::path(o.out_dir) / "profile.yaml").string() : o.out;
    fit.name = o.name;
    fit.base = o.base;
    fit.source = "stepsim calibrate --out-dir " + o.out_dir + "; refit: stepsim calibrate fit --manifest " +
                 fit.manifest + " --name " + o.name;
    fitAndWrite(fit, log);
    log << fmt::format("calibration took {:.1f} s (measuring {:.1f} s, fit {:.1f} s)\n", since(), tStages,
                       since() - tStages);
}

}  // namespace stepsim
