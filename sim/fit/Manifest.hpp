#pragma once
// A profile's manifest (calibration/profiles/NAME/inputs.txt): the raw files its fit reads, one path per line,
// relative to the manifest's folder. Blank lines and lines whose first non-blank character is '#' are skipped;
// surrounding blanks are not part of a path. It is the one list `stepsim calibrate fit --manifest`, the tests and the
// profile's `source` use.
#include <filesystem>
#include <vector>

namespace stepsim {

// The listed files, in order, each the manifest's folder joined with its line (lexically normalised). A manifest that
// cannot be read, or a listed file that does not exist, is an InputError naming the manifest and the line.
std::vector<std::filesystem::path> readManifest(const std::filesystem::path& manifest);

}  // namespace stepsim
