#include "sim/cli/CalibrateCommand.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "calibration/fit/ProfileFit.hpp"
#include "calibration/fit/RawData.hpp"
#include "sim/base/InputError.hpp"
#include "sim/base/Statistics.hpp"
#include "sim/cost/CostModel.hpp"
#include "sim/scenario/ProfileYaml.hpp"

#ifndef STEPSIM_SOURCE_DIR_FOR_CALIBRATE
#define STEPSIM_SOURCE_DIR_FOR_CALIBRATE ""
#endif

namespace stepsim {
namespace {

namespace fs = std::filesystem;

HardwareProfile profileByNameOrFile(const std::string& what) {
    for (const auto& n : builtinProfileNames())
        if (n == what) return builtinProfile(n);
    if (!fs::exists(what))
        throw inputError(what, 0, "", "neither a profile file nor a built-in profile (built-ins: " +
                                          fmt::format("{}", fmt::join(builtinProfileNames(), ", ")) + ")");
    return loadProfile(what);
}

std::string shellQuote(const std::string& s) {
    std::string r = "'";
    for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return r + "'";
}

// Runs a command line through /bin/sh; returns its exit status (or 128+signal).
int runCommand(const std::string& cmd) {
    std::cout << "+ " << cmd << std::endl;
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
                        const std::string& gemmShapes, std::vector<std::string>& raws) {
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
            std::cout << fmt::format("note: {} not found; {} keep the base profile's values\n", script.string(), sc.what);
            continue;
        }
        fs::remove(out);
        const std::string args = " " + shellQuote(script.string()) + " --out " + shellQuote(out.string()) + sc.args +
                                 (shapes ? " --gemm-shapes " + shellQuote(fs::absolute(gemmShapes).string()) : "");
        const std::string& ranks = sc.ranks == Ranks::two ? twoRanks : sc.ranks == Ranks::all ? allRanks : "";
        int rc = runCommand(shellQuote(python) + ranks + args);
        if (rc == 0 && gpus >= 2 && sc.ranks == Ranks::then_two)
            rc = runCommand(shellQuote(python) + twoRanks + args + " --ddp");
        if (fs::exists(out)) raws.push_back(out.string());
        if (rc != 0)
            std::cout << fmt::format("note: {} exited with {}; {}: fitting what it wrote\n", sc.file, rc, sc.what);
    }
}

struct FitSummary {
    double heldout_collectives, heldout_gemm;
};

FitSummary fitAndWrite(const std::vector<std::string>& raws, const std::string& outPath, const std::string& name,
                       const std::string& base, std::string report, const std::string& source) {
    std::vector<fs::path> files(raws.begin(), raws.end());
    const RawData raw = readRaw(files);
    const ProfileFitResult fit = fitProfile(raw, profileByNameOrFile(base), name, source);
    {
        std::ofstream o(outPath);
        if (!o) throw inputError(outPath, 0, "", "cannot write the profile");
        o << "# Fitted by stepsim calibrate fit from: " << fmt::format("{}", fmt::join(raws, " ")) << "\n";
        o << "# Errors, domains and the held-out check: " << (report.empty() ? outPath + ".fit.json" : report) << "\n";
        o << writeProfile(fit.profile);
    }
    if (report.empty()) report = outPath + ".fit.json";
    {
        std::ofstream o(report);
        if (!o) throw inputError(report, 0, "", "cannot write the fit report");
        o << fit.report.dump(2) << "\n";
    }
    std::cout << fmt::format("fitted {} from {} collective series, {} GEMM points, {} transfers, {} PyTorch kernels\n",
                             outPath, fit.profile.collectives.size(), raw.gemms.size(), raw.transfers.size(),
                             raw.kernels.size());
    const std::string coll = fit.profile.collectives.empty()
                                 ? std::string("collectives none measured")
                                 : fmt::format("collectives median rel. error {:.2f}%", 100 * fit.heldout_collectives);
    std::cout << fmt::format("held-out check (every 4th size/shape): {}, GEMMs {:.2f}%\n", coll, 100 * fit.heldout_gemm);
    if (!raw.errors.empty())
        for (const auto& e : raw.errors) std::cout << "note: the run recorded an error: " << e << "\n";
    std::cout << "report: " << report << "\n";
    return {fit.heldout_collectives, fit.heldout_gemm};
}

std::string pct(double x) { return fmt::format("{:.0f}%", 100 * x); }

}  // namespace

std::string profileTable(const HardwareProfile& p) {
    std::string s;
    auto line = [&](const std::string& what, const std::string& measured, const std::string& peak, const std::string& note) {
        s += fmt::format("  {:<34} {:>16} {:>16}  {}\n", what, measured, peak, note);
    };
    s += fmt::format("profile {}  ({})\n", p.name, p.source);
    s += fmt::format("GPU {}: {} SMs, {:.1f} GiB\n\n", p.gpu.model, p.gpu.sms, p.gpu.memory_gib);
    line("rate", "profile", "datasheet", "fraction of datasheet / error");
    for (const auto& [dt, e] : p.gemm) {
        const double peak = dt == "fp8" ? p.gpu.peak_tflops_fp8 : dt == "fp32" ? p.gpu.peak_tflops_fp32
                                                                                 : dt == "fp16" ? p.gpu.peak_tflops_fp16
                                                                                                : p.gpu.peak_tflops_bf16;
        double best = 0;
        for (const auto& q : e.points) best = std::max(best, q.tflops);
        line("GEMM " + dt + " max (TFLOP/s)", fmt::format("{:.0f}", e.max_efficiency * peak), fmt::format("{:.0f}", peak),
             fmt::format("{} of peak; k_half {:.0f}, tile {}x{}, overhead {:.1f} us, model error {:.1f}%", pct(e.max_efficiency),
                         e.k_half, e.tile_m, e.tile_n, e.overhead_us, 100 * e.rel_error));
        if (!e.points.empty())
            line("GEMM " + dt + " best measured", fmt::format("{:.0f}", best), fmt::format("{:.0f}", peak),
                 fmt::format("{} of peak, {} shapes", pct(best / peak), e.points.size()));
    }
    line("attention fwd (TFLOP/s)", fmt::format("{:.0f}", p.attention.fwd_efficiency * p.gpu.peak_tflops_bf16),
         fmt::format("{:.0f}", p.gpu.peak_tflops_bf16), pct(p.attention.fwd_efficiency));
    line("attention bwd (TFLOP/s)", fmt::format("{:.0f}", p.attention.bwd_efficiency * p.gpu.peak_tflops_bf16),
         fmt::format("{:.0f}", p.gpu.peak_tflops_bf16), pct(p.attention.bwd_efficiency));
    line("HBM streaming (GB/s)", fmt::format("{:.0f}", p.memory.read_write_efficiency * p.gpu.hbm_gbps),
         fmt::format("{:.0f}", p.gpu.hbm_gbps), pct(p.memory.read_write_efficiency));
    // PyTorch's memory-bound kernels by kind (casts, norms, the loss's log-softmax, the optimizer steps, ...): the
    // rate each streams its bytes at, after a fixed cost per launch.
    for (const auto& [kind, k] : p.memory.kernels)
        line("  " + kind + " (GB/s)", fmt::format("{:.0f}", k.efficiency * p.gpu.hbm_gbps), fmt::format("{:.0f}", p.gpu.hbm_gbps),
             fmt::format("{} of HBM, +{:.1f} us a launch", pct(k.efficiency), k.fixed_us));
    // The norms' kernels by size where measured: the grid's extent and the three kernels at one size of it.
    const NormGrid& ng = p.memory.norms;
    for (const auto& [name, grid] : {std::pair{"LayerNorm fp32", &ng.layer_fp32}, std::pair{"LayerNorm bf16", &ng.layer_bf16},
                                     std::pair{"RMSNorm fp32", &ng.rms_fp32}, std::pair{"RMSNorm bf16", &ng.rms_bf16}}) {
        if (grid->empty()) {
            s += fmt::format("  {} kernels: no grid, priced by the norm kinds' rates\n", name);
            continue;
        }
        const auto [tlo, thi] = std::minmax_element(grid->begin(), grid->end(),
                                                    [](const NormPoint& a, const NormPoint& b) { return a.tokens < b.tokens; });
        const auto [hlo, hhi] = std::minmax_element(grid->begin(), grid->end(),
                                                    [](const NormPoint& a, const NormPoint& b) { return a.hidden < b.hidden; });
        const double fwd = normGridUs(*grid, &NormPoint::forward_us, 8192, 2048);
        const double bwd = normGridUs(*grid, &NormPoint::backward_us, 8192, 2048);
        const double wg = normGridUs(*grid, &NormPoint::weight_grad_us, 8192, 2048);
        s += fmt::format("  {} kernels: {} sizes, {}-{} rows x {}-{}; at 8192 x 2048 forward {:.1f} us, "
                         "input grad {:.1f}, weight grad {:.1f}\n",
                         name, grid->size(), tlo->tokens, thi->tokens, hlo->hidden, hhi->hidden, fwd, bwd, wg);
    }
    const bool nvlink4 = p.gpu.model.find("H100") != std::string::npos || p.gpu.model.find("H200") != std::string::npos;
    line("NVLink per direction (GB/s)", fmt::format("{:.0f}", p.links.nvlink_gbps), nvlink4 ? "450" : "-",
         nvlink4 ? pct(p.links.nvlink_gbps / 450.0) + " (NVLink 4: 18 links)" : "");
    line("PCIe H2D pinned (GB/s)", fmt::format("{:.1f}", p.links.pcie_h2d_gbps), nvlink4 ? "64" : "-",
         nvlink4 ? pct(p.links.pcie_h2d_gbps / 64.0) + " (PCIe 5.0 x16)" : "");
    line("PCIe H2D pageable (GB/s)", fmt::format("{:.1f}", p.links.pcie_pageable_gbps), "", "");
    s += "\nlaunch (median / p99, us)\n";
    auto d = [&](const std::string& n, const Distribution& x) { s += fmt::format("  {:<34} {:>8.2f} {:>8.2f}\n", n, x.median_us, x.p99_us); };
    d("eager host (PyTorch op)", p.launch.eager_host);
    d("compiled host (per kernel)", p.launch.compiled_host);
    d("CUDA graph host (per kernel)", p.launch.graph_host);
    d("device gap (back-to-back)", p.launch.device_gap);
    d("NCCL host (per collective)", p.launch.nccl_host);
    if (const HostCostSpread& h = p.launch.host_cost_spread; h.p10 < 1.0 || h.p90 > 1.0)
        s += fmt::format("  host cost between runs (10th / 90th percentile over the median): x{:.2f} / x{:.2f} (a host-bound "
                         "step's range)\n",
                         h.p10, h.p90);
    const StepGaps& g = p.launch.step_gap_us;
    s += fmt::format("  gap before, in a training step (mean): GEMM {:.2f}, attention {:.2f}, memory-bound {:.2f}, "
                     "optimizer {:.2f}, copy {:.2f} us\n",
                     g.gemm_us, g.attention_us, g.memory_us, g.optimizer_us, g.copy_us);
    const auto beside = [&](const char* what, const StepGaps& b) {
        const auto x = [](double beside_us, double alone_us) {
            return beside_us > 0 && alone_us > 0 ? fmt::format("x{:.2f}", beside_us / alone_us) : std::string("x1 (not measured)");
        };
        s += fmt::format("  the same beside an NCCL kernel {}: GEMM {}, attention {}, memory-bound {}, optimizer {}, copy {}\n",
                         what, x(b.gemm_us, g.gemm_us), x(b.attention_us, g.attention_us), x(b.memory_us, g.memory_us),
                         x(b.optimizer_us, g.optimizer_us), x(b.copy_us, g.copy_us));
    };
    beside("moving data", p.launch.step_gap_beside_transfer_us);
    beside("waiting for its peer", p.launch.step_gap_beside_waiting_us);
    const auto byShape = [&](const char* what, const std::vector<GemmShapeValue>& by) {
        if (by.empty()) return;
        std::vector<double> v;
        for (const GemmShapeValue& e : by) v.push_back(e.value);
        std::sort(v.begin(), v.end());
        s += fmt::format("  gap before a GEMM by shape{}: {} shapes, {:.2f} to {:.2f} us, median {:.2f}\n", what, v.size(),
                         v.front(), v.back(), median(v));
    };
    byShape(" (in place of the GEMM gap above)", p.launch.gemm_gap_by_shape);
    byShape(", beside an NCCL kernel moving data", p.launch.gemm_gap_beside_transfer_by_shape);
    s += fmt::format("  shortest kernel {:.2f} us; kernel CV {:.3f}\n", p.memory.min_kernel_us, p.jitter.kernel_cv);
    s += fmt::format("\ninterference: GEMM x{:.2f} slower beside NCCL, NCCL x{:.2f} slower beside a GEMM\n",
                     p.interference.compute_slowdown, p.interference.comm_slowdown);
    // A class the profile did not measure (0) reads "-": the engine then takes the factor above.
    const auto cls = [](const ClassSlowdown& c) {
        const auto f = [](double x) { return x > 0 ? fmt::format("x{:.2f}", x) : std::string("-"); };
        return fmt::format("GEMM {}, attention {}, memory-bound {}", f(c.gemm), f(c.attention), f(c.memory));
    };
    s += "  beside an NCCL kernel waiting for its peers: " + cls(p.interference.beside_waiting) + "\n";
    s += "  beside one moving data: " + cls(p.interference.beside_transfer) + "\n";
    for (const SizedSlowdown& z : p.interference.beside_transfer_by_size)
        s += fmt::format("    moving {:>5.0f} MiB: {}\n", z.bytes / (1 << 20), cls(z));
    if (!p.interference.beside_transfer_by_size.empty())
        s += "    (by the collective's size, log-interpolated; -: not measured at that size, the line above applies)\n";
    if (const auto& by = p.interference.gemm_by_shape; !by.empty()) {
        const auto [lo, hi] = std::minmax_element(
            by.begin(), by.end(), [](const GemmShapeValue& a, const GemmShapeValue& b) { return a.value < b.value; });
        s += fmt::format("  GEMMs by shape, beside a resident NCCL kernel: {} shapes, x{:.2f} ({}x{}x{}) to x{:.2f} "
                         "({}x{}x{}); a GEMM within 2x of one on every dimension takes the nearest one's factor\n",
                         by.size(), lo->value, lo->m, lo->n, lo->k, hi->value, hi->m, hi->n, hi->k);
    }
    s += fmt::format("GPU-to-GPU speed spread at the power limit (cv): compute {:.2f}%, memory-bound {:.3f}%\n",
                     100 * p.jitter.device_compute_cv, 100 * p.jitter.device_memory_cv);
    s += fmt::format("host-to-host speed spread between training processes (cv): {:.1f}%; a host-bound data-parallel "
                     "step goes at its slowest host\n",
                     100 * p.jitter.host_rank_cv);
    if (!p.collectives.empty()) {
        s += fmt::format("\ncollectives (t = alpha + S*factor/busbw per segment; busbw vs NCCL ring model {:.0f} GB/s)\n",
                         p.nccl.ring_busbw_gbps);
        for (const auto& c : p.collectives) {
            s += fmt::format("  {} {} ranks={} nodes={} {}/{}  median error {:.1f}%\n", c.op, c.dtype, c.ranks, c.nodes, c.algo,
                             c.proto, 100 * c.rel_error);
            for (const auto& g : c.segments)
                s += fmt::format("    [{:>10}, {:>10}] B  alpha {:7.2f} us  busbw {:7.1f} GB/s  error {:.1f}%\n",
                                 fmt::format("{:.0f}", g.lo_bytes), fmt::format("{:.0f}", g.hi_bytes), g.alpha_us,
                                 g.busbw_gbps, 100 * g.rel_error);
        }
    } else {
        s += "\ncollectives: none measured (NCCL's tuning model is used)\n";
    }
    return s;
}

void addCalibrateCommands(CLI::App& app) {
    auto* cal = app.add_subcommand("calibrate", "Measure the local GPUs (NCCL, GEMMs, memory, transfers, launch, "
                                                "interference) and fit a hardware profile");
    struct CalOpts {
        std::string out_dir = "calibration-run", harness, torch_script, python = "python3", name = "calibrated",
                    base = "h200-sxm", out;
        std::string gemm_shapes;
        bool no_pytorch = false, quick = false;
        double time_limit = 480;
    };
    auto co = std::make_shared<CalOpts>();
    cal->add_option("--out-dir", co->out_dir, "Folder for the raw measurements, profile and report")->capture_default_str();
    cal->add_option("--harness", co->harness, "The stepsim-bench binary (built from calibration/bench)");
    cal->add_option("--torch-script", co->torch_script,
                    "calibration/pytorch/stepsim_torch_bench.py (the other PyTorch calibration scripts are run from "
                    "its folder)");
    cal->add_option("--python", co->python, "Python with PyTorch, for the kernel benchmarks")->capture_default_str();
    cal->add_flag("--no-pytorch", co->no_pytorch, "Skip the PyTorch benchmarks (kernels, host costs, gaps)");
    cal->add_option("--gemm-shapes", co->gemm_shapes,
                    "Also measure these GEMMs one by one: the gap before each in a step's stream "
                    "(launch.gemm_gap_by_shape) and, with two GPUs or more, that gap beside an all-reduce moving data "
                    "(launch.gemm_gap_beside_transfer_by_shape) and its slowdown beside a resident NCCL kernel "
                    "(interference.gemm_by_shape); lines 'forward|dgrad|wgrad M N K' (calibration/validation/"
                    "gemm_shapes.py lists a scenario's)")
        ->check(CLI::ExistingFile);
    cal->add_flag("--quick", co->quick, "Small grids (a smoke test, not a calibration)");
    cal->add_option("--time-limit", co->time_limit, "Seconds the harness may measure before it skips the rest")
        ->capture_default_str();
    cal->add_option("--name", co->name, "Name of the fitted profile")->capture_default_str();
    cal->add_option("--base", co->base, "Profile (built-in name or file) for fields not measured")->capture_default_str();
    cal->add_option("-o,--output", co->out, "Profile YAML to write (default OUT_DIR/profile.yaml)");

    auto* fit = cal->add_subcommand("fit", "Fit a hardware profile from raw calibration measurements (JSON Lines)");
    struct FitOpts {
        std::vector<std::string> raws;
        std::string out, name = "calibrated", base = "h200-sxm", report;
    };
    auto fo = std::make_shared<FitOpts>();
    fit->add_option("RAW", fo->raws, "Raw measurement files from stepsim-bench and stepsim_torch_bench.py")->required();
    fit->add_option("-o,--output", fo->out, "Profile YAML to write")->required();
    fit->add_option("--name", fo->name, "Name of the profile")->capture_default_str();
    fit->add_option("--base", fo->base, "Profile (built-in name or file) for fields not measured")->capture_default_str();
    fit->add_option("--report", fo->report, "Fit report JSON (default: PROFILE.fit.json)");
    fit->callback([fo] {
        std::string cmd = "stepsim calibrate fit";
        for (const auto& r : fo->raws) cmd += " " + r;
        cmd += " -o " + fo->out;
        fitAndWrite(fo->raws, fo->out, fo->name, fo->base, fo->report, cmd);
    });

    cal->callback([co, fit] {
        if (fit->parsed()) return;
        const auto t0 = std::chrono::steady_clock::now();
        auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
        const HarnessSearch h = findHarness(co->harness);
        if (!h.found)
            throw InputError(fmt::format(
                "stepsim calibrate: the calibration harness stepsim-bench was not found (looked at: {}). Build it on "
                "the GPU machine with `cmake -S calibration/bench -B build-bench && cmake --build build-bench` "
                "(needs the CUDA toolkit, NCCL and cuBLASLt) and pass --harness build-bench/stepsim-bench.",
                fmt::join(h.tried, ", ")));
        fs::create_directories(co->out_dir);
        const fs::path bench = fs::path(co->out_dir) / "bench.jsonl", torch = fs::path(co->out_dir) / "torch.jsonl";
        fs::remove(bench);  // never fit an earlier run's files by mistake
        fs::remove(torch);
        std::string cmd = shellQuote(h.found->string()) + " --out " + shellQuote(bench.string()) +
                          fmt::format(" --time-limit {}", co->time_limit) + (co->quick ? " --quick" : "");
        const int rc = runCommand(cmd);
        const double tHarness = since();
        if (rc == 2)
            throw InputError("stepsim calibrate: no GPU is visible on this machine, so nothing was measured. Run "
                             "`stepsim calibrate` on the GPU machine (or run stepsim-bench there and fit its output here "
                             "with `stepsim calibrate fit`), or use a built-in profile (" +
                             fmt::format("{}", fmt::join(builtinProfileNames(), ", ")) + ").");
        if (rc != 0 && !fs::exists(bench))
            throw InputError(fmt::format("stepsim calibrate: stepsim-bench failed (exit status {}) and wrote nothing", rc));
        if (rc != 0) std::cout << fmt::format("note: stepsim-bench exited with {}; fitting what it measured\n", rc);
        std::vector<std::string> raws = {bench.string()};
        if (!co->no_pytorch) {
            const fs::path script = findTorchScript(co->torch_script);
            if (script.empty()) {
                std::cout << "note: calibration/pytorch/stepsim_torch_bench.py not found; attention, eager dispatch and "
                             "PyTorch kernels keep the base profile's values\n";
            } else {
                const int prc = runCommand(shellQuote(co->python) + " " + shellQuote(script.string()) + " --out " +
                                           shellQuote(torch.string()) + (co->quick ? " --quick" : ""));
                if (prc == 0) raws.push_back(torch.string());
                else std::cout << fmt::format("note: the PyTorch benchmarks exited with {}; fitting without them\n", prc);
                runTrainingScripts(co->python, script.parent_path(), co->out_dir, readRaw({bench}).gpu_count,
                                   co->gemm_shapes, raws);
            }
        }
        const double tTorch = since();
        const std::string out = co->out.empty() ? (fs::path(co->out_dir) / "profile.yaml").string() : co->out;
        fitAndWrite(raws, out, co->name, co->base, "", "stepsim calibrate --out-dir " + co->out_dir);
        std::cout << fmt::format("calibration took {:.1f} s (harness {:.1f} s, PyTorch {:.1f} s, fit {:.1f} s)\n", since(),
                                 tHarness, tTorch - tHarness, since() - tTorch);
    });

    auto* prof = app.add_subcommand("profile", "Hardware profiles");
    prof->require_subcommand(1);
    auto* show = prof->add_subcommand("show", "Print a profile as a table, each rate beside its datasheet peak");
    auto which = std::make_shared<std::string>();
    show->add_option("PROFILE", *which, "Profile YAML file or built-in name")->required();
    show->callback([which] { std::cout << profileTable(profileByNameOrFile(*which)); });
}

}  // namespace stepsim
