#include "sim/fit/Manifest.hpp"

#include <fstream>
#include <string>

#include "sim/base/InputError.hpp"

namespace stepsim {

std::vector<std::filesystem::path> readManifest(const std::filesystem::path& manifest) {
    const std::string name = manifest.string();
    std::ifstream in(manifest);
    if (!in) throw inputError(name, 0, "", "cannot read the manifest of raw input files");
    std::vector<std::filesystem::path> files;
    std::string text;
    int lineNo = 0;
    while (std::getline(in, text)) {
        ++lineNo;
        const std::size_t b = text.find_first_not_of(" \t\r");
        if (b == std::string::npos || text[b] == '#') continue;
        const std::string entry = text.substr(b, text.find_last_not_of(" \t\r") + 1 - b);
        const std::filesystem::path file = (manifest.parent_path() / entry).lexically_normal();
        if (!std::filesystem::is_regular_file(file))
            throw inputError(name, lineNo, entry, "no such raw input file (looked for " + file.string() + ")");
        files.push_back(file);
    }
    return files;
}

}  // namespace stepsim
