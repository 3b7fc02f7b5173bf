// The `stepsim` command end to end: every example runs, output is deterministic, bad input is explained.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

struct Result {
    int status = 0;
    std::string out;
};

Result sh(const std::string& cmd) {
    Result r;
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), p)) r.out += buf.data();
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

std::string slurp(const std::filesystem::path& p) {
    std::ifstream is(p);
    std::stringstream ss;
    ss << is.rdbuf();
    return ss.str();
}

const std::string kBin = STEPSIM_BINARY;
const std::filesystem::path kSrc = STEPSIM_SOURCE_DIR;

std::filesystem::path tmp(const std::string& name) {
    return std::filesystem::temp_directory_path() / ("stepsim-cli-test-" + name);
}

TEST(Cli, EveryExampleScenarioRuns) {
    for (const auto& e : std::filesystem::directory_iterator(kSrc / "scenarios")) {
        if (e.path().extension() != ".yaml") continue;
        const Result r = sh(kBin + " run -q " + e.path().string());
        EXPECT_EQ(r.status, 0) << e.path() << "\n" << r.out;
    }
}

TEST(Cli, TwoRunsGiveByteIdenticalJson) {
    const std::string s = (kSrc / "scenarios/gpt-350m-ddp-2xh200.yaml").string();
    ASSERT_EQ(sh(kBin + " run -q " + s + " --json " + tmp("a.json").string()).status, 0);
    ASSERT_EQ(sh(kBin + " run -q " + s + " --json " + tmp("b.json").string()).status, 0);
    const std::string a = slurp(tmp("a.json")), b = slurp(tmp("b.json"));
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a, b);
}

TEST(Cli, JsonHasTheContractKeys) {
    const std::string s = (kSrc / "scenarios/gpt-350m-ddp-2xh200.yaml").string();
    ASSERT_EQ(sh(kBin + " run -q " + s + " --json " + tmp("c.json").string()).status, 0);
    const auto j = nlohmann::json::parse(slurp(tmp("c.json")));
    for (const char* k : {"step_time_ms", "tokens_per_s", "tokens_per_s_per_gpu", "samples_per_s", "mfu",
                          "compute_busy_ms", "comm_busy_ms", "overlap_ms", "overlap_ratio", "exposed_comm_ms",
                          "idle_ms", "collectives", "peak_memory_gib", "warnings", "overlap_windows"})
        EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_GT(j["step_time_ms"].get<double>(), 0.0);
    EXPECT_GT(j["collectives"]["count"].get<double>(), 0.0);
}

TEST(Cli, TraceIsValidJsonWithOneProcessPerRank) {
    const std::string s = (kSrc / "scenarios/gpt-350m-ddp-2xh200.yaml").string();
    ASSERT_EQ(sh(kBin + " run -q " + s + " --trace " + tmp("t.json").string()).status, 0);
    const auto j = nlohmann::json::parse(slurp(tmp("t.json")));
    std::set<int> pids;
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "X") pids.insert(e["pid"].get<int>());
    EXPECT_EQ(pids.size(), 2u);
}

TEST(Cli, SetOverridesAKey) {
    const std::string s = (kSrc / "scenarios/gpt-350m-ddp-2xh200.yaml").string();
    ASSERT_EQ(sh(kBin + " run -q " + s + " --json " + tmp("d.json").string()).status, 0);
    ASSERT_EQ(sh(kBin + " run -q " + s + " --set ddp.bucket_cap_mb=200 --json " + tmp("e.json").string()).status, 0);
    const auto a = nlohmann::json::parse(slurp(tmp("d.json"))), b = nlohmann::json::parse(slurp(tmp("e.json")));
    EXPECT_LT(b["collectives"]["count"].get<double>(), a["collectives"]["count"].get<double>());
}

TEST(Cli, UnknownKeyIsAnErrorWithFileAndLine) {
    const auto f = tmp("bad.yaml");
    std::ofstream(f) << "stepsim: 1\nname: bad\nmodel:\n  layers: 2\n  hiden: 64\n";
    const Result r = sh(kBin + " run " + f.string());
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find(f.string() + ":5"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("hiden"), std::string::npos) << r.out;
}

TEST(Cli, MissingFileIsAnError) {
    const Result r = sh(kBin + " run /nonexistent/scenario.yaml");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("/nonexistent/scenario.yaml"), std::string::npos) << r.out;
}

TEST(Cli, CollectivePrintsNcclTestsColumns) {
    const Result r = sh(kBin + " collective --op all_reduce --gpus 8 -b 1M -e 1G -f 4");
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("busbw"), std::string::npos);
    EXPECT_NE(r.out.find("1073741824"), std::string::npos);
}

// Across nodes the collective runs on the topology: at 1 GiB the 2×8 all-reduce is bounded by the NICs, so its
// bus bandwidth stays below one node's NVLink ring (370.8 GB/s) yet well above a single NIC (50 GB/s).
TEST(Cli, MultiNodeCollectiveRunsOnTheTopology) {
    const auto out = tmp("coll16.json");
    const Result r = sh(kBin + " collective --op all_reduce --gpus 8 --nodes 2 -b 1G -e 1G --json " + out.string());
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(slurp(out));
    ASSERT_EQ(j["rows"].size(), 1u);
    const double busbw = j["rows"][0]["busbw_GBps"].get<double>();
    EXPECT_GT(busbw, 100.0);
    EXPECT_LE(busbw, 370.8);
}

// ---- out of memory is a result ----

TEST(Cli, JsonSaysTheModelFitsMemory) {
    const std::string s = (kSrc / "scenarios/gpt-350m-ddp-2xh200.yaml").string();
    ASSERT_EQ(sh(kBin + " run -q " + s + " --require-fit --json " + tmp("fit.json").string()).status, 0);
    const auto j = nlohmann::json::parse(slurp(tmp("fit.json")));
    EXPECT_TRUE(j["fits_memory"].get<bool>());
    EXPECT_EQ(j["memory_shortfall_gib"].get<double>(), 0.0);
}

// A 175B-parameter model on 2 GPUs (GPT-3's shape, short sequences): about 2.6 TiB per GPU of parameters, gradients
// and optimizer state.
const std::string kTooLarge = "stepsim: 1\ncluster: {gpus_per_node: 2}\n"
                              "model: {layers: 96, hidden: 12288, heads: 96, seq_len: 256}\ntraining: {micro_batch: 1}\n"
                              "sim: {steps: 2}\n";

TEST(Cli, OutOfMemoryIsAResultWithItsShortfall) {
    const auto f = tmp("oom.yaml");
    std::ofstream(f) << kTooLarge;
    ASSERT_EQ(sh(kBin + " run -q " + f.string() + " --json " + tmp("oom.json").string()).status, 0);
    const auto j = nlohmann::json::parse(slurp(tmp("oom.json")));
    EXPECT_FALSE(j["fits_memory"].get<bool>());
    EXPECT_GT(j["memory_shortfall_gib"].get<double>(), 1000.0);
    EXPECT_NEAR(j["memory_shortfall_gib"].get<double>(), j["peak_memory_gib"].get<double>() - 139.8, 0.5);
}

TEST(Cli, RequireFitExitsFourWhenOutOfMemoryAndStillWritesTheResult) {
    const auto f = tmp("oom2.yaml");
    std::ofstream(f) << kTooLarge;
    std::filesystem::remove(tmp("oom2.json"));
    const Result r = sh(kBin + " run -q " + f.string() + " --require-fit --json " + tmp("oom2.json").string());
    EXPECT_EQ(r.status, 4);
    EXPECT_NE(r.out.find("exceeds the GPU's"), std::string::npos) << r.out;
    EXPECT_FALSE(nlohmann::json::parse(slurp(tmp("oom2.json")))["fits_memory"].get<bool>());
}

// ---- exit status: 0 success, 2 bad input (the command line included), 3 internal error ----

TEST(Cli, HelpExitsZero) {
    EXPECT_EQ(sh(kBin + " --help").status, 0);
    EXPECT_EQ(sh(kBin + " run --help").status, 0);
}

TEST(Cli, UnknownFlagExitsTwo) {
    const Result r = sh(kBin + " run --bogus " + (kSrc / "scenarios/gpt-350m-ddp-2xh200.yaml").string());
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("--bogus"), std::string::npos) << r.out;
}

TEST(Cli, MissingArgumentExitsTwo) {
    const Result r = sh(kBin + " run");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("FILE is required"), std::string::npos) << r.out;
}

TEST(Cli, NoSubcommandExitsTwo) { EXPECT_EQ(sh(kBin).status, 2); }

TEST(Cli, MalformedFlagValueExitsTwo) {
    EXPECT_EQ(sh(kBin + " collective --gpus x").status, 2);
    EXPECT_EQ(sh(kBin + " collective --gpus 8 -f 1").status, 2);
}

// ---- bad input end to end: a located error and exit status 2, never a result for another question ----

TEST(Cli, UnterminatedQuoteExitsTwoAtItsLine) {
    const auto f = tmp("quote.yaml");
    std::ofstream(f) << "stepsim: 1\nname: \"gpt-1p3b\nmodel: {layers: 2, hidden: 1024}\n";
    const Result r = sh(kBin + " run " + f.string());
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find(f.string() + ":2: name: the value opened with"), std::string::npos) << r.out;
}

TEST(Cli, ScenarioWithoutAModelExitsTwo) {
    const auto f = tmp("nomodel.yaml");
    std::ofstream(f) << "stepsim: 1\n";
    const Result r = sh(kBin + " run " + f.string());
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find(f.string() + ":1: model: missing"), std::string::npos) << r.out;
}

TEST(Cli, B200OnANamedH200ProfileRunsAndSaysSo) {
    const auto f = tmp("b200.yaml");
    std::ofstream(f) << "stepsim: 1\ncluster: {node: hgx-b200, profile: h200x2}\nmodel: {layers: 2, hidden: 1024}\n";
    const auto out = tmp("b200.json");
    ASSERT_EQ(sh(kBin + " run -q " + f.string() + " --json " + out.string()).status, 0);
    const auto j = nlohmann::json::parse(slurp(out));
    ASSERT_FALSE(j["warnings"].empty());
    EXPECT_NE(j["warnings"][0].get<std::string>().find("not of the B200-class GPUs of hgx-b200"), std::string::npos)
        << j["warnings"];
}

TEST(Cli, ShippedTopologyExampleRunsAsALoneNode) {
    const auto f = tmp("quad.yaml");
    std::ofstream(f) << "stepsim: 1\ncluster: {node: " << (kSrc / "topology/examples/quad-nvlink-pairs.yaml").string()
                     << ", gpus_per_node: 4}\nmodel: {layers: 2, hidden: 1024}\n";
    const Result r = sh(kBin + " run -q " + f.string());
    EXPECT_EQ(r.status, 0) << r.out;
}

TEST(Cli, TopologyWithoutLinksExitsTwo) {
    const auto f = tmp("nolinks.yaml");
    std::ofstream(f) << "stepsim_topology: 1\nname: x\nvertices:\n  - {name: gpu0, kind: gpu}\n"
                        "  - {name: gpu1, kind: gpu}\nlinks: []\n";
    const Result r = sh(kBin + " topo " + f.string());
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find(f.string() + ":6: links: expected at least one link"), std::string::npos) << r.out;
}

TEST(Cli, CollectiveOnMoreGpusThanTheNodeHasExitsTwo) {
    const Result r = sh(kBin + " collective --gpus 100000");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("--gpus: expected at most 8 (the GPUs of a hgx-h200 node), got 100000"), std::string::npos)
        << r.out;
}

TEST(Cli, CollectiveOnAnUnknownNodeNamesTheFlag) {
    const Result r = sh(kBin + " collective --node hgx-z900");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("--node: expected one of hgx-h100"), std::string::npos) << r.out;
}

TEST(Cli, CollectiveSizeBeyondTheLimitExitsTwo) {
    const Result r = sh(kBin + " collective -b 1e30 -e 1e30");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("-b: expected at most 1024G"), std::string::npos) << r.out;
}

// A combination the workload does not build yet is refused when the file is read, at the key's line.
TEST(Cli, TensorParallelismWithTheInputPipelineExitsTwoAtItsLine) {
    const auto f = tmp("tp-loader.yaml");
    std::ofstream(f) << "stepsim: 1\nmodel: {layers: 4, hidden: 1024}\nparallel: {tp: 2}\ndata_loader:\n  pin_memory: true\n";
    const Result r = sh(kBin + " run -q " + f.string());
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find(f.string() + ":5: data_loader: the input pipeline with tensor or pipeline parallelism"),
              std::string::npos)
        << r.out;
}

// A checkpoint setting with checkpoints off has no effect: the run goes on and its warnings name the key and line.
TEST(Cli, CheckpointSettingWithoutCheckpointsRunsWithAWarning) {
    const auto f = tmp("ckpt-mode.yaml");
    std::ofstream(f) << "stepsim: 1\nmodel: {layers: 2, hidden: 1024}\ncheckpoint:\n  mode: async\n";
    const Result r = sh(kBin + " run " + f.string());
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("key checkpoint.mode (" + f.string() + ":4) has no effect with checkpoint.interval_steps: 0"),
              std::string::npos)
        << r.out;
}

// A measured record of the wrong shape is bad input at its line (exit 2), not an internal error.
TEST(Cli, ValidateMeasuredRecordOfTheWrongTypeExitsTwoAtItsLine) {
    const auto f = tmp("bad-measured.jsonl");
    const std::string scenarios = (kSrc / "scenarios/validation").string();
    for (const std::string& line : {std::string(R"([1])"), std::string(R"({"id": 5, "step_time_ms": {"median": 10}})"),
                                    std::string(R"({"id": "s1-l12-h768-s1024-mb8", "step_time_ms": {"median": 0}})")}) {
        std::ofstream(f) << "\n" << line << "\n";
        const Result r = sh(kBin + " validate " + f.string() + " --scenarios " + scenarios);
        EXPECT_EQ(r.status, 2) << line << "\n" << r.out;
        EXPECT_NE(r.out.find(f.string() + ":2:"), std::string::npos) << line << "\n" << r.out;
    }
}

TEST(Cli, CollectiveTableOfTooManySizesExitsTwo) {
    const Result r = sh(kBin + " collective -b 8 -e 1G -f 1.0001");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find("-f: expected at most 1000 sizes"), std::string::npos) << r.out;
}

}  // namespace

TEST(Cli, SweepWritesItsFilesAndRecommends) {
    const auto dir = tmp("sweep-out");
    std::filesystem::remove_all(dir);
    const Result r = sh(kBin + " sweep " + (kSrc / "tests/sweep/data/toy.yaml").string() + " --out " + dir.string());
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("best: "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\033[K"), std::string::npos) << "no progress line when stdout is not a terminal";
    for (const char* f : {"points.jsonl", "results.csv", "results.json"}) EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
    EXPECT_EQ(nlohmann::json::parse(slurp(dir / "results.json"))["records"].size(), 19u);
}

TEST(Cli, SweepBadKeyExitsTwoWithFileLineAndKey) {
    const auto f = tmp("bad-sweep.yaml");
    std::ofstream(f) << "stepsim: 1\nmodel: {layers: 2, hidden: 512, heads: 8}\nsweep:\n  grid: {ddp.bucket: [1]}\n";
    const Result r = sh(kBin + " sweep " + f.string() + " --out " + tmp("bad-sweep-out").string());
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.out.find(f.string() + ":4: sweep.grid.ddp.bucket"), std::string::npos) << r.out;
}

TEST(Cli, RunOnASweepFileRunsTheScenarioAsGivenWithANote) {
    const Result r = sh(kBin + " run -q " + (kSrc / "tests/sweep/data/toy.yaml").string());
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("has a sweep: section; run simulates the scenario as given"), std::string::npos) << r.out;
}
