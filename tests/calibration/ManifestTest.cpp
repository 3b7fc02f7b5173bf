// A profile's manifest of raw input files (sim/fit/Manifest.hpp): paths relative to its folder, comment and
// blank lines skipped, a missing file an InputError naming the manifest and its line.
#include "sim/fit/Manifest.hpp"

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "sim/base/InputError.hpp"

namespace stepsim {
namespace {

namespace fs = std::filesystem;

// A folder `dir` with dir/prof/raw/a.jsonl, dir/shared.jsonl and dir/prof/inputs.txt holding `manifest`.
fs::path makeProfileFolder(const std::string& dir, const std::string& manifest) {
    const fs::path root = fs::temp_directory_path() / dir;
    fs::remove_all(root);
    fs::create_directories(root / "prof" / "raw");
    std::ofstream(root / "prof" / "raw" / "a.jsonl") << "\n";
    std::ofstream(root / "shared.jsonl") << "\n";
    std::ofstream(root / "prof" / "inputs.txt") << manifest;
    return root;
}

// Expectation: each line is a path relative to the manifest's folder, in order; a path that leaves the folder stays
// valid.
TEST(Manifest, PathsAreRelativeToItsFolder) {
    const fs::path root = makeProfileFolder("stepsim_manifest_good", "raw/a.jsonl\n../shared.jsonl\n");
    const std::vector<fs::path> files = readManifest(root / "prof" / "inputs.txt");
    ASSERT_EQ(files.size(), 2u);
    EXPECT_EQ(files[0], root / "prof" / "raw" / "a.jsonl");
    EXPECT_EQ(files[1], root / "shared.jsonl");
}

// Expectation: blank lines, '#' lines (indented too) and the blanks around a path are skipped.
TEST(Manifest, CommentAndBlankLinesAreSkipped) {
    const fs::path root = makeProfileFolder("stepsim_manifest_comments",
                                            "# the harness\n\n  raw/a.jsonl  \r\n   # indented\n\t\n../shared.jsonl\n");
    const std::vector<fs::path> files = readManifest(root / "prof" / "inputs.txt");
    ASSERT_EQ(files.size(), 2u);
    EXPECT_EQ(files[0], root / "prof" / "raw" / "a.jsonl");
    EXPECT_EQ(files[1], root / "shared.jsonl");
}

// Expectation: a listed file that is not there is an InputError naming the manifest, the line and the path.
TEST(Manifest, AMissingFileNamesManifestAndLine) {
    const fs::path root = makeProfileFolder("stepsim_manifest_missing", "raw/a.jsonl\n# comment\nraw/gone.jsonl\n");
    const fs::path manifest = root / "prof" / "inputs.txt";
    try {
        readManifest(manifest);
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(manifest.string() + ":3: raw/gone.jsonl"), std::string::npos) << e.what();
    }
}

// Expectation: a manifest that is not there is an InputError naming it.
TEST(Manifest, AMissingManifestIsAnInputError) {
    EXPECT_THROW(readManifest(fs::temp_directory_path() / "stepsim_no_such_manifest.txt"), InputError);
}

// Expectation: the committed profiles' manifests list files that are all there.
TEST(Manifest, CommittedManifestsListTheirRawFiles) {
    // h200x2 also holds compile_kernels.py's two files and compile_parts.py's one (torch.compile); both hold
    // io_transfer.py's (input copies, checkpoints); h200x2 fp8_bench.py's two (FP8 GEMMs and casts); both
    // memory_check.py's find_unused records and model_variants_kernels.jsonl (variant_raw.py: bias gradients and
    // rotary kernels, and since the permuted q/k/v's and dropout's kernels), gemm_alignment.py's two (the vocabulary
    // investigation's GEMMs converted, and gemm_alignment.py's own run), h200x2 fp8_compiled.py's (compiled FP8 linears)
    for (const auto& [dir, count] : {std::pair{"h200x2", 56u}, std::pair{"h200x1", 50u}}) {
        const auto files =
            readManifest(std::string(STEPSIM_SOURCE_DIR) + "/calibration/profiles/" + dir + "/inputs.txt");
        EXPECT_EQ(files.size(), count) << dir;
    }
}

}  // namespace
}  // namespace stepsim
