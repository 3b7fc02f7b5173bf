// stepsim-bench: measures what stepsim's hardware profile needs on the local GPUs and writes JSON Lines
// (one metadata record, then one record per measurement; schema in calibration/bench/README.md).
//
//   stepsim-bench [--out FILE] [--groups LIST] [--gpus N] [--max-bytes SIZE] [--min-bytes SIZE]
//                 [--variant-max-bytes SIZE] [--nccl-variants A/P,...] [--warmup N] [--iters N]
//                 [--gemm-shapes FILE] [--gemm-no-grid] [--gemm-warm-l2] [--time-limit SECONDS] [--quick]
//
// Groups: nccl, nccl-variants, gemm, memory, transfer, launch, interference (default: all).
// Exit status: 0 done; 2 no GPU; 64 bad usage; 1 a CUDA / NCCL / cuBLASLt call failed (message on stderr; the
// group is recorded as {"kind":"error"} and the remaining groups still run).
#include "Common.hpp"

#include <cstdlib>

namespace {

using namespace stepsim::bench;

const char* kUsage =
    "usage: stepsim-bench [--out FILE] [--groups nccl,nccl-variants,gemm,memory,transfer,launch,interference]\n"
    "                     [--gpus N] [--min-bytes SIZE] [--max-bytes SIZE] [--variant-max-bytes SIZE]\n"
    "                     [--nccl-variants Ring/LL,Tree/Simple,...] [--warmup N] [--iters N]\n"
    "                     [--gemm-shapes FILE] [--gemm-no-grid] [--gemm-warm-l2] [--time-limit SECONDS] [--quick]\n"
    "SIZE takes K, M, G suffixes (powers of 1024).\n";

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::size_t parseSize(const std::string& s) {
    std::size_t pos = 0;
    double v = 0;
    try {
        v = std::stod(s, &pos);
    } catch (...) {
        throw UsageError("expected a size like 4G, got '" + s + "'");
    }
    std::size_t mult = 1;
    if (pos < s.size()) {
        switch (s[pos]) {
            case 'K': case 'k': mult = 1ull << 10; break;
            case 'M': case 'm': mult = 1ull << 20; break;
            case 'G': case 'g': mult = 1ull << 30; break;
            default: throw UsageError("expected a size like 4G, got '" + s + "'");
        }
    }
    if (!(v > 0)) throw UsageError("size must be positive, got '" + s + "'");
    return static_cast<std::size_t>(v * double(mult));
}

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> v;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) v.push_back(item);
    return v;
}

const std::set<std::string> kGroups = {"nccl", "nccl-variants", "gemm", "memory", "transfer", "launch", "interference"};

Options parse(int argc, char** argv) {
    Options o;
    o.groups = kGroups;
    o.nccl_variants = {"Ring/LL", "Ring/LL128", "Ring/Simple", "Tree/LL", "Tree/LL128", "Tree/Simple"};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw UsageError(a + " needs a value");
            return argv[++i];
        };
        auto integer = [&](const std::string& v) {
            try {
                return std::stoi(v);
            } catch (...) {
                throw UsageError(a + ": expected an integer, got '" + v + "'");
            }
        };
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (a == "--out") o.out_path = value();
        else if (a == "--groups") {
            o.groups.clear();
            for (const auto& g : splitList(value())) {
                if (!kGroups.count(g)) throw UsageError("--groups: unknown group '" + g + "'");
                o.groups.insert(g);
            }
        } else if (a == "--gpus") o.gpus = integer(value());
        else if (a == "--min-bytes") o.nccl_min_bytes = parseSize(value());
        else if (a == "--max-bytes") o.nccl_max_bytes = parseSize(value());
        else if (a == "--variant-max-bytes") o.variant_max_bytes = parseSize(value());
        else if (a == "--nccl-variants") o.nccl_variants = splitList(value());
        else if (a == "--warmup") o.warmup = integer(value());
        else if (a == "--iters") o.iters = integer(value());
        else if (a == "--gemm-shapes") o.gemm_shapes_file = value();
        else if (a == "--time-limit") {
            const std::string v = value();
            try {
                o.time_limit_s = std::stod(v);
            } catch (...) {
                throw UsageError("--time-limit: expected seconds, got '" + v + "'");
            }
        } else if (a == "--quick") o.quick = true;
        else if (a == "--gemm-no-grid") o.gemm_grid = false;
        else if (a == "--gemm-warm-l2") o.gemm_cold_l2 = false;
        else throw UsageError("unknown option '" + a + "'");
    }
    if (o.iters < 2 || o.warmup < 0) throw UsageError("--iters must be >= 2 and --warmup >= 0");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    try {
        opt = parse(argc, argv);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "stepsim-bench: %s\n%s", e.what(), kUsage);
        return 64;
    }
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        std::fprintf(stderr, "stepsim-bench: no CUDA GPU is visible here (%s); nothing was measured.\n",
                     e != cudaSuccess ? cudaGetErrorString(e) : "device count 0");
        return 2;
    }
    try {
        Context ctx;
        ctx.opt = opt;
        const int use = opt.gpus > 0 ? std::min(opt.gpus, count) : count;
        for (int d = 0; d < use; ++d) ctx.devices.push_back(d);
        std::FILE* f = stdout;
        if (!opt.out_path.empty()) {
            f = std::fopen(opt.out_path.c_str(), "w");
            if (!f) throw BenchError("cannot open " + opt.out_path + " for writing");
        }
        Output out(f);
        Deadline deadline(opt.time_limit_s);
        ctx.out = &out;
        ctx.deadline = &deadline;
        writeMetadata(ctx);
        int failed = 0;
        struct Group { const char* name; void (*run)(Context&); };
        const Group groups[] = {{"launch", runLaunch},       {"memory", runMemory}, {"transfer", runTransfer},
                                {"gemm", runGemm},           {"nccl", runNccl},     {"nccl-variants", runNcclVariants},
                                {"interference", runInterference}};
        for (const auto& g : groups) {
            if (!opt.groups.count(g.name)) continue;
            const double t0 = deadline.elapsed_s();
            std::fprintf(stderr, "stepsim-bench: %s ...\n", g.name);
            try {
                g.run(ctx);
            } catch (const BenchError& err) {  // record it and go on: the other groups may still measure
                ++failed;
                out.write(JsonObject().str("kind", "error").str("group", g.name).str("message", err.what()));
                std::fprintf(stderr, "stepsim-bench: %s failed: %s\n", g.name, err.what());
                continue;
            }
            const double dt = deadline.elapsed_s() - t0;
            out.write(JsonObject().str("kind", "group_done").str("group", g.name).num("wall_s", dt));
            std::fprintf(stderr, "stepsim-bench: %s done in %.1f s\n", g.name, dt);
        }
        out.write(JsonObject().str("kind", "run_done").num("wall_s", deadline.elapsed_s()));
        if (f != stdout) std::fclose(f);
        std::fprintf(stderr, "stepsim-bench: %zu records in %.1f s\n", out.records(), deadline.elapsed_s());
        if (failed > 0) {
            std::fprintf(stderr, "stepsim-bench: %d group(s) failed\n", failed);
            return 1;
        }
    } catch (const BenchError& err) {
        std::fprintf(stderr, "stepsim-bench: error: %s\n", err.what());
        return 1;
    }
    return 0;
}
